// The calls of #33 through the addon, against the test kit's fake: logging in (an API key, a
// ChatGPT login's handle) and out, the thread verbs, goals, skills, MCP status and request():
// what each sends, what it resolves with, every failure, the TypeErrors, an API key nowhere but
// in its request, and nothing of a call left once it settled.
import { describe, expect, it } from 'vitest'
import * as cjs from '../../index.js'
import {
  archiveThread,
  CallError,
  clearGoal,
  compactThread,
  deleteThread,
  listMcpServers,
  listSkills,
  loginWithApiKey,
  logout,
  readGoal,
  renameThread,
  request,
  revertThread,
  setGoal,
  setLogger,
  startLogin,
  unarchiveThread,
  updateThreadMetadata,
} from '../../index.js'
import type { CallOptions, LogRecord } from '../../index.js'
import { fakeCodexRuns } from '../../testing/index.js'
import type { FakeCodexScript } from '../../testing/index.js'
import { fakesOfThisFile } from '../support/fakes-of-a-file.js'
import { itRejectsWithTypeErrors, type BadCall } from '../support/rejected-type-errors.js'
import { BOUND_MS, eventually, leftByFake } from '../support/procs.js'

const fake = fakesOfThisFile()

/** The child's environment without an API key variable (the host's may have one). */
const NO_KEY = { OPENAI_API_KEY: '', CODEX_API_KEY: '' }

/** Runs `call` against a fake playing `script`; once it settled, nothing of its child runs. */
async function against<T>(script: FakeCodexScript, call: (options: CallOptions) => Promise<T>) {
  const codexPath = fake(script)
  const settled = await call({ codexPath, env: NO_KEY }).then(
    (value) => ({ value, error: undefined }),
    (error: unknown) => ({ value: undefined, error }),
  )
  const runs = fakeCodexRuns(codexPath)
  for (const run of runs) expect(leftByFake(run.pid), `group ${run.pid} once the call settled`).toEqual([])
  return { ...settled, runs, sent: runs.flatMap((run) => run.received.map((m) => m.method)) }
}

const HANDSHAKE = ['initialize', 'initialized']
const KEY = 'sk-proj-hermetic-0123456789abcdef'
const thread = { id: '019a0000-0000-7000-8000-0000000000aa', preview: 'Say hello.', turns: [] }
const goal = { threadId: thread.id, objective: 'Ship it', status: 'active', tokenBudget: null, tokensUsed: 0, timeUsedSeconds: 0, createdAt: 1, updatedAt: 1 }

describe('loginWithApiKey and logout', () => {
  it('stores the key through account/login/start and reads the account; the key is in that request only', async () => {
    const records: LogRecord[] = []
    setLogger((r) => records.push(r), { filter: 'rennet_codex=trace' })
    try {
      const { value, runs, sent } = await against(
        {
          account: { account: { type: 'apiKey' }, requiresOpenaiAuth: true },
          calls: {
            'account/login/start': {
              result: { type: 'apiKey' },
              notifications: [
                { method: 'account/login/completed', params: { loginId: null, success: true, error: null } },
                { method: 'account/updated', params: { authMode: 'apikey', planType: null } },
              ],
            },
          },
        },
        (o) => loginWithApiKey(KEY, o),
      )
      expect(value).toEqual({ account: { type: 'apiKey' }, requiresOpenaiAuth: true, rateLimits: null, auth: { ready: true, via: 'account' } })
      expect(sent).toEqual([...HANDSHAKE, 'account/login/start', 'account/read', 'account/rateLimits/read'])
      expect(runs[0].requests('account/login/start')).toEqual([{ type: 'apiKey', apiKey: KEY }])
      // Nowhere else: not the command line, not a log record (trace), not another message.
      expect(runs[0].argv.join(' ')).not.toContain(KEY)
      const others = runs[0].received.filter((m) => m.method !== 'account/login/start')
      expect(JSON.stringify(others)).not.toContain(KEY)
      expect(await eventually(() => records.some((r) => r.message === 'call ended'), BOUND_MS)).toBe(true)
      expect(records.length).toBeGreaterThan(0)
      for (const r of records) expect(JSON.stringify(r)).not.toContain(KEY)
    } finally {
      setLogger(null)
    }
  })

  it('LOGIN_FAILED in Codex words, with the key taken out of them, and out of the stderr tail', async () => {
    const echoed = { error: { code: -32603, message: `could not store ${KEY}: read-only file system`, data: { key: KEY } } }
    const { error } = await against({ calls: { 'account/login/start': echoed } }, (o) => loginWithApiKey(KEY, o))
    expect(error).toBeInstanceOf(CallError)
    expect(error).toMatchObject({ code: 'LOGIN_FAILED', message: 'could not store <redacted>: read-only file system', detail: { method: 'account/login/start' } })
    expect(JSON.stringify(error)).not.toContain(KEY)
    const exits = await against({ calls: { 'account/login/start': { exit: { code: 2, stderr: `panic: bad key ${KEY}` } } } }, (o) => loginWithApiKey(KEY, o))
    expect(exits.error).toMatchObject({ code: 'PROCESS_EXITED' })
    expect(JSON.stringify((exits.error as CallError).detail)).toContain('<redacted>')
    expect(JSON.stringify((exits.error as CallError).detail)).not.toContain(KEY)
  })

  it('logout sends account/logout and resolves with nothing', async () => {
    const { value, error, sent } = await against({ calls: { 'account/logout': { result: {} } } }, logout)
    expect(error).toBeUndefined()
    expect(value).toBeUndefined()
    expect(sent).toEqual([...HANDSHAKE, 'account/logout'])
  })
})

