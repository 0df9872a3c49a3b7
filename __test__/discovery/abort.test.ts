// A turn without codexPath, aborted in each phase of what precedes its child: while discovery
// waits for the login shell, for a `--version` probe, for the `app-server` handshake probe, and
// while the turn's own `codex mcp list --json` (an `mcp` policy) runs. Each of those fakes
// starts background writers that keep appending to a file in the sandbox (the probes also one
// that left for a session of its own), then waits. When the terminal event arrives, every one
// of those processes must be gone, nothing may write into the sandbox afterwards, and the
// sandbox can be removed at once.
//
// "Nothing writes afterwards" is judged without a clock: a writer of the test's own, the same
// loop outside the sandbox, must have written several more lines meanwhile; a writer of the turn
// that still ran would have had the same chances.
//
// And a discovery that another turn still awaits goes on when one of its turns is aborted.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

import { runTurn, type HarnessEvent, type RunTurnOptions } from '../../index.js'
import { collect, within, writeFake } from '../support/fake.js'
import { eventually, isAlive, liveInGroup, liveWithMarker } from '../support/procs.js'
import { sandboxPerTest, type Sandbox, type Writers } from './fakes.js'

const sandbox = sandboxPerTest()

/** Long enough that only the abort ends a phase. */
const PATIENT = { RENNET_DISCOVERY_TIMEOUT_MS: '60000', RENNET_LOGIN_SHELL_TIMEOUT_MS: '60000' }
/** PATH as a user's: this Node and the system's tools. */
const NODE_PATH = `${dirname(process.execPath)}:/usr/bin:/bin`
/** Generous bounds for a loaded machine: they only stop a broken test from hanging. */
const BOUND_MS = 30_000

/** The test's own writer: the loop of `Sandbox.writers`, into a file outside the sandbox. */
class Control {
  private readonly dir = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-control-')))
  private readonly file = join(this.dir, 'control.log')
  private readonly proc: ChildProcess
  private readonly exited: Promise<unknown>

  constructor() {
    this.proc = spawn('/bin/sh', ['-c', 'while :; do echo control >> "$0"; sleep 0.02; done', this.file], { stdio: 'ignore' })
    this.exited = new Promise((done) => this.proc.once('exit', done))
  }

  lines(): number {
    return existsSync(this.file) ? readFileSync(this.file, 'utf8').split('\n').length - 1 : 0
  }

  /** Resolves once the control has written `count` more lines. */
  async writes(count: number): Promise<void> {
    const target = this.lines() + count
    if (!(await eventually(() => this.lines() >= target, BOUND_MS))) throw new Error('the control writer did not write')
  }

  async stop(): Promise<void> {
    this.proc.kill('SIGKILL')
    await this.exited
    rmSync(this.dir, { recursive: true, force: true })
  }
}

