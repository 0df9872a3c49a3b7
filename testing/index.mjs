// ESM entry of @rennet/codex/testing: the same module instance as `require('@rennet/codex/testing')`.
import kit from './index.js'

export const {
  writeFakeCodex,
  fakeCodexRuns,
  removeFakeCodexes,
  startMockModel,
  startMockResponses,
  sse,
  hang,
  closeEarly,
  httpError,
  usage,
  created,
  completed,
  reasoningItem,
  messageItem,
  execCommandItem,
  response,
  messageResponse,
  execCommandResponse,
  jsonMessageResponse,
  failedResponse,
  functionCallOutputs,
  codexBinaryPath,
  createCodexHome,
  createGitCwd,
  isolatedEnv,
} = kit
export default kit
