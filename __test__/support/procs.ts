// Process-tree evidence for tests: which processes are still alive in a process group, or
// below a pid. Reads /proc (Linux, through scripts/processes.mjs, which the bench and the
// Windows lane read it with too), which is where the suites run; `psProcesses` and
// `isRunning` answer the same from `ps` and `process.kill(pid, 0)` where there is no /proc
// (macOS), `windowsProcesses` from the Windows process table.
import { execFileSync, spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describeProcess, environOf, exists, isAlive, liveWithEnvironment, processTable, rawProcessTexts, statOf } from '../../scripts/processes.mjs'

export { describeProcess, environOf, isAlive, liveWithEnvironment }

export const allProcesses = processTable

/** Live (not zombie) processes whose process group is `pgid`. */
export function liveInGroup(pgid: number): number[] {
  return allProcesses()
    .filter((p) => p.pgrp === pgid && p.state !== 'Z')
    .map((p) => p.pid)
}

/**
 * The live processes a fake's start (`pid`, as the fake logs it) left: its process group on
 * Unix (from /proc on Linux, else `ps`); on Windows (one Job Object a turn, ended whole) the
 * fake itself.
 */
export function leftByFake(pid: number): number[] {
  if (process.platform === 'win32') return [pid].filter(isRunning)
  return process.platform === 'linux' ? liveInGroup(pid) : runningInGroup(pid)
}

/** Kills `pid` with SIGKILL unless it is gone already (it may end between a look and the kill). */
export function killIfAlive(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e
  }
}

/**
 * A ceiling for a process event, a turn or a promise in a test: generous enough for a loaded
 * 2-core machine (a build running beside the tests), so that only a hang reaches it. A guard
 * that names what hung, never a measure of speed.
 */
export const BOUND_MS = 20_000

/**
 * A limit a test needs to see fire (a `requestTimeoutMs`, a helper's deadline) on a child that
 * must first start: `initialize` waits for the child's start-up too (the fake is a Node
 * process, which takes seconds on a loaded machine), so the limit leaves room for it; the test
 * waits this long for it to fire.
 */
export const FIRING_MS = 5_000

/**
 * A limit a test must never see fire (an interrupt's grace the fake honours): far beyond
 * `BOUND_MS`, so that a turn ending on it fails the test's bound rather than passing late.
 */
export const NEVER_MS = 10 * 60_000

/** Polls until `check` returns true or `ms` passes; returns the last result. */
export async function eventually(check: () => boolean, ms = 3000, every = 25): Promise<boolean> {
  const until = Date.now() + ms
  for (;;) {
    if (check()) return true
    if (Date.now() > until) return false
    await new Promise((r) => setTimeout(r, every))
  }
}

/**
 * Live processes whose environment holds `RENNET_CODEX_TREE=<marker>`: the marker the addon
 * gives each child (the fake logs it), inherited by everything the child starts unless it
 * replaces its environment.
 */
export function liveWithMarker(marker: string, { prefix = false } = {}): number[] {
  return liveWithEnvironment(`RENNET_CODEX_TREE=${marker}`, { prefix })
}

/** What a `watchForSecrets` saw while it ran. */
export interface SecretSightings {
  /** How many times the whole process table was read. */
  samples: number
  /** How many of those samples found a process whose environment holds the watch's `mark`. */
  marked: number
  /** Every place a secret was found: `<name> in the command line of <pid>: <argv>` and the like. */
  hits: string[]
}

/**
 * Reads the command line of every process on the machine, again and again until `stop()`,
 * and notes each one that holds a value of `argv`; `environ` values are looked for in every
 * environment that can be read too (for secrets that no process's environment may hold
 * either). `mark` is a `NAME=value` entry of the environment of the processes under test:
 * `marked()` says in how many samples one of them was seen, so that a test can wait until the
 * watch has looked at them long enough, and fail when it never saw them.
 */
export function watchForSecrets({ argv, environ = {}, mark }: { argv: Record<string, string>; environ?: Record<string, string>; mark: string }) {
  const seen: SecretSightings = { samples: 0, marked: 0, hits: [] }
  const markText = `\0${mark}\0`
  const note = (hit: string) => {
    if (!seen.hits.includes(hit)) seen.hits.push(hit)
  }
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      let marked = false
      for (const p of rawProcessTexts()) {
        const shown = () => p.cmdline.split('\0').join(' ').trim()
        for (const [name, value] of Object.entries(argv)) {
          if (p.cmdline.includes(value)) note(`${name} in the command line of ${p.pid}: ${shown()}`)
        }
        for (const [name, value] of Object.entries(environ)) {
          if (p.environ.includes(value)) note(`${name} in the environment of ${p.pid}: ${shown()}`)
        }
        if (`\0${p.environ}`.includes(markText)) marked = true
      }
      seen.samples++
      if (marked) seen.marked++
      await new Promise((r) => setTimeout(r, 2))
    }
  })()
  return {
    marked: () => seen.marked,
    async stop(): Promise<SecretSightings> {
      stopped = true
      await loop
      return seen
    },
  }
}

/** How many file descriptors this process has open. */
export function openFds(): number {
  return readdirSync('/proc/self/fd').length
}

