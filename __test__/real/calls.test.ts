// Real `codex app-server` (pinned @openai/codex, or RENNET_TEST_CODEX_BIN: `pnpm compat` runs this
// file per version, the column of a test being its title up to the colon) offline: the calls
// around turns. Who is logged in (nobody; an API key), the models against a plain `model/list`,
// the threads two real turns left (listed, read, forked, and a turn on the fork), and what a
// Codex without one of the methods answers. After every call nothing it started is running.
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { CallError, forkThread, listModels, listThreads, readAccount, readThread } from '../../index.js'
import { archiveThread, clearGoal, compactThread, deleteThread, listMcpServers, listSkills, loginWithApiKey, logout } from '../../index.js'
import { readGoal, renameThread, request, revertThread, setGoal, setLogger, startLogin, unarchiveThread, updateThreadMetadata } from '../../index.js'
import type { CallOptions, LogRecord } from '../../index.js'
import { codexUnderTest, isolatedEnv } from '../../testing/codex-home.js'
import { messageResponse, usage as sseUsage } from '../../testing/mock-responses.js'
import { oneShot } from '../../bench/baseline-call.mjs'
import { describeProcess, isAlive } from '../support/procs.js'
import { liveWithMarker, runRealTurn } from './harness.js'
import type { RealTurnResult } from './harness.js'

const MARK_VAR = 'RENNET_REAL_RUN'
const STDIO_SERVER = join(__dirname, '..', '..', 'scripts', 'mcp-fixture', 'stdio-server.mjs')

/** Runs a call with a marker in its child's environment; once it settled nothing carries it. */
async function settled<T>(call: (options: CallOptions) => Promise<T>, options: CallOptions): Promise<T> {
  const mark = randomUUID()
  try {
    return await call({ requestTimeoutMs: 15_000, ...options, env: { ...options.env, [MARK_VAR]: mark } })
  } finally {
    const left = liveWithMarker(mark)
    expect(left, `left by the call:\n${left.map(describeProcess).join('\n')}`).toEqual([])
  }
}

/** A fresh HOME and CODEX_HOME with the default (OpenAI) provider, nobody logged in. */
function bareHome() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-calls-')))
  const home = join(root, 'home')
  const codexHome = join(root, 'codex-home')
  for (const dir of [home, codexHome]) mkdirSync(dir, { recursive: true })
  writeFileSync(join(codexHome, 'config.toml'), '')
  return { root, codexHome, env: isolatedEnv(home, codexHome), cleanup: () => rmSync(root, { recursive: true, force: true }) }
}

