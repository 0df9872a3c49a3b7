// Abort: kill before the turn id exists, interrupt after it, nothing after completion.
import { afterEach, describe, expect, it } from 'vitest'
import type { HarnessEvent, Turn } from '../../index.js'
import {
  THREAD_ID,
  TURN_ID,
  assertOneTerminalLast,
  cleanupFakes,
  collect,
  completedThen,
  fakeTurn,
  nativeOf,
  types,
  within,
} from '../support/fake.js'
import { BOUND_MS, NEVER_MS, eventually, isAlive } from '../support/procs.js'

afterEach(cleanupFakes)

const cancelled = (cancellation: 'interrupted' | 'killed', threadId: string | null, turnId: string | null) => ({
  type: 'terminal',
  status: 'cancelled',
  cancellation,
  threadId,
  turnId,
  finalMessage: null,
  proposedPlan: null,
  usage: null,
  failure: null,
  agents: [],
  totalUsage: null,
  cutOff: [],
})

describe('abort before the turn id exists', () => {
  it('kills at once and sends no turn/interrupt', async () => {
    // At once: a turn that waited for the interrupt's grace instead would outlast the bound.
    const { turn, log } = fakeTurn('slow-thread-start', { interruptGraceMs: NEVER_MS })
    // Aborted once the fake holds thread/start unanswered: a kill leaves it no time to note
    // what came after (on Windows the Job Object ends at once, without a SIGTERM's grace).
    const events = await within(
      collect(turn, (e) => {
        if (e.type === 'started') void eventually(() => log.methods().includes('thread/start'), BOUND_MS).then(() => turn.abort())
      }),
      BOUND_MS,
      'events',
    )
    expect(types(events)).toEqual(['started', 'terminal'])
    expect(events[1]).toEqual(cancelled('killed', null, null))
    expect(log.methods()).toContain('thread/start')
    expect(log.methods()).not.toContain('turn/start')
    expect(log.methods()).not.toContain('turn/interrupt')
    expect(await turn.outcome).toEqual(events[1])
  })

  it('abort() right after runTurn() cancels without starting a turn', async () => {
    const { turn, log } = fakeTurn('minimal')
    turn.abort()
    const terminal = await within(turn.outcome, BOUND_MS, 'outcome')
    expect(terminal).toEqual(cancelled('killed', null, null))
    expect(log.methods()).not.toContain('turn/start')
    expect(log.methods()).not.toContain('turn/interrupt')
  })
})

/** Every event of `turn`, which `abort` (default: `turn.abort()`) ends once it has started; `took`: from the abort to the end. */
async function abortOnTurnStarted(turn: Turn, abort = () => turn.abort()) {
  let abortedAt = 0
  const events = await within(
    collect(turn, (e) => {
      if (e.type === 'turnStarted') {
        abortedAt = Date.now()
        abort()
      }
    }),
    BOUND_MS,
    'events',
  )
  return { events, took: Date.now() - abortedAt }
}