const AUTH_URL = 'https://auth.openai.com/oauth/authorize?redirect_uri=http%3A%2F%2F127.0.0.1%3A1455%2Fauth%2Fcallback'
const completed = (success: boolean, error: string | null = null, delayMs?: number) => ({
  method: 'account/login/completed',
  params: { loginId: 'l1', success, error },
  ...(delayMs === undefined ? {} : { delayMs }),
})
const CANCEL = { result: { status: 'canceled' }, notifications: [completed(false, 'Login server error: Login was not completed')] }

describe('startLogin', () => {
  it('a browser login: started shows the URL, completed the account once Codex says so', async () => {
    const codexPath = fake({
      account: { account: { type: 'chatgpt', email: 'dev@example.com', planType: 'plus' }, requiresOpenaiAuth: true },
      calls: { 'account/login/start': { result: { type: 'chatgpt', loginId: 'l1', authUrl: AUTH_URL }, notifications: [completed(true, null, 50)] } },
    })
    const login = startLogin({ codexPath, env: NO_KEY })
    expect(await login.started).toEqual({ loginId: 'l1', authUrl: AUTH_URL, verificationUrl: null, userCode: null })
    const account = await login.completed
    expect(account).toMatchObject({ account: { email: 'dev@example.com' }, auth: { ready: true, via: 'account' } })
    const [run] = fakeCodexRuns(codexPath)
    expect(run.received.map((m) => m.method)).toEqual([...HANDSHAKE, 'account/login/start', 'account/read', 'account/rateLimits/read'])
    expect(run.requests('account/login/start')).toEqual([{ type: 'chatgpt' }])
    expect(leftByFake(run.pid)).toEqual([])
  })

  it('a device-code login shows the code; a refused one rejects both with LOGIN_FAILED', async () => {
    const code = { type: 'chatgptDeviceCode', loginId: 'l1', verificationUrl: 'https://auth.openai.com/codex/device', userCode: 'ABCD-1234' }
    const codexPath = fake({ calls: { 'account/login/start': { result: code }, 'account/login/cancel': CANCEL } })
    const login = startLogin({ codexPath, type: 'chatgptDeviceCode' })
    expect(await login.started).toEqual({ loginId: 'l1', authUrl: null, verificationUrl: code.verificationUrl, userCode: 'ABCD-1234' })
    login.cancel()
    await expect(login.completed).rejects.toMatchObject({ code: 'CANCELLED' })

    const offline = 'failed to request device code: error sending request for url (https://auth.openai.com/api/accounts/deviceauth/usercode)'
    const refused = startLogin({ codexPath: fake({ calls: { 'account/login/start': { error: { code: -32603, message: offline } } } }), type: 'chatgptDeviceCode' })
    for (const result of [refused.started, refused.completed]) {
      await expect(result).rejects.toMatchObject({ name: 'CallError', code: 'LOGIN_FAILED', message: offline, detail: { code: -32603 } })
    }
  })

  it('cancel asks Codex to cancel the login before the child ends; CANCELLED with the reason as cause', async () => {
    const codexPath = fake({
      calls: { 'account/login/start': { result: { type: 'chatgpt', loginId: 'l1', authUrl: AUTH_URL } }, 'account/login/cancel': CANCEL },
    })
    const login = startLogin({ codexPath })
    await login.started
    const reason = new Error('the dialog closed')
    login.cancel(reason)
    login.cancel('again: nothing more')
    const error = await login.completed.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CallError)
    expect(error).toMatchObject({ code: 'CANCELLED', message: 'startLogin was cancelled: the dialog closed', cause: reason })
    const [run] = fakeCodexRuns(codexPath)
    expect(run.requests('account/login/cancel')).toEqual([{ loginId: 'l1' }])
    expect(run.received.map((m) => m.method).at(-1)).toBe('account/login/cancel')
    expect(leftByFake(run.pid)).toEqual([])
  })

  it('the signal cancels it too; an aborted signal starts nothing', async () => {
    const codexPath = fake({
      calls: { 'account/login/start': { result: { type: 'chatgpt', loginId: 'l1', authUrl: AUTH_URL } }, 'account/login/cancel': CANCEL },
    })
    const controller = new AbortController()
    const login = startLogin({ codexPath, signal: controller.signal })
    await login.started
    controller.abort('navigated away')
    await expect(login.completed).rejects.toMatchObject({ code: 'CANCELLED', cause: 'navigated away' })
    expect(fakeCodexRuns(codexPath)[0].requests('account/login/cancel')).toEqual([{ loginId: 'l1' }])
    const untouched = fake({})
    const never = startLogin({ codexPath: untouched, signal: AbortSignal.abort('no') })
    await expect(never.started).rejects.toMatchObject({ code: 'CANCELLED' })
    await expect(never.completed).rejects.toMatchObject({ code: 'CANCELLED', cause: 'no' })
    expect(fakeCodexRuns(untouched)).toEqual([])
  })

  it('a login not completed within timeoutMs is cancelled in Codex and rejects REQUEST_TIMEOUT', async () => {
    const codexPath = fake({
      calls: { 'account/login/start': { result: { type: 'chatgpt', loginId: 'l1', authUrl: AUTH_URL } }, 'account/login/cancel': CANCEL },
    })
    const login = startLogin({ codexPath, timeoutMs: 300 })
    await expect(login.completed).rejects.toMatchObject({ code: 'REQUEST_TIMEOUT', message: 'the login did not complete within 300 ms', retryable: true })
    expect(fakeCodexRuns(codexPath)[0].requests('account/login/cancel')).toEqual([{ loginId: 'l1' }])
  })

  it('a second browser login while one runs fails at once with LOGIN_IN_PROGRESS, and the first goes on', async () => {
    const codexPath = fake({
      calls: { 'account/login/start': { result: { type: 'chatgpt', loginId: 'l1', authUrl: AUTH_URL } }, 'account/login/cancel': CANCEL },
    })
    const first = startLogin({ codexPath })
    const second = startLogin({ codexPath })
    await expect(second.started).rejects.toMatchObject({ name: 'CallError', code: 'LOGIN_IN_PROGRESS' })
    await expect(second.completed).rejects.toMatchObject({ code: 'LOGIN_IN_PROGRESS' })
    expect((await first.started).loginId).toBe('l1')
    // One child: the second started nothing.
    expect(fakeCodexRuns(codexPath)).toHaveLength(1)
    first.cancel()
    await expect(first.completed).rejects.toMatchObject({ code: 'CANCELLED' })
    // The port is free again.
    const third = startLogin({ codexPath })
    expect((await third.started).loginId).toBe('l1')
    third.cancel()
    await expect(third.completed).rejects.toMatchObject({ code: 'CANCELLED' })
  })

  it('a browser login started right after cancel() waits for the first child to end, then runs; a third meanwhile is refused', async () => {
    // The first child takes a while to end once cancelled: Codex answers the cancel late.
    const slowCancel = { ...CANCEL, delayMs: 700 }
    const codexPath = fake({
      calls: { 'account/login/start': { result: { type: 'chatgpt', loginId: 'l1', authUrl: AUTH_URL } }, 'account/login/cancel': slowCancel },
    })
    const first = startLogin({ codexPath })
    await first.started
    first.cancel()
    const second = startLogin({ codexPath })
    // The second waits (it is not cancelled): a third at once is still one too many.
    const third = startLogin({ codexPath })
    await expect(third.completed).rejects.toMatchObject({ name: 'CallError', code: 'LOGIN_IN_PROGRESS' })
    expect((await second.started).loginId).toBe('l1')
    // By then the first child was gone: the second started after it, never beside it.
    const [run1, run2] = fakeCodexRuns(codexPath)
    expect(leftByFake(run1.pid), 'the first child once the second started').toEqual([])
    expect(run1.requests('account/login/cancel')).toEqual([{ loginId: 'l1' }])
    expect(run2.requests('account/login/start')).toEqual([{ type: 'chatgpt' }])
    await expect(first.completed).rejects.toMatchObject({ code: 'CANCELLED' })
    expect(fakeCodexRuns(codexPath)).toHaveLength(2)
    // Cancelled while it waits, a login starts nothing.
    second.cancel()
    const waiting = startLogin({ codexPath })
    waiting.cancel('never mind')
    await expect(waiting.completed).rejects.toMatchObject({ code: 'CANCELLED', cause: 'never mind' })
    await expect(second.completed).rejects.toMatchObject({ code: 'CANCELLED' })
    expect(fakeCodexRuns(codexPath)).toHaveLength(2)
    for (const run of fakeCodexRuns(codexPath)) expect(await eventually(() => leftByFake(run.pid).length === 0, BOUND_MS)).toBe(true)
  })

  it('bad options reject both results with a TypeError and start nothing; it never throws', async () => {
    for (const [options, message] of [
      [{ type: 'apiKey' }, /^options\.type:/],
      [{ timeoutMs: 0 }, 'options.timeoutMs must be an integer number of milliseconds from 1 to 2147483647'],
      [{ includeHidden: true }, 'options.includeHidden is not an option of startLogin'],
      [7, 'startLogin: options must be an object'],
    ] as const) {
      let login: ReturnType<typeof startLogin> | undefined
      expect(() => (login = startLogin(options as never))).not.toThrow()
      await expect(login!.started).rejects.toThrow(TypeError)
      await expect(login!.completed).rejects.toThrow(message)
      login!.cancel()
    }
  })
})

