// The calls around turns through the addon, against the test kit's fake: what each sends and
// resolves with, every failure as a CallError, TypeErrors thrown by the call itself, and no
// process of a call left once its promise has settled.
import { realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { describe, expect, it } from 'vitest'
import * as cjs from '../../index.js'
import { CallError, CodexError, forkThread, listModels, listThreads, readAccount, readThread } from '../../index.js'
import type { CallOptions } from '../../index.js'
import { fakeCodexRuns } from '../../testing/index.js'
import type { FakeCodexScript } from '../../testing/index.js'
import { docBlock } from '../support/docs.js'
import { fakesOfThisFile } from '../support/fakes-of-a-file.js'
import { itRejectsWithTypeErrors, type BadCall } from '../support/rejected-type-errors.js'
import { FIRING_MS, eventually, leftByFake } from '../support/procs.js'

const fake = fakesOfThisFile()

/**
 * Runs `call` against a fake playing `script`; once it settled, nothing of its child may be
 * running (at once, not eventually: the child is ended before the promise settles).
 */
async function against<T>(script: FakeCodexScript, call: (options: CallOptions) => Promise<T>, options: CallOptions = {}) {
  const codexPath = fake(script)
  const settled = await call({ codexPath, ...options }).then(
    (value) => ({ value, error: undefined }),
    (error: unknown) => ({ value: undefined, error }),
  )
  const runs = fakeCodexRuns(codexPath)
  for (const run of runs) expect(leftByFake(run.pid), `group ${run.pid} once the call settled`).toEqual([])
  return { ...settled, runs }
}

/** The child's environment without an API key variable (the host's may have one). */
const NO_KEY = { OPENAI_API_KEY: '', CODEX_API_KEY: '' }

const model = (id: string, hidden = false) => ({ id, model: id, displayName: id.toUpperCase(), hidden, isDefault: false })
const RATE_LIMITS_REFUSED = { error: { code: -32600, message: 'codex account authentication required to read rate limits' } }

describe('readAccount', () => {
  it('reports no login, and no rate limits where the server refuses them, from one child', async () => {
    const { value, runs } = await against(
      { account: { account: null, requiresOpenaiAuth: true }, calls: { 'account/rateLimits/read': RATE_LIMITS_REFUSED } },
      readAccount,
      { env: NO_KEY },
    )
    expect(value).toEqual({ account: null, requiresOpenaiAuth: true, rateLimits: null, auth: { ready: false, via: null } })
    expect(runs).toHaveLength(1)
    const [run] = runs
    expect(run.argv).toEqual(['app-server'])
    // No cwd given: a neutral directory, not wherever the host happens to be.
    expect(realpathSync(run.cwd)).toBe(realpathSync(tmpdir()))
    expect(run.received.map((m) => m.method)).toEqual(['initialize', 'initialized', 'account/read', 'account/rateLimits/read'])
    expect(run.exitCode).toBe(0)
  })

  it('hands on the account and the rate limits verbatim', async () => {
    const limits = { rateLimits: { limitId: 'codex', primary: { usedPercent: 40, windowDurationMins: 300, resetsAt: 1 } }, rateLimitsByLimitId: null }
    const account = { type: 'chatgpt', email: 'dev@example.com', planType: 'pro', workspaceName: null }
    const { value } = await against(
      { account: { account, requiresOpenaiAuth: true }, calls: { 'account/rateLimits/read': { result: limits } } },
      readAccount,
    )
    expect(value).toEqual({ account, requiresOpenaiAuth: true, rateLimits: limits, auth: { ready: true, via: 'account' } })
  })

  it('says a turn can authenticate with an API key in the child environment, as a turn decides it', async () => {
    const script = { account: { account: null, requiresOpenaiAuth: true }, calls: { 'account/rateLimits/read': RATE_LIMITS_REFUSED } }
    const keyed = await against(script, readAccount, { env: { ...NO_KEY, OPENAI_API_KEY: 'sk-in-the-environment' } })
    expect(keyed.value).toMatchObject({ account: null, auth: { ready: true, via: 'apiKeyEnv' } })
    const custom = await against({ account: { account: null, requiresOpenaiAuth: false } }, readAccount, { env: NO_KEY })
    expect(custom.value).toMatchObject({ account: null, requiresOpenaiAuth: false, auth: { ready: true, via: 'notRequired' } })
  })

  it('fails with the server message verbatim when account/read is refused', async () => {
    const refused = { error: { code: -32603, message: 'the account store is unreadable' } }
    const { error } = await against({ answer: { 'account/read': refused } }, readAccount)
    expect(error).toBeInstanceOf(CallError)
    expect(error).toBeInstanceOf(CodexError)
    expect(error).toMatchObject({
      name: 'CallError',
      source: 'jsonrpc',
      code: 'REQUEST_FAILED',
      message: 'the account store is unreadable',
      detail: { method: 'account/read', code: -32603 },
      retryable: false,
    })
  })

  it('METHOD_UNSUPPORTED where this Codex has no account/read', async () => {
    const refused = { error: { code: -32600, message: 'Invalid request: unknown variant `account/read`' } }
    const { error } = await against({ answer: { 'account/read': refused } }, readAccount)
    expect(error).toMatchObject({ name: 'CallError', code: 'METHOD_UNSUPPORTED', detail: { method: 'account/read' } })
  })
})

describe('listModels', () => {
  it('reads every page and leaves hidden models out', async () => {
    const pages = [[model('a'), model('internal', true)], [model('b')]]
    const { value, runs } = await against({ calls: { 'model/list': { pages } } }, listModels)
    expect(value).toEqual([model('a'), model('b')])
    expect(runs[0].requests('model/list')).toEqual([{}, { cursor: '1' }])
  })

  it('asks for hidden models with includeHidden and keeps them', async () => {
    const pages = [[model('a'), model('internal', true)]]
    const { value, runs } = await against({ calls: { 'model/list': { pages } } }, (o) => listModels({ ...o, includeHidden: true }))
    expect(value).toEqual(pages[0])
    expect(runs[0].requests('model/list')).toEqual([{ includeHidden: true }])
  })
})

describe('threads', () => {
  const thread = { id: '019a0000-0000-7000-8000-0000000000aa', preview: 'Say hello.', cwd: '/w', turns: [] }

  it('lists one page, filtered as asked', async () => {
    const cwd = realpathSync(tmpdir())
    const page = { result: { data: [thread], nextCursor: 'next', backwardsCursor: null } }
    const { value, runs } = await against({ calls: { 'thread/list': page } }, (o) =>
      listThreads({ ...o, cwd, limit: 5, cursor: 'c1', archived: false }),
    )
    expect(value).toEqual({ threads: [thread], nextCursor: 'next' })
    expect(runs[0].requests('thread/list')).toEqual([{ limit: 5, cursor: 'c1', archived: false, cwd }])
    expect(runs[0].cwd).toBe(cwd)
  })

  it('reads a thread verbatim and forks one read-only', async () => {
    const read = await against({ calls: { 'thread/read': { result: { thread } } } }, (o) => readThread(thread.id, { ...o, includeTurns: true }))
    expect(read.value).toEqual(thread)
    expect(read.runs[0].requests('thread/read')).toEqual([{ threadId: thread.id, includeTurns: true }])
    const fork = await against({ calls: { 'thread/fork': { result: { thread: { ...thread, id: 'forked' } } } } }, (o) =>
      forkThread(thread.id, { ...o, lastTurnId: 'turn-1' }),
    )
    expect(fork.value).toEqual({ threadId: 'forked' })
    expect(fork.runs[0].requests('thread/fork')).toEqual([
      { threadId: thread.id, lastTurnId: 'turn-1', approvalPolicy: 'never', sandbox: 'read-only' },
    ])
  })
})

describe('failures', () => {
  it('REQUEST_TIMEOUT for a request the server never answers', async () => {
    // Room for the fake's start-up: every request, initialize included, has the same deadline.
    const { error } = await against({ calls: { 'model/list': 'never' } }, (o) => listModels({ ...o, requestTimeoutMs: FIRING_MS }))
    expect(error).toMatchObject({ source: 'jsonrpc', code: 'REQUEST_TIMEOUT', message: `model/list got no response within ${FIRING_MS} ms` })
  })

  it('a method this Codex lacks: METHOD_UNSUPPORTED with its refusal and the version', async () => {
    const { error } = await against({}, listModels)
    expect(error).toMatchObject({
      code: 'METHOD_UNSUPPORTED',
      message: 'Invalid request: unknown variant `model/list`',
      detail: { method: 'model/list', code: -32600, codexVersion: expect.any(String) },
      retryable: false,
    })
  })

  it('PROCESS_EXITED with the stderr tail when the server exits instead of answering', async () => {
    const { error } = await against({ calls: { 'thread/list': { exit: { code: 3, stderr: 'the store is locked' } } } }, listThreads)
    expect(error).toMatchObject({ source: 'exit', code: 'PROCESS_EXITED', message: 'codex app-server exited with code 3 before it answered thread/list' })
    expect((error as CallError).detail).toMatchObject({ exitCode: 3, exitedByItself: true, stderrTail: ['the store is locked'] })
  })

  it('CODEX_NOT_FOUND and CODEX_NOT_EXECUTABLE as a turn reports them', async () => {
    await expect(readAccount({ codexPath: '/nonexistent/codex' })).rejects.toMatchObject({ name: 'CallError', source: 'spawn', code: 'CODEX_NOT_FOUND' })
    await expect(listModels({ codexPath: tmpdir() })).rejects.toMatchObject({ source: 'spawn', code: 'CODEX_NOT_EXECUTABLE' })
  })

  it('CANCELLED with the reason as cause: the child is ended at once', async () => {
    const controller = new AbortController()
    const reason = new Error('the picker closed')
    const started = Date.now()
    // Once the server was asked (however long its start took on this machine), never before.
    const asked = (codexPath: string) => fakeCodexRuns(codexPath).some((run) => run.requests('model/list').length > 0)
    const { error, runs } = await against({ calls: { 'model/list': 'never' } }, (o) => {
      void eventually(() => asked(o.codexPath!), 20_000).then(() => controller.abort(reason))
      return listModels({ ...o, signal: controller.signal })
    })
    expect(error).toBeInstanceOf(CallError)
    expect(error).toMatchObject({ code: 'CANCELLED', message: 'listModels was cancelled: the picker closed', cause: reason })
    // Not the request's deadline (30 s): the abort ended it.
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(runs).toHaveLength(1)
  })

  it('an aborted signal starts nothing', async () => {
    const codexPath = fake({})
    const reason = 'not now'
    const error = await readAccount({ codexPath, signal: AbortSignal.abort(reason) }).catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'CallError', code: 'CANCELLED', cause: reason })
    expect(fakeCodexRuns(codexPath)).toEqual([])
  })
})

