// Nothing outlives a turn when its host dies mid-turn (Linux), with the real pinned Codex: the
// loopback mock model has Codex run `sleep 300 & setsid sleep 301 & nohup sleep 302 & sleep 303`
// (Codex gives every command a session of its own; `setsid` leaves even that), then keeps the
// next model request hanging. Once all four sleeps run, the host process that called runTurn is
// ended in each of the six ways of `Death`; afterwards nothing carrying the host's marker runs,
// nothing is left in the child's process group, and the guard has left.
//
// The six hosts, and a seventh without the guard (the control: it shows what the others would
// leave), start together (one mock, Codex home and git cwd each) and are ended one per test, so
// that their start-up is paid once. The guard's own exit says when it was done; how fast that
// is belongs to `pnpm bench`. Bounds below only stop a broken run from hanging.
//
// With RENNET_GUARD_TRACKING=poll in the run's environment (`pnpm nx run
// rennet-adapters:lifecycle-poll`) the same tests run the macOS way: no subreaper, the guard
// looking every 500 ms.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createCodexHome, createGitCwd, type CodexHome, type GitCwd } from '../../testing/codex-home.js'
import { execCommandResponse, hang, start, type MockServer } from '../../testing/mock-responses.js'
import { eventually, isAlive, liveInGroup, liveWithMarker } from '../support/procs.js'
import { DEATHS, Host, argvOf, running, type Death } from './host.js'

const COMMAND = 'sleep 300 & setsid sleep 301 & nohup sleep 302 & sleep 303'
const SLEEPS = ['300', '301', '302', '303']
/** How the guard is expected to keep orphans in sight in this run. */
const TRACKING = process.env.RENNET_GUARD_TRACKING === 'poll' ? 'poll' : 'subreaper'
/** Six real Codex children starting at once on a loaded 2-core machine take a while. */
const READY_MS = 120_000
const SETTLE_MS = 20_000

interface Ready {
  host: Host
  marker: string
  guard: number | null
  child: number
  /** The four sleeps, by their argument. */
  sleeps: Record<string, number>
  /** Everything that carried the host's marker once the sleeps ran. */
  marked: number[]
}

interface Run {
  death: Death
  /** The control: RENNET_HOST_GUARD=off. */
  unguarded?: boolean
  mock: MockServer
  home: CodexHome
  cwd: GitCwd
  host?: Host
  ready: Promise<Ready>
  marker?: string
}

/** Processes carrying `marker`'s prefix, by pid, with their argv. */
function marked(marker: string): Map<number, string[]> {
  return new Map(liveWithMarker(`${marker}-`, { prefix: true }).map((pid) => [pid, argvOf(pid)]))
}

async function prepare(run: Run): Promise<Ready> {
  const host = new Host(
    run.death,
    {
      prompt: 'Start the background jobs.',
      cwd: run.cwd.path,
      codexPath: run.home.codexPath,
      env: run.home.env,
      requestTimeoutMs: 60_000,
    },
    run.unguarded ? { RENNET_HOST_GUARD: 'off' } : {},
  )
  run.host = host
  await host.until((e) => e.type === 'turnStarted', READY_MS)
  let guard: number | null = null
  if (!run.unguarded) {
    if (!(await eventually(() => host.guard() !== null, SETTLE_MS))) throw new Error('no guard runs beside the turn')
    guard = host.guard()!
    const tracking = host.tracking(guard)
    if (tracking !== TRACKING) throw new Error(`the guard tracks orphans by ${tracking}, not by ${TRACKING}`)
  }
  // Without a guard to read it from, the pid part of the host's marker still tells its children.
  const marker = guard === null ? String(host.pid) : host.marker(guard)
  run.marker = marker
  const sleeps: Record<string, number> = {}
  const allRun = () => {
    for (const [pid, argv] of marked(marker)) {
      if (argv[0] === 'sleep' && SLEEPS.includes(argv[1]) && argv.length === 2) sleeps[argv[1]] = pid
    }
    return SLEEPS.every((s) => sleeps[s] !== undefined)
  }
  if (!(await eventually(allRun, READY_MS, 250))) {
    throw new Error(`the command's sleeps never all ran: found ${JSON.stringify(sleeps)}; events ${JSON.stringify(host.events.map((e) => e.type))}`)
  }
  const child = host.started()!.pid
  const all = [...marked(marker).keys()]
  host.track([child, ...all])
  return { host, marker, guard, child, sleeps, marked: all }
}

