// The fault matrix: one scripted misbehaviour of the child per test. Each one must end with
// exactly one terminal event of the right status, source and code, within a generous bound,
// with no process of the turn left and no file descriptor left open (see ./support.ts).
import { afterEach, describe, expect, it } from 'vitest'
import type { HarnessEvent } from '../../index.js'
import {
  OTHER_THREAD_ID,
  OTHER_TURN_ID,
  SUB_THREAD_ID,
  THREAD_ID,
  TURN_ID,
  assertOneTerminalLast,
  cleanupFakes,
  collect,
  fakeTurn,
  scenarios,
  within,
} from '../support/fake.js'
import { BOUND_MS, FIRING_MS } from '../support/procs.js'
import { expectNothingLeft, failureOf, runFault } from './support.js'

afterEach(cleanupFakes)

const PHASES = ['before-init', 'after-init', 'after-thread', 'after-ack', 'mid-stream', 'after-completed'] as const
type Phase = (typeof PHASES)[number]

const exited = { status: 'failed', source: 'exit', code: 'PROCESS_EXITED' }
const completed = { status: 'completed' }
const malformed = { status: 'failed', source: 'parse', code: 'MALFORMED_FRAME' }
const timeout = { status: 'failed', source: 'jsonrpc', code: 'REQUEST_TIMEOUT' }
const killed = { status: 'cancelled' }

/**
 * What each fault at each phase must end as. A server that hangs inside a turn is only ended
 * by the host (a turn has no time limit of its own): those cases abort once the turn is
 * underway, and the hung server ignores the interrupt too.
 */
/** A child that is gone (or has closed its stdout) before the turn completed has exited; after, the turn stands. */
const EXITED_UNTIL_COMPLETED: Record<Phase, object> = {
  'before-init': exited,
  'after-init': exited,
  'after-thread': exited,
  'after-ack': exited,
  'mid-stream': exited,
  'after-completed': completed,
}
const EXPECTED: Record<'exit' | 'hang' | 'garbage' | 'close-stdout', Record<Phase, object>> = {
  exit: EXITED_UNTIL_COMPLETED,
  hang: {
    'before-init': timeout,
    'after-init': timeout,
    'after-thread': timeout,
    'after-ack': killed,
    'mid-stream': killed,
    'after-completed': completed,
  },
  garbage: {
    // Before the first frame a non-JSON line is a launcher banner: passed on, tolerated.
    'before-init': completed,
    'after-init': malformed,
    'after-thread': malformed,
    'after-ack': malformed,
    'mid-stream': malformed,
    'after-completed': completed,
  },
  'close-stdout': EXITED_UNTIL_COMPLETED,
}

describe('the child exits, hangs, writes garbage or closes stdout at each phase', () => {
  for (const [fault, phases] of Object.entries(EXPECTED)) {
    for (const phase of PHASES) {
      it(`${fault} ${phase}`, async () => {
        const abortInTurn = fault === 'hang' && (phase === 'after-ack' || phase === 'mid-stream')
        // The last event before the hang: the turn id (ack), or the first delta.
        const abortOn = phase === 'after-ack' ? 'turnStarted' : 'messageDelta'
        const run = await runFault(
          scenarios.fault(fault as keyof typeof EXPECTED, phase),
          {
            // Short only where the timeout is the expected ending, and even then with room for
            // the fake's start-up (initialize waits for it too); a loaded machine can be
            // slower than that to answer an ordinary request.
            requestTimeoutMs: phases[phase] === timeout ? FIRING_MS : BOUND_MS,
            // Only a hung child is aborted here: the grace is what ends it.
            interruptGraceMs: 300,
          },
          {
            onEvent: (e, r) => {
              if (abortInTurn && e.type === abortOn) r.turn.abort()
            },
          },
        )
        expect(failureOf(run.terminal)).toEqual(phases[phase])
        expect(run.log.events('fault')).toHaveLength(1)
        if (phases[phase] === completed) expect(run.terminal.finalMessage).toBe('Hello world')
        if (fault === 'garbage' && phase === 'before-init') {
          expect(run.events).toContainEqual({ type: 'diagnostic', source: 'preamble', line: 'garbage \u0007 not json {' })
        }
        if (phases[phase] === malformed) {
          expect(run.terminal.failure?.detail).toMatchObject({ line: 'garbage \u0007 not json {' })
        }
        if (fault === 'close-stdout' && phase !== 'after-completed') {
          expect(run.terminal.failure?.message).toBe('codex app-server closed its stdout but kept running')
        }
        if (abortInTurn) expect(run.terminal.cancellation).toBe('killed')
      })
    }
  }
})