describe('thread verbs', () => {
  const verbs: Array<[string, (o: CallOptions) => Promise<unknown>, string, unknown]> = [
    ['renameThread', (o) => renameThread(thread.id, 'Fix the build', o), 'thread/name/set', { threadId: thread.id, name: 'Fix the build' }],
    ['archiveThread', (o) => archiveThread(thread.id, o), 'thread/archive', { threadId: thread.id }],
    ['unarchiveThread', (o) => unarchiveThread(thread.id, o), 'thread/unarchive', { threadId: thread.id }],
    ['deleteThread', (o) => deleteThread(thread.id, o), 'thread/delete', { threadId: thread.id }],
  ]
  for (const [name, call, method, params] of verbs) {
    it(`${name} sends ${method} without loading the thread and resolves with nothing`, async () => {
      const { value, error, runs, sent } = await against({ calls: { [method]: { result: { thread } } } }, call)
      expect(error).toBeUndefined()
      expect(value).toBeUndefined()
      expect(sent).toEqual([...HANDSHAKE, method])
      expect(runs[0].requests(method)).toEqual([params])
    })
  }

  it('updateThreadMetadata sends thread/metadata/update as given, without loading the thread, and resolves with the thread', async () => {
    const updated = { ...thread, gitInfo: { branch: 'release', sha: null, originUrl: null } }
    const { value, error, runs, sent } = await against({ calls: { 'thread/metadata/update': { result: { thread: updated } } } }, (o) =>
      updateThreadMetadata(thread.id, { gitInfo: { branch: 'release', sha: null } }, o),
    )
    expect(error).toBeUndefined()
    expect(value).toEqual(updated)
    expect(sent).toEqual([...HANDSHAKE, 'thread/metadata/update'])
    expect(runs[0].requests('thread/metadata/update')).toEqual([{ threadId: thread.id, gitInfo: { branch: 'release', sha: null } }])
  })

  it('updateThreadMetadata with gitInfo: null clears every fact (Codex refuses a patch that sets none)', async () => {
    const updated = { ...thread, gitInfo: null }
    const script = { calls: { 'thread/metadata/update': { result: { thread: updated } } } }
    const { value, error, runs } = await against(script, (o) => updateThreadMetadata(thread.id, { gitInfo: null }, o))
    expect(error).toBeUndefined()
    expect(value).toEqual(updated)
    expect(runs[0].requests('thread/metadata/update')).toEqual([{ threadId: thread.id, gitInfo: { sha: null, branch: null, originUrl: null } }])
    // The fake refuses what Codex refuses: a patch that sets no field.
    const refused = await against(script, (o) => request('thread/metadata/update', { threadId: thread.id, gitInfo: null }, o))
    expect(refused.error).toMatchObject({ code: 'REQUEST_FAILED', message: 'thread metadata update must include at least one field' })
  })

  it('a call answered with a null result (JSON-RPC allows it) resolves', async () => {
    const { error, sent } = await against({ calls: { 'thread/name/set': { result: null } } }, (o) => renameThread(thread.id, 'n', o))
    expect(error).toBeUndefined()
    expect(sent).toEqual([...HANDSHAKE, 'thread/name/set'])
  })

  it('revertThread loads the thread read-only in its own directory, then reverts', async () => {
    const { value, runs, sent } = await against({ calls: { 'thread/revert': { result: { thread, turnsBackwardsCursor: null } } } }, (o) =>
      revertThread(thread.id, { ...o, beforeTurnId: 'turn-2' }),
    )
    expect(value).toBeUndefined()
    expect(sent).toEqual([...HANDSHAKE, 'thread/resume', 'thread/revert'])
    expect(runs[0].requests('thread/resume')).toEqual([{ threadId: thread.id, approvalPolicy: 'never', sandbox: 'read-only' }])
    expect(runs[0].requests('thread/revert')).toEqual([{ threadId: thread.id, beforeTurnId: 'turn-2' }])
    const unknown = await against({ calls: { 'thread/revert': { error: { code: -32600, message: 'turn not found: nope' } } } }, (o) =>
      revertThread(thread.id, { ...o, beforeTurnId: 'nope' }),
    )
    expect(unknown.error).toMatchObject({ code: 'REQUEST_FAILED', message: 'turn not found: nope' })
  })

  it('compactThread waits for the compaction turn and resolves with its usage', async () => {
    const usage = (input: number, output: number) => ({ totalTokens: input + output, inputTokens: input, cachedInputTokens: 0, outputTokens: output, reasoningOutputTokens: 0 })
    const turn = (status: string) => ({ threadId: thread.id, turn: { id: 'compact-1', status, items: [] } })
    const { value, sent } = await against(
      {
        threadId: thread.id,
        calls: {
          'thread/compact/start': {
            result: {},
            notifications: [
              { method: 'turn/started', params: turn('inProgress') },
              { method: 'thread/tokenUsage/updated', params: { threadId: thread.id, turnId: 'compact-1', tokenUsage: { total: usage(900, 90), last: usage(300, 40) } }, delayMs: 20 },
              { method: 'turn/completed', params: turn('completed'), delayMs: 20 },
            ],
          },
        },
      },
      (o) => compactThread(thread.id, o),
    )
    expect(value).toEqual({ usage: { input: 300, cacheRead: 0, output: 40, reasoning: 0, total: 340 } })
    expect(sent).toEqual([...HANDSHAKE, 'thread/resume', 'thread/compact/start'])
  })
})

