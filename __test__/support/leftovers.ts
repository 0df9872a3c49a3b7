// vitest's global setup: every process of this test run carries RENNET_TEST_RUN=<this run>
// (the workers inherit it, and so does whatever a test starts, children of the package
// included, unless it clears its environment). When the run ends, nothing carrying it may be
// left besides vitest's own processes: whatever is left is killed and fails the run, so that a
// test that leaks (a fake app-server that ignores SIGTERM, a host's turn its guard did not
// end) cannot pass quietly nor leave processes running for minutes. Processes of other runs on
// the machine carry another run id and are never looked at. Linux (/proc); elsewhere the
// per-test clean-ups stand alone.
import { readFileSync } from 'node:fs'
import { RUN_VAR, allProcesses, describeProcess, environOf, eventually, isAlive, killIfAlive } from './procs.js'

/** vitest's own processes: this one and its pool workers (its direct children running vitest). */
function isVitest(pid: number, ppid: number): boolean {
  if (pid === process.pid) return true
  if (ppid !== process.pid) return false
  try {
    return /vitest|tinypool/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))
  } catch {
    return false
  }
}

function leftovers(run: string): number[] {
  return allProcesses()
    .filter((p) => p.state !== 'Z' && !isVitest(p.pid, p.ppid))
    .filter((p) => environOf(p.pid).get(RUN_VAR) === run)
    .map((p) => p.pid)
}

export default function setup(): () => Promise<void> {
  const run = `${process.pid}-${Date.now()}`
  process.env[RUN_VAR] = run
  return async function teardown() {
    if (process.platform !== 'linux') return
    // A process a test ended a moment ago may still be on its way out: a bounded wait, not a
    // timing assertion.
    if (await eventually(() => leftovers(run).length === 0, 10_000, 100)) return
    const left = leftovers(run)
    const described = left.map(describeProcess)
    for (const pid of left) killIfAlive(pid)
    await eventually(() => left.every((pid) => !isAlive(pid)), 10_000)
    // vitest reports an error thrown here but does not fail the run for it.
    process.exitCode = 1
    throw new Error(`${left.length} process(es) of this test run outlived it (now killed):\n${described.join('\n')}`)
  }
}
