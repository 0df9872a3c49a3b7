// Shared checks of the fault matrix: every scenario ends with exactly one terminal event,
// within a bound, with nothing left running and no file descriptor left open.
import { expect } from 'vitest'
import type { HarnessEvent, TerminalEvent } from '../../index.js'
import { assertOneTerminalLast, collect, fakeTurn, within } from '../support/fake.js'
import type { FakeOptions, FakeRun, ScenarioName } from '../support/fake.js'
import type { FakeCodexScript } from '../../testing/index.js'
import { BOUND_MS, eventually, isAlive, liveInGroup, liveWithMarker, openFds } from '../support/procs.js'

export interface FaultRun extends FakeRun {
  events: HarnessEvent[]
  terminal: TerminalEvent
}

/**
 * Runs `scenario` to its end (the iterator is drained; `onEvent` may abort) and checks the
 * invariants every fault must keep. `boundMs` is a generous ceiling, not a speed claim.
 */
export async function runFault(
  scenario: ScenarioName | FakeCodexScript,
  options: FakeOptions = {},
  { boundMs = BOUND_MS, onEvent }: { boundMs?: number; onEvent?: (e: HarnessEvent, run: FakeRun) => void } = {},
): Promise<FaultRun> {
  const fdsBefore = openFds()
  const run = fakeTurn(scenario, options)
  const events = await within(
    collect(run.turn, (e) => onEvent?.(e, run)),
    boundMs,
    `the ${run.scenario} turn`,
  )
  const terminal = assertOneTerminalLast(events)
  // The outcome is the same terminal event, not a second one.
  expect(await within(run.turn.outcome, BOUND_MS, 'outcome')).toEqual(terminal)
  await expectNothingLeft(run)
  // The turn's pipes are closed once the terminal event is out (allow the OS a moment).
  expect(await eventually(() => openFds() <= fdsBefore, BOUND_MS), `open fds: ${openFds()} > ${fdsBefore}`).toBe(true)
  return { ...run, events, terminal }
}

/**
 * No process of the run is left: the fake itself, its process group, every grandchild it
 * reported, and anything carrying the turn's environment marker.
 */
export async function expectNothingLeft(run: FakeRun): Promise<void> {
  for (const start of run.log.starts()) {
    expect(start.marker, 'the addon marks the child').toBeTruthy()
    const gone = () =>
      !isAlive(start.pid) && liveInGroup(start.pid).length === 0 && liveWithMarker(start.marker!).length === 0
    expect(await eventually(gone, BOUND_MS), `survivors of ${run.scenario}: ${describe(start)}`).toBe(true)
  }
  for (const g of run.log.events('grandchild')) {
    expect(await eventually(() => !isAlive(g.pid), BOUND_MS), `grandchild ${g.mode} ${g.pid} survived`).toBe(true)
  }
}

function describe(start: { pid: number; marker?: string | null }): string {
  return JSON.stringify({
    child: isAlive(start.pid),
    group: liveInGroup(start.pid),
    marked: start.marker ? liveWithMarker(start.marker) : [],
  })
}

/** The failure of a terminal event, for compact assertions. */
export const failureOf = (t: TerminalEvent) =>
  t.failure ? { status: t.status, source: t.failure.source, code: t.failure.code } : { status: t.status }