describe('hostile frames', () => {
  it('a 100 MB line fails with FRAME_TOO_LARGE without buffering it', async () => {
    const rssBefore = process.memoryUsage().rss
    const run = await runFault('huge-line')
    expect(failureOf(run.terminal)).toEqual({ status: 'failed', source: 'parse', code: 'FRAME_TOO_LARGE' })
    expect(run.terminal.failure?.detail).toMatchObject({ limit: 16 * 1024 * 1024 })
    // The addon reads at most the 16 MiB limit of it; far from the 100 MB sent.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024)
  })

  it('invalid UTF-8 mid-stream fails with INVALID_UTF8', async () => {
    const run = await runFault('invalid-utf8')
    expect(failureOf(run.terminal)).toEqual({ status: 'failed', source: 'parse', code: 'INVALID_UTF8' })
  })

  it('a complete last frame without a newline at EOF still counts', async () => {
    const run = await runFault('unterminated-last-line')
    expect(failureOf(run.terminal)).toEqual(completed)
    expect(run.terminal.finalMessage).toBe('no newline')
  })

  it('half a frame at EOF fails with MALFORMED_FRAME and keeps the text that came', async () => {
    const run = await runFault('cut-last-line')
    expect(failureOf(run.terminal)).toEqual(malformed)
    const deltas = run.events.filter((e) => e.type === 'messageDelta').map((e) => (e as { delta: string }).delta)
    expect(deltas).toEqual(['cut ', 'short'])
  })

  for (const json of ['"just a string"', '42', 'null', 'true', '[]']) {
    it(`JSON that is not an object (${json}) fails with MALFORMED_FRAME`, async () => {
      const run = await runFault(scenarios['non-object'](json))
      expect(failureOf(run.terminal)).toEqual(malformed)
      expect(run.terminal.failure?.detail).toMatchObject({ line: json })
    })
  }

  it('a batch array fails with MALFORMED_FRAME (the stdio wire has no batches)', async () => {
    const run = await runFault('batch')
    expect(failureOf(run.terminal)).toEqual(malformed)
  })
})

describe('confused responses and foreign completions', () => {
  it('duplicate response ids: the first answer counts, the repeats are passed through', async () => {
    const run = await runFault('duplicate-responses')
    expect(failureOf(run.terminal)).toEqual(completed)
    expect(run.terminal.finalMessage).toBe('said twice')
    const unknown = run.events.filter((e) => e.type === 'passthrough' && e.reason === 'unknownResponse')
    // initialize (1), thread/start (3) and turn/start (4) each answered once more than asked
    // (account/read, 2, once).
    expect(unknown.map((e) => (e as { message: { id: number } }).message.id)).toEqual([1, 3, 4])
  })

  it('an error response to turn/start fails with REQUEST_FAILED and the message verbatim', async () => {
    const run = await runFault('turn-start-error')
    expect(failureOf(run.terminal)).toEqual({ status: 'failed', source: 'jsonrpc', code: 'REQUEST_FAILED' })
    expect(run.terminal.failure?.message).toBe('turn/start failed: model "gpt-nope" does not exist')
    expect(run.terminal.failure?.detail).toEqual({ method: 'turn/start', code: -32603, data: { model: 'gpt-nope' } })
    expect(run.terminal.threadId).toBe(THREAD_ID)
    expect(run.terminal.turnId).toBeNull()
  })

  it('a response to an id never sent, and turn/completed for another turn, thread and sub-agent', async () => {
    const run = await runFault('foreign')
    expect(failureOf(run.terminal)).toEqual(completed)
    expect(run.terminal.turnId).toBe(TURN_ID)
    expect(run.terminal.finalMessage).toBe('mine only')
    const passthrough = run.events.filter((e) => e.type === 'passthrough') as Extract<HarnessEvent, { type: 'passthrough' }>[]
    const completions = passthrough
      .map((e) => e.message as { method?: string; params?: { threadId: string; turn: { id: string } } })
      .filter((m) => m.method === 'turn/completed')
      .map((m) => [m.params!.threadId, m.params!.turn.id])
    expect(completions).toEqual([
      [SUB_THREAD_ID, expect.any(String)],
      [THREAD_ID, OTHER_TURN_ID],
    ])
    expect(passthrough.some((e) => e.reason === 'unknownResponse')).toBe(true)
    expect(passthrough.some((e) => (e.message as { params?: { threadId?: string } }).params?.threadId === OTHER_THREAD_ID)).toBe(true)
  })
})

