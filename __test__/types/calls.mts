// Compiled, never run (`pnpm test:types`): the calls around turns as an app's UI code uses them.
import { CallError, forkThread, listModels, listThreads, readAccount, readThread } from '@rennet/codex'
import { archiveThread, clearGoal, compactThread, deleteThread, listMcpServers, listSkills, loginWithApiKey, logout } from '@rennet/codex'
import { readGoal, renameThread, request, revertThread, runTurn, setGoal, startLogin, unarchiveThread, updateThreadMetadata } from '@rennet/codex'
import type { AccountInfo, LoginHandle, McpServerStatus, Model, SkillMetadata, ThreadGoal, ThreadRecord, ThreadSummary, Usage } from '@rennet/codex'
import codex from '@rennet/codex'
import type { FakeCodexScript } from '@rennet/codex/testing'

/** A login banner. */
export async function banner(): Promise<string> {
  const info: AccountInfo = await readAccount({ requestTimeoutMs: 10_000 })
  const account = info.account
  if (!info.auth.ready) return 'Log in to Codex'
  if (account === null) return info.requiresOpenaiAuth ? `ready through ${info.auth.via}` : ''
  if (account.type === 'chatgpt') return `${account.email ?? ''} (${account.planType})`
  // @ts-expect-error the account is the protocol's union, not any object
  account.email
  const used: number | undefined = info.rateLimits?.rateLimits.primary?.usedPercent
  return used === undefined ? account.type : `${account.type}: ${used}% used`
}

/** A model picker. */
export async function picker(signal: AbortSignal): Promise<Array<{ value: string; label: string }>> {
  const models: Model[] = await listModels({ signal, includeHidden: false })
  return models.map((m) => ({ value: m.model, label: m.displayName }))
}

/** A thread sidebar, and branching from a turn. */
export async function sidebar(cwd: string): Promise<string[]> {
  const { threads, nextCursor }: { threads: ThreadSummary[]; nextCursor: string | null } = await listThreads({ cwd, limit: 20 })
  if (nextCursor !== null) await listThreads({ cwd, cursor: nextCursor })
  const first: ThreadRecord = await readThread(threads[0].id, { includeTurns: true })
  const { threadId }: { threadId: string } = await forkThread(first.id, { lastTurnId: first.turns[0].id })
  // @ts-expect-error a call's own options belong to it
  await readAccount({ includeHidden: true })
  try {
    await codex.readThread(threadId)
  } catch (error) {
    if (error instanceof CallError && error.code === 'REQUEST_FAILED') return [error.message]
    // @ts-expect-error codes are the contract's
    if (error instanceof CallError && error.code === 'NOT_A_CODE') return []
  }
  return threads.map((t) => t.preview)
}

export const script: FakeCodexScript = {
  account: { account: null, requiresOpenaiAuth: true },
  calls: {
    'account/rateLimits/read': { error: { code: -32600, message: 'codex account authentication required to read rate limits' } },
    'model/list': { pages: [[{ id: 'a' }], [{ id: 'b' }]] },
    'thread/read': 'never',
    'thread/list': { exit: { code: 1, stderr: 'locked' } },
    'account/login/start': { result: { type: 'chatgpt', loginId: 'l1', authUrl: 'https://auth' }, delayMs: 5 },
    'thread/compact/start': { result: {}, notifications: [{ method: 'turn/completed', params: {}, delayMs: 1 }] },
  },
}

/** A login screen: an API key, or ChatGPT in the browser or with a code. */
export async function loginScreen(key: string | null, show: (text: string) => void, cancel: AbortSignal): Promise<string> {
  const before: AccountInfo = await readAccount()
  const ready: boolean = before.auth.ready
  const via: 'account' | 'apiKeyEnv' | 'notRequired' | null = before.auth.via
  if (ready) return via ?? ''
  if (key !== null) return (await loginWithApiKey(key)).account?.type ?? ''
  const login: LoginHandle = startLogin({ type: 'chatgptDeviceCode', timeoutMs: 300_000, signal: cancel })
  const { authUrl, verificationUrl, userCode } = await login.started
  show(authUrl ?? `${verificationUrl}: ${userCode}`)
  login.cancel()
  // @ts-expect-error only ChatGPT logins have a handle
  startLogin({ type: 'apiKey' })
  try {
    return (await login.completed).account?.type ?? ''
  } catch (error) {
    if (error instanceof CallError && (error.code === 'LOGIN_FAILED' || error.code === 'LOGIN_IN_PROGRESS')) return error.message
    throw error
  } finally {
    await logout()
  }
}

/** A sidebar's thread verbs, "edit and resend", and compaction. */
export async function verbs(threadId: string, turnId: string, cwd: string): Promise<Usage | null> {
  await renameThread(threadId, 'Fix the build')
  await archiveThread(threadId)
  await listThreads({ archived: true, searchTerm: 'build', sortKey: 'updated_at', sourceKinds: ['appServer', 'subAgent'] })
  // @ts-expect-error sort keys are Codex's
  await listThreads({ sortKey: 'sideways' })
  await unarchiveThread(threadId)
  const tagged: ThreadRecord = await updateThreadMetadata(threadId, { gitInfo: { branch: 'release', sha: null } })
  await updateThreadMetadata(tagged.id, { gitInfo: null })
  // @ts-expect-error the git facts Codex keeps, by its names
  await updateThreadMetadata(threadId, { gitInfo: { tag: 'v1' } })
  await revertThread(threadId, { beforeTurnId: turnId })
  // @ts-expect-error revert needs the turn to remove from
  await revertThread(threadId, {})
  runTurn({ cwd, threadId, prompt: 'Try again, differently.' })
  const { usage } = await compactThread(threadId)
  await deleteThread(threadId)
  return usage
}

/** Goals, skills in an @-menu, MCP status. */
export async function panels(threadId: string, cwd: string): Promise<string[]> {
  const goal: ThreadGoal | null = await readGoal(threadId)
  const set: ThreadGoal = await setGoal(threadId, { objective: 'Ship it', status: 'active', tokenBudget: null })
  // @ts-expect-error goal statuses are Codex's
  await setGoal(threadId, { status: 'someday' })
  await clearGoal(threadId)
  const skills: SkillMetadata[] = await listSkills({ cwd })
  runTurn({ cwd, input: [{ type: 'text', text: 'deploy' }, { type: 'skill', name: skills[0].name, path: skills[0].path }] })
  runTurn({ cwd, input: [{ type: 'mention', name: 'Docs', path: 'app://docs' }] })
  const servers: McpServerStatus[] = await listMcpServers({ cwd, connect: false })
  return [goal?.objective ?? '', set.status, ...servers.map((s) => `${s.name}: ${s.runtimeStatus}`)]
}

/** Any other method, typed by method from the pinned schema. */
export async function raw(threadId: string): Promise<number> {
  const loaded = await request('thread/loaded/list', { limit: 5 })
  const ids: string[] = loaded.data
  const providers = await request('modelProvider/list', {})
  // @ts-expect-error params are the method's
  await request('thread/archive', { thread: threadId })
  // @ts-expect-error a turn's methods are refused: runTurn
  await request('turn/start', {})
  // @ts-expect-error thread/start belongs to a turn too
  await request('thread/start', {})
  // @ts-expect-error refused without params too
  await request('initialize')
  // A method this package's pinned Codex does not know: anything goes, the result is unknown.
  const future: unknown = await request('someFuture/method', { any: 1 })
  return ids.length + providers.data.length + (future === null ? 0 : 1)
}
