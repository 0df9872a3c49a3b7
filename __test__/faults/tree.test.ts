// Grandchildren that leave the child's process group or session, or are orphaned at once
// (double fork), must not outlive the turn: whether the turn ends normally, is aborted, or the
// child dies first. See the `tree` module of crates/core/src/process.rs for the mechanism and its limits.
import { afterEach, describe, expect, it } from 'vitest'
import type { HarnessEvent } from '../../index.js'
import { cleanupFakes, fakeTurn, scenarios, within } from '../support/fake.js'
import type { FakeGrandchild } from '../../testing/index.js'
import type { FakeRun, Json } from '../support/fake.js'
import { BOUND_MS, NEVER_MS, allProcesses, isAlive } from '../support/procs.js'
import { expectNothingLeft, failureOf, runFault } from './support.js'

afterEach(cleanupFakes)

const ALL: FakeGrandchild[] = ['ignore', 'pgroup', 'session', 'daemon', 'daemon-noenv']

const grandchildren = (run: FakeRun): Json[] => run.log.events('grandchild')

describe('grandchildren in other groups and sessions', () => {
  it('are where they claim to be while the turn runs, and gone when it is aborted', async () => {
    // The fake honours the interrupt: the grace must not be what ends the turn.
    const run = fakeTurn('hang', { interruptGraceMs: NEVER_MS, fake: { grandchildren: ALL } })
    const events: HarnessEvent[] = []
    for await (const e of run.turn) {
      events.push(e)
      if (e.type !== 'turnStarted') continue
      // The fake serves nothing before every grandchild is recorded.
      expect(grandchildren(run)).toHaveLength(ALL.length)
      const child = run.log.start().pid
      const procs = new Map(allProcesses().map((p) => [p.pid, p]))
      const self = procs.get(child)!
      const where = Object.fromEntries(
        grandchildren(run).map((g) => {
          const p = procs.get(g.pid)
          expect(p, `${g.mode} is running`).toBeDefined()
          return [
            g.mode,
            {
              sameGroup: p!.pgrp === self.pgrp,
              sameSession: p!.session === self.session,
              // The double-forked ones lost their parent at once: they are the child's only
              // because it is their subreaper.
              parentIsChild: p!.ppid === child,
            },
          ]
        }),
      )
      expect(where).toEqual({
        ignore: { sameGroup: true, sameSession: true, parentIsChild: true },
        pgroup: { sameGroup: false, sameSession: true, parentIsChild: true },
        session: { sameGroup: false, sameSession: false, parentIsChild: true },
        daemon: { sameGroup: false, sameSession: false, parentIsChild: true },
        'daemon-noenv': { sameGroup: false, sameSession: false, parentIsChild: true },
      })
      run.turn.abort()
    }
    expect(events.at(-1)).toMatchObject({ type: 'terminal', status: 'cancelled', cancellation: 'interrupted' })
    await expectNothingLeft(run)
  })

  it('are gone after a turn that completes normally', async () => {
    const run = await runFault(scenarios.paced(50), { fake: { grandchildren: ALL } })
    expect(failureOf(run.terminal)).toEqual({ status: 'completed' })
    expect(grandchildren(run).map((g) => g.mode).sort()).toEqual([...ALL].sort())
  })

  it('are gone when the child crashes first and leaves them to init', async () => {
    // Not `daemon-noenv`: orphaned by a dead child and without the environment marker, it is
    // beyond reach (the documented limit).
    const modes: FakeGrandchild[] = ['ignore', 'pgroup', 'session', 'daemon']
    const run = await runFault('crash', { fake: { grandchildren: modes } })
    expect(failureOf(run.terminal)).toEqual({ status: 'failed', source: 'exit', code: 'PROCESS_EXITED' })
    expect(grandchildren(run).map((g) => g.mode).sort()).toEqual([...modes].sort())
  })

  it('are gone when the child crashes on the very first request, and were all recorded before it', async () => {
    // The widest window: the child exits as soon as `initialize` arrives. Those grandchildren
    // that record themselves (`pgroup`, `daemon`) are in its log only if the fake waited for
    // them before it read anything; a grandchild killed before it could record itself would
    // pass unseen.
    const modes: FakeGrandchild[] = ['ignore', 'pgroup', 'session', 'daemon']
    const run = await runFault(scenarios.fault('exit', 'before-init'), { fake: { grandchildren: modes } })
    expect(failureOf(run.terminal)).toEqual({ status: 'failed', source: 'exit', code: 'PROCESS_EXITED' })
    expect(grandchildren(run).map((g) => g.mode).sort()).toEqual([...modes].sort())
  })

  it('are gone when the host aborts before the turn exists', async () => {
    const run = fakeTurn('slow-thread-start', { fake: { grandchildren: ALL } })
    const events: HarnessEvent[] = []
    for await (const e of run.turn) {
      events.push(e)
      if (e.type === 'started') {
        expect(grandchildren(run)).toHaveLength(ALL.length)
        expect(grandchildren(run).every((g) => isAlive(g.pid))).toBe(true)
        run.turn.abort()
      }
    }
    expect(await within(run.turn.outcome, BOUND_MS)).toMatchObject({ status: 'cancelled', cancellation: 'killed' })
    await expectNothingLeft(run)
  })
})
