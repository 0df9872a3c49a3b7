// Logging: off by default, RENNET_LOG to stderr, setLogger to a callback, the child's stderr at
// debug level, no secret in any record, and a slow or throwing logger never holds up a turn.
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readAccount, setLogger } from '../../index.js'
import type { LogRecord } from '../../index.js'
import { cleanupFakes, fakeRun, scenarios, tempDir, writeFake } from '../support/fake.js'
import { BOUND_MS, eventually, isAlive } from '../support/procs.js'

const INDEX = resolve(__dirname, '../../index.js')

afterEach(async () => {
  setLogger(null)
  await cleanupFakes()
})

/**
 * Runs one fake `crash` turn in a fresh Node with `env` (after `prelude`, which may use
 * `codex`); returns its stderr.
 */
function stderrOfChildTurn(env: Record<string, string>, prelude = ''): string {
  const script = `
    const codex = require(${JSON.stringify(INDEX)})
    ${prelude}
    codex.runTurn({ prompt: 'p', cwd: ${JSON.stringify(tempDir())}, codexPath: ${JSON.stringify(writeFake('crash').codexPath)} })
      .outcome.then((t) => process.stdout.write(t.status))`
  const child = spawnSync(process.execPath, ['-e', script], {
    env: { ...process.env, RENNET_LOG: '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  })
  expect(child.stdout).toBe('failed')
  return child.stderr
}

describe('logging', () => {
  it('is off by default', () => {
    expect(stderrOfChildTurn({})).toBe('')
  })

  it('RENNET_LOG writes filtered records to stderr, the child stderr lines at debug', () => {
    const debug = stderrOfChildTurn({ RENNET_LOG: 'rennet_codex=debug' })
    // Every record of the turn names it: its key, then the child's pid, thread and turn.
    expect(debug).toMatch(/DEBUG turn\{turnKey=t\d+ pid=\d+\}: rennet_codex::rpc: request id=1 method="initialize"/)
    // The fake writes its panic after answering turn/start, but stderr and stdout are read
    // apart: the line may be logged before the answer that names the turn. The thread is
    // known either way (turn/start is sent only once it is).
    expect(debug).toMatch(/DEBUG turn\{turnKey=t\d+ pid=\d+ threadId="[^"]+"( turnId="[^"]+")?\}: rennet_codex::stderr: thread panicked: fake crash for the test/)
    expect(debug).toMatch(/INFO turn\{[^}]*turnId="[^"]+"\}: rennet_codex::turn: turn ended status="failed" code="PROCESS_EXITED"/)

    const info = stderrOfChildTurn({ RENNET_LOG: 'rennet_codex=info' })
    expect(info).toMatch(/turn ended/)
    expect(info).not.toMatch(/DEBUG/)

    const json = stderrOfChildTurn({ RENNET_LOG: 'rennet_codex::stderr=debug', RENNET_LOG_FORMAT: 'json' })
    const records = json.trim().split('\n').map((l) => JSON.parse(l))
    expect(records).toContainEqual(
      expect.objectContaining({ level: 'DEBUG', target: 'rennet_codex::stderr', message: 'thread panicked: fake crash for the test' }),
    )
  })

  it('setLogger takes the records away from stderr, with RENNET_LOG as its filter', () => {
    const prelude = `const seen = []
      codex.setLogger((r) => seen.push(r))
      process.on('exit', () => {
        const levels = new Set(seen.map((r) => r.level))
        require('node:fs').writeSync(2, 'callback got ' + (seen.length > 0) + ' ' + [...levels].sort().join(','))
      })`
    expect(stderrOfChildTurn({ RENNET_LOG: 'rennet_codex=debug' }, prelude)).toBe('callback got true debug,info')
  })

  it('an invalid RENNET_LOG is one line on stderr and logging stays off', () => {
    const out = stderrOfChildTurn({ RENNET_LOG: 'rennet_codex=[loud' })
    expect(out.trim().split('\n')).toHaveLength(1)
    expect(out).toMatch(/^@rennet\/codex: RENNET_LOG is not a valid filter/)
  })

  it('every record of a turn carries its key, pid, thread and turn, also with two turns at once', async () => {
    const records: LogRecord[] = []
    setLogger((r) => records.push(r), { filter: 'rennet_codex=debug' })
    const [a, b] = await Promise.all([fakeRun('minimal'), fakeRun('minimal')])
    expect(await eventually(() => records.filter((r) => r.message === 'turn ended').length === 2, BOUND_MS)).toBe(true)
    for (const run of [a, b]) {
      const started = run.events.find((e) => e.type === 'started')
      expect(started?.type === 'started' && started.turnKey).toMatch(/^t\d+$/)
      const key = started?.type === 'started' ? started.turnKey : ''
      const own = records.filter((r) => r.fields.turnKey === key)
      const spawned = own.findIndex((r) => r.message === 'codex app-server started')
      expect(spawned).toBeGreaterThanOrEqual(0)
      // From the child's start on, the pid; once known, the thread and the turn.
      for (const r of own.slice(spawned)) expect(r.fields.pid).toBe(started?.type === 'started' && started.pid)
      const ended = own.find((r) => r.message === 'turn ended')
      expect(ended?.fields).toMatchObject({ turnKey: key, threadId: run.terminal.threadId, turnId: run.terminal.turnId, status: 'completed' })
    }
    expect(new Set([a, b].map((r) => r.events[0].type === 'started' && r.events[0].turnKey)).size).toBe(2)
  })

  it('setLogger hands records to a callback, never with a secret in them', async () => {
    const records: LogRecord[] = []
    setLogger((r) => records.push(r), { filter: 'rennet_codex=trace' })
    const secret = 'sk-test-0123456789-do-not-log'
    const run = await fakeRun('crash', { prompt: `use ${secret}`, env: { OPENAI_API_KEY: secret, RENNET_SECRET_HEADER: secret } })
    expect(run.terminal.failure?.code).toBe('PROCESS_EXITED')
    expect(await eventually(() => records.some((r) => r.message === 'turn ended'), BOUND_MS)).toBe(true)

    const stderrLine = records.find((r) => r.target === 'rennet_codex::stderr')
    expect(stderrLine).toMatchObject({ level: 'debug', message: 'thread panicked: fake crash for the test' })
    expect(records).toContainEqual(
      expect.objectContaining({
        level: 'debug',
        target: 'rennet_codex::rpc',
        message: 'request',
        fields: { id: 4, method: 'turn/start', turnKey: expect.stringMatching(/^t\d+$/), pid: expect.any(Number), threadId: expect.any(String) },
      }),
    )
    expect(records.every((r) => typeof r.time === 'number' && r.time > 0)).toBe(true)
    for (const r of records) expect(JSON.stringify(r)).not.toContain(secret)

    // Removed: nothing more arrives.
    setLogger(null)
    const before = records.length
    await fakeRun('minimal')
    expect(records.length).toBe(before)
  })

  it('records carry no terminal escapes: the child\'s coloured stderr and a launcher\'s coloured banner arrive as text', async () => {
    const records: LogRecord[] = []
    setLogger((r) => records.push(r), { filter: 'rennet_codex=debug' })
    const ESC = '\u001b'
    const banner = `${ESC}[1mfake launcher${ESC}[0m ${ESC}]0;title${ESC}\\ready`
    const coloured = `${ESC}[2m2026-01-01T00:00:00Z${ESC}[0m ${ESC}[32m INFO${ESC}[0m codex_core: ready`
    const run = await fakeRun({
      preamble: [banner],
      steps: [{ type: 'stderr', text: coloured }, { type: 'exit', code: 3, stderr: `${ESC}[31mERROR${ESC}[0m it broke` }],
    })
    expect(run.terminal.failure?.code).toBe('PROCESS_EXITED')
    // A call too: its child's banner is logged (a call has no diagnostic events).
    await readAccount({ codexPath: writeFake({ preamble: [banner] }).codexPath })
    expect(await eventually(() => records.filter((r) => r.message === 'call ended' || r.message === 'turn ended').length >= 2, 10_000)).toBe(true)

    const stderr = records.filter((r) => r.target === 'rennet_codex::stderr').map((r) => r.message)
    expect(stderr).toEqual(
      expect.arrayContaining(['2026-01-01T00:00:00Z  INFO codex_core: ready', 'ERROR it broke', 'preamble: fake launcher ready']),
    )
    for (const r of records) expect(JSON.stringify(r), r.message).not.toContain('\\u001b')
    // The events and the failure's stderr tail read the same text.
    const diagnostics = run.events.flatMap((e) => (e.type === 'diagnostic' ? [e.line] : []))
    expect(diagnostics).toEqual(expect.arrayContaining(['fake launcher ready', '2026-01-01T00:00:00Z  INFO codex_core: ready']))
    for (const line of diagnostics) expect(line).not.toContain(ESC)
    expect(JSON.stringify(run.terminal.failure?.detail)).toContain('ERROR it broke')
    expect(JSON.stringify(run.terminal.failure?.detail)).not.toContain('\\u001b')
  })

  it('the filter decides what reaches the callback', async () => {
    const records: LogRecord[] = []
    setLogger((r) => records.push(r))
    await fakeRun('crash')
    expect(await eventually(() => records.some((r) => r.message === 'turn ended'), BOUND_MS)).toBe(true)
    expect(records.every((r) => r.level === 'info' || r.level === 'warn' || r.level === 'error')).toBe(true)
  })

  it('a logger that throws does not hold up the turn', async () => {
    let calls = 0
    setLogger(
      () => {
        calls++
        throw new Error('broken logger')
      },
      { filter: 'rennet_codex=trace' },
    )
    const n = 20_000
    const { events, terminal } = await fakeRun(scenarios.burst(n))
    expect(terminal.status).toBe('completed')
    expect(events.filter((e) => e.type === 'messageDelta')).toHaveLength(n)
    expect(calls).toBeGreaterThan(0)
  })

  it('drops and counts records while JavaScript is busy; the turn runs to its end meanwhile', async () => {
    const records: LogRecord[] = []
    let childGone = false
    let held = false
    setLogger(
      (record) => {
        records.push(record)
        if (held || record.message !== 'codex app-server started') return
        held = true
        // Hold the JavaScript thread until the child has exited: the runner reads the whole
        // turn, answers it and ends the child without JavaScript, logging each notification.
        const pid = Number(record.fields.pid)
        const until = Date.now() + 20_000
        while (isAlive(pid) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5)
        childGone = !isAlive(pid)
      },
      { filter: 'rennet_codex=trace' },
    )
    const n = 2_000 // below the event queue's bound, so the fake never waits for a reader
    const { events, terminal } = await fakeRun(scenarios.burst(n))
    expect(childGone).toBe(true)
    expect(terminal.status).toBe('completed')
    expect(events.filter((e) => e.type === 'messageDelta')).toHaveLength(n)
    // Whatever was dropped last (possibly this turn's own `turn ended`, logged while the
    // queue was still full) is counted on the next record that gets through: a second turn,
    // logged while JavaScript keeps up, delivers its records and that count.
    const second = await fakeRun('minimal')
    expect(second.terminal.status).toBe('completed')
    const lastStart = () => records.findLastIndex((r) => r.message === 'codex app-server started')
    expect(await eventually(() => records.slice(lastStart()).some((r) => r.message === 'turn ended'), BOUND_MS)).toBe(true)
    const dropped = records.reduce((sum, r) => sum + (r.dropped ?? 0), 0)
    // n notifications were logged while JavaScript was held; the queue keeps 1024 of them.
    expect(dropped).toBeGreaterThan(n - 1024 - 10)
    expect(records.length + dropped).toBeGreaterThan(n)
  })

  it('rejects bad arguments with a TypeError naming them', () => {
    expect(() => setLogger('x' as never)).toThrow(new TypeError('setLogger: logger must be a function or null'))
    expect(() => setLogger(() => {}, { filter: 3 as never })).toThrow(new TypeError('options.filter must be a string'))
    expect(() => setLogger(() => {}, { filter: 'rennet_codex=[' })).toThrow(TypeError)
    expect(() => setLogger(() => {}, { filter: 'rennet_codex=[' })).toThrow(/^options\.filter "rennet_codex=\[" is not a valid log filter/)
  })
})