describe('bad input is a TypeError the call rejects with (it never throws)', () => {
  const cases: BadCall[] = [
    ['options not an object', () => readAccount(7 as never), 'readAccount: options must be an object'],
    ['signal', () => listModels({ signal: {} as AbortSignal }), 'options.signal must be an AbortSignal'],
    ['requestTimeoutMs', () => listThreads({ requestTimeoutMs: -1 }), 'options.requestTimeoutMs must be an integer number of milliseconds from 1 to 2147483647'],
    ['requestTimeoutMs 0', () => listThreads({ requestTimeoutMs: 0 }), 'options.requestTimeoutMs must be an integer number of milliseconds from 1 to 2147483647'],
    ['limit', () => listThreads({ limit: 1.5 }), /^options\.limit: invalid type: floating/],
    ['limit NaN', () => listThreads({ limit: NaN }), 'options.limit must be a finite number'],
    ['limit 0', () => listThreads({ limit: 0 }), 'options.limit must be greater than 0'],
    ['an option of another call', () => readAccount({ includeHidden: true } as CallOptions), 'options.includeHidden is not an option of readAccount'],
    ['an unknown option', () => listModels({ model: 'x' } as CallOptions), /model/],
    ['relative cwd', () => listThreads({ cwd: 'rel' }), /^options\.cwd must be an absolute path/],
    ['env', () => readAccount({ env: { A: 1 } as never }), /^options\.env\.A:/],
    ['empty threadId', () => readThread(''), 'readThread: threadId must be a non-empty string'],
    ['threadId not a string', () => forkThread(7 as never), 'forkThread: threadId must be a non-empty string'],
    ['empty lastTurnId', () => forkThread('t', { lastTurnId: '' }), 'options.lastTurnId must be a non-empty string'],
  ]
  itRejectsWithTypeErrors(cases)
})

