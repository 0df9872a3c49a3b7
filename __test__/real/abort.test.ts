// Real `codex app-server` against the loopback mock: cancellation. After turn/started an abort
// sends turn/interrupt and the real server honours it at once (terminal cancelled/interrupted,
// well within the grace); before the turn id is known the child is killed (cancelled/killed).
import { describe, expect, it } from 'vitest'

import { hangingMessage } from '../../testing/mock-responses.js'
import { BOUND_MS, eventually } from '../support/procs.js'
import { runRealTurn } from './harness.js'

const GRACE_MS = 5000
/** Well inside the grace: an interrupt honoured by Codex, not a kill after the grace expired. */
const HONOURED_WITHIN_MS = 1500

describe('real codex app-server: abort', () => {
  it('abort() while the model stream hangs → turn/interrupt honoured, cancelled/interrupted', async () => {
    const r = await runRealTurn({
      scenario: [hangingMessage()],
      interruptGraceMs: GRACE_MS,
      onEvent: (ev, ctx) => {
        if (ev.type === 'messageDelta') ctx.abort()
      },
      inspect: async (res) => {
        // Codex dropped the hanging model stream.
        const dropped = await eventually(() => res.mock.requests[0]?.clientClosed === true, BOUND_MS)
        expect(dropped, 'the hanging model request was closed by the client').toBe(true)
      },
    })
    const t = r.terminal
    expect(t.status).toBe('cancelled')
    expect(t.cancellation).toBe('interrupted')
    expect(t.failure).toBeNull()
    expect(t.turnId).toBe(r.of('turnStarted')[0]?.turnId)
    expect(t.turnId).not.toBeNull()
    expect(t.threadId).not.toBeNull()
    expect(r.abortedAt).not.toBeNull()
    const elapsed = r.terminalAt - r.abortedAt!
    expect(elapsed, `terminal ${elapsed} ms after abort`).toBeLessThan(HONOURED_WITHIN_MS)
    expect(r.of('messageDelta').map((d) => d.delta)).toEqual(['thinking about it'])
    expect(r.mock.requests).toHaveLength(1)
  })

  it('an AbortSignal while the model stream hangs → cancelled/interrupted', async () => {
    const controller = new AbortController()
    let abortedAt = 0
    const r = await runRealTurn({
      scenario: [hangingMessage()],
      interruptGraceMs: GRACE_MS,
      signal: controller.signal,
      onEvent: (ev) => {
        if (ev.type === 'messageDelta' && !abortedAt) {
          abortedAt = Date.now()
          controller.abort()
        }
      },
    })
    expect(r.terminal.status).toBe('cancelled')
    expect(r.terminal.cancellation).toBe('interrupted')
    expect(abortedAt).toBeGreaterThan(0)
    expect(r.terminalAt - abortedAt).toBeLessThan(HONOURED_WITHIN_MS)
  })

  it('breaking out of for-await while the model stream hangs aborts the turn and ends the child', async () => {
    const r = await runRealTurn({
      scenario: [hangingMessage()],
      interruptGraceMs: GRACE_MS,
      onEvent: (ev) => (ev.type === 'messageDelta' ? 'break' : undefined),
    })
    expect(r.brokeOut).toBe(true)
    expect(r.terminal.status).toBe('cancelled')
    expect(r.terminal.cancellation).toBe('interrupted')
    // (harness: process group empty, config untouched)
  })

  it('abort() at the started event (before the turn id is known) → cancelled/killed, no model request', async () => {
    const r = await runRealTurn({
      scenario: [hangingMessage()],
      interruptGraceMs: GRACE_MS,
      onEvent: (ev, ctx) => {
        if (ev.type === 'started') ctx.abort()
      },
    })
    const t = r.terminal
    expect(r.started, 'a started event').toBeDefined()
    expect(t.status).toBe('cancelled')
    expect(t.cancellation).toBe('killed')
    expect(t.failure).toBeNull()
    expect(t.turnId).toBeNull()
    expect(r.of('turnStarted')).toEqual([])
    expect(r.mock.requests).toHaveLength(0)
    // Killing does not wait for the interrupt grace.
    expect(r.terminalAt - r.abortedAt!).toBeLessThan(HONOURED_WITHIN_MS)
  })

  it('abort() right after runTurn() → cancelled/killed, nothing left running', async () => {
    const r = await runRealTurn({
      scenario: [hangingMessage()],
      interruptGraceMs: GRACE_MS,
      afterRunTurn: (ctx) => ctx.abort(),
    })
    const t = r.terminal
    expect(t.status).toBe('cancelled')
    expect(t.cancellation).toBe('killed')
    expect(t.failure).toBeNull()
    expect(t.turnId).toBeNull()
    expect(r.mock.requests).toHaveLength(0)
    expect(r.terminalAt - r.abortedAt!).toBeLessThan(HONOURED_WITHIN_MS)
  })
})
