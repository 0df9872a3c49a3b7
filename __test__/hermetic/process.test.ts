// Process hygiene: no child or grandchild outlives the turn; stderr never blocks the turn.
import { afterEach, describe, expect, it } from 'vitest'
import type { HarnessEvent } from '../../index.js'
import { assertOneTerminalLast, cleanupFakes, collect, fakeRun, fakeTurn, scenarios, within } from '../support/fake.js'
import { allProcesses, eventually, isAlive, liveInGroup } from '../support/procs.js'

afterEach(cleanupFakes)

describe('process tree', () => {
  for (const stdio of ['ignore', 'inherit'] as const) {
    it(`kills a grandchild in the child's process group (grandchild stdio: ${stdio})`, async () => {
      const { turn, log } = fakeTurn('minimal', { fake: { grandchildren: [stdio] } })
      let grandchild = 0
      let grandchildGroup = 0
      let aliveDuringTurn = false
      const events = await within(
        collect(turn, (e: HarnessEvent) => {
          if (e.type === 'turnStarted') {
            grandchild = log.events('grandchild')[0]?.pid
            aliveDuringTurn = isAlive(grandchild)
            grandchildGroup = allProcesses().find((p) => p.pid === grandchild)?.pgrp ?? 0
          }
        }),
        5000,
        'events',
      )
      const terminal = assertOneTerminalLast(events)
      expect(terminal.status).toBe('completed')
      const started = events.find((e) => e.type === 'started') as { pid: number }
      // Not vacuous: the grandchild existed, in the child's group, while the turn ran.
      expect(grandchild).toBeGreaterThan(0)
      expect(aliveDuringTurn).toBe(true)
      expect(grandchildGroup).toBe(started.pid)

      expect(await eventually(() => !isAlive(started.pid), 2000)).toBe(true)
      expect(await eventually(() => !isAlive(grandchild), 2000)).toBe(true)
      expect(liveInGroup(started.pid)).toEqual([])
    })
  }

  it('escalates to SIGKILL when the child ignores stdin EOF and SIGTERM', async () => {
    const { events, terminal, log } = await fakeRun('minimal', { fake: { linger: true, ignoreSigterm: true } })
    assertOneTerminalLast(events)
    expect(terminal.status).toBe('completed')
    const pid = log.start().pid
    expect(await eventually(() => !isAlive(pid), 6000)).toBe(true)
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
    expect(await eventually(() => !isAlive(pid), 2000)).toBe(true)
    expect(log.events('stdin-closed')).toHaveLength(1)
  })
})

describe('stderr', () => {
  it('completes a turn while the child writes 20 MiB to stderr (no pipe deadlock)', async () => {
    const t0 = Date.now()
    const { events, terminal, log } = await fakeRun(scenarios['stderr-flood'](20))
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
    expect(Date.now() - t0).toBeLessThan(15_000)
  })
})
