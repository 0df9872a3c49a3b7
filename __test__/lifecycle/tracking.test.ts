// How the guard keeps a child's orphans in sight, both ways, on Linux (docs/what-ends-when.md):
//
// - Linux's way: the child is a child subreaper, so an orphan below it is re-parented to it and
//   the guard finds it through parent links when the host dies.
// - macOS's way (`RENNET_GUARD_TRACKING=poll`, which runs it here): no subreaper, so an orphan
//   goes to init at once; the guard's `track` thread notes the child's descendants every 500 ms
//   while the host lives. A descendant seen by a look is ended after it was orphaned; one that
//   leaves the tree and drops the marker within one look is not: the documented limit, shown
//   here rather than left a silent gap.
//
// The descendant in question is started by a wrapper around the fake app-server: an
// intermediate with an empty environment (no marker) starts `setsid sleep 60` (out of the
// child's group and session) and leaves when the test says, orphaning it. Nothing here waits
// for time to pass: the test sees the `track` thread asleep, then asleep again after going to
// sleep twice more (a whole look in between), or stops the guard (SIGSTOP) so that no look can
// happen. Bounds only stop a broken test from hanging.
import { chmodSync, existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { statOf } from '../../scripts/processes.mjs'
import { tempDir, writeFake } from '../support/fake.js'
import { eventually, isAlive } from '../support/procs.js'
import { Host, argvOf, hostsEndedAfterEach } from './host.js'

const BOUND_MS = 20_000

/** Guards a test stopped: let go before anything else, or one would wait stopped for ever. */
const stopped: number[] = []
const hosts = hostsEndedAfterEach(() => {
  for (const guard of stopped.splice(0)) {
    try {
      process.kill(guard, 'SIGCONT')
    } catch {
      // gone meanwhile
    }
  }
})

/**
 * The intermediate, with an empty environment: `$1` the directory, `$2` `window` (start the
 * sleeper at once, leave on `orphan`) or `limit` (start it on `start`, and leave at once). It
 * leaves when the directory goes (the clean-up removes it), and the sleeper by itself: neither
 * outlives a failed test for long, whatever the guard did.
 */
const INTERMEDIATE = `
d=$1
cue() { until [ -e "$d/$1" ]; do [ -d "$d" ] || exit 0; sleep 0.02; done; }
echo $$ > "$d/intermediate.new" && mv "$d/intermediate.new" "$d/intermediate"
[ "$2" = window ] || cue start
setsid sleep 60 &
echo $! > "$d/sleeper.new" && mv "$d/sleeper.new" "$d/sleeper"
[ "$2" = limit ] || cue orphan
`

type Way = 'subreaper' | 'poll'

/** A host whose turn's child (the fake, `hang`) has the intermediate below it. */
async function hostWithDescendant(way: Way, scenario: 'window' | 'limit') {
  const dir = tempDir()
  const { codexPath: fake, log } = writeFake('hang', {}, dir)
  const wrapper = join(dir, 'codex-with-descendant')
  writeFileSync(join(dir, 'intermediate.sh'), INTERMEDIATE)
  writeFileSync(
    wrapper,
    [
      '#!/bin/sh',
      // Only the app-server: the addon may ask the binary other things first.
      'if [ "$1" = app-server ]; then',
      `  env -i PATH=/usr/bin:/bin /bin/sh '${join(dir, 'intermediate.sh')}' '${dir}' ${scenario} &`,
      'fi',
      // The fake takes over this process: the intermediate is the child's own.
      `exec '${fake}' "$@"`,
      '',
    ].join('\n'),
  )
  chmodSync(wrapper, 0o755)
  // Empty: the platform's way even when this run was started with RENNET_GUARD_TRACKING=poll.
  const host = new Host('SIGKILL', { prompt: 'Say hello.', cwd: dir, codexPath: wrapper }, { RENNET_GUARD_TRACKING: way === 'poll' ? 'poll' : '' })
  hosts.push(host)
  await host.until((e) => e.type === 'turnStarted', BOUND_MS)
  expect(await eventually(() => host.guard() !== null, BOUND_MS), 'a guard runs beside the turn').toBe(true)
  const guard = host.guard()!
  expect(host.tracking(guard), "the guard's command line").toBe(way)
  const child = log.start().pid
  const pidIn = async (name: string) => {
    expect(await eventually(() => existsSync(join(dir, name)), BOUND_MS), `the ${name} started`).toBe(true)
    return Number(readFileSync(join(dir, name), 'utf8').trim())
  }
  const intermediate = await pidIn('intermediate')
  // Before any assertion: whatever happens next, the clean-up ends it.
  host.track([intermediate])
  expect(statOf(intermediate)?.ppid, "the intermediate is the child's").toBe(child)
  /** The sleeper, once it runs in a session of its own. */
  const descendant = async () => {
    const sleeper = await pidIn('sleeper')
    host.track([sleeper])
    const settled = () => statOf(sleeper)?.session === sleeper && argvOf(sleeper).join(' ') === 'sleep 60'
    expect(await eventually(settled, BOUND_MS), 'the sleeper runs in a session of its own').toBe(true)
    expect(environOfSleeper(sleeper), 'the sleeper carries no marker').not.toContain('RENNET_CODEX_TREE=')
    return { intermediate, sleeper }
  }
  /** Tells the intermediate to go on: `start` the sleeper, or leave (`orphan`). */
  const cue = (name: 'start' | 'orphan') => {
    writeFileSync(join(dir, `${name}.new`), '')
    renameSync(join(dir, `${name}.new`), join(dir, name))
  }
  const orphaned = async (intermediate: number, sleeper: number) => {
    const gone = await eventually(() => !isAlive(intermediate) && statOf(sleeper)?.ppid !== intermediate, BOUND_MS)
    expect(gone, 'the intermediate left').toBe(true)
    return statOf(sleeper)!.ppid
  }
  return { host, guard, child, descendant, cue, orphaned }
}

function environOfSleeper(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1')
  } catch {
    return ''
  }
}

