// What a turn is given besides a prompt, through the addon against the test kit's fake: input
// items, steering a running turn, the login check before the thread, plan/diff/rate-limit
// events, and prepared turns.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

import { prepareTurn, runTurn, SteerError } from '../../index.js'
import type { HarnessEvent, PreparedTurn, TerminalEvent } from '../../index.js'
import { THREAD_ID, OTHER_TURN_ID, cleanupFakes, collect, fakeRun, fakeTurn, tempDir, writeFake } from '../support/fake.js'
import { BOUND_MS, FIRING_MS, eventually, isAlive } from '../support/procs.js'

afterEach(cleanupFakes)

const NOT_LOGGED_IN = { account: null, requiresOpenaiAuth: true }
/** No API key for the child, whatever the test process has. */
const NO_KEY = { OPENAI_API_KEY: '', CODEX_API_KEY: '' }

describe('input items', () => {
  it('go to turn/start in order, as the protocol’s UserInput', async () => {
    const dir = tempDir()
    const image = join(dir, 'shot.png')
    writeFileSync(image, 'not really a png')
    const input = [
      { type: 'text' as const, text: 'What is wrong here?' },
      { type: 'localImage' as const, path: image, detail: 'high' as const },
      { type: 'image' as const, url: 'data:image/png;base64,AAAA' },
    ]
    const { terminal, log } = await fakeRun('minimal', { prompt: undefined, input })
    expect(terminal.status).toBe('completed')
    expect(log.request('turn/start').params.input).toEqual([
      { type: 'text', text: 'What is wrong here?', text_elements: [] },
      { type: 'localImage', path: image, detail: 'high' },
      { type: 'image', url: 'data:image/png;base64,AAAA' },
    ])
  })

  it('wrong ones are a TypeError naming the item, before anything starts', () => {
    const { codexPath, log } = writeFake('minimal')
    const cwd = tempDir()
    const bad: Array<[object, RegExp]> = [
      [{ prompt: 'a', input: [{ type: 'text', text: 'b' }] }, /exactly one/],
      [{}, /options\.prompt .* or options\.input .* is required/],
      [{ input: [] }, /options\.input must hold at least one item/],
      [{ input: [{ type: 'localImage', path: 'shot.png' }] }, /^options\.input\[0\]\.path must be an absolute path/],
      [{ input: [{ type: 'localImage', path: join(cwd, 'missing.png') }] }, /^options\.input\[0\]\.path .* cannot be read/],
      [{ input: [{ type: 'text', text: 'x' }, { type: 'image', url: 'file:///etc/hosts' }] }, /^options\.input\[1\]\.url must be an http\(s\) or data: URL$/],
      [{ input: [{ type: 'audio', url: 'x' }] }, /^options\.input\[0\]/],
    ]
    for (const [options, message] of bad) {
      expect(() => runTurn({ cwd, codexPath, ...options } as never), JSON.stringify(options)).toThrow(TypeError)
      expect(() => runTurn({ cwd, codexPath, ...options } as never)).toThrow(message)
    }
    expect(log.starts()).toEqual([])
  })
})

