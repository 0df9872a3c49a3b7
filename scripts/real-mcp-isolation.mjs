#!/usr/bin/env node
// Installed-CLI proof of the explicit MCP policy (seed 000, "MCP configuration"):
//
//   RENNET_CODEX_BIN=/path/to/codex pnpm nx run rennet-adapters:real-mcp-isolation
//   pnpm nx run rennet-adapters:real-mcp-isolation:fixture      (CI: pinned CLI, fixture home)
//   node scripts/real-mcp-isolation.mjs [--fixture] [--cwd DIR] [--json FILE]
//
// It reads the configured MCP inventory through the shipped Rust code (`mcpInventory`), then,
// for the empty policy `{servers: {}}` and for a loopback-only policy naming a small MCP server
// that this script starts on 127.0.0.1 (official SDK, streamable HTTP, demanding a bearer token
// and a header), asks the shipped Rust code for the app-server arguments (`mcpPolicyArgs`),
// starts `codex app-server` with them, initializes, starts an ephemeral read-only thread and
// asks the server, for that thread, which MCP servers run (`mcpServerStatus/list {threadId}`)
// and which are enabled (`config/read {cwd}`). It never starts a model turn.
//
// Pass: under the empty policy every configured server is `disabled`; under the loopback policy
// the requested server is `connected` with its tools and every other server `disabled`. It
// prints one table and exits 1 on any mismatch (2 when it could not run at all).
//
// Binary: RENNET_CODEX_BIN, else the pinned `@openai/codex` devDependency. Configuration: the
// user's Codex home (CODEX_HOME, else ~/.codex), or with --fixture a copy of
// scripts/mcp-fixture in a temporary directory with a temporary HOME. Nothing is written into
// the Codex home: every Codex process here (`mcp list` included) runs against a private scratch
// CODEX_HOME holding a copy of the home's *.toml files (Codex keeps state, logs, skills and
// helper binaries in CODEX_HOME), and the home's file tree is fingerprinted before and after. `--disable shell_snapshot` is added
// to the children so that they do not run the user's login shell either.
//
// Needs the native binding (pnpm build or pnpm build:debug); the Nx target builds it first.

import { randomBytes } from 'node:crypto'
import { copyFileSync, existsSync, lstatSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { listMcpStatus, startAppServer } from './mcp-fixture/app-server.mjs'
import { FIXTURE_SERVERS, createMcpFixture } from './mcp-fixture/fixture-home.mjs'
import { startHttpMcpServer } from './mcp-fixture/mcp-servers.mjs'
import { codexBinaryPath } from '../testing/codex-home.js'

const require = createRequire(import.meta.url)
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** The requested loopback server's name: it needs quoting in TOML. */
export const PROOF_SERVER = 'rennet.mcp-proof'
const PROOF_TOOL = 'echo'
const STARTUP_TIMEOUT_MS = 20_000

/** RENNET_CODEX_BIN, else the pinned devDependency's native binary. */
export function resolveCodexBinary(env = process.env) {
  if (env.RENNET_CODEX_BIN) return { path: env.RENNET_CODEX_BIN, source: 'RENNET_CODEX_BIN' }
  return { path: codexBinaryPath(), source: '@openai/codex devDependency' }
}

function parseArgs(argv) {
  const options = { fixture: false, cwd: null, json: null }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--fixture' || arg === '--fixture=true') options.fixture = true
    else if (arg === '--fixture=false') options.fixture = false
    else if (arg === '--cwd') options.cwd = argv[++i]
    else if (arg.startsWith('--cwd=')) options.cwd = arg.slice(6)
    else if (arg === '--json') options.json = argv[++i]
    else if (arg.startsWith('--json=')) options.json = arg.slice(7)
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write('usage: real-mcp-isolation.mjs [--fixture] [--cwd DIR] [--json FILE]\n')
      process.exit(0)
    } else throw new Error(`unknown argument ${arg}`)
  }
  return options
}

