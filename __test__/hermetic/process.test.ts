// Process hygiene: no child or grandchild outlives the turn; stderr never blocks the turn.
import { afterEach, describe, expect, it } from 'vitest'
import type { HarnessEvent } from '../../index.js'
import { assertOneTerminalLast, cleanupFakes, collect, fakeRun, fakeTurn, scenarios, within } from '../support/fake.js'
import { BOUND_MS, allProcesses, eventually, isAlive, liveInGroup } from '../support/procs.js'

afterEach(cleanupFakes)

describe('process tree', () => {
  for (const stdio of ['ignore', 'inherit'] as const) {
    it(`kills a grandchild in the child's process group (grandchild stdio: ${stdio})`, async () => {
      // The turn asks the app before it goes on, and waits for the answer: the grandchild is
      // looked at while the turn is held there, not whenever this thread gets to an event (on
      // a loaded machine the turn may have ended by then).
      const minimal = scenarios.minimal()
      const script = { ...minimal, steps: [{ type: 'approval' as const, id: 'call_1', command: 'true' }, ...minimal.steps!] }
      let during: { grandchild: number; alive: boolean; group: number } | null = null
      const run = fakeTurn(script, {
        access: 'ask',
        fake: { grandchildren: [stdio] },
        onServerRequest: () => {
          const grandchild = run.log.events('grandchild')[0]?.pid ?? 0
          during = { grandchild, alive: grandchild > 0 && isAlive(grandchild), group: allProcesses().find((p) => p.pid === grandchild)?.pgrp ?? 0 }
          return { decision: 'decline' }
        },
      })
      const events = await within(collect(run.turn), BOUND_MS, 'events')
      const terminal = assertOneTerminalLast(events)
      expect(terminal.status).toBe('completed')
      expect(events.filter((e: HarnessEvent) => e.type === 'serverRequest').map((e) => (e as { reply: string }).reply)).toEqual(['app'])
      const started = events.find((e) => e.type === 'started') as { pid: number }
      // Not vacuous: the grandchild existed, in the child's group, while the turn ran.
      expect(during).toEqual({ grandchild: expect.any(Number), alive: true, group: started.pid })
      const { grandchild } = during!

      expect(await eventually(() => !isAlive(started.pid), BOUND_MS)).toBe(true)
      expect(await eventually(() => !isAlive(grandchild), BOUND_MS)).toBe(true)
      expect(liveInGroup(started.pid)).toEqual([])
    })
  }

  it('escalates to SIGKILL when the child ignores stdin EOF and SIGTERM', async () => {
    const { events, terminal, log } = await fakeRun('minimal', { fake: { linger: true, ignoreSigterm: true } })
    assertOneTerminalLast(events)
    expect(terminal.status).toBe('completed')
    const pid = log.start().pid
    expect(await eventually(() => !isAlive(pid), BOUND_MS)).toBe(true)
    expect(liveInGroup(pid)).toEqual([])
    // It was asked nicely first: stdin closed, then SIGTERM, and it survived both.
    expect(log.events('stdin-closed')).toHaveLength(1)
    expect(log.events('sigterm').length).toBeGreaterThanOrEqual(1)
    expect(log.events('exit')).toEqual([])
  })

  it('lets a well-behaved child exit on stdin EOF', async () => {
    const { terminal, log } = await fakeRun('minimal')
    expect(terminal.status).toBe('completed')
    const pid = log.start().pid
    expect(await eventually(() => !isAlive(pid), BOUND_MS)).toBe(true)
    expect(log.events('stdin-closed')).toHaveLength(1)
  })
})

describe('stderr', () => {
  it('completes a turn while the child writes 20 MiB to stderr (no pipe deadlock)', async () => {
    // A deadlock would hang the turn: the bound names it (it is no measure of speed).
    const { events, terminal, log } = await within(fakeRun(scenarios['stderr-flood'](20)), BOUND_MS, 'the turn flooding stderr')
    assertOneTerminalLast(events)
    const expectedText = log.sentMethod('item/completed')[0].params.item.text
    expect(terminal.status).toBe('completed')
    expect(terminal.finalMessage).toBe(expectedText)
    expect(log.events('stderr-written')).toEqual([{ event: 'stderr-written', bytes: 20 * 1024 * 1024 }])
    // Whatever of it surfaces, surfaces as stderr diagnostics (the addon may cap how many).
    const diagnostics = events.filter((e) => e.type === 'diagnostic')
    expect(diagnostics.length).toBeGreaterThan(0)
    for (const e of diagnostics) expect(e).toEqual({ type: 'diagnostic', source: 'stderr', line: expect.any(String) })
    expect(diagnostics.some((e) => e.type === 'diagnostic' && e.line === 'E'.repeat(1023))).toBe(true)
  })
})
