// Helpers for the hermetic suite: run a turn against the fake app-server
// (__test__/fixtures/fake-app-server.mjs) and read what the fake saw.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { runTurn } from '../../index.js'
import type { HarnessEvent, RunTurnOptions, TerminalEvent, Turn } from '../../index.js'
import { eventually, isRunning, liveInGroup } from './procs.js'

export const FAKE = resolve(__dirname, '../fixtures/fake-app-server.mjs')

/**
 * The fake as `codexPath` in `dir`: the script itself on Unix (its `#!` line runs Node); on
 * Windows a `codex.cmd` beside it that runs it with this Node, as npm's shim runs Codex.
 */
export function fakeCodexPath(dir: string): string {
  if (process.platform !== 'win32') return FAKE
  const path = join(dir, 'codex.cmd')
  writeFileSync(path, `@"${process.execPath}" "${FAKE}" %*\r\n`)
  return path
}

/** The live processes a fake's start left: its process group on Unix; on Windows (one Job Object a turn, ended whole) the fake itself. */
const leftBy = (pid: number) => (process.platform === 'win32' ? [pid].filter(isRunning) : liveInGroup(pid))

// Ids the fake uses (see the fixture).
export const THREAD_ID = '01a22f3f-395c-74e0-a930-8f8e7ca0b3f0'
export const TURN_ID = '01a22f3f-3972-7112-84af-6b666e22412b'
export const OTHER_THREAD_ID = '01a22f3f-aaaa-7000-8000-000000000001'
export const OTHER_TURN_ID = '01a22f3f-bbbb-7000-8000-000000000002'
export const SUB_THREAD_ID = '01a22f3f-cccc-7000-8000-000000000003'
export const SUB_TURN_ID = '01a22f3f-dddd-7000-8000-000000000004'

export const PROMPT = 'Say hello.'

// ---------------------------------------------------------------------------------------------
// temp dirs

const dirs: string[] = []

/** A fresh directory under the system temp dir, removed by `cleanupFakes()`. */
export function tempDir(): string {
  // realpath: the addon may canonicalise cwd, and /tmp can be a symlink on some machines.
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-fake-')))
  dirs.push(dir)
  return dir
}

const runs: FakeRun[] = []

/**
 * Waits until no process of any fake started since the last call is left, then removes the temp
 * dirs. Use as `afterEach(cleanupFakes)`: a leaked child or grandchild fails the test that made it.
 */