describe('real codex app-server: calls around turns', () => {
  let bare: ReturnType<typeof bareHome>
  beforeAll(() => {
    bare = bareHome()
  })
  afterAll(() => bare.cleanup())

  it('account: readAccount with nobody logged in and the default provider', async () => {
    const codexPath = codexUnderTest().path
    const started = Date.now()
    const info = await settled(readAccount, { codexPath, env: bare.env })
    expect(info).toEqual({ account: null, requiresOpenaiAuth: true, rateLimits: null, auth: { ready: false, via: null } })
    console.log(`readAccount (not logged in): ${Date.now() - started} ms`)
  })

  it('apiKey: readAccount logged in with an API key (codex login --with-api-key)', async () => {
    const home = bareHome()
    try {
      const codexPath = codexUnderTest().path
      execFileSync(codexPath, ['login', '--with-api-key'], { input: 'sk-test-not-a-real-key\n', env: { ...process.env, ...home.env }, stdio: ['pipe', 'ignore', 'ignore'] })
      const auth = JSON.parse(readFileSync(join(home.codexHome, 'auth.json'), 'utf8'))
      expect(String(auth.auth_mode).toLowerCase()).toBe('apikey')
      const info = await settled(readAccount, { codexPath, env: home.env })
      // An API key has no plan: the rate limits stay refused.
      expect(info).toEqual({ account: { type: 'apiKey' }, requiresOpenaiAuth: true, rateLimits: null, auth: { ready: true, via: 'account' } })
    } finally {
      home.cleanup()
    }
  })

  it('models: listModels gives the models a plain model/list reads, hidden ones only when asked', async () => {
    const codexPath = codexUnderTest().path
    const pages = async (includeHidden: boolean) => {
      const models: Array<{ id: string; hidden: boolean }> = []
      let cursor: string | null = null
      do {
        const params: Record<string, unknown> = cursor ? { cursor, includeHidden } : { includeHidden }
        const [answer] = await oneShot({ codexPath, env: bare.env, cwd: tmpdir(), requests: [['model/list', params]] })
        models.push(...answer.result.data)
        cursor = answer.result.nextCursor
      } while (cursor)
      return models
    }
    const direct = await pages(false)
    const shown = await settled(listModels, { codexPath, env: bare.env })
    expect(shown).toEqual(direct.filter((m) => !m.hidden))
    expect(shown.length).toBeGreaterThan(0)
    const all = await settled((o) => listModels({ ...o, includeHidden: true }), { codexPath, env: bare.env })
    expect(all).toEqual(await pages(true))
    console.log(`listModels: ${shown.length} shown, ${all.length} with hidden ones`)
  })

  it('threads: two turns are listed and read; a fork through the first turn runs a turn of its own', async () => {
    const first = await runRealTurn({ scenario: [messageResponse('First answer.')], prompt: 'First question.', keep: true })
    try {
      expect(first.terminal.status).toBe('completed')
      const threadId = first.terminal.threadId!
      const firstTurn = first.terminal.turnId!
      const second = await runRealTurn({
        scenario: [messageResponse('Second answer.')],
        prompt: 'Second question.',
        within: first,
        extra: { threadId },
      })
      expect(second.terminal.status).toBe('completed')
      const calls: CallOptions = { codexPath: first.home.codexPath, env: first.home.env, cwd: first.cwd.path }

      const listed = await settled(listThreads, calls)
      expect(listed.threads.map((t) => t.id)).toContain(threadId)
      expect(listed.threads.find((t) => t.id === threadId)!.cwd).toBe(first.cwd.path)
      // Elsewhere there is nothing.
      const elsewhere = await settled(listThreads, { ...calls, cwd: tmpdir() })
      expect(elsewhere.threads.map((t) => t.id)).not.toContain(threadId)

      const record = await settled((o) => readThread(threadId, { ...o, includeTurns: true }), calls)
      expect(record.id).toBe(threadId)
      expect(record.turns.map((t) => t.id)).toEqual([firstTurn, second.terminal.turnId])
      const opening = record.turns[0].items[0]
      expect(opening).toMatchObject({ type: 'userMessage' })
      expect(JSON.stringify(opening)).toContain('First question.')

      const { threadId: forked } = await settled((o) => forkThread(threadId, { ...o, lastTurnId: firstTurn }), calls)
      expect(forked).not.toBe(threadId)
      // 0.171.0 lists a fork at once; 0.155.0 to 0.166.0 only once it had a turn of its own.
      const listedAtOnce = (await settled(listThreads, calls)).threads.some((t) => t.id === forked)
      const [major, minor] = codexUnderTest().version.split('.').map(Number)
      if (major > 0 || minor >= 171) expect(listedAtOnce, 'the fork is listed at once').toBe(true)

      const onFork = await runRealTurn({ scenario: [messageResponse('Forked answer.')], prompt: 'Third question.', within: first, extra: { threadId: forked } })
      expect(onFork.terminal).toMatchObject({ status: 'completed', threadId: forked, finalMessage: 'Forked answer.' })
      expect((await settled(listThreads, calls)).threads.map((t) => t.id)).toContain(forked)
      // The fork carries the first turn, not the second.
      const sent = JSON.stringify(first.mock.requests.at(-1)!.body.input)
      expect(sent).toContain('First question.')
      expect(sent).not.toContain('Second question.')
      expect(sent).toContain('Third question.')
    } finally {
      await first.dispose()
    }
  })

  it('missing: a Codex without thread/fork refuses forkThread in its own words (REQUEST_FAILED)', async () => {
    // The real server, with `thread/fork` renamed on its way in to a method no version has: what
    // answers is the server's own refusal of an unknown method.
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-calls-nofork-')))
    try {
      const wrapper = join(dir, 'codex')
      writeFileSync(
        wrapper,
        [
          '#!/usr/bin/env node',
          "const { spawn } = require('node:child_process')",
          `const child = spawn(${JSON.stringify(codexUnderTest().path)}, process.argv.slice(2), { stdio: ['pipe', 'inherit', 'inherit'] })`,
          "let buffered = ''",
          "process.stdin.on('data', (chunk) => {",
          '  buffered += chunk',
          '  let end',
          "  while ((end = buffered.indexOf('\\n')) >= 0) {",
          "    child.stdin.write(buffered.slice(0, end + 1).replace('\"method\":\"thread/fork\"', '\"method\":\"thread/fork/absent\"'))",
          '    buffered = buffered.slice(end + 1)',
          '  }',
          '})',
          "process.stdin.on('end', () => child.stdin.end())",
          "child.on('exit', (code) => process.exit(code ?? 1))",
          '',
        ].join('\n'),
        { mode: 0o755 },
      )
      const error = await settled((o) => forkThread('019a0000-0000-7000-8000-000000000001', o), { codexPath: wrapper, env: bare.env }).catch((e) => e)
      expect(error).toBeInstanceOf(CallError)
      expect(error).toMatchObject({ source: 'jsonrpc', code: 'REQUEST_FAILED', detail: { method: 'thread/fork' } })
      expect(error.message).toMatch(/unknown variant `thread\/fork\/absent`|method not found/i)
      console.log(`forkThread without thread/fork: ${error.message.slice(0, 80)}…`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

// ---------------------------------------------------------------------------------------------
// The calls of #33: logging in and out, the thread verbs on threads real turns made, goals,
// skills, MCP status, request() and a method no Codex has.

/** The first version of the matrix whose threads `thread/revert` takes (see docs/calls.md, Versions). */
const REVERTS_FROM = '0.155.0'
const REVERTS_FROM_MINOR = 155

/** `major.minor` of the Codex under test, to compare with. */
function minorOf(): number {
  const [major, minor] = codexUnderTest().version.split('.').map(Number)
  return major * 1000 + minor
}

/** A thread with two real turns against the mock (kept: the caller disposes of it). */
async function twoTurns(): Promise<{ first: RealTurnResult; threadId: string; turns: string[]; calls: CallOptions }> {
  const first = await runRealTurn({ scenario: [messageResponse('First answer.')], prompt: 'First question.', keep: true })
  try {
    expect(first.terminal.status).toBe('completed')
    const threadId = first.terminal.threadId!
    const second = await runRealTurn({ scenario: [messageResponse('Second answer.')], prompt: 'Second question.', within: first, extra: { threadId } })
    expect(second.terminal.status).toBe('completed')
    const calls: CallOptions = { codexPath: first.home.codexPath, env: first.home.env, cwd: first.cwd.path }
    return { first, threadId, turns: [first.terminal.turnId!, second.terminal.turnId!], calls }
  } catch (error) {
    await first.dispose()
    throw error
  }
}

const KEY = 'sk-rennet-test-not-a-real-key-0123456789'

/**
 * What a scenario of many children may take on a loaded machine (each child is about 0.1 s on
 * an idle one, a second or more when other builds share its two cores): a ceiling, not a
 * measurement.
 */
const SLOW = 180_000

describe('real codex app-server: the calls of #33', () => {
  /** A fresh home with the default provider, nobody logged in. */
  let plain: ReturnType<typeof bareHome>
  beforeAll(() => {
    plain = bareHome()
  })
  afterAll(() => plain.cleanup())

  it('apiKeyLogin: loginWithApiKey stores the key (auth.json), logout removes it; the key in no log record', { timeout: SLOW }, async () => {
    const home = bareHome()
    const records: LogRecord[] = []
    setLogger((r) => records.push(r), { filter: 'rennet_codex=trace' })
    try {
      const codexPath = codexUnderTest().path
      const info = await settled((o) => loginWithApiKey(KEY, o), { codexPath, env: home.env })
      expect(info).toEqual({ account: { type: 'apiKey' }, requiresOpenaiAuth: true, rateLimits: null, auth: { ready: true, via: 'account' } })
      expect(readFileSync(join(home.codexHome, 'auth.json'), 'utf8')).toContain(KEY)
      expect((await settled(readAccount, { codexPath, env: home.env })).account).toEqual({ type: 'apiKey' })
      expect(await settled(logout, { codexPath, env: home.env })).toBeUndefined()
      expect(existsSync(join(home.codexHome, 'auth.json'))).toBe(false)
      expect(await settled(readAccount, { codexPath, env: home.env })).toMatchObject({ account: null, auth: { ready: false, via: null } })
      expect(records.length).toBeGreaterThan(0)
      for (const r of records) expect(JSON.stringify(r)).not.toContain(KEY)
    } finally {
      setLogger(null)
      home.cleanup()
    }
  })

  it('auth: readAccount says ready through an API key in the child environment, as a turn would use it', async () => {
    const env = { ...plain.env, OPENAI_API_KEY: 'sk-in-the-environment' }
    const info = await settled(readAccount, { codexPath: codexUnderTest().path, env })
    expect(info).toMatchObject({ account: null, requiresOpenaiAuth: true, auth: { ready: true, via: 'apiKeyEnv' } })
  })

  it('chatgptLogin: started gives the browser URL; a second at once is LOGIN_IN_PROGRESS; cancel ends it', { timeout: SLOW }, async () => {
    const home = bareHome()
    const mark = randomUUID()
    try {
      const login = startLogin({ codexPath: codexUnderTest().path, env: { ...home.env, [MARK_VAR]: mark }, requestTimeoutMs: 15_000 })
      const second = startLogin({ codexPath: codexUnderTest().path, env: home.env })
      await expect(second.completed).rejects.toMatchObject({ code: 'LOGIN_IN_PROGRESS' })
      const started = await login.started
      expect(started.loginId).toMatch(/\S/)
      expect(started.authUrl).toMatch(/^https:\/\/auth\.openai\.com\/oauth\/authorize\?/)
      // 0.171.0 names 127.0.0.1, 0.150.0 localhost.
      expect(started.authUrl).toMatch(/redirect_uri=http%3A%2F%2F(127\.0\.0\.1|localhost)%3A1455%2Fauth%2Fcallback/)
      expect(started.authUrl).toContain('originator=rennet')
      login.cancel('closed')
      await expect(login.completed).rejects.toMatchObject({ name: 'CallError', code: 'CANCELLED', cause: 'closed' })
      const left = liveWithMarker(mark)
      expect(left, `left by the login:\n${left.map(describeProcess).join('\n')}`).toEqual([])
      expect(existsSync(join(home.codexHome, 'auth.json'))).toBe(false)
    } finally {
      home.cleanup()
    }
  })

  it('deviceLogin: a device-code login offline settles with LOGIN_FAILED in Codex words', async () => {
    const home = bareHome()
    try {
      const login = startLogin({ codexPath: codexUnderTest().path, env: home.env, type: 'chatgptDeviceCode', requestTimeoutMs: 25_000 })
      const error = await login.completed.catch((e: unknown) => e)
      await expect(login.started).rejects.toMatchObject({ code: 'LOGIN_FAILED', message: (error as CallError).message })
      expect(error).toBeInstanceOf(CallError)
      expect(error).toMatchObject({ source: 'jsonrpc', code: 'LOGIN_FAILED', detail: { method: 'account/login/start' } })
      expect((error as CallError).message).toMatch(/device code/i)
      console.log(`device-code login offline: ${(error as CallError).message.slice(0, 100)}`)
    } finally {
      home.cleanup()
    }
  }, 60_000)

  it('verbs: a thread real turns made is renamed, archived, unarchived, found by name and sort, and deleted', { timeout: SLOW }, async () => {
    const { first, threadId, calls } = await twoTurns()
    try {
      const ids = async (options: Parameters<typeof listThreads>[0] = {}) => (await settled(listThreads, { ...calls, ...options })).threads.map((t) => t.id)
      await settled((o) => renameThread(threadId, 'Sidebar title', o), calls)
      const named = (await settled(listThreads, calls)).threads.find((t) => t.id === threadId)
      expect(named?.name).toBe('Sidebar title')
      expect(await ids({ searchTerm: 'Sidebar' })).toEqual([threadId])
      expect(await ids({ searchTerm: 'no such title' })).toEqual([])
      expect(await ids({ sortKey: 'updated_at' })).toContain(threadId)
      // Sub-agent threads only when asked: this one is not one.
      expect(await ids({ sourceKinds: ['subAgentThreadSpawn'] })).not.toContain(threadId)
      const badSort = await settled((o) => listThreads({ ...o, sortKey: 'sideways' as never }), calls).catch((e: unknown) => e)
      expect(badSort).toMatchObject({ code: 'REQUEST_FAILED', detail: { method: 'thread/list' } })
      expect((badSort as CallError).message).toMatch(/unknown variant `sideways`/)

      await settled((o) => archiveThread(threadId, o), calls)
      expect(await ids()).not.toContain(threadId)
      expect(await ids({ archived: true })).toContain(threadId)
      await settled((o) => unarchiveThread(threadId, o), calls)
      expect(await ids()).toContain(threadId)
      expect(await ids({ archived: true })).not.toContain(threadId)

      await settled((o) => deleteThread(threadId, o), calls)
      expect(await ids()).not.toContain(threadId)
      expect(await ids({ archived: true })).not.toContain(threadId)
      await expect(settled((o) => readThread(threadId, o), calls)).rejects.toMatchObject({ code: 'REQUEST_FAILED' })
      expect(first.home.configHash(), 'config.toml untouched').toBe(first.home.initialHash)
    } finally {
      await first.dispose()
    }
  })

  it('metadata: the Git facts of a thread a real turn made are patched, one cleared, and read back', { timeout: SLOW }, async () => {
    const first = await runRealTurn({ scenario: [messageResponse('Noted.')], prompt: 'Note this.', keep: true })
    try {
      expect(first.terminal.status).toBe('completed')
      const threadId = first.terminal.threadId!
      const calls: CallOptions = { codexPath: first.home.codexPath, env: first.home.env, cwd: first.cwd.path }
      const patched = await settled((o) => updateThreadMetadata(threadId, { gitInfo: { branch: 'release', sha: 'abc1234' } }, o), calls)
      expect(patched.id).toBe(threadId)
      expect(patched.gitInfo).toMatchObject({ branch: 'release', sha: 'abc1234' })
      // What is absent stays; null clears.
      const cleared = await settled((o) => updateThreadMetadata(threadId, { gitInfo: { branch: null } }, o), calls)
      expect(cleared.gitInfo).toMatchObject({ branch: null, sha: 'abc1234' })
      expect((await settled((o) => readThread(threadId, o), calls)).gitInfo).toMatchObject({ branch: null, sha: 'abc1234' })
      // `gitInfo: null` clears them all (Codex itself refuses a patch without a field).
      const none = await settled((o) => updateThreadMetadata(threadId, { gitInfo: null }, o), calls)
      expect(none.gitInfo ?? { branch: null, sha: null, originUrl: null }).toMatchObject({ branch: null, sha: null, originUrl: null })
      // A patch of no fact, which Codex refuses too, is a TypeError before any child starts.
      await expect((async () => updateThreadMetadata(threadId, { gitInfo: {} }, calls))()).rejects.toThrow(TypeError)
      expect(first.home.configHash(), 'config.toml untouched').toBe(first.home.initialHash)
    } finally {
      await first.dispose()
    }
  })

  it('revert: the second turn is removed ("edit and resend"), and the next turn sees the first only', { timeout: SLOW }, async () => {
    const { first, threadId, turns, calls } = await twoTurns()
    try {
      const unknown = await settled((o) => revertThread(threadId, { ...o, beforeTurnId: 'no-such-turn' }), calls).catch((e: unknown) => e)
      expect(unknown).toMatchObject({ name: 'CallError', code: 'REQUEST_FAILED', detail: { method: 'thread/revert' } })
      const refused = await settled((o) => revertThread(threadId, { ...o, beforeTurnId: turns[1] }), calls).then(
        () => null,
        (error: unknown) => error,
      )
      if (refused !== null) {
        // Older versions store a thread as one rollout file, which thread/revert does not take.
        expect(refused).toMatchObject({ name: 'CallError', code: 'REQUEST_FAILED', detail: { method: 'thread/revert' } })
        expect((refused as CallError).message).toMatch(/only supports paginated threads/)
        expect(minorOf(), `a Codex from ${REVERTS_FROM} on reverts`).toBeLessThan(REVERTS_FROM_MINOR)
        const kept = await settled((o) => readThread(threadId, { ...o, includeTurns: true }), calls)
        expect(kept.turns.map((t) => t.id)).toEqual(turns)
        console.log(`revertThread on ${codexUnderTest().version}: ${(refused as CallError).message}`)
        return
      }
      const record = await settled((o) => readThread(threadId, { ...o, includeTurns: true }), calls)
      expect(record.turns.map((t) => t.id)).toEqual([turns[0]])
      const again = await runRealTurn({ scenario: [messageResponse('Edited answer.')], prompt: 'Second question, edited.', within: first, extra: { threadId } })
      expect(again.terminal).toMatchObject({ status: 'completed', finalMessage: 'Edited answer.' })
      const sent = JSON.stringify(first.mock.requests.at(-1)!.body.input)
      expect(sent).toContain('First question.')
      expect(sent).not.toContain('Second question.')
      expect(first.home.configHash(), 'config.toml untouched').toBe(first.home.initialHash)
    } finally {
      await first.dispose()
    }
  })

  it('compact: compactThread runs the compaction turn against the model and returns its usage', { timeout: SLOW }, async () => {
    const { first, threadId, calls } = await twoTurns()
    try {
      const before = first.mock.requests.length
      first.mock.push(messageResponse('Summary of the conversation so far.', { usage: sseUsage({ input: 120, output: 12, total: 132 }) }))
      const { usage } = await settled((o) => compactThread(threadId, o), calls)
      expect(first.mock.requests.length).toBe(before + 1)
      console.log(`compaction usage: ${JSON.stringify(usage)}`)
      expect(usage).toMatchObject({ input: 120, output: 12, total: 132 })
      const record = await settled((o) => readThread(threadId, { ...o, includeTurns: true }), calls)
      expect(JSON.stringify(record.turns.at(-1))).toContain('contextCompaction')
      console.log(`compaction request: ${JSON.stringify(first.mock.requests.at(-1)!.body.input).slice(-160)}`)
    } finally {
      await first.dispose()
    }
  })

  it('goals: set, read and cleared without loading the thread: no model request', { timeout: SLOW }, async () => {
    const { first, threadId, calls } = await twoTurns()
    try {
      const requests = first.mock.requests.length
      expect(await settled((o) => readGoal(threadId, o), calls)).toBeNull()
      const goal = await settled((o) => setGoal(threadId, { objective: 'Ship the release' }, o), calls)
      expect(goal).toMatchObject({ threadId, objective: 'Ship the release', status: 'active' })
      expect(await settled((o) => readGoal(threadId, o), calls)).toMatchObject({ objective: 'Ship the release' })
      const paused = await settled((o) => setGoal(threadId, { status: 'paused', tokenBudget: 5000 }, o), calls)
      expect(paused).toMatchObject({ status: 'paused', tokenBudget: 5000 })
      await settled((o) => clearGoal(threadId, o), calls)
      expect(await settled((o) => readGoal(threadId, o), calls)).toBeNull()
      // Nothing continued the goal on its own: no model request from any of these calls.
      expect(first.mock.requests.length).toBe(requests)
    } finally {
      await first.dispose()
    }
  })

  it('skills: repo and user skills for cwd; a skill item brings its SKILL.md to the model, a mention is taken', { timeout: SLOW }, async () => {
    const first = await runRealTurn({ scenario: [messageResponse('Ready.')], prompt: 'Hello.', keep: true })
    try {
      const skill = (dir: string, name: string, body: string) => {
        mkdirSync(join(dir, name), { recursive: true })
        const path = join(dir, name, 'SKILL.md')
        writeFileSync(path, `---\nname: ${name}\ndescription: ${body}\n---\n\n# ${name}\n\n${body} (the skill's own words)\n`)
        return path
      }
      const repoSkill = skill(join(first.cwd.path, '.agents', 'skills'), 'deploy-checklist', 'Steps to deploy this repository.')
      skill(join(first.home.codexHome, 'skills'), 'user-notes', 'Notes the user keeps.')
      const calls: CallOptions = { codexPath: first.home.codexPath, env: first.home.env, cwd: first.cwd.path }
      const skills = await settled(listSkills, calls)
      const byName = new Map(skills.map((s) => [s.name, s]))
      expect(byName.get('deploy-checklist')).toMatchObject({ description: 'Steps to deploy this repository.', scope: 'repo', enabled: true })
      expect(realpathSync(byName.get('deploy-checklist')!.path)).toBe(realpathSync(repoSkill))
      expect(byName.get('user-notes')).toMatchObject({ scope: 'user' })
      // Elsewhere the repository's skill is not offered.
      expect((await settled(listSkills, { ...calls, cwd: plain.root })).map((s) => s.name)).not.toContain('deploy-checklist')

      const deploy = byName.get('deploy-checklist')!
      const turn = await runRealTurn({
        scenario: [messageResponse('Deployed.')],
        within: first,
        extra: {
          prompt: undefined,
          input: [
            { type: 'text', text: 'Deploy it.' },
            { type: 'skill', name: deploy.name, path: deploy.path },
            { type: 'mention', name: 'README', path: join(first.cwd.path, 'README.md') },
          ],
        },
      })
      expect(turn.terminal).toMatchObject({ status: 'completed', finalMessage: 'Deployed.' })
      const sent = JSON.stringify(first.mock.requests.at(-1)!.body.input)
      expect(sent).toContain('Deploy it.')
      expect(sent).toContain("Steps to deploy this repository. (the skill's own words)")
    } finally {
      await first.dispose()
    }
  })

  it('mcp: listMcpServers lists configured servers without starting one; connect starts them, and they end with the call', { timeout: SLOW }, async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-calls-mcp-')))
    const home = bareHome()
    try {
      const marker = join(dir, 'starts.jsonl')
      const server = (name: string, enabled = true) =>
        [`[mcp_servers.${name}]`, `command = ${JSON.stringify(process.execPath)}`, `args = ${JSON.stringify([STDIO_SERVER, marker, name])}`, enabled ? '' : 'enabled = false', ''].join('\n')
      writeFileSync(join(home.codexHome, 'config.toml'), server('docs') + server('spare', false))
      const starts = () => (existsSync(marker) ? readFileSync(marker, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [])
      const calls: CallOptions = { codexPath: codexUnderTest().path, env: home.env, cwd: dir }

      const listed = await settled(listMcpServers, calls)
      expect(listed.map((s) => [s.name, s.runtimeStatus])).toEqual([
        ['docs', 'notStarted'],
        ['spare', 'disabled'],
      ])
      expect(starts(), 'no server started').toEqual([])

      const connected = await settled((o) => listMcpServers({ ...o, connect: true }), calls)
      const docs = connected.find((s) => s.name === 'docs')!
      expect(Object.keys(docs.tools)).toContain('echo')
      expect(starts().map((s) => s.name)).toEqual(['docs'])
      // Ended with the call's child.
      for (const { pid } of starts()) expect(isAlive(pid), `MCP server ${pid} outlived the call`).toBe(false)
      expect(readFileSync(join(home.codexHome, 'config.toml'), 'utf8')).toBe(server('docs') + server('spare', false))
    } finally {
      home.cleanup()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('request: any method by name, its result as Codex sent it; a method no Codex has is METHOD_UNSUPPORTED', async () => {
    const codexPath = codexUnderTest().path
    const loaded = await settled((o) => request('thread/loaded/list', {}, o), { codexPath, env: plain.env })
    expect(loaded).toEqual({ data: [], nextCursor: null })
    const error = await settled((o) => request('rennet/absent', {}, o), { codexPath, env: plain.env }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CallError)
    expect(error).toMatchObject({ code: 'METHOD_UNSUPPORTED', detail: { method: 'rennet/absent', codexVersion: codexUnderTest().version } })
    expect((error as CallError).message).toMatch(/unknown variant `rennet\/absent`/)
    await expect(request('turn/start', {} as never, { codexPath })).rejects.toThrow(TypeError)
  })
})