/** The guard's `track` thread, if it has one. */
function trackerOf(guard: number): number | null {
  for (const tid of readdirSync(`/proc/${guard}/task`)) {
    if (readFileSync(`/proc/${guard}/task/${tid}/comm`, 'utf8').trim() === 'track') return Number(tid)
  }
  return null
}

/**
 * Whether the tracker is in its sleep between two looks (asleep in nanosleep: where the kernel
 * names a task's wait channel, that name, else its state), and how often it went to sleep.
 */
function tracker(guard: number, tid: number): { asleep: boolean; sleeps: number } {
  const status = readFileSync(`/proc/${guard}/task/${tid}/status`, 'utf8')
  const state = /^State:\s+(\S)/m.exec(status)![1]
  const sleeps = Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)![1])
  let wchan = ''
  try {
    wchan = readFileSync(`/proc/${guard}/task/${tid}/wchan`, 'utf8').trim()
  } catch {
    // not told here
  }
  const named = wchan !== '' && wchan !== '0'
  return { asleep: state === 'S' && (!named || wchan.includes('nanosleep')), sleeps }
}

/**
 * Resolves once the tracker has made one whole look since the call: seen asleep, then asleep
 * again having gone to sleep at least twice more. Each sleep is a voluntary context switch;
 * between two sleeps lies a look; two switches rather than one leave room for one that was not
 * a sleep (a wait inside the look).
 */
async function oneWholeLook(guard: number, tid: number): Promise<void> {
  let before = tracker(guard, tid)
  expect(await eventually(() => (before = tracker(guard, tid)).asleep, BOUND_MS), 'the tracker sleeps between looks').toBe(true)
  const looked = await eventually(() => {
    const now = tracker(guard, tid)
    return now.asleep && now.sleeps >= before.sleeps + 2
  }, BOUND_MS)
  expect(looked, 'the tracker looked').toBe(true)
}

/** Stops the guard (SIGSTOP) and waits until every thread of it is stopped: no look happens. */
async function stopGuard(guard: number): Promise<void> {
  stopped.push(guard)
  process.kill(guard, 'SIGSTOP')
  const allStopped = () => readdirSync(`/proc/${guard}/task`).every((tid) => /^State:\s+T/m.test(readFileSync(`/proc/${guard}/task/${tid}/status`, 'utf8')))
  expect(await eventually(allStopped, BOUND_MS), 'the guard stopped').toBe(true)
}

describe.skipIf(process.platform !== 'linux')('how the guard keeps orphans in sight (Linux, both ways)', { timeout: 4 * BOUND_MS }, () => {
  it("Linux's way: no tracking thread, and an orphan stays below the child (a subreaper), so the guard ends it", async () => {
    const { host, guard, child, descendant, cue, orphaned } = await hostWithDescendant('subreaper', 'limit')
    expect(trackerOf(guard), 'a tracking thread').toBeNull()
    // As in the limit below: no look could happen while the sleeper was orphaned.
    await stopGuard(guard)
    cue('start')
    const { intermediate, sleeper } = await descendant()
    expect(await orphaned(intermediate, sleeper), "the orphan's parent").toBe(child)
    process.kill(guard, 'SIGCONT')
    await host.end()
    expect(await eventually(() => !isAlive(guard), BOUND_MS), 'the guard left').toBe(true)
    expect(isAlive(sleeper), 'the orphan after the guard left').toBe(false)
  })

  it('the poll (RENNET_GUARD_TRACKING=poll): a descendant a look saw while its parent lived is ended after it was orphaned', async () => {
    const { host, guard, child, descendant, cue, orphaned } = await hostWithDescendant('poll', 'window')
    const tid = trackerOf(guard)
    expect(tid, 'a tracking thread').not.toBeNull()
    const { intermediate, sleeper } = await descendant()
    expect(statOf(sleeper)?.ppid, "the sleeper's parent while the intermediate lives").toBe(intermediate)
    await oneWholeLook(guard, tid!)
    cue('orphan')
    // Not the child's: the child is no subreaper here, and the orphan's link to it is gone.
    expect(await orphaned(intermediate, sleeper), "the orphan's parent").not.toBe(child)
    await host.end()
    expect(await eventually(() => !isAlive(guard), BOUND_MS), 'the guard left').toBe(true)
    expect(isAlive(sleeper), 'the orphan after the guard left').toBe(false)
  })

  it('the poll, its limit: what leaves the tree without the marker within one look outlives the host', async () => {
    const { host, guard, child, descendant, cue, orphaned } = await hostWithDescendant('poll', 'limit')
    expect(trackerOf(guard), 'a tracking thread').not.toBeNull()
    // Stopped, the guard cannot look while the sleeper starts and is orphaned: "within one
    // look", made certain.
    await stopGuard(guard)
    cue('start')
    const { intermediate, sleeper } = await descendant()
    expect(await orphaned(intermediate, sleeper), "the orphan's parent").not.toBe(child)
    process.kill(guard, 'SIGCONT')
    await host.end()
    expect(await eventually(() => !isAlive(guard), BOUND_MS), 'the guard left').toBe(true)
    expect(isAlive(sleeper), 'the orphan after the guard left: the limit').toBe(true)
    // What the limit left is expected: ended here, so that the clean-up sees only leaks.
    expect(await host.dispose()).toContainEqual(expect.stringMatching(new RegExp(`^${sleeper}: sleep 60$`)))
  })
})
