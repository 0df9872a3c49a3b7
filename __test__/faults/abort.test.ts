// The host aborts at every phase of a turn, twice, and at the same moment as the child's own
// turn/completed. Each run: one terminal event of the status that phase calls for, nothing left.
import { afterEach, describe, expect, it } from 'vitest'
import type { HarnessEvent } from '../../index.js'
import { TURN_ID, cleanupFakes, scenarios } from '../support/fake.js'
import type { FakeRun } from '../support/fake.js'
import { NEVER_MS } from '../support/procs.js'
import type { FakeCodexScript, FakeStep } from '../../testing/index.js'
import { runFault } from './support.js'

afterEach(cleanupFakes)

/** Aborts twice at once and once more a little later (during the interrupt's grace). */
function abortThrice(run: FakeRun) {
  run.turn.abort()
  run.turn.abort()
  setTimeout(() => run.turn.abort(), 50)
}

interface Case {
  /** The event on which the host aborts. */
  on: HarnessEvent['type']
  /**
   * The fake, holding the turn at that phase until the abort comes (so that the phase cannot
   * pass before the abort however late the host gets to the event), over `paced`.
   */
  hold: FakeCodexScript
  status: 'cancelled' | 'completed'
  cancellation?: 'killed' | 'interrupted'
  /** turn/interrupt requests the client must have sent. */
  interrupts: number
}

const held = (steps: FakeStep[]): FakeCodexScript => ({ steps })

const CASES: Case[] = [
  // initialize answered, thread/start pending: no turn to interrupt, the child is killed.
  { on: 'started', hold: { answer: { 'thread/start': 'never' } }, status: 'cancelled', cancellation: 'killed', interrupts: 0 },
  // thread started, turn/start not yet acknowledged: still no turn id.
  { on: 'threadStarted', hold: { answer: { 'turn/start': 'never' } }, status: 'cancelled', cancellation: 'killed', interrupts: 0 },
  // the turn exists: interrupted politely, once however often abort() is called.
  { on: 'turnStarted', hold: held([{ type: 'hang' }]), status: 'cancelled', cancellation: 'interrupted', interrupts: 1 },
  { on: 'messageDelta', hold: held([{ type: 'message', id: 'msg_1', text: 'one ', open: true }, { type: 'hang' }]), status: 'cancelled', cancellation: 'interrupted', interrupts: 1 },
  // after the end: nothing to do, the outcome stands.
  { on: 'terminal', hold: {}, status: 'completed', interrupts: 0 },
]

describe('abort at every phase, repeated', () => {
  for (const c of CASES) {
    it(`on ${c.on}: ${c.status}${c.cancellation ? ` (${c.cancellation})` : ''}`, async () => {
      let aborted = false
      const run = await runFault(
        { ...scenarios.paced(), ...c.hold },
        // The fake honours the interrupt: its grace must not be what ends the turn.
        { interruptGraceMs: NEVER_MS },
        {
          onEvent: (e, r) => {
            if (!aborted && e.type === c.on) {
              aborted = true
              abortThrice(r)
            }
          },
        },
      )
      expect(aborted).toBe(true)
      expect(run.terminal.status).toBe(c.status)
      expect(run.terminal.failure).toBeNull()
      if (c.cancellation) expect(run.terminal.cancellation).toBe(c.cancellation)
      expect(run.log.requests('turn/interrupt')).toHaveLength(c.interrupts)
      if (c.interrupts) expect(run.log.request('turn/interrupt').params).toEqual({ threadId: expect.any(String), turnId: TURN_ID })
      // On `threadStarted` turn/start may be on its way already; it is never acknowledged.
      if (c.on === 'started') expect(run.log.methods()).not.toContain('turn/start')
    })
  }

  it('before anything started: cancelled without a turn', async () => {
    const aborted = await runFault('paced', { signal: AbortSignal.abort() })
    expect(aborted.terminal).toMatchObject({ status: 'cancelled', cancellation: 'killed', turnId: null })
    expect(aborted.log.methods()).not.toContain('turn/start')
  })
})

describe('abort racing the child’s own turn/completed', () => {
  // The fake writes the whole turn at once: by the time the host sees a delta, turn/completed
  // is already in the pipe or on its way. Either outcome is right; exactly one must come.
  const triggers: HarnessEvent['type'][] = ['turnStarted', 'itemStarted', 'messageDelta', 'itemCompleted']
  for (const on of triggers) {
    it(`abort on ${on}, ten times over`, async () => {
      const seen: string[] = []
      for (let i = 0; i < 10; i++) {
        let aborted = false
        const run = await runFault(
          'minimal',
          // The fake honours the interrupt: its grace must not be what ends the turn.
          { interruptGraceMs: NEVER_MS },
          {
            onEvent: (e, r) => {
              if (!aborted && e.type === on) {
                aborted = true
                abortThrice(r)
              }
            },
          },
        )
        seen.push(run.terminal.status === 'cancelled' ? `cancelled/${run.terminal.cancellation}` : run.terminal.status)
        if (run.terminal.status === 'completed') expect(run.terminal.finalMessage).toBe('Hello world')
        expect(run.terminal.failure).toBeNull()
        expect(run.log.requests('turn/interrupt').length).toBeLessThanOrEqual(1)
      }
      for (const s of seen) expect(['completed', 'cancelled/interrupted']).toContain(s)
    })
  }
})
