// A guarantee is never lost in silence: where the host-death guard cannot be found or started
// (Unix), a turn fails at once — one terminal, `spawn`, `HOST_GUARD_UNAVAILABLE`, naming where
// it looked — and nothing is started, discovery's probes included; `discoverCodex()` says so
// under `hostGuard`. `RENNET_HOST_GUARD=off` is the one way to run without it.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { discoverCodex, type Discovery, type HarnessEvent, type TerminalEvent } from '../../index.js'
import { FakeLog, assertOneTerminalLast, cleanupFakes, fakeCodexPath, tempDir, writeFake } from '../support/fake.js'

afterEach(cleanupFakes)

const ROOT = resolve(__dirname, '../..')
const PROBE = resolve(__dirname, '../fixtures/guard-probe.mjs')
const GUARD = join(ROOT, 'rennet-codex-guard')
const switched = Boolean(process.env.RENNET_HOST_GUARD)

interface Seen {
  discovery: Discovery
  events: HarnessEvent[]
}

/**
 * A fake Codex that notes each time it is run, `--version` included, and the directory with
 * its log: the proof that nothing was started.
 */
function countedFake(): { codex: string; calls: string; log: FakeLog; dir: string } {
  const dir = tempDir()
  const calls = join(dir, 'calls.log')
  const codex = join(dir, 'codex')
  const { codexPath, log } = writeFake('minimal', {}, dir)
  writeFileSync(codex, `#!/bin/sh\necho "$*" >> '${calls}'\nexec '${codexPath}' "$@"\n`, { mode: 0o755 })
  return { codex, calls, log, dir }
}

/** One process's view, with `env` over this one's (RENNET_HOST_GUARD unset unless given). */
function probe(env: Record<string, string>, turn: object, discover: object = {}): Seen {
  const base = { ...process.env }
  delete base.RENNET_HOST_GUARD
  const out = execFileSync(process.execPath, [PROBE], {
    env: { ...base, ...env, PROBE_TURN: JSON.stringify(turn), PROBE_DISCOVER: JSON.stringify(discover) },
    encoding: 'utf8',
    timeout: 60_000,
  })
  return JSON.parse(out.trim().split('\n').pop()!) as Seen
}

function expectGuardFailure(events: HarnessEvent[], looked: string): TerminalEvent {
  const terminal = assertOneTerminalLast(events) as TerminalEvent
  expect(events).toEqual([terminal])
  expect(terminal).toMatchObject({ status: 'failed', threadId: null, turnId: null, finalMessage: null })
  expect(terminal.failure).toMatchObject({ source: 'spawn', code: 'HOST_GUARD_UNAVAILABLE', detail: { path: looked, switch: 'RENNET_HOST_GUARD' } })
  expect(terminal.failure!.message).toContain(looked)
  expect(terminal.failure!.message).toMatch(/^no host-death guard: /)
  expect(terminal.failure!.message).toContain('RENNET_HOST_GUARD=off')
  return terminal
}