const controls: Control[] = []
/** Every process the fakes reported: a failed test must not leave them writing. */
const reported: number[] = []
afterEach(async () => {
  for (const control of controls.splice(0)) await control.stop()
  for (const pid of reported.splice(0).filter(isAlive)) {
    for (const member of [pid, ...liveInGroup(pid)]) {
      try {
        process.kill(member, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
  }
})

const sizeOf = (path: string) => (existsSync(path) ? statSync(path).size : 0)

/**
 * Runs a turn with `options`, aborts it once `name`'s writers have written, and checks what the
 * terminal event leaves: nothing of `name` running, no write into the sandbox afterwards, and a
 * sandbox that can be removed.
 */
async function abortWhile(sb: Sandbox, name: string, options: RunTurnOptions): Promise<{ started: Writers; calls: string[] }> {
  const control = new Control()
  controls.push(control)
  const turn = runTurn(options)
  const events = within(collect(turn), BOUND_MS, 'the aborted turn')
  let started: Writers | null = null
  const running = await eventually(() => (started = sb.started(name)) !== null, BOUND_MS)
  expect(running, `${name} started its writers (writes: ${JSON.stringify(sb.writes().slice(-200))})`).toBe(true)
  reported.push(started!.pid, ...started!.writers)
  turn.abort()
  const all = await events
  // At the terminal event, before anything else.
  const writes = sb.path('writes.log')
  const size = sizeOf(writes)
  const { pid, writers, marker } = started!
  const left = {
    processes: [pid, ...writers].filter(isAlive),
    groups: [pid, ...writers].flatMap(liveInGroup),
    marked: marker ? liveWithMarker(marker) : [],
  }
  expect(left, `what is left of ${name} at the terminal event`).toEqual({ processes: [], groups: [], marked: [] })
  expect(all).toEqual([expect.objectContaining({ type: 'terminal', status: 'cancelled', cancellation: 'killed', turnId: null })])
  await control.writes(5)
  expect(sizeOf(writes), 'bytes written into the sandbox after the terminal event').toBe(size)
  // What the fake Codex was called for (its log lines without its path), read before the sandbox goes.
  const calls = existsSync(sb.log) ? readFileSync(sb.log, 'utf8').trim().split('\n').map((line) => line.split(' ').slice(1).join(' ')) : []
  expect(() => rmSync(sb.root, { recursive: true }), 'removing the sandbox').not.toThrow()
  return { started: started!, calls }
}

const waitForever = 'exec sleep 60'

describe.skipIf(process.platform !== 'linux')('runTurn aborted during discovery', () => {
  it('while the login shell runs: the shell and its writer are gone at the terminal event', async () => {
    const sb = sandbox()
    const shell = sb.script('shell/writersh', `#!/bin/sh\nPATH=/usr/bin:/bin\n${sb.writers('login')}\n${waitForever}\n`)
    const codex = sb.codex('bin/codex')
    const { started } = await abortWhile(sb, 'login', {
      prompt: 'hi',
      cwd: sb.dir('repo'),
      env: sb.env({ SHELL: shell, RENNET_CODEX_BIN: codex, ...PATIENT }),
    })
    expect(started.marker, 'a login shell carries no tree marker').toBe('')
  })

  it('while a `--version` probe runs: the probe and its writers are gone at the terminal event', async () => {
    const sb = sandbox()
    const codex = sb.codex('bin/codex', { onVersion: `${sb.writers('version', { session: true })}\n${waitForever}` })
    const { started } = await abortWhile(sb, 'version', { prompt: 'hi', cwd: sb.dir('repo'), env: sb.env({ RENNET_CODEX_BIN: codex, ...PATIENT }) })
    expect(started.marker).not.toBe('')
  })

  it('while the `app-server` handshake probe runs: the probe and its writers are gone at the terminal event', async () => {
    const sb = sandbox()
    const codex = sb.codex('bin/codex', { handshake: `${sb.writers('handshake', { session: true })}\n${waitForever}` })
    const { calls } = await abortWhile(sb, 'handshake', { prompt: 'hi', cwd: sb.dir('repo'), env: sb.env({ RENNET_CODEX_BIN: codex, ...PATIENT }) })
    expect(calls).toEqual(['--version', expect.stringMatching(/^app-server \d+$/)])
  })

  it('while the turn runs `codex mcp list --json`: it and its writers are gone at the terminal event', async () => {
    const sb = sandbox()
    const codex = sb.codex('bin/codex', { mcpList: `${sb.writers('mcp', { session: true })}\n${waitForever}` })
    const { calls } = await abortWhile(sb, 'mcp', {
      prompt: 'hi',
      cwd: sb.dir('repo'),
      env: sb.env({ RENNET_CODEX_BIN: codex, ...PATIENT }),
      mcp: { servers: {} },
    })
    // Discovery was done; the inventory ran; the turn's own app-server never started.
    expect(calls).toEqual([
      '--version',
      expect.stringMatching(/^app-server \d+$/),
      '--disable plugins mcp list --json',
    ])
  })

  it('two turns share one discovery: aborting one leaves it running, and the other turn completes', async () => {
    const sb = sandbox()
    const { codexPath: fake, log } = writeFake('minimal', {}, sb.root)
    const gate = sb.path('gate')
    const probePid = sb.path('version.pid')
    // The kit's fake, whose `--version` waits until the test opens the gate.
    const codex = sb.script(
      'bin/codex',
      `#!/bin/sh
if [ "$1" = --version ]; then
  echo "$0 --version" >> '${sb.log}'
  echo $$ > '${probePid}.tmp' && mv '${probePid}.tmp' '${probePid}'
  while [ ! -e '${gate}' ]; do sleep 0.02; done
fi
exec '${fake}' "$@"
`,
    )
    const env = sb.env({ RENNET_CODEX_BIN: codex, PATH: NODE_PATH, ...PATIENT })
    const options: RunTurnOptions = { prompt: 'hi', cwd: sb.dir('repo'), env }
    const aborted = runTurn(options)
    const kept = runTurn(options)
    const abortedEvents = within(collect(aborted), BOUND_MS, 'the aborted turn')
    const keptSoFar: HarnessEvent[] = []
    const keptEvents = within(collect(kept, (e) => void keptSoFar.push(e)), BOUND_MS, 'the other turn')

    expect(await eventually(() => existsSync(probePid), BOUND_MS), 'the version probe runs').toBe(true)
    const probe = Number(readFileSync(probePid, 'utf8'))
    aborted.abort()
    expect(await abortedEvents).toEqual([expect.objectContaining({ type: 'terminal', status: 'cancelled', cancellation: 'killed' })])
    // The discovery the other turn awaits is still probing.
    expect(isAlive(probe), 'the shared probe after one turn was aborted').toBe(true)
    expect(keptSoFar).toEqual([])

    writeFileSync(gate, '')
    const events = await keptEvents
    expect(events.at(-1)).toMatchObject({ type: 'terminal', status: 'completed', finalMessage: 'Hello world' })
    expect(events[0]).toMatchObject({ type: 'started', codexPath: codex })
    // One discovery for both: one `--version`, one handshake; then the one turn's child.
    expect(sb.calls(codex)).toEqual([`${codex} --version`])
    expect(log.starts()).toHaveLength(2)
    expect(log.requests('thread/start')).toHaveLength(1)
  })
})
