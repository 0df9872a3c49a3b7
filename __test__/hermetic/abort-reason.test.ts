// Why a turn was cancelled: the terminal event of a cancelled turn carries the abort's reason,
// the same object in the iterated event and in `outcome`, and runUtility rejects with it as
// `cause`.
import { afterEach, describe, expect, it } from 'vitest'
import { runUtility, UtilityError } from '../../index.js'
import type { HarnessEvent, TerminalEvent } from '../../index.js'
import { assertOneTerminalLast, cleanupFakes, collect, fakeTurn, tempDir, within, writeFake } from '../support/fake.js'
import { BOUND_MS, eventually, leftByFake } from '../support/procs.js'

afterEach(cleanupFakes)

const schema = {
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
  additionalProperties: false,
}

/** Runs the `hang` scenario (the turn never completes) and aborts once the turn has started. */
async function abortedMidTurn(abort: (turn: ReturnType<typeof fakeTurn>['turn']) => void, signal?: AbortSignal) {
  const { turn } = fakeTurn('hang', { interruptGraceMs: 200, ...(signal ? { signal } : {}) })
  const events = await within(
    collect(turn, (event) => {
      if (event.type === 'turnStarted') abort(turn)
    }),
    10_000,
    'events',
  )
  const terminal = assertOneTerminalLast(events)
  const outcome = await turn.outcome
  return { events, terminal, outcome }
}

describe('abortReason', () => {
  it('is the signal reason, the same object in the iterated terminal event and in outcome', async () => {
    const controller = new AbortController()
    const reason = new Error('the user pressed Stop')
    const { terminal, outcome } = await abortedMidTurn(() => controller.abort(reason), controller.signal)
    expect(terminal.status).toBe('cancelled')
    expect(terminal.abortReason).toBe(reason)
    expect(outcome.abortReason).toBe(reason)
    expect(outcome).toEqual(terminal)
  })

  it('keeps values that JSON cannot carry by identity', async () => {
    const cyclic: { self?: unknown; when: bigint } = { when: 1n }
    cyclic.self = cyclic
    const symbol = Symbol('stop')
    for (const reason of [cyclic, symbol]) {
      const { terminal, outcome } = await abortedMidTurn((turn) => turn.abort(reason))
      expect(terminal.abortReason).toBe(reason)
      expect(outcome.abortReason).toBe(reason)
    }
  })

  it("is AbortSignal.timeout()'s TimeoutError", async () => {
    const signal = AbortSignal.timeout(300)
    const { turn } = fakeTurn('hang', { signal, interruptGraceMs: 200 })
    const events = await within(collect(turn), 10_000, 'events')
    const terminal = assertOneTerminalLast(events)
    expect(terminal.status).toBe('cancelled')
    expect(terminal.abortReason).toBe(signal.reason)
    expect(terminal.abortReason).toBeInstanceOf(DOMException)
    expect((terminal.abortReason as DOMException).name).toBe('TimeoutError')
    expect((await turn.outcome).abortReason).toBe(signal.reason)
  })

  it('is undefined for abort() and for break, and present as a key of the cancelled event', async () => {
    const plain = await abortedMidTurn((turn) => turn.abort())
    expect(plain.terminal.status).toBe('cancelled')
    expect(plain.terminal).toHaveProperty('abortReason', undefined)
    expect(plain.outcome).toHaveProperty('abortReason', undefined)

    const { turn } = fakeTurn('hang', { interruptGraceMs: 200 })
    const seen = await collect(turn, (event) => (event.type === 'turnStarted' ? 'break' : undefined))
    expect(seen.some((e) => e.type === 'terminal')).toBe(false)
    const outcome = await within(turn.outcome, 10_000, 'outcome')
    expect(outcome.status).toBe('cancelled')
    expect(outcome).toHaveProperty('abortReason', undefined)
  })

  it('comes from the first abort; later reasons are ignored', async () => {
    const controller = new AbortController()
    const { terminal, outcome } = await abortedMidTurn((turn) => {
      turn.abort('first')
      turn.abort('second')
      controller.abort('third')
    }, controller.signal)
    expect(terminal.abortReason).toBe('first')
    expect(outcome.abortReason).toBe('first')
  })

  it('is the reason of a signal that was aborted before runTurn', async () => {
    const controller = new AbortController()
    controller.abort('too late')
    const { turn, log } = fakeTurn('minimal', { signal: controller.signal })
    const terminal = await within(turn.outcome, 10_000, 'outcome')
    expect(terminal).toMatchObject({ status: 'cancelled', cancellation: 'killed', abortReason: 'too late' })
    expect(log.methods()).not.toContain('turn/start')
  })

  it('is absent from a turn that completed although abort came after it', async () => {
    const { turn } = fakeTurn('minimal')
    const events: HarnessEvent[] = await collect(turn)
    turn.abort(new Error('after the fact'))
    const outcome: TerminalEvent = await turn.outcome
    expect(outcome.status).toBe('completed')
    expect(outcome).not.toHaveProperty('abortReason')
    expect(events.at(-1)).not.toHaveProperty('abortReason')
  })
})

/** A runUtility call against the fake's `hang` scenario, and a check that its child is gone. */
function hangingUtility(signal: AbortSignal) {
  const dir = tempDir()
  const { codexPath, log } = writeFake('hang', {}, dir)
  const pending = runUtility({
    prompt: 'x',
    cwd: dir,
    codexPath,
    outputSchema: schema,
    interruptGraceMs: 200,
    signal,
  }).catch((error: unknown) => error)
  const gone = async () => {
    for (const start of log.starts()) expect(await eventually(() => leftByFake(start.pid).length === 0, BOUND_MS)).toBe(true)
  }
  return { pending, gone, log }
}

describe('runUtility when cancelled', () => {
  it('rejects with CANCELLED and the abort reason as cause', async () => {
    const controller = new AbortController()
    const reason = new Error('navigated away')
    const { pending, gone, log } = hangingUtility(controller.signal)
    await eventually(() => log.methods().includes('turn/start'), 10_000)
    controller.abort(reason)
    const error = (await within(pending, 10_000, 'runUtility')) as UtilityError
    expect(error).toBeInstanceOf(UtilityError)
    expect(error.code).toBe('CANCELLED')
    expect(error.source).toBe('turn')
    expect(error.cause).toBe(reason)
    expect(error.message).toContain('navigated away')
    expect(error.terminal.abortReason).toBe(reason)
    await gone()
  })

  it('tells a timeout from a Stop by its cause', async () => {
    const signal = AbortSignal.timeout(300)
    const { pending, gone } = hangingUtility(signal)
    const error = (await within(pending, 10_000, 'runUtility')) as UtilityError
    expect(error).toBeInstanceOf(UtilityError)
    expect(error.code).toBe('CANCELLED')
    expect(error.cause).toBe(signal.reason)
    expect((error.cause as DOMException).name).toBe('TimeoutError')
    await gone()
  })
})