export async function cleanupFakes(): Promise<void> {
  const leaked: string[] = []
  for (const run of runs.splice(0)) {
    for (const start of run.log.starts()) {
      const ok = await eventually(() => leftBy(start.pid).length === 0, 3000)
      if (!ok) {
        leaked.push(`${run.scenario}: group ${start.pid} still has ${leftBy(start.pid).join(',')}`)
        for (const pid of leftBy(start.pid)) {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {
            // gone meanwhile
          }
        }
      }
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  if (leaked.length) throw new Error(`processes outlived their turn:\n${leaked.join('\n')}`)
}

// ---------------------------------------------------------------------------------------------
// the fake's log

export interface StartEntry {
  event: 'start'
  pid: number
  pgid: number | null
  argv: string[]
  cwd: string
  scenario: string
  /** Two environment variables as the fake saw them (see the fixture). */
  probe: { inherited: string | null; overridden: string | null }
  /** The addon's per-turn process-tree marker in the fake's environment (see process.rs). */
  marker?: string | null
}

// Loose JSON shapes of wire messages.
export type Json = any // eslint-disable-line @typescript-eslint/no-explicit-any

export class FakeLog {
  constructor(readonly path: string) {}

  entries(): Json[] {
    if (!existsSync(this.path)) return []
    return readFileSync(this.path, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l))
  }

  /** `start` entries of app-server processes (a `--version` probe would not count). */
  starts(): StartEntry[] {
    return this.entries().filter((e) => e.event === 'start' && e.argv?.[0] === 'app-server')
  }

  /** The one app-server start; fails if there was not exactly one. */
  start(): StartEntry {
    const s = this.starts()
    if (s.length !== 1) throw new Error(`expected one app-server start in the fake log, got ${s.length}`)
    return s[0]
  }

  /** Every parsed message the client wrote, in order. */
  received(): Json[] {
    return this.entries()
      .filter((e) => 'recv' in e)
      .map((e) => e.recv)
  }

  /** Lines the client wrote that were not JSON. */
  receivedBad(): string[] {
    return this.entries()
      .filter((e) => 'recvBad' in e)
      .map((e) => e.recvBad)
  }

  /** Client requests and notifications (method names), in order. */
  methods(): string[] {
    return this.received()
      .filter((m) => typeof m.method === 'string')
      .map((m) => m.method)
  }

  /** Client requests or notifications with this method. */
  requests(method: string): Json[] {
    return this.received().filter((m) => m.method === method)
  }

  /** The single client request with this method. */
  request(method: string): Json {
    const r = this.requests(method)
    if (r.length !== 1) throw new Error(`expected one ${method} from the client, got ${r.length}`)
    return r[0]
  }

  /** Client responses to server requests (messages without a method). */
  replies(): Json[] {
    return this.received().filter((m) => !('method' in m))
  }

  /** Every frame the fake wrote (bursts are summarised, not listed). */
  sent(): Json[] {
    return this.entries()
      .filter((e) => 'sent' in e)
      .map((e) => e.sent)
  }

  /** Frames the fake sent with this method (notifications or server requests). */
  sentMethod(method: string): Json[] {
    return this.sent().filter((f) => f.method === method)
  }

  /** The response the fake sent to the client's request with this id. */
  sentResponse(id: number | string): Json {
    return this.sent().find((f) => f.id === id && !('method' in f))
  }

  events(name: string): Json[] {
    return this.entries().filter((e) => e.event === name)
  }
}

// ---------------------------------------------------------------------------------------------
// running turns

export interface FakeOptions extends Partial<RunTurnOptions> {
  /** Extra FAKE_* variables for the fake (FAKE_SCENARIO and FAKE_LOG are set for you). */
  fake?: Record<string, string>
}

export interface FakeRun {
  scenario: string
  turn: Turn
  log: FakeLog
  cwd: string
  options: RunTurnOptions
}

/** Starts a turn against the fake playing `scenario`. */
export function fakeTurn(scenario: string, extra: FakeOptions = {}): FakeRun {
  const { fake = {}, env = {}, ...rest } = extra
  const dir = tempDir()
  const log = new FakeLog(join(dir, 'fake.log'))
  const options: RunTurnOptions = {
    prompt: PROMPT,
    cwd: dir,
    codexPath: fakeCodexPath(dir),
    ...rest,
    env: { ...env, FAKE_SCENARIO: scenario, FAKE_LOG: log.path, ...fake },
  }
  const turn = runTurn(options)
  const run = { scenario, turn, log, cwd: options.cwd, options }
  runs.push(run)
  return run
}

/** Every event of the turn, in order; `onEvent` may act on the turn (abort, break…). */
export async function collect(
  turn: Turn,
  onEvent?: (event: HarnessEvent, index: number) => void | 'break',
): Promise<HarnessEvent[]> {
  const events: HarnessEvent[] = []
  for await (const event of turn) {
    events.push(event)
    if (onEvent?.(event, events.length - 1) === 'break') break
  }
  return events
}

/** Runs a whole turn: events, terminal, and the fake's log. */
export async function fakeRun(scenario: string, extra: FakeOptions = {}) {
  const run = fakeTurn(scenario, extra)
  const events = await collect(run.turn)
  const terminal = events[events.length - 1] as TerminalEvent
  return { ...run, events, terminal }
}

/**
 * The last two events of a turn the server completed: `turnCompleted` (the outcome as soon as
 * Codex reports it), then the same outcome as the `terminal`, once the child is gone.
 */
export const completedThen = (terminal: Record<string, unknown>) => [{ ...terminal, type: 'turnCompleted' }, terminal]

/** Types of the events, for order assertions. */
export const types = (events: HarnessEvent[]) => events.map((e) => e.type)

/** Events without stderr diagnostics (their timing against stdout is not defined). */
export const withoutStderr = (events: HarnessEvent[]) =>
  events.filter((e) => !(e.type === 'diagnostic' && e.source === 'stderr'))

/** Checks the rules every turn obeys: exactly one terminal event, and it is the last one. */
export function assertOneTerminalLast(events: HarnessEvent[]): TerminalEvent {
  const terminals = events.filter((e) => e.type === 'terminal')
  if (terminals.length !== 1) throw new Error(`expected exactly one terminal event, got ${terminals.length}`)
  const last = events[events.length - 1]
  if (last.type !== 'terminal') throw new Error(`the last event is ${last.type}, not terminal`)
  return last
}

/** Resolves with `p`, or rejects after `ms` (so a hanging outcome fails fast, with a reason). */
export function within<T>(p: Promise<T>, ms: number, what = 'promise'): Promise<T> {
  return new Promise<T>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms)
    p.then(
      (v) => {
        clearTimeout(timer)
        resolvePromise(v)
      },
      (e) => {
        clearTimeout(timer)
        reject(e)
      },
    )
  })
}

/** The `native` event the addon should make of a notification the fake sent. */
export const nativeOf = (frame: Json) => ({ type: 'native', method: frame.method, params: frame.params })

/** Usage as the addon reports it, from a wire token-usage breakdown. */
export const usageOf = (b: Json) => ({
  input: b.inputTokens,
  cacheRead: b.cachedInputTokens,
  output: b.outputTokens,
  reasoning: b.reasoningOutputTokens,
  total: b.totalTokens,
})