describe('exports', () => {
  it('are the same from CommonJS and ESM', async () => {
    const esm = await import('../../index.mjs')
    for (const name of ['readAccount', 'listModels', 'listThreads', 'readThread', 'forkThread', 'CallError'] as const) {
      expect(esm[name]).toBe(cjs[name])
    }
  })
})

describe("the kit's calls example of docs/testing-your-app.md", () => {
  it('runs as written there', async () => {
    const codexPath = fake({
      account: { account: null, requiresOpenaiAuth: true },
      calls: {
        'account/rateLimits/read': { error: { code: -32600, message: 'codex account authentication required to read rate limits' } },
        'model/list': { pages: [[{ id: 'gpt-a', model: 'gpt-a', displayName: 'A', hidden: false }], [{ id: 'gpt-b', model: 'gpt-b', displayName: 'B', hidden: true }]] },
      },
    })
    expect(await readAccount({ codexPath })).toMatchObject({ account: null, requiresOpenaiAuth: true, rateLimits: null })
    expect((await listModels({ codexPath })).map((m) => m.id)).toEqual(['gpt-a'])
    const example = docBlock('docs/testing-your-app.md', 'Without Codex: a scripted fake app-server', { containing: "'model/list'" })
    expect(example).toContain("expect((await listModels({ codexPath })).map((m) => m.id)).toEqual(['gpt-a'])")
    expect(example).toContain("'model/list': { pages: [[{ id: 'gpt-a', model: 'gpt-a', displayName: 'A', hidden: false }], [{ id: 'gpt-b', model: 'gpt-b', displayName: 'B', hidden: true }]] },")
  })
})
