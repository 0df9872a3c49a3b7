// ESM entry of @rennet/codex: the same module instance as `require('@rennet/codex')`, so
// `UtilityError` checks with `instanceof` hold whichever way the package was loaded.
import api from './index.js'

export const { runTurn, prepareTurn, runReview, openConversation, runUtility, discoverCodex, setLogger, CodexError, UtilityError, SteerError } = api
export const { readAccount, listModels, listThreads, readThread, forkThread, CallError } = api
export const { loginWithApiKey, startLogin, logout, renameThread, archiveThread, unarchiveThread, deleteThread } = api
export const { revertThread, compactThread, readGoal, setGoal, clearGoal, listSkills, listMcpServers, request } = api
export default api