/** path → "size:mtime" for every entry below `root` (symlinks not followed). */
function fingerprint(root) {
  const out = new Map()
  const walk = (dir) => {
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      const path = join(dir, entry.name)
      let stat
      try {
        stat = lstatSync(path)
      } catch {
        continue
      }
      out.set(path, entry.isDirectory() ? `dir:${stat.mtimeMs}` : `${stat.size}:${stat.mtimeMs}`)
      if (entry.isDirectory()) walk(path)
    }
  }
  walk(root)
  return out
}

function fingerprintDiff(before, after) {
  const changed = []
  for (const [path, value] of after) if (before.get(path) !== value) changed.push(path)
  for (const path of before.keys()) if (!after.has(path)) changed.push(path)
  return changed
}

function nativeError(error) {
  const text = error instanceof Error ? error.message : String(error)
  const code = /^([A-Z][A-Z_]+): /.exec(text)?.[1] ?? error?.code ?? 'ERROR'
  return { code, message: text }
}

/** Starts app-server with the policy's arguments and reads the per-thread MCP state. */
async function probe({ codexPath, cwd, env, policyName, policy }) {
  let launch
  try {
    launch = await binding().mcpPolicyArgs(JSON.stringify({ cwd, codexPath, env, mcp: policy }))
  } catch (error) {
    return { policyName, error: nativeError(error) }
  }
  // Header values come as variables for the child's environment, as runTurn passes them.
  const server = startAppServer({
    codexPath,
    args: [...launch.args, '--disable', 'shell_snapshot'],
    cwd,
    env: { ...env, ...launch.env },
  })
  try {
    await server.initialize()
    const started = await server.request('thread/start', { cwd, ephemeral: true, sandbox: 'read-only', approvalPolicy: 'never' })
    const threadId = started.thread.id
    const config = await server.request('config/read', { cwd })
    const configServers = config.config?.mcp_servers ?? {}
    // Wait for the requested servers' startup to settle (only those the configuration holds:
    // a server that is not there never reports, and the table will say so).
    for (const name of Object.keys(policy.servers).filter((n) => configServers[n]?.enabled !== false && n in configServers)) {
      await server
        .waitFor(
          (n) =>
            n.method === 'mcpServer/startupStatus/updated' &&
            n.params?.threadId === threadId &&
            n.params?.name === name &&
            ['ready', 'failed', 'cancelled'].includes(n.params?.status),
          STARTUP_TIMEOUT_MS,
          `startup status for ${name}`,
        )
        .catch(() => {})
    }
    const statuses = await listMcpStatus(server, { threadId })
    const startups = server.notifications
      .filter((n) => n.method === 'mcpServer/startupStatus/updated' && n.params?.threadId === threadId)
      .map((n) => ({ name: n.params.name, status: n.params.status }))
    return { policyName, args: launch.args, threadId, statuses, configServers, startups }
  } catch (error) {
    return { policyName, error: { code: 'PROBE_FAILED', message: error.message, stderr: server.stderr.slice(-20) } }
  } finally {
    await server.close()
  }
}

let bindingModule = null
function binding() {
  if (!bindingModule) {
    try {
      bindingModule = require(join(ROOT, 'binding.js'))
    } catch (error) {
      throw new Error(`cannot load the native binding (run pnpm build:debug first): ${error.message}`)
    }
  }
  return bindingModule
}

