// Windows: nothing outlives a turn. Every child runs in a Job Object of its own, which the
// runner terminates when it ends a turn and which the kernel terminates when the host's last
// handle to it closes, however the host ends. Each child here is a `.cmd` file: Windows runs it
// through cmd.exe, which starts Node, so the process that plays Codex is a grandchild, as the
// real `codex.exe` is below the npm shim's `node codex.js`. Liveness comes from
// `process.kill(pid, 0)`.
//
// The test kit's fake (`writeFakeCodex`) leaves when its stdin closes, as Codex does, so a turn
// that ends it proves little about killing; with `linger` it stays, and only a kill ends it.
//
// Runs on Windows only (CI's Windows job); elsewhere the suite is skipped and says so.
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'

import { runTurn, type HarnessEvent, type RunTurnOptions } from '../../index.js'
import { fakeCodexRuns, writeFakeCodex } from '../../testing/index.js'
import { FakeLog, assertOneTerminalLast, collect, within, writeFake, type ScenarioName } from '../support/fake.js'
import type { FakeCodexScript } from '../../testing/index.js'
import { eventually, isRunning } from '../support/procs.js'
import { Host, endAfterEach } from './host.js'

const onWindows = process.platform === 'win32'
if (!onWindows) console.log(`Windows lifecycle tests skipped: they run on Windows only (this is ${process.platform})`)

/** Generous bounds for a loaded machine: they only stop a broken test from hanging. */
const BOUND_MS = 20_000

/** Whatever a failed test left is ended. */
const { hosts, seen, tempDir: made } = endAfterEach()
const tempDir = () => made('rennet-windows-')

/**
 * A turn of the fake behind `codex.cmd` playing `scenario`, ignoring the interrupt and staying
 * when its stdin closes (`fake`: more of its script).
 */
function lingeringTurn(scenario: ScenarioName, fake: FakeCodexScript = {}): { options: RunTurnOptions; log: FakeLog } {
  const dir = tempDir()
  const { codexPath, log } = writeFake(scenario, { interrupt: 'ignore', linger: true, ...fake }, dir)
  return { options: { prompt: 'Say hello.', cwd: dir, codexPath, interruptGraceMs: 500 }, log }
}

/** The pid of the fake app-server (below cmd.exe), once it has received `method`. */
async function lingering(log: FakeLog, method: string): Promise<number> {
  expect(await eventually(() => log.requests(method).length > 0, BOUND_MS), `the fake received ${method}`).toBe(true)
  const pid = log.start().pid
  seen.push(pid)
  return pid
}

type Started = Extract<HarnessEvent, { type: 'started' }>

/** Runs `options` and aborts once `ready` resolves; the pids of cmd.exe and the fake, and the terminal. */
async function abortedTurn(options: RunTurnOptions, ready: () => Promise<number>) {
  const turn = runTurn(options)
  const events: HarnessEvent[] = []
  const done = within(collect(turn, (e) => void events.push(e)), BOUND_MS, 'the aborted turn')
  const server = await ready()
  const started = () => events.find((e): e is Started => e.type === 'started')
  expect(await eventually(() => started() !== undefined, BOUND_MS), 'the started event').toBe(true)
  const shim = started()!.pid
  seen.push(shim)
  turn.abort()
  return { terminal: assertOneTerminalLast(await done), shim, server }
}

describe.skipIf(!onWindows)('Windows: nothing outlives a turn (Job Objects)', () => {
  it('an abort whose interrupt is ignored ends cmd.exe and the Node it started (test kit fake)', async () => {
    const codexPath = writeFakeCodex({ steps: [{ type: 'hang' }], interrupt: 'ignore' })
    const ready = async () => {
      const server = () => fakeCodexRuns(codexPath).find((r) => r.requests('turn/start').length > 0)
      expect(await eventually(() => server() !== undefined, BOUND_MS), 'the fake received turn/start').toBe(true)
      seen.push(server()!.pid)
      return server()!.pid
    }
    const { terminal, shim, server } = await abortedTurn({ prompt: 'Say hello.', cwd: tempDir(), codexPath, interruptGraceMs: 500 }, ready)
    expect(terminal).toMatchObject({ type: 'terminal', status: 'cancelled', cancellation: 'killed' })
    expect([shim, server].filter(isRunning), 'cmd.exe and the fake at the terminal event').toEqual([])
  })

  it('a child that ignores the interrupt and stdin EOF is killed after the grace, with the Node below cmd.exe', async () => {
    const { options, log } = lingeringTurn('hang')
    const { terminal, shim, server } = await abortedTurn(options, () => lingering(log, 'turn/start'))
    expect(terminal).toMatchObject({ type: 'terminal', status: 'cancelled', cancellation: 'killed' })
    expect(terminal.turnId, 'killed after the grace, not before the turn had an id').not.toBeNull()
    expect([shim, server].filter(isRunning), 'cmd.exe and the fake at the terminal event').toEqual([])
  })

  it('an abort before the turn has an id kills the tree at once', async () => {
    // `slow-thread-start` never answers thread/start.
    const { options, log } = lingeringTurn('slow-thread-start')
    const { terminal, shim, server } = await abortedTurn({ ...options, interruptGraceMs: 60_000 }, () => lingering(log, 'thread/start'))
    expect(terminal).toMatchObject({ type: 'terminal', status: 'cancelled', cancellation: 'killed', turnId: null })
    expect([shim, server].filter(isRunning), 'cmd.exe and the fake at the terminal event').toEqual([])
  })

  it('the host is killed mid-turn: the kernel ends the Job Object, and the child that ignores stdin EOF with it', async () => {
    const { options, log } = lingeringTurn('hang')
    const host = new Host('SIGKILL', options)
    hosts.push(host)
    await host.until((e) => e.type === 'turnStarted', BOUND_MS)
    const server = await lingering(log, 'turn/start')
    const shim = host.started()!.pid
    seen.push(shim)
    // TerminateProcess: nothing of the host runs after it, not even an exit handler.
    await host.end()
    expect(await eventually(() => ![shim, server].some(isRunning), BOUND_MS), 'cmd.exe and the fake after the host died').toBe(true)
  })

  it('the host is ended by taskkill /F mid-turn: the Job Object ends the fake and the grandchild it started detached', async () => {
    const { options, log } = lingeringTurn('hang', { grandchildren: ['detached-node'] })
    const host = new Host('SIGKILL', options)
    hosts.push(host)
    await host.until((e) => e.type === 'turnStarted', BOUND_MS)
    const server = await lingering(log, 'turn/start')
    const grandchild = log.events('grandchild')[0]?.pid as number | undefined
    expect(grandchild, 'the fake logged its detached grandchild').toBeTypeOf('number')
    seen.push(grandchild!)
    expect(isRunning(grandchild!), 'the grandchild runs while the host does').toBe(true)
    const shim = host.started()!.pid
    seen.push(shim)
    // As Task Manager or a supervisor ends an app.
    execFileSync('taskkill', ['/F', '/PID', String(host.pid)], { stdio: 'ignore' })
    await host.exited
    expect(await eventually(() => ![shim, server, grandchild!].some(isRunning), BOUND_MS), 'cmd.exe, the fake and its grandchild after the host died').toBe(true)
  })
})