describe('steering', () => {
  it('a steer sent before the turn has an id waits for it, and is taken', async () => {
    const run = fakeTurn({ steps: [{ type: 'delay', ms: 200 }, { type: 'message', text: 'Steered.' }] })
    const steered = run.turn.steer([{ type: 'text', text: 'Be brief.' }])
    const events = await collect(run.turn)
    await expect(steered).resolves.toBeUndefined()
    expect((events.at(-1) as TerminalEvent).finalMessage).toBe('Steered.')
    const [turnStart, steer] = [run.log.methods().indexOf('turn/start'), run.log.methods().indexOf('turn/steer')]
    expect(steer).toBeGreaterThan(turnStart)
    const terminal = events.at(-1) as TerminalEvent
    expect(run.log.request('turn/steer').params).toEqual({
      threadId: terminal.threadId,
      expectedTurnId: terminal.turnId,
      input: [{ type: 'text', text: 'Be brief.', text_elements: [] }],
    })
  })

  it('refused: TURN_NOT_STEERABLE with the server’s words; ended: TURN_ENDED and nothing sent; the outcome is the turn’s', async () => {
    const error = { code: -32600, message: 'cannot steer a review turn' }
    const run = fakeTurn({ steps: [{ type: 'delay', ms: 200 }, { type: 'message', text: 'Reviewed.' }], answer: { 'turn/steer': { error } } })
    let refused: unknown
    const events = await collect(run.turn, (event) => {
      if (event.type === 'turnStarted') refused = run.turn.steer('Skip the tests.').catch((e) => e)
    })
    const refusal = (await refused) as SteerError
    expect(refusal).toBeInstanceOf(SteerError)
    expect(refusal).toMatchObject({ code: 'TURN_NOT_STEERABLE', message: 'cannot steer a review turn', detail: { code: -32600, message: 'cannot steer a review turn' } })
    expect(events.at(-1)).toMatchObject({ type: 'terminal', status: 'completed', finalMessage: 'Reviewed.' })
    const late = await run.turn.steer('Too late.').catch((e) => e)
    expect(late).toMatchObject({ name: 'SteerError', code: 'TURN_ENDED' })
    expect(run.log.requests('turn/steer')).toHaveLength(1)
    // Bad input rejects (never throws) with a TypeError naming the item.
    await expect(run.turn.steer([{ type: 'image', url: 'ftp://x' }])).rejects.toThrow(/^input\[0\]\.url/)
    await expect(run.turn.steer([{ type: 'text', text: 'x', extra: 1n } as never])).rejects.toThrow(/^steer\.input\[0\]\.extra is a BigInt/)
  })

  it('after an abort: TURN_ENDED, nothing sent', async () => {
    const run = fakeTurn({ steps: [{ type: 'hang' }] })
    let late: unknown
    await collect(run.turn, (event) => {
      if (event.type === 'turnStarted') {
        run.turn.abort()
        late = run.turn.steer('Wait!').catch((e) => e)
      }
    })
    expect(await late).toMatchObject({ code: 'TURN_ENDED' })
    expect(run.log.requests('turn/steer')).toEqual([])
  })
})

describe('plans, diffs and rate limits', () => {
  it('come out as typed events with Codex’s values; another turn’s plan passes through', async () => {
    const plan = [{ step: 'Read', status: 'completed' }, { step: 'Fix', status: 'inProgress' }]
    const rateLimits = { limitId: 'codex', primary: { usedPercent: 12, windowDurationMins: 300, resetsAt: 1796170000 } }
    const { events } = await fakeRun({
      steps: [
        { type: 'notification', method: 'turn/plan/updated', params: { explanation: 'Two steps.', plan } },
        { type: 'notification', method: 'turn/diff/updated', params: { diff: '--- a/x\n+++ b/x\n' } },
        { type: 'notification', method: 'account/rateLimits/updated', params: { rateLimits }, unscoped: true },
        { type: 'notification', method: 'turn/plan/updated', params: { turnId: OTHER_TURN_ID, plan: [] } },
        { type: 'message', text: 'Done.' },
      ],
    })
    const typed = events.filter((e) => ['plan', 'diff', 'rateLimits'].includes(e.type))
    expect(typed).toEqual([
      { type: 'plan', explanation: 'Two steps.', plan },
      { type: 'diff', diff: '--- a/x\n+++ b/x\n' },
      { type: 'rateLimits', rateLimits },
    ])
    expect(events.filter((e) => e.type === 'passthrough')).toMatchObject([{ reason: 'foreignTurn' }])
  })
})

describe('not logged in', () => {
  it('fails AUTH_REQUIRED before the thread, with the report in detail', async () => {
    const { events, terminal, log } = await fakeRun({ account: NOT_LOGGED_IN }, { env: NO_KEY })
    expect(terminal.status).toBe('failed')
    expect(terminal.failure).toMatchObject({ source: 'jsonrpc', code: 'AUTH_REQUIRED', detail: { report: NOT_LOGGED_IN } })
    expect(terminal.failure?.message).toContain('codex login')
    expect(events.map((e) => e.type)).toEqual(['started', 'terminal'])
    expect(log.methods()).toEqual(['initialize', 'initialized', 'account/read'])
  })

  it('goes on with an API key for the child, with a login, or with a Codex that has no account/read', async () => {
    const cases: Array<[string, object, Record<string, string>]> = [
      ['an API key', { account: NOT_LOGGED_IN }, { ...NO_KEY, OPENAI_API_KEY: 'sk-test' }],
      ['logged in', { account: { account: { type: 'apiKey' }, requiresOpenaiAuth: true } }, NO_KEY],
      ['no account/read', { answer: { 'account/read': { error: { code: -32600, message: 'Invalid request: unknown variant `account/read`' } } } }, NO_KEY],
    ]
    for (const [why, fake, env] of cases) {
      const { terminal } = await fakeRun('minimal', { fake, env })
      expect(terminal.status, why).toBe('completed')
    }
  })
})

