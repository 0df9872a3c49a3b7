// options.mcp through runTurn: policy failures end the turn before anything is spawned, and the
// inventory read (`codex mcp list --json`) is bounded in time (requestTimeoutMs) and in size.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runTurn } from '../../index.js'
import type { HarnessEvent } from '../../index.js'
import { writeFakeCodex } from '../../testing/index.js'
import { FIRING_MS, isAlive } from '../support/procs.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/**
 * A wrong binary in a directory of its own: for `mcp list` it notes its pid and runs `list`
 * (shell code) in its place; anything else fails.
 */
function wrongCodex(list: string): { codexPath: string; dir: string; listPid: () => number | null } {
  const dir = mkdtempSync(join(tmpdir(), 'rennet-mcp-list-'))
  dirs.push(dir)
  const pidFile = join(dir, 'list.pid')
  const codexPath = join(dir, 'codex')
  writeFileSync(
    codexPath,
    `#!/bin/sh
PATH=/usr/bin:/bin
case "$*" in
  *"mcp list --json"*) echo $$ > '${pidFile}.tmp' && mv '${pidFile}.tmp' '${pidFile}'; ${list} ;;
esac
echo "unexpected: $*" >&2
exit 2
`,
  )
  chmodSync(codexPath, 0o755)
  return { codexPath, dir, listPid: () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : null) }
}

async function events(turn: ReturnType<typeof runTurn>): Promise<HarnessEvent[]> {
  const out: HarnessEvent[] = []
  for await (const e of turn) out.push(e)
  return out
}

describe('runTurn with an MCP policy', () => {
  it('rejects a server that is not on loopback before spawning', async () => {
    const turn = runTurn({
      prompt: 'x',
      cwd: tmpdir(),
      codexPath: writeFakeCodex(),
      mcp: { servers: { remote: { url: 'http://localhost.example.com/mcp', httpHeaders: { 'X-Secret': 'canary-value' } } } },
    })
    const events = []
    for await (const e of turn) events.push(e)
    expect(events.map((e) => e.type)).toEqual(['terminal'])
    const outcome = await turn.outcome
    expect(outcome.status).toBe('failed')
    expect(outcome.failure).toMatchObject({ source: 'spawn', code: 'MCP_NOT_LOOPBACK' })
    expect(JSON.stringify(outcome)).not.toContain('canary-value')
  })

  it('a `codex mcp list --json` that never ends is ended at requestTimeoutMs: REQUEST_TIMEOUT', { timeout: 90_000 }, async () => {
    const codex = wrongCodex('exec sleep 600')
    // Room for the command to start and record its pid (checked below) before the limit fires.
    const turn = runTurn({ prompt: 'x', cwd: codex.dir, codexPath: codex.codexPath, requestTimeoutMs: FIRING_MS, mcp: { servers: {} } })
    expect((await events(turn)).map((e) => e.type)).toEqual(['terminal'])
    const outcome = await turn.outcome
    expect(outcome.failure).toMatchObject({ source: 'spawn', code: 'REQUEST_TIMEOUT', retryable: true, detail: { command: 'codex mcp list --json', timeoutMs: FIRING_MS } })
    expect(outcome.failure?.message).toContain(`\`codex mcp list --json\` did not finish within ${FIRING_MS} ms`)
    const pid = codex.listPid()
    expect(pid, 'the list command ran').not.toBeNull()
    // Ended before the terminal event.
    expect(isAlive(pid!), 'the list command was ended').toBe(false)
  })

  it('a `codex mcp list --json` that writes without end stops at 4 MiB: MCP_INVENTORY_TOO_LARGE', { timeout: 90_000 }, async () => {
    const codex = wrongCodex("exec yes '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['")
    const turn = runTurn({ prompt: 'x', cwd: codex.dir, codexPath: codex.codexPath, requestTimeoutMs: 60_000, mcp: { servers: {} } })
    expect((await events(turn)).map((e) => e.type)).toEqual(['terminal'])
    const outcome = await turn.outcome
    expect(outcome.failure).toMatchObject({ source: 'spawn', code: 'MCP_INVENTORY_TOO_LARGE', retryable: false, detail: { limitBytes: 4 * 1024 * 1024 } })
    expect(outcome.failure?.message).toMatch(/more than 4 MiB/)
    const pid = codex.listPid()
    expect(pid, 'the list command ran').not.toBeNull()
    // Ended before the terminal event.
    expect(isAlive(pid!), 'the list command was ended').toBe(false)
  })
})
