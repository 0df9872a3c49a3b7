// runTurn without codexPath: the turn runs the Codex that discovery selects (here the test kit's
// fake, named by RENNET_CODEX_BIN or found on PATH), ends with CODEX_NOT_FOUND and the
// candidate report when nothing passes, runs inside a WSL distribution through a stand-in
// wsl.exe, and can be aborted while discovery is still probing (each phase: abort.test.ts).
import { existsSync, readFileSync, symlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { runTurn, type RunTurnOptions, type TerminalEvent } from '../../index.js'
import { collect, within, writeFake } from '../support/fake.js'
import { eventually } from '../support/procs.js'
import { sandboxPerTest } from './fakes.js'

const sandbox = sandboxPerTest()

/** PATH as a user's: this Node and the system's tools. */
const NODE_PATH = `${dirname(process.execPath)}:/usr/bin:/bin`

async function run(options: RunTurnOptions) {
  const turn = runTurn(options)
  const events = await within(collect(turn), 20_000, 'events')
  return { events, terminal: events[events.length - 1] as TerminalEvent }
}

describe('runTurn with discovery', () => {
  it('runs the Codex named by RENNET_CODEX_BIN when no codexPath is given', async () => {
    const sb = sandbox()
    const { codexPath, log } = writeFake('minimal', {}, sb.root)
    const { events, terminal } = await run({
      prompt: 'hi',
      cwd: sb.dir('repo'),
      env: sb.env({ RENNET_CODEX_BIN: codexPath, PATH: NODE_PATH }),
    })
    expect(terminal).toMatchObject({ type: 'terminal', status: 'completed', finalMessage: 'Hello world' })
    expect(events[0]).toMatchObject({ type: 'started', codexPath, codexVersion: '0.171.0' })
    // The handshake probe, then the turn's own child.
    const starts = log.starts()
    expect(starts).toHaveLength(2)
    expect(starts[1].argv).toEqual(['app-server'])
    expect(starts[1].cwd).toBe(sb.path('repo'))
  })

  it('finds codex on PATH', async () => {
    const sb = sandbox()
    const bin = sb.dir('bin')
    symlinkSync(writeFake('minimal', {}, sb.root).codexPath, join(bin, 'codex'))
    const { events, terminal } = await run({
      prompt: 'hi',
      cwd: sb.dir('repo'),
      env: sb.env({ PATH: `${bin}:${NODE_PATH}` }),
    })
    expect(terminal.status).toBe('completed')
    expect(events[0]).toMatchObject({ type: 'started', codexPath: join(bin, 'codex') })
  })

  it('ends with CODEX_NOT_FOUND and the candidate report when no candidate passes', async () => {
    const sb = sandbox()
    const old = sb.kit('bin/codex', { version: '0.140.2' }).path
    const { events, terminal } = await run({ prompt: 'hi', cwd: sb.dir('repo'), env: sb.env({ PATH: sb.path('bin') }) })
    expect(events).toHaveLength(1)
    expect(terminal).toMatchObject({
      status: 'failed',
      failure: { source: 'spawn', code: 'CODEX_NOT_FOUND', message: expect.stringContaining(old) },
    })
    const detail = terminal.failure?.detail as { available: boolean; candidates: { path: string; reason: string }[] }
    expect(detail.available).toBe(false)
    expect(detail.candidates).toEqual([
      expect.objectContaining({ path: old, source: 'processPath', version: '0.140.2', usable: false }),
    ])
    expect(detail.candidates[0].reason).toMatch(/older than 0\.150\.0/)
  })

  it('runs inside a WSL distribution through wsl.exe, with the distribution path as cwd', async () => {
    const sb = sandbox()
    const calls = sb.path('wsl.log')
    // Stands in for wsl.exe on Linux: records its arguments, honours --cd, runs the rest.
    const wsl = sb.script(
      'win/wsl.exe',
      `#!/bin/sh
case $5 in *'
'*) printf '%s\\n' "$1 $2 $3 $4 <script>" >> '${calls}' ;; *) printf '%s\\n' "$*" >> '${calls}' ;; esac
if [ "$1" = --cd ]; then cd "$2" || exit 91; shift 2; fi
[ "$1" = -d ] && [ "$2" = Ubuntu ] && [ "$3" = --exec ] || exit 90
shift 3
exec "$@"
`,
    )
    const repo = sb.dir('repo')
    const { codexPath, log } = writeFake('minimal', {}, sb.root)
    const windowsCwd = `\\\\wsl.localhost\\Ubuntu${repo.replaceAll('/', '\\')}`
    const { events, terminal } = await run({
      prompt: 'hi',
      cwd: windowsCwd,
      locus: { wsl: { distro: 'Ubuntu' } },
      env: sb.env({ RENNET_WSL_EXE: wsl, RENNET_CODEX_BIN: codexPath, PATH: NODE_PATH }),
    })
    expect(terminal.status).toBe('completed')
    expect(events[0]).toMatchObject({ type: 'started', codexPath })
    const turnChild = log.starts()[1]
    expect(turnChild.cwd).toBe(repo)
    expect(log.request('thread/start').params.cwd).toBe(repo)
    expect(log.request('turn/start').params.cwd).toBe(repo)
    const lines = readFileSync(calls, 'utf8').trim().split('\n')
    expect(lines).toContain(`--cd ${repo} -d Ubuntu --exec ${codexPath} app-server`)
  })

  it('rejects a cwd that has no path inside the distribution', () => {
    expect(() => runTurn({ prompt: 'hi', cwd: 'relative\\repo', locus: { wsl: { distro: 'Ubuntu' } } })).toThrow(
      /^options\.cwd "relative\\\\repo" has no path inside the WSL distribution "Ubuntu"/,
    )
    expect(() => runTurn({ prompt: 'hi', cwd: '\\\\server\\share\\repo', locus: { wsl: { distro: 'Ubuntu' } } })).toThrow(
      TypeError,
    )
  })

  it('ends at once when aborted while discovery waits for the login shell', async () => {
    const sb = sandbox()
    // Had the turn waited for discovery, the shell would have ended by itself and left
    // shell.late behind: its timeout is longer than its sleep.
    const shell = sb.script('shell/slowsh', `#!/bin/sh\necho $$ > '${sb.path('shell.pid')}'\nsleep 20\necho late > '${sb.path('shell.late')}'\n`)
    const { codexPath, log } = writeFake('minimal', {}, sb.root)
    const controller = new AbortController()
    const turn = runTurn({
      prompt: 'hi',
      cwd: sb.dir('repo'),
      signal: controller.signal,
      env: sb.env({ SHELL: shell, RENNET_CODEX_BIN: codexPath, PATH: NODE_PATH, RENNET_LOGIN_SHELL_TIMEOUT_MS: '60000' }),
    })
    // Waits for the fact, not for a while: the login shell runs.
    expect(await eventually(() => existsSync(sb.path('shell.pid')), 20_000)).toBe(true)
    controller.abort()
    const events = await collect(turn)
    expect(events).toEqual([expect.objectContaining({ type: 'terminal', status: 'cancelled', cancellation: 'killed' })])
    expect(existsSync(sb.path('shell.late'))).toBe(false)
    // The turn's own child never started: at most the handshake probe ran, and no thread.
    expect(log.starts().length).toBeLessThanOrEqual(1)
    expect(log.requests('thread/start')).toEqual([])
  })
})