describe('goals, skills, MCP status', () => {
  it('readGoal, setGoal and clearGoal never load the thread', async () => {
    const read = await against({ calls: { 'thread/goal/get': { result: { goal } } } }, (o) => readGoal(thread.id, o))
    expect(read.value).toEqual(goal)
    const none = await against({ calls: { 'thread/goal/get': { result: { goal: null } } } }, (o) => readGoal(thread.id, o))
    expect(none.value).toBeNull()
    const set = await against({ calls: { 'thread/goal/set': { result: { goal } } } }, (o) =>
      setGoal(thread.id, { objective: 'Ship it', tokenBudget: null }, o),
    )
    expect(set.value).toEqual(goal)
    expect(set.runs[0].requests('thread/goal/set')).toEqual([{ threadId: thread.id, objective: 'Ship it', tokenBudget: null }])
    const cleared = await against({ calls: { 'thread/goal/clear': { result: { cleared: true } } } }, (o) => clearGoal(thread.id, o))
    expect(cleared.value).toBeUndefined()
    for (const { sent } of [read, none, set, cleared]) expect(sent).not.toContain('thread/resume')
  })

  it('listSkills asks for cwd and gives each skill as Codex described it', async () => {
    const cwd = process.cwd()
    const skill = { name: 'deploy', description: 'Deploys', path: `${cwd}/.agents/skills/deploy/SKILL.md`, scope: 'repo', enabled: true }
    const { value, runs } = await against({ calls: { 'skills/list': { result: { data: [{ cwd, skills: [skill], errors: [] }] } } } }, (o) =>
      listSkills({ ...o, cwd }),
    )
    expect(value).toEqual([skill])
    expect(runs[0].requests('skills/list')).toEqual([{ cwds: [cwd] }])
  })

  it('listMcpServers starts none of them: a thread with every server disabled, plugins off', async () => {
    const script: FakeCodexScript = { mcpServers: { docs: { config: { command: 'docs-server' } }, off: { config: { url: 'http://127.0.0.1:9/mcp', enabled: false } } }, pageSize: 1 }
    const { value, runs, sent } = await against(script, listMcpServers)
    expect((value as Array<{ name: string; runtimeStatus: string }>).map((s) => [s.name, s.runtimeStatus])).toEqual([
      ['docs', 'notStarted'],
      ['off', 'disabled'],
    ])
    expect(sent).toEqual([...HANDSHAKE, 'config/read', 'thread/start', 'mcpServerStatus/list', 'mcpServerStatus/list'])
    expect(runs[0].requests('thread/start')[0]).toMatchObject({ sandbox: 'read-only', config: { mcp_servers: { docs: { enabled: false }, off: { enabled: false } } } })
    expect(runs[0].argv).toContain('features.plugins=false')
    // With connect: as Codex asks without a thread.
    const connected = await against(script, (o) => listMcpServers({ ...o, connect: true }))
    expect((connected.value as Array<{ runtimeStatus: string }>).map((s) => s.runtimeStatus)).toEqual(['connected', 'connected'])
    expect(connected.sent).toEqual([...HANDSHAKE, 'mcpServerStatus/list', 'mcpServerStatus/list'])
    expect(connected.runs[0].argv).toEqual(['app-server'])
  })
})

