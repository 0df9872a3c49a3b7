// Drives __test__/fixtures/host.mjs: a Node process that runs one turn through the addon and
// then ends as told, so that a suite can check what outlives it.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach } from 'vitest'
import type { HarnessEvent, RunTurnOptions } from '../../index.js'
import { removeFakeCodexes } from '../../testing/index.js'
import { cleanupFakes } from '../support/fake.js'
import { allProcesses, eventually, identify, isAlive, isRunning, killLeftovers, psProcesses, type ProcessRef } from '../support/procs.js'

const HOST = resolve(__dirname, '../fixtures/host.mjs')

/**
 * How the host ends: signals with Node's default handling, or what the fixture does itself;
 * `none`: by itself, once nothing keeps it alive.
 */
export type Death = 'SIGKILL' | 'SIGTERM' | 'SIGINT' | 'exit-in-handler' | 'uncaught' | 'worker' | 'none'

export const DEATHS: Death[] = ['SIGKILL', 'SIGTERM', 'SIGINT', 'exit-in-handler', 'uncaught', 'worker']

export class Host {
  readonly events: HarnessEvent[] = []
  readonly notes: { host: string }[] = []
  readonly exited: Promise<number | string | null>
  private readonly proc: ChildProcess
  /** Processes of the host's turn a test saw, for the clean-up. */
  private readonly seen: ProcessRef[] = []

  constructor(
    readonly death: Death,
    turn: RunTurnOptions,
    env: Record<string, string> = {},
  ) {
    this.proc = spawn(process.execPath, [HOST], {
      env: { ...process.env, ...env, HOST_TURN: JSON.stringify(turn), HOST_DEATH: death },
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    let buffered = ''
    this.proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk
      let nl
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = JSON.parse(buffered.slice(0, nl))
        buffered = buffered.slice(nl + 1)
        if ('host' in line) this.notes.push(line)
        else this.events.push(line)
      }
    })
    this.exited = new Promise((done) => this.proc.once('exit', (code, signal) => done(signal ?? code)))
  }

  get pid(): number {
    return this.proc.pid!
  }

  /** Waits (bounded, generously) until an event satisfies `test`. */
  async until(test: (e: HarnessEvent) => boolean, ms = 20_000): Promise<void> {
    if (!(await eventually(() => this.events.some(test), ms))) {
      throw new Error(`the host's turn never got there; events: ${JSON.stringify(this.events.map((e) => e.type))}`)
    }
  }

  /** Whether the host process is still running (it has not exited). */
  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null
  }

  /** The host-death guard this host started, while it runs (from /proc on Linux, else `ps`). */
  guard(): number | null {
    const guard =
      process.platform === 'linux'
        ? allProcesses().find((p) => p.ppid === this.pid && commandOf(p.pid).endsWith('rennet-codex-guard'))
        : psProcesses().find((p) => p.ppid === this.pid && /rennet-codex-guard( |$)/.test(p.args))
    return guard?.pid ?? null
  }

  /**
   * The host's marker (Linux): the guard is started with it as its one argument, and every
   * child of this host carries `RENNET_CODEX_TREE=<marker>-<n>` in its environment.
   */
  marker(guard: number): string {
    const marker = argvOf(guard)[1]
    if (!marker?.startsWith(`${this.pid}-`)) throw new Error(`the guard ${guard} was not started with this host's marker: ${argvOf(guard)}`)
    return marker
  }

  /**
   * How the guard keeps the host's orphans in sight (Linux), as the host told it on its command
   * line: `subreaper` (Linux's way) or `poll` (macOS's, with RENNET_GUARD_TRACKING=poll).
   */
  tracking(guard: number): string | undefined {
    return argvOf(guard)[2]
  }

  /** The `started` event of the host's turn, once it came. */
  started(): Extract<HarnessEvent, { type: 'started' }> | undefined {
    return this.events.find((e): e is Extract<HarnessEvent, { type: 'started' }> => e.type === 'started')
  }

  /** Ends the host as its `death` says; resolves when it is gone (or, for `worker`, its worker). */
  async end(): Promise<void> {
    switch (this.death) {
      case 'SIGKILL':
      case 'SIGTERM':
      case 'SIGINT':
        this.proc.kill(this.death)
        break
      case 'exit-in-handler':
        this.proc.kill('SIGTERM')
        break
      case 'uncaught':
      case 'worker':
        this.proc.stdin!.write('now\n')
        break
      case 'none':
        break
    }
    if (this.death === 'worker') {
      if (!(await eventually(() => this.notes.some((n) => n.host === 'worker-terminated'), 20_000))) {
        throw new Error('the host did not terminate its worker')
      }
    } else {
      await this.exited
    }
  }

  /** Notes processes of the host's turn, so that the clean-up ends them if nothing else did. */
  track(pids: number[]): void {
    for (const pid of pids) {
      const ref = identify(pid)
      if (ref) this.seen.push(ref)
    }
  }

  /**
   * Removes the host if it is still there, then whatever its turn started that is still
   * running, ended by its guard or not: everything carrying the host's marker (by its pid
   * part, which needs no guard to read it from) and every process [`track`] noted. Returns
   * what had to be killed (Linux): after a test that passed, nothing.
   */
  async dispose(): Promise<string[]> {
    if (this.running) {
      this.proc.kill('SIGKILL')
      await this.exited
    }
    return killLeftovers(`${this.pid}-`, this.seen)
  }
}

/** The argv of a process (Linux; [] once it is gone). */
export function argvOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1)
  } catch {
    return []
  }
}

/** argv[0] of a process ('' once it is gone). */
export function commandOf(pid: number): string {
  return argvOf(pid)[0] ?? ''
}

/** Which of `pids` still run. */
export const running = (pids: number[]) => pids.filter(isAlive)

/**
 * What a platform suite ends after each test, whatever became of it: its hosts, every process
 * it saw (`seen`, sent `signal`), the fakes it wrote and the directories it made (`tempDir`).
 */
export function endAfterEach(signal?: NodeJS.Signals): { hosts: Host[]; seen: number[]; tempDir: (prefix: string) => string } {
  const hosts: Host[] = []
  const seen: number[] = []
  const dirs: string[] = []
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.dispose()
    for (const pid of seen.splice(0).filter(isRunning)) {
      try {
        process.kill(pid, signal)
      } catch {
        // gone meanwhile
      }
    }
    removeFakeCodexes()
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  const tempDir = (prefix: string) => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
    dirs.push(dir)
    return dir
  }
  return { hosts, seen, tempDir }
}

/**
 * The hosts a suite starts, ended after each test whatever became of it (`first`: what must let
 * go before), with the fakes it wrote; a test whose clean-up had to kill what it left fails.
 */
export function hostsEndedAfterEach(first?: () => void): Host[] {
  const hosts: Host[] = []
  afterEach(async () => {
    first?.()
    const killed: string[] = []
    for (const host of hosts.splice(0)) killed.push(...(await host.dispose()))
    await cleanupFakes()
    if (killed.length) throw new Error(`the clean-up had to kill what the test left:\n${killed.join('\n')}`)
  })
  return hosts
}
