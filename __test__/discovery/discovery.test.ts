// discoverCodex through the addon, against fake candidates built in a temporary sandbox:
// ranking, the reason for each probe failure, the launcher run through the Node beside it,
// caching, WSL through a stand-in wsl.exe, and option validation.
import { existsSync, readFileSync, symlinkSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

import { discoverCodex } from '../../index.js'
import { allProcesses, isAlive } from '../support/procs.js'
import { AGENT, SANDBOX_MARK, discover, sandboxPerTest } from './fakes.js'

const sandbox = sandboxPerTest()

describe('discoverCodex', () => {
  it('ranks RENNET_CODEX_BIN, then the login-shell PATH, the process PATH and the known directories', async () => {
    const sb = sandbox()
    const envBin = sb.codex('explicit/codex')
    const loginBin = sb.codex('login/codex')
    const processBin = sb.codex('process/codex')
    const knownBin = sb.codex('home/.local/bin/codex')
    const d = await discover({
      env: sb.env({ RENNET_CODEX_BIN: envBin, SHELL: sb.shell(sb.path('login')), PATH: sb.path('process') }),
    })
    expect(d.candidates.map((c) => [c.source, c.path])).toEqual([
      ['env', envBin],
      ['loginShellPath', loginBin],
      ['processPath', processBin],
      ['knownDir', knownBin],
    ])
    for (const c of d.candidates) {
      expect(c).toEqual({ path: c.path, source: c.source, launcher: null, version: '0.171.0', usable: true, reason: null })
    }
    expect(d.available).toBe(true)
    expect(d.reason).toBeNull()
    expect(d.selected).toEqual(d.candidates[0])
  })

  it('reports why each candidate failed its probes and selects the one that passed', async () => {
    const sb = sandbox()
    const notExecutable = sb.codex('p1/codex')
    sb.script('p1/codex', '#!/bin/sh\necho never\n', 0o644)
    const garbageVersion = sb.kit('p2/codex', { version: 'hello world' }).path
    const tooOld = sb.kit('p3/codex', { version: '0.149.0' }).path
    const garbage = sb.kit('p5/codex', { fault: { phase: 'before-init', action: 'exit', code: 3, line: 'not json at all' } }).path
    const killed = sb.kit('p6/codex', { fault: { phase: 'before-init', action: 'kill' } }).path
    const good = sb.codex('p7/codex')
    const path = [1, 2, 3, 5, 6, 7].map((i) => sb.path(`p${i}`)).join(':')

    // Every answer here is awaited: the sandbox's limits only guard against a hang.
    const d = await discover({ env: sb.env({ PATH: path }) })
    const byPath = new Map(d.candidates.map((c) => [c.path, c]))
    expect(byPath.get(notExecutable)?.reason).toMatch(/not executable/)
    expect(byPath.get(garbageVersion)).toMatchObject({ usable: false, version: null })
    expect(byPath.get(garbageVersion)?.reason).toMatch(/printed no version: codex-cli hello world/)
    expect(byPath.get(tooOld)).toMatchObject({ usable: false, version: '0.149.0' })
    expect(byPath.get(tooOld)?.reason).toMatch(/older than 0\.150\.0/)
    expect(byPath.get(garbage)?.reason).toMatch(/exited with code 3 without answering `initialize`; it printed: not json at all/)
    expect(byPath.get(killed)?.reason).toMatch(/^`app-server` was killed by signal 9 \(SIGKILL\) before answering `initialize`/)
    expect(d.selected?.path).toBe(good)
    expect(d.candidates.map((c) => c.usable)).toEqual([false, false, false, false, false, true])

    // Nothing usable: unavailable, with the reasons.
    const none = await discover({ env: sb.env({ PATH: [2, 3].map((i) => sb.path(`p${i}`)).join(':') }) })
    expect(none.available).toBe(false)
    expect(none.selected).toBeNull()
    expect(none.reason).toContain(garbageVersion)
    expect(none.reason).toContain('older than 0.150.0')
  })

  it('gives up a handshake that never answers at its own limit, and leaves nothing of it', async () => {
    const sb = sandbox()
    const hanging = sb.kit('p4/codex', { answer: { initialize: 'never' } })
    // A short limit for the handshake alone: it is the one that must fire. `--version` keeps
    // the sandbox's (a guard only), so that it answers however slowly the machine starts it.
    const d = await discover({ env: sb.env({ PATH: sb.path('p4'), RENNET_DISCOVERY_HANDSHAKE_TIMEOUT_MS: '800' }) })
    expect(d.candidates).toHaveLength(1)
    expect(d.candidates[0]).toMatchObject({ path: hanging.path, usable: false, version: '0.171.0' })
    expect(d.candidates[0].reason).toMatch(/^`app-server` did not answer `initialize` within 800 ms/)
    expect(d.available).toBe(false)

    // The hanging probe and everything in its process group are gone, and so is anything
    // else discovery started (a loaded machine may not have let the probe log its start
    // before its time was up).
    for (const probe of hanging.runs()) {
      expect(isAlive(probe.pid)).toBe(false)
      expect(allProcesses().filter((p) => p.pgrp === probe.pid && p.state !== 'Z')).toEqual([])
    }
    expect(sb.live()).toEqual([])
  })

  it('is unavailable with what was searched when nothing is found', async () => {
    const sb = sandbox()
    const d = await discover({ env: sb.env({ PATH: sb.dir('empty') }) })
    expect(d).toMatchObject({ available: false, selected: null, candidates: [] })
    expect(d.reason).toMatch(/^no Codex CLI was found: RENNET_CODEX_BIN is not set; no login-shell PATH \(SHELL is not set\)/)
  })

  it('survives a login shell that hangs', async () => {
    const sb = sandbox()
    const processBin = sb.codex('process/codex')
    // Were it left to end by itself, it would leave shell.late behind: ended at its timeout, it cannot.
    const shell = sb.script('shell/hang', `#!/bin/sh\n/bin/sleep 20\necho late > '${sb.path('shell.late')}'\n`)
    const d = await discover({ env: sb.env({ SHELL: shell, PATH: sb.path('process'), RENNET_LOGIN_SHELL_TIMEOUT_MS: '300' }) })
    expect(d.selected?.path).toBe(processBin)
    // Neither the shell nor its sleep is left, however far it got before its time was up.
    expect(sb.live()).toEqual([])
    expect(existsSync(sb.path('shell.late'))).toBe(false)
  })

  it("marks everything it starts with the environment it was given (what the sandbox's live() looks for)", async () => {
    const sb = sandbox()
    const seen = (name: string) => `printf '%s' "$${SANDBOX_MARK}" > '${sb.path(name)}'`
    sb.codex('process/codex', { onVersion: seen('version.mark'), handshake: `${seen('handshake.mark')}\nprintf '%s\\n' '${AGENT}'` })
    const shell = sb.script('shell/marksh', `#!/bin/sh\n${seen('shell.mark')}\nexit 1\n`)
    const d = await discover({ env: sb.env({ SHELL: shell, PATH: sb.path('process') }) })
    expect(d.available).toBe(true)
    for (const name of ['version.mark', 'handshake.mark', 'shell.mark']) expect(readFileSync(sb.path(name), 'utf8'), name).toBe(sb.root)
    expect(sb.live()).toEqual([])
  })

  it('runs a launcher script through the Node beside it when node is not on PATH', async () => {
    const sb = sandbox()
    const prefix = 'home/.nvm/versions/node/v22.0.0'
    const script = sb.codex(`${prefix}/lib/node_modules/@openai/codex/bin/codex.js`, { shebang: '#!/usr/bin/env node' })
    const bin = sb.dir(`${prefix}/bin`)
    symlinkSync(script, `${bin}/codex`)
    const node = sb.script(`${prefix}/bin/node`, '#!/bin/sh\nscript=$1\nshift\nexec /bin/sh "$script" "$@"\n')
    const d = await discover({ env: sb.env({ PATH: sb.dir('empty') }) })
    expect(d.selected).toEqual({
      path: `${bin}/codex`,
      source: 'knownDir',
      launcher: [node, script],
      version: '0.171.0',
      usable: true,
      reason: null,
    })
  })

  it('probes the same file once', async () => {
    const sb = sandbox()
    const real = sb.codex('process/codex')
    sb.dir('home/.local/bin')
    symlinkSync(real, sb.path('home/.local/bin/codex'))
    const d = await discover({ env: sb.env({ PATH: `${sb.path('process')}:${sb.path('process')}` }) })
    expect(d.candidates.map((c) => c.path)).toEqual([real])
    expect(sb.calls(real)).toHaveLength(2)
  })

  it('caches per environment until refresh', async () => {
    const sb = sandbox()
    const bin = sb.codex('process/codex')
    const env = sb.env({ PATH: sb.path('process') })
    const first = await discover({ env })
    expect(sb.calls(bin)).toHaveLength(2)
    expect(await discover({ env })).toEqual(first)
    expect(sb.calls(bin)).toHaveLength(2)
    await Promise.all([discover({ env: { ...env, OTHER: '1' } }), discover({ env: { ...env, OTHER: '1' } })])
    expect(sb.calls(bin)).toHaveLength(4)
    await discover({ env, refresh: true })
    expect(sb.calls(bin)).toHaveLength(6)
  })

  it('probes eight slow candidates in parallel', async () => {
    const sb = sandbox()
    const begun = sb.path('begun.log')
    // Each handshake answers only once all eight have begun: a barrier that serial probing
    // could never pass (the first would time out, and every other after it). The timeout
    // leaves a loaded machine time enough to start eight children; the barrier, not the
    // clock, tells parallel from serial.
    const dirs = Array.from({ length: 8 }, (_, i) => {
      sb.codex(`p${i}/codex`, {
        handshake: `echo $$ >> '${begun}'
while [ "$(wc -l < '${begun}')" -lt 8 ]; do sleep 0.02; done
printf '%s\\n' '${AGENT}'`,
      })
      return sb.path(`p${i}`)
    })
    const d = await discover({ env: sb.env({ PATH: dirs.join(':'), RENNET_DISCOVERY_TIMEOUT_MS: '20000' }) })
    expect(d.candidates.filter((c) => c.usable), JSON.stringify(d.candidates)).toHaveLength(8)
  })

  it('discovers and launches inside WSL through wsl.exe', async () => {
    const sb = sandbox()
    const log = sb.path('wsl.log')
    const wsl = sb.script(
      'win/wsl.exe',
      // One short write per call (the helper scripts are logged as <script>), so that
      // concurrent calls cannot interleave in the log.
      `#!/bin/sh
line="$1 $2 $3 $4"
case $5 in *'
'*) line="$line <script>" ;; *) line="$line $5" ;; esac
printf '%s\\n' "$line" >> '${log}'
[ "$1" = -d ] && [ "$3" = --exec ] || exit 90
shift 3
exec "$@"
`,
    )
    const bin = sb.codex('distro/usr/bin/codex')
    const d = await discover({ locus: { wsl: { distro: 'Ubuntu' } }, env: sb.env({ RENNET_WSL_EXE: wsl, PATH: sb.path('distro/usr/bin') }) })
    expect(d.selected).toMatchObject({ path: bin, source: 'processPath', usable: true, launcher: [wsl, '-d', 'Ubuntu', '--exec', bin] })
    const calls = readFileSync(log, 'utf8').trim().split('\n') as string[]
    expect(calls.every((line) => line.startsWith('-d Ubuntu --exec '))).toBe(true)
    expect(calls).toContain(`-d Ubuntu --exec ${bin} --version`)
    expect(calls).toContain(`-d Ubuntu --exec ${bin} app-server`)
  })

  it('rejects invalid options with a TypeError naming the option', async () => {
    const bad: unknown[] = [
      [{ env: { A: 1 } }, /^options\.env\.A: invalid type/],
      [{ locus: { wsl: { distro: '' } } }, /^options\.locus\.wsl\.distro must be a non-empty string$/],
      [{ refesh: true }, /refesh/],
      [{ env: { 'A=B': 'x' } }, /^options\.env has an invalid variable name/],
      ['yes', /^discoverCodex: options must be an object$/],
      [null, /^discoverCodex: options must be an object$/],
    ]
    for (const [options, message] of bad as [unknown, RegExp][]) {
      const rejection = discoverCodex(options as never)
      await expect(rejection).rejects.toThrow(TypeError)
      await expect(rejection).rejects.toThrow(message)
    }
  })

  it('reports the supported version range', async () => {
    const sb = sandbox()
    const d = await discover({ env: sb.env({}) })
    expect(d.supportedVersions).toEqual({ minimum: '0.150.0', newestTested: '0.171.0' })
    expect(d.available).toBe(false)
    expect(d.reason).toMatch(/^no Codex CLI was found/)
  })
})
