// Windows: the real `codex.exe` of `@openai/codex`'s win32-x64 package, driven by the addon
// from the Windows node, against the loopback mock model (the Windows lane runs it under
// Wine). A plain turn, a command's output, an abort while a command runs, and the host killed
// while a command runs: nothing of any of them may be left, and config.toml stays as written.
//
// Runs on Windows only; elsewhere the suite is skipped and says so (the Linux real suites
// cover the same ground there).
import { randomUUID } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

import { runTurn, type HarnessEvent, type RunTurnOptions } from '../../index.js'
import { codexBinaryPath, createCodexHome } from '../../testing/codex-home.js'
import type { CodexHome } from '../../testing/codex-home.js'
import { execCommandResponse, hang, messageResponse, start } from '../../testing/mock-responses.js'
import type { MockServer, ScriptedResponse } from '../../testing/mock-responses.js'
import { assertOneTerminalLast, collect, within } from '../support/fake.js'
import { eventually, isRunning, windowsProcesses } from '../support/procs.js'
import { Host } from '../lifecycle/host.js'

const onWindows = process.platform === 'win32'
if (!onWindows) console.log(`real Windows tests skipped: they run on Windows only (this is ${process.platform})`)

/** Bounds for a loaded machine under Wine: they only stop a broken test from hanging. */
const BOUND_MS = 60_000

const open: Array<MockServer | CodexHome | Host> = []
const seen: number[] = []
afterEach(async () => {
  // Whatever a failed test left is ended first (a passing test left nothing: it checks), so
  // that no file of the Codex home is still held open when it is removed.
  for (const pid of seen.splice(0).filter(isRunning)) {
    try {
      execFileSync('taskkill', ['/F', '/PID', String(pid)], { stdio: 'ignore' })
    } catch {
      // gone meanwhile
    }
  }
  for (const item of open.splice(0).reverse()) {
    if (item instanceof Host) await item.dispose()
    else if ('close' in item) await item.close()
    else item.cleanup()
  }
})

/** A Codex home on the mock, the real codex.exe, and the options of a turn in a scratch cwd. */
async function setup(scenario: ScriptedResponse[]): Promise<{ mock: MockServer; home: CodexHome; options: RunTurnOptions }> {
  before = new Map(windowsProcesses().map((p) => [p.pid, p.name]))
  const mock = await start(scenario)
  open.push(mock)
  const home = createCodexHome({ baseUrl: mock.url })
  open.push(home)
  // Codex writes its installation id on first start under a file lock that Wine 8.0 answers
  // with another error than Windows (33 for 158), and then exits; a home that has one is what
  // every later start sees anyway.
  writeFileSync(join(home.codexHome, 'installation_id'), randomUUID())
  const options: RunTurnOptions = {
    prompt: 'Say hello.',
    cwd: home.home,
    codexPath: codexBinaryPath(),
    env: { ...home.env, USERPROFILE: home.home },
    interruptGraceMs: 1000,
    requestTimeoutMs: BOUND_MS,
  }
  return { mock, home, options }
}

/**
 * The process table when the test's setup began. A process's parent id is never updated:
 * one whose parent has exited names a pid Windows may give a later process (Wine's
 * explorer.exe, started by a process long gone, was once listed below codex.exe that way, and
 * the clean-up then ended it). Nothing that ran before the turn is below its codex.exe.
 */
let before = new Map<number, string>()

/** Processes below `pid` now (itself excluded), from the process table's parent links. */
function descendants(pid: number): number[] {
  const table = windowsProcesses().filter((p) => before.get(p.pid) !== p.name)
  const below = new Set([pid])
  for (let grew = true; grew; ) {
    grew = false
    for (const p of table) {
      if (below.has(p.ppid) && !below.has(p.pid)) {
        below.add(p.pid)
        grew = true
      }
    }
  }
  below.delete(pid)
  return [...below]
}

/** The command: a ping.exe below codex.exe (cmd.exe and console hosts between). */
const commandRuns = (codex: number) => windowsProcesses().some((p) => /^ping\.exe$/i.test(p.name) && descendants(codex).includes(p.pid))

/** Which of `pids` still run, with their names, for a failure's message. */
const left = (pids: number[]) =>
  JSON.stringify(windowsProcesses().filter((p) => pids.includes(p.pid)))

type Started = Extract<HarnessEvent, { type: 'started' }>