describe('abort after turn/started', () => {
  it('interrupts politely and ends as interrupted when the server honours it', async () => {
    // It ends on the server's turn/completed, not on a timer: the grace would outlast the bound.
    const { turn, log } = fakeTurn('hang', { interruptGraceMs: NEVER_MS })
    const { events } = await abortOnTurnStarted(turn)
    expect(events.slice(1)).toEqual([
      { type: 'threadStarted', threadId: THREAD_ID, resumed: false },
      { type: 'turnStarted', threadId: THREAD_ID, turnId: TURN_ID },
      nativeOf(log.sentMethod('thread/status/changed')[0]),
      ...completedThen(cancelled('interrupted', THREAD_ID, TURN_ID)),
    ])
    const interrupts = log.requests('turn/interrupt')
    expect(interrupts).toHaveLength(1)
    expect(interrupts[0].params).toEqual({ threadId: THREAD_ID, turnId: TURN_ID })
    expect(interrupts[0].id).toEqual(expect.any(Number))
  })

  it('kills after interruptGraceMs when the server ignores the interrupt', async () => {
    const { turn, log } = fakeTurn('hang', { interruptGraceMs: 300, fake: { interrupt: 'ignore' } })
    const { events, took } = await abortOnTurnStarted(turn)
    expect(types(events)).toEqual(['started', 'threadStarted', 'turnStarted', 'terminal'])
    expect(events[3]).toEqual(cancelled('killed', THREAD_ID, TURN_ID))
    // Not before the grace given (a loaded machine can only make it later).
    expect(took).toBeGreaterThanOrEqual(280)
    expect(log.requests('turn/interrupt')).toHaveLength(1)
    const pid = log.start().pid
    expect(await eventually(() => !isAlive(pid), BOUND_MS)).toBe(true)
  })

  it('abort() twice is harmless: one interrupt, one terminal', async () => {
    const { turn, log } = fakeTurn('hang', { interruptGraceMs: NEVER_MS })
    const { events } = await abortOnTurnStarted(turn, () => {
      turn.abort()
      turn.abort()
    })
    assertOneTerminalLast(events)
    expect(events[events.length - 1]).toEqual(cancelled('interrupted', THREAD_ID, TURN_ID))
    expect(log.requests('turn/interrupt')).toHaveLength(1)
    expect(() => turn.abort()).not.toThrow()
  })
})

describe('abort after completion', () => {
  it('sends nothing and keeps the completed outcome', async () => {
    const { turn, log } = fakeTurn('minimal')
    const events = await within(
      collect(turn, (e) => {
        if (e.type === 'terminal') turn.abort()
      }),
      BOUND_MS,
      'events',
    )
    turn.abort()
    assertOneTerminalLast(events)
    const outcome = await turn.outcome
    expect(outcome.status).toBe('completed')
    expect(outcome.finalMessage).toBe('Hello world')
    expect(outcome).not.toHaveProperty('cancellation', expect.anything())
    // The child is gone (it logs what it reads as it reads it): nothing can arrive any more.
    const pid = log.start().pid
    expect(await eventually(() => !isAlive(pid), BOUND_MS)).toBe(true)
    expect(log.methods()).toEqual(['initialize', 'initialized', 'account/read', 'thread/start', 'turn/start'])
  })
})

describe('AbortSignal', () => {
  it('signal.abort() during the turn interrupts like abort()', async () => {
    const controller = new AbortController()
    const { turn, log } = fakeTurn('hang', { signal: controller.signal, interruptGraceMs: NEVER_MS })
    const { events } = await abortOnTurnStarted(turn, () => controller.abort())
    // The signal's reason (here the default AbortError) comes along as abortReason.
    expect(events[events.length - 1]).toEqual({ ...cancelled('interrupted', THREAD_ID, TURN_ID), abortReason: controller.signal.reason })
    expect(log.requests('turn/interrupt')).toHaveLength(1)
  })

  it('an already-aborted signal cancels at once, before any turn', async () => {
    const signal = AbortSignal.abort()
    const { turn, log } = fakeTurn('minimal', { signal })
    const events = await within(collect(turn), BOUND_MS, 'events')
    const terminal = assertOneTerminalLast(events)
    expect(terminal).toEqual({ ...cancelled('killed', null, null), abortReason: signal.reason })
    expect(types(events)).not.toContain('turnStarted')
    expect(log.methods()).not.toContain('turn/start')
  })
})

describe('break out of for await', () => {
  it('aborts the turn and ends the child', async () => {
    const { turn, log } = fakeTurn('hang', { interruptGraceMs: NEVER_MS })
    const seen: HarnessEvent[] = []
    for await (const e of turn) {
      seen.push(e)
      if (e.type === 'turnStarted') break
    }
    expect(types(seen)).toEqual(['started', 'threadStarted', 'turnStarted'])
    const terminal = await within(turn.outcome, BOUND_MS, 'outcome')
    expect(terminal).toEqual(cancelled('interrupted', THREAD_ID, TURN_ID))
    expect(log.requests('turn/interrupt')).toHaveLength(1)
    const pid = log.start().pid
    expect(await eventually(() => !isAlive(pid), BOUND_MS)).toBe(true)
  })
})
