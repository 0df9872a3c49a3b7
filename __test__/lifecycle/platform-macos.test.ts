// macOS: nothing outlives a turn. There is no /proc and no child subreaper there: an abort ends
// the child's process group and the descendants found through the process table, and when the
// host dies the guard does the same (it notes the descendants while the child still runs, and
// every 500 ms while the host lives: the way Linux runs with RENNET_GUARD_TRACKING=poll). The
// fake app-server plays a child that ignores the interrupt, stdin EOF and SIGTERM, with
// grandchildren in its process group, in a group of their own and in a session of their own
// (`setsid -f`, the fake's double-forked daemon, needs util-linux: not on macOS).
// Liveness comes from `process.kill(pid, 0)` and `ps` (a zombie counts as gone).
//
// Runs on macOS only (CI's macOS job); elsewhere the suite is skipped and says so.
import { describe, expect, it } from 'vitest'

import { runTurn, type HarnessEvent, type RunTurnOptions } from '../../index.js'
import { FakeLog, collect, within, writeFake } from '../support/fake.js'
import type { FakeGrandchild } from '../../testing/index.js'
import { eventually, isRunning, psProcesses, runningInGroup } from '../support/procs.js'
import { DEATHS, Host, endAfterEach } from './host.js'

const onMac = process.platform === 'darwin'
if (!onMac) console.log(`macOS lifecycle tests skipped: they run on macOS only (this is ${process.platform})`)

const GRANDCHILDREN: FakeGrandchild[] = ['ignore', 'pgroup', 'session']
const WEDGED = { interrupt: 'ignore', linger: true, ignoreSigterm: true } as const
/** Generous bounds for a loaded machine: they only stop a broken test from hanging. */
const BOUND_MS = 20_000

/** Whatever a failed test left is killed. */
const { hosts, seen, tempDir } = endAfterEach('SIGKILL')

/** A turn of the fake that hangs after turnStarted, with the grandchildren, in a fresh directory. */
function turnOptions(): { options: RunTurnOptions; log: FakeLog } {
  const dir = tempDir('rennet-macos-')
  const { codexPath, log } = writeFake('hang', { grandchildren: GRANDCHILDREN, ...WEDGED }, dir)
  const options: RunTurnOptions = { prompt: 'Say hello.', cwd: dir, codexPath, interruptGraceMs: 500 }
  return { options, log }
}

/** The child and its grandchildren, once all of them run. */
async function victims(log: FakeLog): Promise<{ child: number; all: number[] }> {
  expect(await eventually(() => log.events('grandchild').length === GRANDCHILDREN.length, BOUND_MS), 'the grandchildren run').toBe(true)
  const child = log.start().pid
  const all = [child, ...log.events('grandchild').map((g) => g.pid as number)]
  seen.push(...all)
  expect(all.filter(isRunning)).toEqual(all)
  return { child, all }
}

describe.skipIf(!onMac)('macOS: nothing outlives a turn', () => {
  it('an aborted turn whose child ignores the interrupt and SIGTERM leaves nothing at its terminal event', async () => {
    const { options, log } = turnOptions()
    const turn = runTurn(options)
    const events: HarnessEvent[] = []
    const done = within(collect(turn, (e) => void events.push(e)), BOUND_MS, 'the aborted turn')
    expect(await eventually(() => events.some((e) => e.type === 'turnStarted'), BOUND_MS)).toBe(true)
    const { child, all } = await victims(log)
    turn.abort()
    const terminal = (await done).at(-1)
    expect(terminal).toMatchObject({ type: 'terminal', status: 'cancelled', cancellation: 'killed' })
    expect(all.filter(isRunning), 'the child and its grandchildren at the terminal event').toEqual([])
    expect(runningInGroup(child), "the child's process group").toEqual([])
  })

  for (const death of DEATHS) {
    it(`the host dies (${death}): the guard ends the child and its grandchildren, then leaves`, async () => {
      const { options, log } = turnOptions()
      const host = new Host(death, options)
      hosts.push(host)
      await host.until((e) => e.type === 'turnStarted', BOUND_MS)
      const { child, all } = await victims(log)
      expect(await eventually(() => host.guard() !== null, BOUND_MS), 'a guard runs beside the turn').toBe(true)
      const guard = host.guard()!
      seen.push(guard)
      // No subreaper here: the host tells the guard to look.
      expect(psProcesses().find((p) => p.pid === guard)?.args, "the guard's command line").toMatch(/ poll$/)
      await host.end()
      expect(await eventually(() => !isRunning(guard), BOUND_MS), 'the guard left').toBe(true)
      expect(all.filter(isRunning), 'the child and its grandchildren after the guard left').toEqual([])
      expect(runningInGroup(child), "the child's process group").toEqual([])
    })
  }
})
