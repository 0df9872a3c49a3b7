// Real `codex app-server` (pinned @openai/codex, or RENNET_TEST_CODEX_BIN: `pnpm compat` runs this
// file per version, the column of a test being its title up to the colon) offline: the calls
// around turns. Who is logged in (nobody; an API key), the models against a plain `model/list`,
// the threads two real turns left (listed, read, forked, and a turn on the fork), and what a
// Codex without one of the methods answers. After every call nothing it started is running.
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { CallError, forkThread, listModels, listThreads, readAccount, readThread } from '../../index.js'
import type { CallOptions } from '../../index.js'
import { codexUnderTest, isolatedEnv } from '../../testing/codex-home.js'
import { messageResponse } from '../../testing/mock-responses.js'
import { oneShot } from '../../bench/baseline-call.mjs'
import { describeProcess } from '../support/procs.js'
import { liveWithMarker, runRealTurn } from './harness.js'

const MARK_VAR = 'RENNET_REAL_RUN'

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
    expect(info).toEqual({ account: null, requiresOpenaiAuth: true, rateLimits: null })
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
      expect(info).toEqual({ account: { type: 'apiKey' }, requiresOpenaiAuth: true, rateLimits: null })
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