describe('prepared turns', () => {
  /** A prepared turn against a fake playing `script`; disposed after the test if left unstarted. */
  function prepared(script: object = {}, options: object = {}) {
    const { codexPath, log } = writeFake('minimal', script)
    const turn = prepareTurn({ cwd: tempDir(), codexPath, ...options })
    disposeLater.push(turn)
    return { turn, log }
  }
  const disposeLater: PreparedTurn[] = []
  afterEach(() => {
    for (const turn of disposeLater.splice(0)) turn.dispose('test ended')
  })

  it('is ready with its thread and no turn/start, then runs its one turn from start()', async () => {
    const { turn, log } = prepared()
    expect(await turn.ready).toEqual({ threadId: THREAD_ID })
    expect(log.methods()).toEqual(['initialize', 'initialized', 'account/read', 'thread/start'])
    const running = turn.start({ input: [{ type: 'text', text: 'Now.' }], effort: 'low' })
    const events: HarnessEvent[] = await collect(running)
    expect(events.filter((e) => e.type !== 'diagnostic')[0].type).toBe('started')
    expect(events.at(-1)).toMatchObject({ type: 'terminal', status: 'completed', finalMessage: 'Hello world' })
    expect(log.request('turn/start').params).toMatchObject({ input: [{ type: 'text', text: 'Now.' }], effort: 'low' })
    expect(() => turn.start('again')).toThrow(/once/)
  })

  it('started before it is ready: turn/start goes as soon as the thread is', async () => {
    const { turn, log } = prepared({ answer: { 'thread/start': { delayMs: 200 } } })
    const events = await collect(turn.start('Quick.'))
    expect(events.at(-1)).toMatchObject({ status: 'completed' })
    expect(log.request('turn/start').params.input).toEqual([{ type: 'text', text: 'Quick.', text_elements: [] }])
  })

  it('disposed, idle or aborted before start: the child ends, and start() gives a cancelled Turn with the reason', async () => {
    const disposed = prepared()
    await disposed.turn.ready
    disposed.turn.dispose('the tab closed')
    expect(await disposed.turn.start('x').outcome).toMatchObject({ status: 'cancelled', cancellation: 'killed', abortReason: 'the tab closed' })

    // The idle time counts from the prepare: room for the child to get ready first. Its end is
    // the sign that the idle time ran out.
    const idle = prepared({}, { idleTimeoutMs: FIRING_MS })
    expect(await idle.turn.ready).toHaveProperty('threadId')
    const idleChild = idle.log.start().pid
    expect(await eventually(() => !isAlive(idleChild), BOUND_MS), 'the idle child ended').toBe(true)
    const timedOut = await idle.turn.start('late').outcome
    expect(timedOut).toMatchObject({ status: 'cancelled' })
    expect(String(timedOut.abortReason)).toContain(`not started within idleTimeoutMs (${FIRING_MS} ms)`)

    const controller = new AbortController()
    const signalled = prepared({}, { signal: controller.signal })
    controller.abort(new Error('navigated away'))
    expect(await signalled.turn.ready).toMatchObject({ failure: { code: 'CANCELLED' } })
    expect(String((await signalled.turn.start('x').outcome).abortReason)).toContain('navigated away')
    for (const log of [disposed.log, idle.log, signalled.log]) expect(log.requests('turn/start')).toEqual([])
  })

  it('a failed preparation: ready says why, and start() gives a Turn whose terminal carries it', async () => {
    const { turn } = prepared({ account: NOT_LOGGED_IN }, { env: NO_KEY })
    expect(await turn.ready).toMatchObject({ failure: { source: 'jsonrpc', code: 'AUTH_REQUIRED' } })
    expect(await turn.start('x').outcome).toMatchObject({ status: 'failed', failure: { code: 'AUTH_REQUIRED' } })
  })

  it('its options hold no turn input, and start() checks its own', () => {
    const { codexPath } = writeFake('minimal')
    const cwd = tempDir()
    expect(() => prepareTurn({ cwd, codexPath, prompt: 'x' } as never)).toThrow(/^options\.prompt belongs to start\(\)/)
    expect(() => prepareTurn({ cwd, codexPath, idleTimeoutMs: 0 })).toThrow(/idleTimeoutMs/)
    const { turn } = prepared()
    expect(() => turn.start({ input: [{ type: 'text', text: '' }] })).toThrow(TypeError)
    expect(() => turn.start(42 as never)).toThrow(TypeError)
  })
})