/** Compares one probe with the expectation; one row per server. */
function judge(result, inventory, requested) {
  const rows = []
  const transportOf = new Map(inventory.map((s) => [s.name, s.transport]))
  for (const name of Object.keys(requested)) transportOf.set(name, 'streamable_http')
  if (result.error) {
    rows.push({ server: '*', transport: '', policy: result.policyName, expected: 'policy applied', reported: `${result.error.code}: ${result.error.message}`, ok: false })
    return rows
  }
  const byName = new Map(result.statuses.map((s) => [s.name, s]))
  const names = new Set([...transportOf.keys(), ...byName.keys()])
  for (const name of [...names].sort()) {
    const status = byName.get(name)
    const configured = result.configServers[name]
    const tools = status ? Object.keys(status.tools ?? {}).sort() : []
    const wanted = name in requested
    const enabled = configured?.enabled !== false && configured !== undefined
    let ok
    let expected
    if (wanted) {
      expected = `connected, tools: ${PROOF_TOOL}`
      ok = status?.runtimeStatus === 'connected' && tools.includes(PROOF_TOOL) && enabled
    } else {
      expected = 'disabled'
      ok = status?.runtimeStatus === 'disabled' && tools.length === 0 && configured?.enabled === false
    }
    let reported = status ? status.runtimeStatus ?? 'null' : 'not listed'
    if (tools.length) reported += `, tools: ${tools.join(' ')}`
    if (status?.toolsError) reported += ` (${status.toolsError})`
    reported += configured === undefined ? '; config: absent' : `; config: enabled=${configured.enabled !== false}`
    rows.push({
      server: name,
      transport: transportOf.get(name) ?? (status?.httpOrigin ? 'streamable_http' : '?'),
      policy: result.policyName,
      expected,
      reported,
      ok,
    })
  }
  if (!inventory.length && result.policyName === 'empty') {
    rows.push({ server: '(none)', transport: '', policy: 'empty', expected: 'nothing configured', reported: 'nothing configured: the empty-policy check is vacuous here', ok: true })
  }
  return rows
}

function printTable(rows) {
  const head = { server: 'server', transport: 'transport', policy: 'policy', expected: 'expected', reported: 'reported', ok: 'result' }
  const cells = [head, ...rows.map((r) => ({ ...r, ok: r.ok ? 'ok' : 'MISMATCH' }))]
  const keys = Object.keys(head)
  const width = Object.fromEntries(keys.map((k) => [k, Math.max(...cells.map((c) => String(c[k]).length))]))
  const line = (c) => keys.map((k) => String(c[k]).padEnd(width[k])).join('  ').trimEnd()
  process.stdout.write(line(cells[0]) + '\n')
  process.stdout.write(keys.map((k) => '-'.repeat(width[k])).join('  ') + '\n')
  for (const c of cells.slice(1)) process.stdout.write(line(c) + '\n')
}

