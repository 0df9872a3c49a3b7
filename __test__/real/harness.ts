// Shared driver for the real-binary suites: one `runTurn` against the pinned `codex app-server`
// talking to the loopback mock Responses API, with the invariants every scenario must keep
// checked after the terminal event:
//   - exactly one terminal, last, equal to `outcome`;
//   - the `started` event (pid = process group id, the version and path of the binary under
//     test: the pinned one, or RENNET_TEST_CODEX_BIN's);
//   - no live process left in the child's process group, nor anywhere else carrying this
//     run's environment marker (commands Codex runs get their own sessions);
//   - config.toml byte-identical (no trust entry written for the git cwd);
//   - every model request carried `originator: rennet`.
import { randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'

import { runTurn } from '../../index.js'
import type { HarnessEvent, RunTurnOptions, TerminalEvent, Turn } from '../../index.js'
import { codexUnderTest, createCodexHome, createGitCwd } from '../../testing/codex-home.js'
import type { CodexHome, GitCwd } from '../../testing/codex-home.js'
import { start } from '../../testing/mock-responses.js'
import type { MockServer, ScriptedResponse } from '../../testing/mock-responses.js'
import { BOUND_MS, describeProcess, eventually, liveInGroup } from '../support/procs.js'
import { liveWithEnvironment, statOf } from '../../scripts/processes.mjs'

export type StartedEvent = Extract<HarnessEvent, { type: 'started' }>
type EventOf<T extends HarnessEvent['type']> = Extract<HarnessEvent, { type: T }>

export interface RealTurnContext {
  turn: Turn
  events: HarnessEvent[]
  mock: MockServer
  home: CodexHome
  cwd: GitCwd
  /** Calls turn.abort() and records when. */
  abort(): void
}

export interface RealTurnOptions {
  scenario: ScriptedResponse[]
  prompt?: string
  outputSchema?: object
  interruptGraceMs?: number
  requestTimeoutMs?: number
  signal?: AbortSignal
  /** Extra variables for the child's environment (merged over the temp HOME/CODEX_HOME ones). */
  env?: Record<string, string>
  /** Extra runTurn options (merged last). */
  extra?: Partial<RunTurnOptions>
  /** What starts the turn with the options (default runTurn; e.g. a runReview with its target). */
  runner?: (options: RunTurnOptions) => Turn
  /**
   * An executable that stands between runTurn and the Codex under test (a test kit fake with a
   * `relay` to it), given to runTurn as `codexPath` instead.
   */
  wrapper?: string
  /** Runs before runTurn(), with the Codex home, cwd and mock in place (e.g. to snapshot them). */
  beforeTurn?: (setup: { home: CodexHome; cwd: GitCwd; mock: MockServer }) => void
  /** Runs synchronously right after runTurn() returned, before iterating. */
  afterRunTurn?: (ctx: RealTurnContext) => void
  /** Runs for every event; return 'break' to break out of the for-await loop. */
  onEvent?: (ev: HarnessEvent, ctx: RealTurnContext) => void | 'break'
  /** Before cleanup, with the mock and temp dirs still in place. */
  inspect?: (result: RealTurnResult) => void | Promise<void>
  /** Ceiling for the whole turn before the harness aborts it (the test then fails). */
  watchdogMs?: number
  /** More of the user's config.toml (e.g. MCP servers the user has configured). */
  codexConfig?: string
  /**
   * A project layer: written to `<cwd>/.codex/config.toml`, and the cwd is trusted in the
   * user's config.toml (Codex ignores the layers of untrusted projects).
   */
  projectConfig?: string
  /** Keep the mock, the Codex home and the cwd after the turn; the result's dispose() removes them. */
  keep?: boolean
  /**
   * Run in the mock, Codex home and cwd of an earlier kept result (e.g. to resume its thread);
   * `scenario` is appended to that mock's script. The earlier result's dispose() still owns them.
   */
  within?: RealTurnResult
}

export interface RealTurnResult {
  events: HarnessEvent[]
  terminal: TerminalEvent
  started: StartedEvent | undefined
  /** Process group of the child, read from /proc when `started` was seen (null if already gone). */
  startedPgrp: number | null
  mock: MockServer
  home: CodexHome
  cwd: GitCwd
  brokeOut: boolean
  abortedAt: number | null
  terminalAt: number
  of<T extends HarnessEvent['type']>(type: T): EventOf<T>[]
  /** Removes the mock, the Codex home and the cwd of a kept run (a no-op otherwise). */
  dispose(): Promise<void>
}

const MARK_VAR = 'RENNET_REAL_RUN'

/** Live processes whose initial environment carries `RENNET_REAL_RUN=<mark>`. */
export function liveWithMarker(mark: string): number[] {
  return liveWithEnvironment(`${MARK_VAR}=${mark}`)
}

const describeProcs = (pids: number[]) => pids.map(describeProcess).join('\n')

/** The mock, Codex home and cwd of a run, and how to remove them. */
async function environment(options: RealTurnOptions) {
  if (options.within) {
    if (options.codexConfig !== undefined || options.projectConfig !== undefined) {
      throw new TypeError('runRealTurn: a run within an earlier one keeps its configuration (no codexConfig or projectConfig)')
    }
    const { mock, home, cwd } = options.within
    mock.push(...options.scenario)
    return { mock, home, cwd, dispose: async () => {} }
  }
  const mock = await start(options.scenario)
  const cwd = createGitCwd()
  let extraConfig = options.codexConfig ?? ''
  if (options.projectConfig !== undefined) {
    mkdirSync(join(cwd.path, '.codex'))
    writeFileSync(join(cwd.path, '.codex', 'config.toml'), options.projectConfig)
    extraConfig += `\n[projects.${JSON.stringify(cwd.path)}]\ntrust_level = "trusted"\n`
  }
  const home = createCodexHome({ baseUrl: mock.url, extraConfig })
  let disposed = false
  const dispose = async () => {
    if (disposed) return
    disposed = true
    await mock.close()
    home.cleanup()
    cwd.cleanup()
  }
  return { mock, home, cwd, dispose }
}

export async function runRealTurn(options: RealTurnOptions): Promise<RealTurnResult> {
  const { mock, home, cwd, dispose } = await environment(options)
  let keep = false
  const mark = randomUUID()
  const events: HarnessEvent[] = []
  let abortedAt: number | null = null
  let brokeOut = false
  let started: StartedEvent | undefined
  let startedPgrp: number | null = null
  let watchdogFired = false
  try {
    options.beforeTurn?.({ home, cwd, mock })
    const turn = (options.runner ?? runTurn)({
      prompt: options.prompt ?? 'Say hello.',
      cwd: cwd.path,
      codexPath: options.wrapper ?? home.codexPath,
      env: { ...home.env, [MARK_VAR]: mark, ...options.env },
      ...(options.outputSchema ? { outputSchema: options.outputSchema } : {}),
      ...(options.interruptGraceMs !== undefined ? { interruptGraceMs: options.interruptGraceMs } : {}),
      requestTimeoutMs: options.requestTimeoutMs ?? 15_000,
      ...(options.signal ? { signal: options.signal } : {}),
      ...options.extra,
    })
    const ctx: RealTurnContext = {
      turn,
      events,
      mock,
      home,
      cwd,
      abort() {
        abortedAt ??= Date.now()
        turn.abort()
      },
    }
    const watchdog = setTimeout(() => {
      watchdogFired = true
      turn.abort()
    }, options.watchdogMs ?? 20_000)
    let terminalAt = 0
    try {
      options.afterRunTurn?.(ctx)
      for await (const ev of turn) {
        events.push(ev)
        if (ev.type === 'terminal') terminalAt = Date.now()
        if (ev.type === 'started' && !started) {
          started = ev
          startedPgrp = statOf(ev.pid)?.pgrp ?? null
        }
        if (options.onEvent?.(ev, ctx) === 'break') {
          brokeOut = true
          break
        }
      }
    } finally {
      clearTimeout(watchdog)
    }
    const outcome = await turn.outcome
    if (!terminalAt) terminalAt = Date.now()
    expect(watchdogFired, 'the turn did not reach a terminal event in time (harness watchdog aborted it)').toBe(false)

    // Exactly one terminal, last, and the same as `outcome`.
    const terminals = events.filter((e) => e.type === 'terminal')
    if (brokeOut) {
      expect(terminals.length).toBeLessThanOrEqual(1)
    } else {
      expect(terminals, 'exactly one terminal event').toHaveLength(1)
      expect(events.at(-1)?.type, 'terminal is the last event').toBe('terminal')
      expect(outcome).toEqual(terminals[0])
    }
    expect(outcome.type).toBe('terminal')

    // The started event.
    if (started) {
      expect(started.pid).toBeGreaterThan(0)
      const { version } = codexUnderTest()
      expect(started.codexVersion).toBe(version)
      expect(started.codexPath).toBe(options.wrapper ?? home.codexPath)
      expect(started.userAgent.startsWith(`rennet/${version} `), started.userAgent).toBe(true)
      if (startedPgrp !== null) expect(startedPgrp, 'started.pid leads its own process group').toBe(started.pid)
      const threadIdx = events.findIndex((e) => e.type === 'threadStarted')
      if (threadIdx >= 0) expect(events.indexOf(started)).toBeLessThan(threadIdx)
      const pid = started.pid
      const groupGone = await eventually(() => liveInGroup(pid).length === 0, BOUND_MS)
      expect(groupGone, `processes left in group ${pid}:\n${describeProcs(liveInGroup(pid))}`).toBe(true)
    }
    const markGone = await eventually(() => liveWithMarker(mark).length === 0, BOUND_MS)
    expect(markGone, `processes left from this run:\n${describeProcs(liveWithMarker(mark))}`).toBe(true)

    // config.toml untouched (a trust entry would change it).
    expect(home.configHash(), `config.toml changed:\n${home.readConfig()}`).toBe(home.initialHash)

    // Every model request identified itself as rennet.
    for (const req of mock.requests) expect(req.headers.originator, `originator of request #${req.index + 1}`).toBe('rennet')

    const result: RealTurnResult = {
      events,
      terminal: outcome,
      started,
      startedPgrp,
      mock,
      home,
      cwd,
      brokeOut,
      abortedAt,
      terminalAt,
      of: <T extends HarnessEvent['type']>(type: T) => events.filter((e): e is EventOf<T> => e.type === type),
      dispose,
    }
    await options.inspect?.(result)
    keep = options.keep === true
    return result
  } finally {
    if (!keep) await dispose()
  }
}

/** Turn-level usage object as the contract names it. */
export function usageOf(u: { input?: number; cacheRead?: number; output?: number; reasoning?: number; total: number }) {
  return { input: u.input ?? 0, cacheRead: u.cacheRead ?? 0, output: u.output ?? 0, reasoning: u.reasoning ?? 0, total: u.total }
}
