// Only work keeps the host alive (Linux, fake app-server): a Node program that leaves a prepared
// turn waiting for its start(), or a conversation open after one send, must end by itself once
// it runs out of work of its own, and the waiting child (with every grandchild) must end with
// it; a turn that runs, whether anybody awaits it or not, keeps the host until its terminal.
// Garbage-collected unstarted, a prepared turn ends its child while the host lives on.
//
// Each host is the lifecycle fixture with HOST_DEATH=none: it neither reads its stdin nor holds
// anything open of its own (once the fake has logged the grandchildren it is to leave). The bounds are generous for a loaded machine: what is checked is
// that the host ends at all (a waiting prepared turn used to keep it for its whole
// idleTimeoutMs, 5 minutes), not how fast.
import { describe, expect, it } from 'vitest'
import { tempDir, writeFake, type FakeLog } from '../support/fake.js'
import type { FakeCodexScript, FakeGrandchild } from '../../testing/index.js'
import { allProcesses, eventually, isAlive, liveWithMarker } from '../support/procs.js'
import { Host, argvOf, hostsEndedAfterEach, running } from './host.js'

const GRANDCHILDREN: FakeGrandchild[] = ['ignore', 'pgroup', 'session', 'daemon']
/** How long a host that ran out of work may take to end, on a loaded machine. */
const EXIT_MS = 20_000
const SETTLE_MS = 15_000

const hosts = hostsEndedAfterEach()

function hostOf(fake: FakeCodexScript, turn: Record<string, unknown>, env: Record<string, string>) {
  const dir = tempDir()
  const { codexPath, log } = writeFake('minimal', { grandchildren: GRANDCHILDREN, ...fake }, dir)
  const host = new Host('none', { cwd: dir, codexPath, ...turn } as never, env)
  hosts.push(host)
  return { host, log }
}

/** Every process the fake's runs started (each app-server and its grandchildren), noted for the clean-up. */
function victims(host: Host, log: FakeLog): number[] {
  const pids = log.runs().flatMap((run) => [run.pid, ...run.grandchildren.map((g) => g.pid)])
  host.track(pids)
  return pids
}

/** Resolves with how the host ended, or with `still running` after EXIT_MS. */
async function ending(host: Host): Promise<number | string | null> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still running'), EXIT_MS)))
  try {
    return await Promise.race([host.exited, late])
  } finally {
    clearTimeout(timer)
  }
}

/** Guards started by the host (their first argument is the host's marker), while they run. */
const guardsOf = (host: Host) =>
  allProcesses()
    .filter((p) => p.state !== 'Z' && argvOf(p.pid)[0]?.endsWith('rennet-codex-guard') && argvOf(p.pid)[1]?.startsWith(`${host.pid}-`))
    .map((p) => p.pid)

/** Once the host ended, nothing it started runs: no process of the fake, nothing with its marker, no guard. */
async function nothingLeft(host: Host, pids: number[]) {
  const left = () => [...running(pids), ...liveWithMarker(`${host.pid}-`, { prefix: true }), ...guardsOf(host)]
  expect(await eventually(() => left().length === 0, SETTLE_MS), `left running: ${left()}`).toBe(true)
}

describe.skipIf(process.platform !== 'linux')('only work keeps the host alive (Linux, fake app-server)', () => {
  it.each([
    ['', {}],
    [' (the app answers server requests)', { HOST_HANDLER: '1' }],
  ])('a prepared turn kept but never started%s: the host ends by itself, and the waiting child and its grandchildren with it', async (_, env) => {
    const { host, log } = hostOf({}, {}, { HOST_PREPARED: '1', HOST_GRANDCHILDREN: String(GRANDCHILDREN.length), ...env })
    await host.until((e) => (e as { type: string }).type === 'ready', EXIT_MS)
    expect(await eventually(() => log.events('grandchild').length === GRANDCHILDREN.length, SETTLE_MS), 'the grandchildren started').toBe(true)
    const pids = victims(host, log)
    expect(await ending(host), 'how the host ended').toBe(0)
    await nothingLeft(host, pids)
    expect(log.requests('turn/start')).toEqual([])
  })

  it('a prepared turn dropped at once, nothing of it read: the host ends by itself, and whatever it started with it', async () => {
    const { host, log } = hostOf({}, {}, { HOST_PREPARED: 'drop' })
    expect(await ending(host), 'how the host ended').toBe(0)
    await nothingLeft(host, victims(host, log))
    expect(log.requests('turn/start')).toEqual([])
  })

  it('a conversation left open after one send: the host ends by itself, and the next turn’s waiting child with it', async () => {
    const { host, log } = hostOf({}, { prompt: 'Say hello.' }, { HOST_CONVERSATION: '1', HOST_GRANDCHILDREN: String(GRANDCHILDREN.length) })
    await host.until((e) => (e as { type: string }).type === 'ready', EXIT_MS)
    expect(host.events.find((e) => e.type === 'terminal')).toMatchObject({ status: 'completed' })
    // The turn's child, then the next turn's, prepared and waiting for a send with its grandchildren.
    expect(await eventually(() => log.runs().length === 2 && log.runs()[1].grandchildren.length === GRANDCHILDREN.length, SETTLE_MS)).toBe(true)
    expect(log.starts()).toHaveLength(2)
    const pids = victims(host, log)
    expect(await ending(host), 'how the host ended').toBe(0)
    await nothingLeft(host, pids)
    expect(log.requests('turn/start')).toHaveLength(1)
  })

  it('a turn nobody iterates or awaits still runs to its terminal before the host ends (the control)', async () => {
    const steps: FakeCodexScript['steps'] = [{ type: 'delay', ms: 1500 }, { type: 'message', id: 'msg_1', text: 'done' }]
    const { host, log } = hostOf({ steps }, { prompt: 'Say hello.' }, { HOST_UNAWAITED: '1' })
    expect(await ending(host), 'how the host ended').toBe(0)
    const pids = victims(host, log)
    // The turn completed on its own: the host did not end before it.
    expect(log.sentMethod('turn/completed')).toHaveLength(1)
    expect(log.events('stdin-closed')).toHaveLength(1)
    await nothingLeft(host, pids)
  })

  it('a prepared turn garbage-collected unstarted ends its child while the host lives on', async () => {
    const { host, log } = hostOf({}, {}, { HOST_PREPARED: 'collect' })
    await host.until((e) => (e as { type: string }).type === 'ready', EXIT_MS)
    expect(await eventually(() => log.events('grandchild').length === GRANDCHILDREN.length, SETTLE_MS)).toBe(true)
    const pids = victims(host, log)
    const child = log.start()
    expect(await eventually(() => !isAlive(child.pid), EXIT_MS), 'the collected turn’s child ended').toBe(true)
    expect(host.running, 'the host (collecting every 100 ms) still runs').toBe(true)
    expect(await eventually(() => running(pids).length === 0 && liveWithMarker(child.marker!).length === 0, SETTLE_MS)).toBe(true)
    expect(log.requests('turn/start')).toEqual([])
  })
})