export async function main(argv = process.argv.slice(2)) {
  const options = parseArgs(argv)
  const codex = resolveCodexBinary()
  const cleanups = []
  const rows = []
  const report = { codexPath: codex.path, codexSource: codex.source, fixture: options.fixture }
  try {
    // Where the configuration comes from.
    let sourceHome
    let baseEnv
    let cwd
    let fixture = null
    if (options.fixture) {
      fixture = createMcpFixture()
      cleanups.push(() => fixture.cleanup())
      sourceHome = fixture.codexHome
      baseEnv = fixture.env
      cwd = options.cwd ? resolve(options.cwd) : fixture.project
    } else {
      sourceHome = process.env.CODEX_HOME ? resolve(process.env.CODEX_HOME) : join(homedir(), '.codex')
      baseEnv = process.env.CODEX_HOME ? { CODEX_HOME: sourceHome } : {}
      cwd = resolve(options.cwd ?? process.cwd())
    }
    Object.assign(report, { codexHome: sourceHome, cwd })
    const before = fingerprint(sourceHome)

    // Codex writes into whatever CODEX_HOME it runs with (state and log databases, skills,
    // installation id, and a tmp/arg0 helper directory on every invocation, `mcp list`
    // included), so every Codex process here runs against a private scratch CODEX_HOME holding
    // a copy of the home's configuration files. Trusted projects are keyed by absolute path,
    // so project layers still apply.
    const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-mcp-proof-home-')))
    cleanups.push(() => rmSync(scratch, { recursive: true, force: true }))
    const copied = []
    if (existsSync(sourceHome)) {
      for (const entry of readdirSync(sourceHome, { withFileTypes: true })) {
        if (entry.isFile() && entry.name.endsWith('.toml')) {
          copyFileSync(join(sourceHome, entry.name), join(scratch, entry.name))
          copied.push(entry.name)
        }
      }
    }
    report.copiedConfigFiles = copied
    const token = randomBytes(16).toString('hex')
    const headerValue = `proof "quoted" \\ value ${randomBytes(4).toString('hex')}`
    const runEnv = { ...baseEnv, CODEX_HOME: scratch, RENNET_MCP_PROOF_TOKEN: token }

    // The configured inventory, read by the shipped code at the same cwd.
    const inventory = JSON.parse(await binding().mcpInventory(JSON.stringify({ cwd, codexPath: codex.path, env: runEnv })))
    report.inventory = inventory
    if (fixture) {
      const got = inventory.map((s) => `${s.name}:${s.transport}:${s.enabled}`).sort()
      const want = Object.entries(FIXTURE_SERVERS).map(([n, s]) => `${n}:${s.transport}:${s.enabled}`).sort()
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        throw new Error(`the fixture inventory is not what the fixture configures: ${JSON.stringify(got)}`)
      }
    }

    // The requested loopback server: official SDK, streamable HTTP, token and header required.
    const mcp = await startHttpMcpServer({ name: PROOF_SERVER, bearerToken: token, requiredHeaders: { 'X-Rennet-Proof': headerValue } })
    cleanups.push(() => mcp.close())
    const loopbackPolicy = {
      servers: {
        [PROOF_SERVER]: { url: mcp.url, bearerTokenEnvVar: 'RENNET_MCP_PROOF_TOKEN', httpHeaders: { 'X-Rennet-Proof': headerValue } },
      },
    }

    const probes = []
    for (const [policyName, policy] of [['empty', { servers: {} }], ['loopback', loopbackPolicy]]) {
      const result = await probe({ codexPath: codex.path, cwd, env: runEnv, policyName, policy })
      probes.push({ ...result, args: undefined })
      rows.push(...judge(result, inventory, policy.servers))
    }
    report.probes = probes.map(({ policyName, threadId, statuses, startups, error }) => ({
      policyName,
      threadId,
      error,
      startups,
      statuses: statuses?.map((s) => ({ name: s.name, runtimeStatus: s.runtimeStatus, tools: Object.keys(s.tools ?? {}) })),
    }))

    if (fixture) {
      const starts = fixture.starts()
      report.fixtureStarts = starts
      rows.push({
        server: 'fixture stdio servers',
        transport: 'stdio',
        policy: 'both',
        expected: 'never started',
        reported: starts.length ? `started: ${starts.map((s) => s.name).join(' ')}` : 'never started',
        ok: starts.length === 0,
      })
    }
    const changed = fingerprintDiff(before, fingerprint(sourceHome))
    report.codexHomeChanged = changed
    rows.push({
      server: 'codex home',
      transport: '',
      policy: 'both',
      expected: 'unchanged',
      reported: changed.length ? `changed: ${changed.slice(0, 5).join(' ')}` : 'unchanged',
      ok: changed.length === 0,
    })
  } catch (error) {
    process.stderr.write(`real-mcp-isolation: ${error instanceof Error ? error.message : error}\n`)
    report.error = error instanceof Error ? error.message : String(error)
    if (options.json) writeFileSync(options.json, JSON.stringify({ ...report, rows, pass: false }, null, 2))
    for (const cleanup of cleanups.reverse()) await cleanup()
    return 2
  }
  for (const cleanup of cleanups.reverse()) await cleanup()

  const pass = rows.every((r) => r.ok)
  process.stdout.write(`codex: ${report.codexPath} (${report.codexSource})\n`)
  process.stdout.write(`codex home: ${report.codexHome}${options.fixture ? ' (fixture copy)' : ''}; cwd: ${report.cwd}\n\n`)
  printTable(rows)
  process.stdout.write(`\n${pass ? 'PASS' : 'FAIL'}: ${rows.filter((r) => !r.ok).length} mismatch(es) in ${rows.length} checks\n`)
  if (options.json) writeFileSync(options.json, JSON.stringify({ ...report, rows, pass }, null, 2))
  return pass ? 0 : 1
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (error) => {
      process.stderr.write(`real-mcp-isolation: ${error?.stack ?? error}\n`)
      process.exit(2)
    },
  )
}