describe('floods', () => {
  it('10,000 server requests in one burst are all answered, in order', async () => {
    const run = await runFault('request-burst', {}, { boundMs: 30_000 })
    expect(failureOf(run.terminal)).toEqual(completed)
    const requests = run.events.filter((e) => e.type === 'serverRequest') as Extract<HarnessEvent, { type: 'serverRequest' }>[]
    expect(requests).toHaveLength(10_000)
    expect(requests.every((e, i) => e.id === i && e.reply === 'accepted')).toBe(true)
    // The replies as the fake read them: in the order of the requests, all with one decision.
    const replies = run.log.replies()
    expect(replies).toHaveLength(10_000)
    expect(replies.every((r, i) => r.id === i)).toBe(true)
    expect(new Set(replies.map((r) => JSON.stringify(r.result ?? r.error))).size).toBe(1)
  })

  it('a child that stops reading its stdin cannot hold an abort up', async () => {
    // 20,000 requests whose replies nobody reads: the pipe fills and the runner's write
    // blocks. The host aborts once events have stopped coming for 300 ms.
    let lastEventAt = Date.now()
    let requests = 0
    let aborted = false
    const grace = 300
    const run = fakeTurn(scenarios['request-burst'](20_000, { deaf: true }), { interruptGraceMs: grace })
    const watch = setInterval(() => {
      if (!aborted && requests > 0 && Date.now() - lastEventAt > 300) {
        aborted = true
        run.turn.abort()
      }
    }, 50)
    const count = (e: HarnessEvent) => {
      lastEventAt = Date.now()
      if (e.type === 'serverRequest') requests++
    }
    // The interrupt cannot be sent, the grace runs out: the abort ends the turn (a write
    // that held it up would hang it past the bound).
    const events = await within(collect(run.turn, count), BOUND_MS, 'the deaf turn').finally(() => clearInterval(watch))
    expect(aborted).toBe(true)
    // The writes did block: far from every request was answered.
    expect(requests).toBeLessThan(20_000)
    expect(assertOneTerminalLast(events)).toMatchObject({ status: 'cancelled', cancellation: 'killed' })
    await expectNothingLeft(run)
  })

  it('100 MB of stderr while streaming neither blocks nor bloats the turn', async () => {
    const run = await runFault(scenarios['stderr-flood'](100), {}, { boundMs: 60_000 })
    expect(failureOf(run.terminal)).toEqual(completed)
    expect(run.log.events('stderr-written')).toEqual([{ event: 'stderr-written', bytes: 100 * 1024 * 1024 }])
    const stderrEvents = run.events.filter((e) => e.type === 'diagnostic' && e.source === 'stderr')
    // Forwarded lines are capped (MAX_STDERR_EVENTS); the rest only reach the tail.
    expect(stderrEvents).toHaveLength(200)
    expect(run.terminal.finalMessage).toMatch(/^\[0\]/)
  })
})

describe('signals and interrupts', () => {
  it('a child that ignores SIGTERM (and stdin EOF) is killed', async () => {
    const run = await runFault('minimal', { fake: { linger: true, ignoreSigterm: true } })
    expect(failureOf(run.terminal)).toEqual(completed)
    expect(run.log.events('sigterm').length).toBeGreaterThanOrEqual(1)
    expect(run.log.events('exit')).toEqual([])
  })

  it('a child that ignores turn/interrupt is killed after interruptGraceMs', async () => {
    const run = await runFault(
      'hang',
      { interruptGraceMs: 300, fake: { interrupt: 'ignore' } },
      { onEvent: (e, r) => e.type === 'turnStarted' && r.turn.abort() },
    )
    expect(run.terminal).toMatchObject({ status: 'cancelled', cancellation: 'killed', turnId: TURN_ID })
    expect(run.log.requests('turn/interrupt')).toHaveLength(1)
  })

  it('a child that exits the moment it gets turn/interrupt ends as killed, not failed', async () => {
    const run = await runFault(
      'hang',
      { fake: { interrupt: 'exit' } },
      { onEvent: (e, r) => e.type === 'turnStarted' && r.turn.abort() },
    )
    expect(run.terminal).toMatchObject({ status: 'cancelled', cancellation: 'killed', failure: null })
    expect(run.log.events('exit-on-interrupt')).toHaveLength(1)
  })

  it('a child that closes stdout but stays alive fails with PROCESS_EXITED and is ended', async () => {
    const run = await runFault(scenarios.fault('close-stdout', 'mid-stream'))
    expect(run.terminal.failure).toMatchObject({
      source: 'exit',
      code: 'PROCESS_EXITED',
      detail: expect.objectContaining({ exitedByItself: false }),
    })
  })
})
