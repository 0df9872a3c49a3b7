// Nothing outlives a turn when its host dies mid-turn (Linux): the host process that called
// runTurn is killed, terminated, interrupted, exits from a signal handler, throws, or tears its
// worker down while the fake app-server runs a turn whose grandchildren left its process group
// and session, or were orphaned at once. The host-death guard must end all of them, and then
// leave itself. Timing is the bench's business (`pnpm bench --only hostDeath`); here the guard's
// own exit tells when it finished.
//
// With RENNET_GUARD_TRACKING=poll in the run's environment (`pnpm nx run
// rennet-adapters:lifecycle-poll`) the same tests run the macOS way: no subreaper, the guard
// looking every 500 ms. A double-forked daemon without the marker is then orphaned within one
// look, which is the documented limit (tracking.test.ts shows it); it is left out here.
import { describe, expect, it } from 'vitest'
import { tempDir, writeFake } from '../support/fake.js'
import type { FakeCodexScript, FakeGrandchild } from '../../testing/index.js'
import { eventually, isAlive, liveInGroup, liveWithMarker } from '../support/procs.js'
import { DEATHS, Host, hostsEndedAfterEach, running, type Death } from './host.js'

/** How the guard is expected to keep orphans in sight in this run. */
const TRACKING = process.env.RENNET_GUARD_TRACKING === 'poll' ? 'poll' : 'subreaper'
const GRANDCHILDREN: FakeGrandchild[] =
  TRACKING === 'poll' ? ['ignore', 'pgroup', 'session', 'daemon'] : ['ignore', 'pgroup', 'session', 'daemon', 'daemon-noenv']
/** Generous bounds for a loaded machine: they only stop a broken test from hanging. */
const SETTLE_MS = 15_000

// Ends what each host's turn started whether or not the test got as far as its guard: a child
// that ignores SIGTERM must not run on for minutes after a failed test.
const hosts = hostsEndedAfterEach()

async function hostWithTurn(death: Death, fake: FakeCodexScript = {}, env: Record<string, string> = {}) {
  const dir = tempDir()
  const { codexPath, log } = writeFake('hang', { grandchildren: GRANDCHILDREN, ...fake }, dir)
  const host = new Host(death, { prompt: 'Say hello.', cwd: dir, codexPath }, env)
  hosts.push(host)
  await host.until((e) => e.type === 'turnStarted')
  const allStarted = await eventually(() => log.events('grandchild').length === GRANDCHILDREN.length, SETTLE_MS)
  const child = log.start()
  const victims = [child.pid, ...log.events('grandchild').map((g) => g.pid as number)]
  // Before any assertion: a test that fails from here on still has them ended.
  host.track(victims)
  expect(allStarted).toBe(true)
  expect(running(victims), 'the turn and its grandchildren run').toEqual(victims)
  return { host, log, child, victims }
}

describe.skipIf(process.platform !== 'linux')(`the host dies mid-turn (Linux, tracking: ${TRACKING}, fake app-server)`, () => {
  for (const death of DEATHS) {
    it(`${death}: the guard ends the child and every grandchild, then leaves`, async () => {
      const { host, child, victims, log } = await hostWithTurn(death)
      expect(await eventually(() => host.guard() !== null, SETTLE_MS), 'a guard runs beside the turn').toBe(true)
      const guard = host.guard()!
      expect(host.tracking(guard), "the guard's command line").toBe(TRACKING)
      const ended = Date.now()
      await host.end()
      expect(await eventually(() => !isAlive(guard), SETTLE_MS), 'the guard left').toBe(true)
      const took = Date.now() - ended
      const modes = (pids: number[]) => pids.map((pid) => log.events('grandchild').find((g) => g.pid === pid)?.mode ?? `child ${pid}`)
      expect(modes(running(victims)), 'processes of the turn after the guard left').toEqual([])
      expect(liveInGroup(child.pid)).toEqual([])
      expect(liveWithMarker(child.marker!)).toEqual([])
      console.log(`host death by ${death}: the guard was done ${took} ms after the host ended`)
    })
  }

  it('a prepared turn waiting for its start: the guard ends its child and grandchildren too', async () => {
    const dir = tempDir()
    const { codexPath, log } = writeFake('minimal', { grandchildren: GRANDCHILDREN }, dir)
    const host = new Host('SIGKILL', { cwd: dir, codexPath } as never, { HOST_PREPARED: '1' })
    hosts.push(host)
    await host.until((e) => (e as { type: string }).type === 'ready')
    expect(await eventually(() => log.events('grandchild').length === GRANDCHILDREN.length, SETTLE_MS)).toBe(true)
    const child = log.start()
    const victims = [child.pid, ...log.events('grandchild').map((g) => g.pid as number)]
    host.track(victims)
    expect(running(victims), 'the waiting child and its grandchildren run').toEqual(victims)
    expect(await eventually(() => host.guard() !== null, SETTLE_MS), 'a guard watches the waiting child').toBe(true)
    const guard = host.guard()!
    await host.end()
    expect(await eventually(() => !isAlive(guard), SETTLE_MS)).toBe(true)
    expect(running(victims)).toEqual([])
    expect(liveWithMarker(child.marker!)).toEqual([])
    expect(log.requests('turn/start')).toEqual([])
  })

  it('a child that ignores stdin EOF and SIGTERM is killed too', async () => {
    const { host, child, victims } = await hostWithTurn('SIGKILL', { linger: true, ignoreSigterm: true })
    expect(await eventually(() => host.guard() !== null, SETTLE_MS)).toBe(true)
    const guard = host.guard()!
    await host.end()
    expect(await eventually(() => !isAlive(guard), SETTLE_MS)).toBe(true)
    expect(running(victims)).toEqual([])
    expect(liveWithMarker(child.marker!)).toEqual([])
  })

  it('without the guard (RENNET_HOST_GUARD=off) the same death leaves grandchildren running', async () => {
    // The control: it shows the other tests could fail.
    const { host, child, log } = await hostWithTurn('SIGKILL', {}, { RENNET_HOST_GUARD: 'off' })
    expect(host.guard()).toBeNull()
    await host.end()
    // The child itself leaves on stdin EOF; what left its session stays.
    expect(await eventually(() => !isAlive(child.pid), SETTLE_MS)).toBe(true)
    const survivors = log.events('grandchild').filter((g) => isAlive(g.pid))
    expect(survivors.map((g) => g.mode).sort()).toEqual(expect.arrayContaining(['daemon', 'session']))
    for (const g of survivors) process.kill(g.pid, 'SIGKILL')
    for (const pid of liveWithMarker(child.marker!)) process.kill(pid, 'SIGKILL')
    expect(await eventually(() => running(survivors.map((g) => g.pid)).length === 0, SETTLE_MS)).toBe(true)
  })

  it('with no turn running, no guard runs', async () => {
    const { host } = await hostWithTurn('worker')
    expect(await eventually(() => host.guard() !== null, SETTLE_MS)).toBe(true)
    const guard = host.guard()!
    await host.end()
    // The host lives on without children of the package: its guard was told to go.
    expect(await eventually(() => !isAlive(guard), SETTLE_MS)).toBe(true)
    expect(host.guard()).toBeNull()
  })
})