const runs: Run[] = []

describe.skipIf(process.platform !== 'linux')(`the host dies mid-turn (Linux, tracking: ${TRACKING}, real codex-cli)`, () => {
  beforeAll(async () => {
    for (const [death, unguarded] of [...DEATHS.map((d) => [d, false] as const), ['SIGKILL', true] as const]) {
      const mock = await start([execCommandResponse(COMMAND, { yieldTimeMs: 1000 }), hang()])
      const run: Run = { death, unguarded, mock, home: createCodexHome({ baseUrl: mock.url }), cwd: createGitCwd(), ready: null! }
      run.ready = prepare(run)
      // Each test awaits its own; this keeps an early failure from being unhandled meanwhile.
      run.ready.catch(() => {})
      runs.push(run)
    }
  })

  afterAll(async () => {
    // A failed test must not leave sleeps running for minutes: each host's turn is ended by its
    // marker, guard or not. After tests that all passed there is nothing to kill.
    const killed: string[] = []
    for (const run of runs) {
      if (run.host) killed.push(...(await run.host.dispose()))
      await run.mock.close()
      run.home.cleanup()
      run.cwd.cleanup()
    }
    if (killed.length) throw new Error(`the clean-up had to kill what the tests left:\n${killed.join('\n')}`)
  })

  for (const death of DEATHS) {
    it(`${death}: every process of the command, the child and its group are gone, and the guard left`, { timeout: READY_MS + 4 * SETTLE_MS }, async () => {
      const run = runs.find((r) => r.death === death && !r.unguarded)!
      const { host, marker, guard, child, sleeps, marked: victims } = await run.ready
      expect(running(Object.values(sleeps)), 'the four sleeps run').toHaveLength(4)
      expect(victims).toContain(child)
      const ended = Date.now()
      await host.end()
      expect(await eventually(() => !isAlive(guard!), SETTLE_MS), 'the guard left').toBe(true)
      const took = Date.now() - ended
      const survivors = [...marked(marker)].map(([pid, argv]) => `${pid} ${argv.join(' ')}`)
      expect(survivors, "processes carrying the host's marker after the guard left").toEqual([])
      expect(running(victims), 'processes of the turn seen before the host ended').toEqual([])
      expect(liveInGroup(child), "the child's process group").toEqual([])
      console.log(`real turn, host death by ${death}: ${victims.length} processes of the turn; the guard was done ${took} ms after the host ended`)
    })
  }

  it('without the guard (RENNET_HOST_GUARD=off), the same death leaves the setsid sleep running', { timeout: READY_MS + 2 * SETTLE_MS }, async () => {
    // The control: what the tests above would see if the guard did nothing.
    const run = runs.find((r) => r.unguarded)!
    const { host, child, sleeps } = await run.ready
    expect(host.guard()).toBeNull()
    await host.end()
    // Codex leaves on stdin EOF and takes the command's own session with it; what left that
    // session stays.
    expect(await eventually(() => !isAlive(child), SETTLE_MS), 'the child left on EOF').toBe(true)
    expect(running([sleeps['301']]), 'the setsid sleep after the child left').toEqual([sleeps['301']])
    // What the control left is expected: ended here, so that the clean-up sees only leaks.
    expect(await host.dispose()).toContainEqual(expect.stringMatching(/^\d+: sleep 301$/))
  })
})
