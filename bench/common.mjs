// Small helpers shared by the bench's runner and workers: the clock they compare across
// processes, and what /proc says about processes (Linux, where the bench runs).

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { runIsolated } from '../scripts/netns.mjs'
import { describeProcess, isAlive, liveWithEnvironment } from '../scripts/processes.mjs'

/**
 * Milliseconds on the monotonic clock (process.hrtime): the same clock in every process of
 * the machine, so a worker's times and the mock server's can be subtracted.
 */
export const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6

/** Whether a process is gone (or only a zombie waiting for its parent). */
export const processGone = (pid) => !isAlive(pid)

/** Pids of live processes whose environment holds the exact entry `entry` (`NAME=value`). */
export const liveWithEnv = (entry) => liveWithEnvironment(entry)

export { describeProcess }

/**
 * The result a worker prints as its last line of stdout, once it has exited; a worker that
 * printed none gives `{ errors }` saying how it ended and what it printed last.
 */
export function workerResult(child) {
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1)))
      } catch {
        resolve({ errors: [`the worker ended (${code ?? signal}) without a result: ${out.slice(-500)}`] })
      }
    })
  })
}

/**
 * One look at the process table the way a tree kill looks: `/proc/<pid>/stat` of every
 * process. Returns how many processes it read and how long it took (ms).
 */
export function timeProcScan() {
  const t0 = monotonicMs()
  let processes = 0
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      readFileSync(`/proc/${name}/stat`, 'latin1')
      processes++
    } catch {}
  }
  return { processes, ms: monotonicMs() - t0 }
}

/** Median of the finite numbers in `values` (null when there are none). */
export function median(values) {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b)
  if (v.length === 0) return null
  const mid = v.length >> 1
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2
}

/** Kernel memory figures of this process in MB: `VmRSS`, `VmHWM` (peak), … */
export function memoryMb(key) {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))
  return m ? Number(m[1]) / 1024 : null
}

/**
 * Runs the suite `name` (the program `file`, a suite's own module run as a program) inside the
 * loopback-only namespace and returns the record it wrote, its problems added to `problems`;
 * null when it did not end well.
 */
export function isolatedSuite(name, file, { smoke, runs, problems }) {
  const scratch = mkdtempSync(join(tmpdir(), `rennet-bench-${name}-`))
  const out = join(scratch, `${name}.json`)
  try {
    const run = runIsolated([process.execPath, file, JSON.stringify({ smoke, runs, out })], { stdio: 'inherit', cwd: dirname(dirname(file)) })
    if (run.status !== 0) {
      problems.push(`${name}: the suite ended with ${run.status ?? run.signal}`)
      return null
    }
    const record = JSON.parse(readFileSync(out, 'utf8'))
    problems.push(...record.problems)
    return record
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
