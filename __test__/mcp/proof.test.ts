// The installed-CLI proof (scripts/real-mcp-isolation.mjs, the Nx target
// rennet-adapters:real-mcp-isolation) in fixture mode against the pinned CLI: it passes with
// the shipped policy code, and it fails (exit 1, mismatches, stdio starts recorded) when the
// policy argument never reaches the app-server, so the proof is not vacuous.
import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

import { FIXTURE_SECRETS, FIXTURE_SERVERS } from '../../scripts/mcp-fixture/fixture-home.mjs'
import { codexBinaryPath } from '../../testing/codex-home.js'

const ROOT = resolve(__dirname, '..', '..')
const SCRIPT = join(ROOT, 'scripts', 'real-mcp-isolation.mjs')
const PROOF_SERVER = 'rennet.mcp-proof'

interface Row {
  server: string
  transport: string
  policy: string
  expected: string
  reported: string
  ok: boolean
}

interface Report {
  pass: boolean
  rows: Row[]
  inventory: Array<{ name: string; enabled: boolean; transport: string }>
  fixtureStarts: Array<{ name: string }>
  codexHomeChanged: string[]
  error?: string
}

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rennet-mcp-proof-test-'))
  dirs.push(dir)
  return dir
}

async function runProof(env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string; report: Report }> {
  const jsonPath = join(tempDir(), 'report.json')
  const child = spawn(process.execPath, [SCRIPT, '--fixture', '--json', jsonPath], {
    cwd: ROOT,
    env: { ...process.env, RENNET_CODEX_BIN: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const code: number | null = await new Promise((r) => child.on('exit', (c) => r(c)))
  return { code, stdout, stderr, report: JSON.parse(readFileSync(jsonPath, 'utf8')) }
}

describe('real-mcp-isolation proof (fixture mode, pinned CLI)', () => {
  it('passes: empty policy disables everything, loopback policy connects only the requested server', async () => {
    const { code, stdout, stderr, report } = await runProof()
    expect(code, stdout + stderr).toBe(0)
    expect(report.pass).toBe(true)
    expect(report.inventory.map((s) => s.name).sort()).toEqual(Object.keys(FIXTURE_SERVERS).sort())
    const row = (policy: string, server: string) => report.rows.find((r) => r.policy === policy && r.server === server)
    for (const name of Object.keys(FIXTURE_SERVERS)) {
      expect(row('empty', name)?.reported, name).toMatch(/^disabled; config: enabled=false$/)
      expect(row('loopback', name)?.reported, name).toMatch(/^disabled; config: enabled=false$/)
    }
    expect(row('loopback', PROOF_SERVER)?.reported).toBe('connected, tools: echo; config: enabled=true')
    expect(report.fixtureStarts).toEqual([])
    expect(report.codexHomeChanged).toEqual([])
    // One readable table on stdout.
    expect(stdout).toMatch(/^server\s+transport\s+policy\s+expected\s+reported\s+result$/m)
    expect(stdout).toContain('PASS: 0 mismatch(es)')
    // No configured secret leaks into the output.
    for (const secret of FIXTURE_SECRETS) {
      expect(stdout).not.toContain(secret)
      expect(JSON.stringify(report)).not.toContain(secret)
    }
  })

  it('fails when the policy argument does not reach the app-server', async () => {
    // A codex that drops `-c mcp_servers=…` from app-server (everything else passes through).
    const dir = tempDir()
    const wrapper = join(dir, 'codex-dropping-policy')
    writeFileSync(
      wrapper,
      `#!${process.execPath}
const { spawnSync } = require('node:child_process')
const args = process.argv.slice(2)
const out = []
for (let i = 0; i < args.length; i++) {
  if (args[0] === 'app-server' && args[i] === '-c' && String(args[i + 1]).startsWith('mcp_servers=')) { i++; continue }
  out.push(args[i])
}
const r = spawnSync(${JSON.stringify(codexBinaryPath())}, out, { stdio: 'inherit' })
process.exit(r.status ?? 1)
`,
    )
    chmodSync(wrapper, 0o755)
    const { code, stdout, report } = await runProof({ RENNET_CODEX_BIN: wrapper })
    expect(code, stdout).toBe(1)
    expect(report.pass).toBe(false)
    const bad = report.rows.filter((r) => !r.ok).map((r) => `${r.policy}/${r.server}`)
    expect(bad).toEqual(expect.arrayContaining(['empty/fixture_stdio', 'empty/fixture_project', 'loopback/rennet.mcp-proof']))
    expect(report.fixtureStarts.map((s) => s.name)).toContain('fixture_stdio')
    expect(stdout).toContain('MISMATCH')
  })
})