describe.skipIf(process.platform === 'win32')('the host-death guard (Unix)', () => {
  it.skipIf(switched)('beside the addon: discoverCodex() reports it available, with its path', async () => {
    const d = await discoverCodex({ env: { RENNET_CODEX_BIN: fakeCodexPath(tempDir()) } })
    expect(existsSync(GUARD)).toBe(true)
    expect(d.hostGuard).toEqual({ available: true, path: GUARD, reason: null })
  })

  it('RENNET_HOST_GUARD names a missing file: one HOST_GUARD_UNAVAILABLE terminal, and nothing starts', () => {
    const missing = '/nonexistent/path/rennet-codex-guard'
    const { codex, calls, log, dir } = countedFake()
    // With the binary given, and through discovery (which is not even started).
    for (const turn of [{ prompt: 'hi', cwd: dir, codexPath: codex }, { prompt: 'hi', cwd: dir, env: { RENNET_CODEX_BIN: codex } }]) {
      const seen = probe({ RENNET_HOST_GUARD: missing }, turn, { env: { RENNET_CODEX_BIN: codex } })
      expectGuardFailure(seen.events, missing)
      expect(seen.discovery.hostGuard.available).toBe(false)
      expect(seen.discovery.hostGuard.path).toBe(missing)
      expect(seen.discovery.hostGuard.reason).toContain(`${missing} (named by RENNET_HOST_GUARD) does not exist`)
      expect(seen.discovery).toMatchObject({ available: false, selected: null, candidates: [] })
      expect(seen.discovery.reason).toMatch(/^no candidate was probed: no host-death guard: /)
    }
    expect(existsSync(calls), 'the fake Codex was run').toBe(false)
    expect(log.runs()).toEqual([])
  })

  it('the addon without its guard beside it (a copy, as a build cache replay leaves it): the same, naming where it looked', () => {
    const addon = readdirSync(ROOT).find((f) => /^rennet-codex\..+\.node$/.test(f))!
    const { codex, calls, dir } = countedFake()
    const copy = join(dir, 'addon')
    execFileSync('mkdir', [copy])
    copyFileSync(join(ROOT, addon), join(copy, addon))
    const looked = join(copy, 'rennet-codex-guard')
    const seen = probe(
      { NAPI_RS_NATIVE_LIBRARY_PATH: join(copy, addon) },
      { prompt: 'hi', cwd: dir, codexPath: codex },
    )
    const terminal = expectGuardFailure(seen.events, looked)
    expect(terminal.failure!.message).toContain(`${looked} (next to the native addon) does not exist`)
    expect(seen.discovery.hostGuard).toEqual({ available: false, path: looked, reason: expect.stringContaining(looked) })
    expect(existsSync(calls)).toBe(false)
    // The control: the guard put back beside it, the same copy runs the turn.
    copyFileSync(GUARD, looked)
    const guarded = probe({ NAPI_RS_NATIVE_LIBRARY_PATH: join(copy, addon) }, { prompt: 'hi', cwd: dir, codexPath: codex })
    expect(guarded.discovery.hostGuard).toEqual({ available: true, path: looked, reason: null })
    expect(assertOneTerminalLast(guarded.events)).toMatchObject({ status: 'completed', failure: null })
    expect(readFileSync(calls, 'utf8')).toContain('app-server')
  })

  it('a guard that is not executable is unavailable too', () => {
    const { codex, calls, dir } = countedFake()
    const fake = join(dir, 'not-a-guard')
    writeFileSync(fake, '#!/bin/sh\n', { mode: 0o644 })
    const seen = probe({ RENNET_HOST_GUARD: fake }, { prompt: 'hi', cwd: dir, codexPath: codex })
    expectGuardFailure(seen.events, fake)
    expect(seen.discovery.hostGuard.reason).toContain('is not executable')
    expect(existsSync(calls)).toBe(false)
  })

  it('RENNET_HOST_GUARD=off: the turn runs without it, and discovery says it is switched off', () => {
    const { codex, log, dir } = countedFake()
    const seen = probe({ RENNET_HOST_GUARD: 'off' }, { prompt: 'hi', cwd: dir, codexPath: codex })
    expect(assertOneTerminalLast(seen.events)).toMatchObject({ status: 'completed', failure: null })
    expect(seen.discovery.hostGuard).toEqual({ available: false, path: null, reason: expect.stringMatching(/switched off \(RENNET_HOST_GUARD=off\)/) })
    expect(log.starts()).toHaveLength(1)
    // Emptied, the variable is unset: the guard beside the addon again.
    const emptied = probe({ RENNET_HOST_GUARD: '' }, { prompt: 'hi', cwd: dir, codexPath: codex })
    expect(emptied.discovery.hostGuard).toEqual({ available: true, path: GUARD, reason: null })
    expect(assertOneTerminalLast(emptied.events)).toMatchObject({ status: 'completed', failure: null })
  })
})