describe('request', () => {
  it('sends any method with its params and hands the result back as sent', async () => {
    const { value, runs } = await against({ calls: { 'thread/loaded/list': { result: { data: [thread.id], nextCursor: null } } } }, (o) =>
      request('thread/loaded/list', { limit: 2 }, o),
    )
    expect(value).toEqual({ data: [thread.id], nextCursor: null })
    expect(runs[0].requests('thread/loaded/list')).toEqual([{ limit: 2 }])
    const bare = await against({ calls: { 'config/mcpServer/reload': { result: {} } } }, (o) => request('config/mcpServer/reload', undefined, o))
    expect(bare.value).toEqual({})
    expect(bare.runs[0].requests('config/mcpServer/reload')).toEqual([{}])
  })

  it('refuses the methods of a turn with a TypeError naming what to use, starting nothing', async () => {
    const codexPath = fake({})
    for (const [method, use] of [
      ['turn/start', 'runTurn'],
      ['turn/steer', 'Turn.steer()'],
      ['turn/interrupt', 'Turn.abort()'],
      ['thread/start', 'runTurn'],
      ['thread/resume', 'runTurn'],
      ['review/start', 'runReview'],
      ['initialize', 'every call sends it itself'],
    ]) {
      const error = await request(method as never, {}, { codexPath }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(TypeError)
      expect((error as TypeError).message).toContain(`does not send ${method}`)
      expect((error as TypeError).message).toContain(use)
    }
    expect(fakeCodexRuns(codexPath)).toEqual([])
  })
})

describe('a method this Codex lacks is METHOD_UNSUPPORTED on every call', () => {
  const calls: Array<[string, (o: CallOptions) => Promise<unknown>, string]> = [
    ['loginWithApiKey', (o) => loginWithApiKey(KEY, o), 'account/login/start'],
    ['logout', logout, 'account/logout'],
    ['renameThread', (o) => renameThread('t', 'n', o), 'thread/name/set'],
    ['archiveThread', (o) => archiveThread('t', o), 'thread/archive'],
    ['unarchiveThread', (o) => unarchiveThread('t', o), 'thread/unarchive'],
    ['deleteThread', (o) => deleteThread('t', o), 'thread/delete'],
    ['revertThread', (o) => revertThread('t', { ...o, beforeTurnId: 'u' }), 'thread/revert'],
    ['compactThread', (o) => compactThread('t', o), 'thread/compact/start'],
    ['readGoal', (o) => readGoal('t', o), 'thread/goal/get'],
    ['setGoal', (o) => setGoal('t', { status: 'paused' }, o), 'thread/goal/set'],
    ['clearGoal', (o) => clearGoal('t', o), 'thread/goal/clear'],
    ['listSkills', listSkills, 'skills/list'],
    ['listMcpServers connect', (o) => listMcpServers({ ...o, connect: true }), 'mcpServerStatus/list'],
    ['request', (o) => request('modelProvider/list', {}, o), 'modelProvider/list'],
  ]
  for (const [name, call, method] of calls) {
    it(name, async () => {
      const script: FakeCodexScript = method === 'mcpServerStatus/list' ? { calls: { [method]: { error: { code: -32601, message: 'Method not found' } } } } : {}
      const { error } = await against(script, call)
      expect(error).toBeInstanceOf(CallError)
      expect(error).toMatchObject({ code: 'METHOD_UNSUPPORTED', detail: { method, codexVersion: expect.any(String) } })
    })
  }

  it('a startLogin too (both results)', async () => {
    const login = startLogin({ codexPath: fake({}) })
    await expect(login.started).rejects.toMatchObject({ code: 'METHOD_UNSUPPORTED', detail: { method: 'account/login/start' } })
    await expect(login.completed).rejects.toMatchObject({ code: 'METHOD_UNSUPPORTED' })
  })
})

describe('bad arguments reject with a TypeError naming them (nothing throws)', () => {
  const cases: BadCall[] = [
    ['apiKey missing', () => loginWithApiKey(undefined as never), 'loginWithApiKey: apiKey must be a non-empty string'],
    ['apiKey empty', () => loginWithApiKey('  '), 'loginWithApiKey: apiKey must be a non-empty string'],
    ['name', () => renameThread('t', ''), 'renameThread: name must be a non-empty string'],
    ['threadId', () => archiveThread(''), 'archiveThread: threadId must be a non-empty string'],
    ['beforeTurnId', () => revertThread('t', {} as never), 'options.beforeTurnId must be a non-empty string (the first turn to remove)'],
    ['goal not an object', () => setGoal('t', 'ship' as never), 'setGoal: goal must be an object'],
    ['goal empty', () => setGoal('t', {}), 'goal must set at least one of objective, status and tokenBudget'],
    ['goal field', () => setGoal('t', { colour: 'red' } as never), /unknown field `colour`/],
    ['goal budget', () => setGoal('t', { tokenBudget: NaN }), 'setGoal: goal.tokenBudget must be a finite number'],
    ['an option of another call', () => listSkills({ connect: true } as CallOptions), 'options.connect is not an option of listSkills'],
    ['method', () => request('' as never), 'request: method must be a non-empty string'],
    ['params', () => request('thread/loaded/list', { limit: 1n } as never), /^request: params\.limit is a BigInt/],
    ['metadata missing', () => updateThreadMetadata('t', undefined as never), 'updateThreadMetadata: metadata must be an object { gitInfo }'],
    ['metadata empty', () => updateThreadMetadata('t', {}), 'updateThreadMetadata: metadata must set gitInfo (null clears it)'],
    [
      'metadata of no fact',
      () => updateThreadMetadata('t', { gitInfo: {} }),
      'updateThreadMetadata: metadata.gitInfo must set at least one of sha, branch and originUrl (null clears one; gitInfo: null clears them all)',
    ],
    ['metadata field', () => updateThreadMetadata('t', { title: 'x' } as never), /^updateThreadMetadata: metadata\.title: unknown field `title`/],
  ]
  itRejectsWithTypeErrors(cases)
})

describe('exports', () => {
  it('are the same from CommonJS and ESM', async () => {
    const esm = await import('../../index.mjs')
    const names = ['loginWithApiKey', 'startLogin', 'logout', 'renameThread', 'archiveThread', 'unarchiveThread', 'deleteThread', 'revertThread']
    names.push('compactThread', 'readGoal', 'setGoal', 'clearGoal', 'listSkills', 'listMcpServers', 'request', 'updateThreadMetadata')
    for (const name of names as Array<keyof typeof cjs>) {
      expect(typeof cjs[name]).toBe('function')
      expect(esm[name]).toBe(cjs[name])
    }
  })
})