/** A process as `ps` lists it. */
export interface PsEntry {
  pid: number
  ppid: number
  pgid: number
  /** `ps`'s STAT column: `Z…` for a zombie. */
  stat: string
  /** The command line, arguments joined by spaces. */
  args: string
}

/** Every process, from `ps` (for systems without /proc; the same columns on Linux and macOS). */
export function psProcesses(): PsEntry[] {
  const text = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,args='], { encoding: 'utf8' })
  const out: PsEntry[] = []
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s?(.*)$/.exec(line)
    if (m) out.push({ pid: Number(m[1]), ppid: Number(m[2]), pgid: Number(m[3]), stat: m[4], args: m[5] })
  }
  return out
}

/**
 * Whether `pid` exists and is not a zombie, without /proc: `process.kill(pid, 0)` (which also
 * answers for zombies, and works on Windows), then, on Unix, `ps` for the zombie state.
 */
export function isRunning(pid: number): boolean {
  if (!exists(pid)) return false
  if (process.platform === 'win32') return true
  try {
    const stat = execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim()
    return stat !== '' && !stat.startsWith('Z')
  } catch {
    // ps exits 1 when the pid is not there (any more).
    return false
  }
}

/** Live (not zombie) processes of process group `pgid`, from `ps`. */
export function runningInGroup(pgid: number): number[] {
  return psProcesses()
    .filter((p) => p.pgid === pgid && !p.stat.startsWith('Z'))
    .map((p) => p.pid)
}

/** A process of the Windows process table. */
export interface WindowsProcess {
  pid: number
  ppid: number
  name: string
}

/**
 * Every process, on Windows: from `wmic` (Windows 10, and Wine, whose wmic prints its table
 * whatever the format asked), else PowerShell's CIM (Windows 11 without wmic). The columns
 * come in the order Name, ParentProcessId, ProcessId.
 */
export function windowsProcesses(): WindowsProcess[] {
  const parse = (text: string) =>
    text
      .split(/\r?\n/)
      .map((line) => line.trim())
      .map((line) => (line.includes(',') ? line.split(',').slice(-3) : line.split(/\s+/)))
      .filter((f) => f.length >= 3 && /^\d+$/.test(f.at(-1)!) && /^\d+$/.test(f.at(-2)!))
      .map((f) => ({ name: f.slice(0, -2).join(' '), ppid: Number(f.at(-2)), pid: Number(f.at(-1)) }))
  // The table goes through a file, not a pipe: a pipe's writing end that a process started
  // meanwhile inherited (Windows hands every inheritable handle to a new process) would keep
  // the reader waiting after wmic exited.
  const dir = mkdtempSync(join(tmpdir(), 'rennet-wmic-'))
  try {
    const file = join(dir, 'processes.txt')
    const out = openSync(file, 'w')
    try {
      spawnSync('wmic', ['process', 'get', 'Name,ParentProcessId,ProcessId', '/format:csv'], { stdio: ['ignore', out, 'ignore'], timeout: 30_000 })
    } finally {
      closeSync(out)
    }
    const found = parse(readFileSync(file, 'utf16le').replace(/^\uFEFF/, '').replaceAll('\0', ''))
    if (found.length) return found
  } catch {
    // no wmic here
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const script = 'Get-CimInstance Win32_Process | ForEach-Object { "$($_.Name),$($_.ParentProcessId),$($_.ProcessId)" }'
  return parse(execFileSync('powershell', ['-NoProfile', '-Command', script], { encoding: 'utf8' }))
}

/** The variable the suite's global setup gives every process of one test run (and so every child). */
export const RUN_VAR = 'RENNET_TEST_RUN'

/** A process named by pid and start time: a pid reused by another process is not it. */
export interface ProcessRef {
  pid: number
  start: string
}

/** `pid` as it is now, to be killed later only if it is still the same process. */
export function identify(pid: number): ProcessRef | null {
  const stat = statOf(pid)
  return stat === null ? null : { pid, start: stat.start }
}

/**
 * Kills (SIGKILL) every live process of this test run whose marker starts with `prefix`
 * (`RENNET_CODEX_TREE=<prefix>…`), and each of `refs` still the process it was, then waits
 * (bounded) until they are gone. Returns what it killed: a clean-up that had work to do.
 * Processes of other runs on the machine are never touched: with a run id set, a process must
 * carry it too.
 */
export async function killLeftovers(prefix: string | null, refs: ProcessRef[] = []): Promise<string[]> {
  // Markers and start times come from /proc; elsewhere the suites keep their own lists.
  if (process.platform !== 'linux') return []
  const run = process.env[RUN_VAR]
  const ours = (pid: number) => run === undefined || environOf(pid).get(RUN_VAR) === run
  const victims = new Set<number>()
  if (prefix !== null) for (const pid of liveWithMarker(prefix, { prefix: true })) if (ours(pid)) victims.add(pid)
  for (const ref of refs) if (isAlive(ref.pid) && statOf(ref.pid)?.start === ref.start) victims.add(ref.pid)
  const killed = [...victims].map(describeProcess)
  for (const pid of victims) killIfAlive(pid)
  await eventually(() => [...victims].every((pid) => !isAlive(pid)), 10_000)
  return killed
}