/**
 * Commands run through cmd.exe: Codex's default shell on Windows is PowerShell, which is a stub
 * that runs nothing under Wine.
 */
const CMD = { args: { shell: 'cmd.exe' } }
/** The long-running command of these tests. */
const LONG_COMMAND = 'ping -n 600 127.0.0.1'
/** A test's own bound: the turn's, and the clean-up after it. */
const TEST_MS = BOUND_MS + 30_000

describe.skipIf(!onWindows)('Windows: real codex.exe turns', () => {
  it('completes a turn against the loopback model and leaves config.toml as it was', async () => {
    const { mock, home, options } = await setup([messageResponse(['Hello ', 'from the mock.'])])
    const events = await within(collect(runTurn(options)), BOUND_MS, 'the turn')
    const terminal = assertOneTerminalLast(events)
    expect(terminal).toMatchObject({ status: 'completed', finalMessage: 'Hello from the mock.', failure: null })
    const started = events.find((e): e is Started => e.type === 'started')!
    expect(started).toMatchObject({ codexPath: options.codexPath, codexVersion: '0.171.0' })
    expect(isRunning(started.pid), 'codex.exe after the terminal event').toBe(false)
    expect(mock.requests).toHaveLength(1)
    expect(home.configHash()).toBe(home.initialHash)
  }, TEST_MS)

  it('streams a command’s output and hands the command item over', async () => {
    const { options } = await setup([execCommandResponse('echo from-the-shell', CMD), messageResponse(['Done.'])])
    const events = await within(collect(runTurn(options)), BOUND_MS, 'the turn')
    const terminal = assertOneTerminalLast(events)
    expect(terminal).toMatchObject({ status: 'completed', finalMessage: 'Done.' })
    const command = events.find((e) => e.type === 'itemCompleted' && e.item.type === 'commandExecution')
    expect(command, JSON.stringify(events.map((e) => e.type))).toBeDefined()
    const item = (command as Extract<HarnessEvent, { type: 'itemCompleted' }>).item as { aggregatedOutput?: string | null }
    expect(item.aggregatedOutput ?? '').toContain('from-the-shell')
  }, TEST_MS)

  it('an abort while a command runs ends codex.exe and the command before the terminal event', async () => {
    const { options } = await setup([execCommandResponse(LONG_COMMAND, { ...CMD, yieldTimeMs: 30_000 }), hang()])
    const turn = runTurn(options)
    const events: HarnessEvent[] = []
    const done = within(collect(turn, (e) => void events.push(e)), BOUND_MS, 'the aborted turn')
    expect(await eventually(() => events.some((e) => e.type === 'itemStarted' && e.item.type === 'commandExecution'), BOUND_MS), 'the command started').toBe(true)
    const started = events.find((e): e is Started => e.type === 'started')!
    seen.push(started.pid)
    // The command and whatever runs it, seen while they run.
    expect(await eventually(() => commandRuns(started.pid), BOUND_MS, 250), 'the command runs below codex.exe').toBe(true)
    const below = descendants(started.pid)
    seen.push(...below)
    turn.abort()
    const terminal = assertOneTerminalLast(await done)
    expect(terminal).toMatchObject({ status: 'cancelled' })
    expect([started.pid, ...below].filter(isRunning), `codex.exe and the command at the terminal event; left: ${left([started.pid, ...below])}`).toEqual([])
  }, TEST_MS)

  it('the host is killed while a command runs: the Job Object ends codex.exe and the command', async () => {
    const { options } = await setup([execCommandResponse(LONG_COMMAND, { ...CMD, yieldTimeMs: 30_000 }), hang()])
    const host = new Host('SIGKILL', options)
    open.push(host)
    await host.until((e) => e.type === 'itemStarted' && e.item.type === 'commandExecution', BOUND_MS)
    const codex = host.started()!.pid
    seen.push(codex)
    expect(await eventually(() => commandRuns(codex), BOUND_MS, 250), 'the command runs below codex.exe').toBe(true)
    const below = descendants(codex)
    seen.push(...below)
    // taskkill /F: TerminateProcess, as Task Manager ends an app; nothing of the host runs after it.
    execFileSync('taskkill', ['/F', '/PID', String(host.pid)], { stdio: 'ignore' })
    await host.exited
    const gone = await eventually(() => ![codex, ...below].some(isRunning), BOUND_MS)
    expect(gone, `codex.exe and the command after the host died; left: ${left([codex, ...below])}`).toBe(true)
  }, TEST_MS)
})
