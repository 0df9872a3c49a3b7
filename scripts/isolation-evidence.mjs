#!/usr/bin/env node
// What each codex-cli version reports about the read-only isolation (seed 003), asked directly
// over the app-server protocol, without a model turn:
//
//   node scripts/isolation-evidence.mjs [--ci | --versions a,b | VERSION…] [--json FILE]
//
// (no versions: the whole compatibility matrix; each comes from the version cache, see
// scripts/codex-versions.mjs). Every Codex runs in a loopback-only network namespace where the
// machine allows it, with a temporary HOME and CODEX_HOME holding:
//   - user config: `user_tools` (stdio, enabled), `user_off` (stdio, `enabled = false`),
//     `user_http` (streamable HTTP on the discard port), the project below trusted;
//   - a trusted git project whose `.codex/config.toml` adds `project_tools` (stdio);
//   - a local plugin marketplace with one installed plugin that brings `plugin_tools` (stdio).
// The stdio servers record every start in a marker file.
//
// Two launches per version:
//   readOnly  as the runner starts a read-only turn: the features of CODEX_DISABLED_FEATURES
//             (read from the Rust source) and web search off; `config/read {cwd}`; a read-only
//             thread whose `config` disables every configured server by name; then, for that
//             thread, `experimentalFeature/list` and `mcpServerStatus/list` page by page (also
//             with `limit` 10 and 1, to see the cursors).
//   ambient   plugins on, only `user_tools` disabled through the thread's config: what enabled,
//             failed and plugin servers report once their startup settled.
// and two with plugins on and every configured server disabled, which try to switch the
// plugin's server off through the thread's config: by its server name, and by the plugin
// (`plugins."<plugin>@<marketplace>".enabled = false`).
// Prints a summary per version; --json writes every answer.

import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startAppServer } from './mcp-fixture/app-server.mjs'
import { STDIO_SERVER } from './mcp-fixture/fixture-home.mjs'
import { createGitCwd, isolatedEnv, renderConfigToml } from '../testing/codex-home.js'
import { ensureCodex, versionsFromArgs } from './codex-versions.mjs'
import { runIsolated } from './netns.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const SELF = fileURLToPath(import.meta.url)
const MARKETPLACE = 'rennet-evidence'
const PLUGIN = 'probe'

/** CODEX_DISABLED_FEATURES as the Rust source lists it (wherever the core lives). */
export function disabledFeatures(root = ROOT) {
  const files = []
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory() && entry.name !== 'target' && entry.name !== 'node_modules') walk(path)
      else if (entry.name.endsWith('.rs')) files.push(path)
    }
  }
  for (const dir of ['src', 'crates'].map((d) => join(root, d)).filter(existsSync)) walk(dir)
  for (const file of files) {
    const match = /pub const CODEX_DISABLED_FEATURES: &\[&str\] = &\[([\s\S]*?)\];/.exec(readFileSync(file, 'utf8'))
    if (match) return [...match[1].replace(/\/\/.*$/gm, '').matchAll(/"([^"]+)"/g)].map((m) => m[1])
  }
  throw new Error('CODEX_DISABLED_FEATURES not found in the Rust source')
}

function stdioServer(name, marker, extra = '') {
  return [`[mcp_servers.${name}]`, `command = ${JSON.stringify(process.execPath)}`, `args = ${JSON.stringify([STDIO_SERVER, marker, name])}`, extra, ''].join('\n')
}

/** The temporary homes, project and plugin for one version. */
function setup(codexPath) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-evidence-')))
  const home = join(root, 'home')
  const codexHome = join(root, 'codex-home')
  const marker = join(root, 'mcp-starts.jsonl')
  mkdirSync(home)
  mkdirSync(codexHome)
  const project = createGitCwd({ prefix: 'rennet-evidence-project-' })
  mkdirSync(join(project.path, '.codex'))
  writeFileSync(join(project.path, '.codex', 'config.toml'), stdioServer('project_tools', marker))
  const extra = [
    stdioServer('user_tools', marker),
    stdioServer('user_off', marker, 'enabled = false'),
    '[mcp_servers.user_http]',
    'url = "http://127.0.0.1:9/mcp"',
    '',
    `[projects.${JSON.stringify(project.path)}]`,
    'trust_level = "trusted"',
    '',
  ].join('\n')
  writeFileSync(join(codexHome, 'config.toml'), renderConfigToml({ baseUrl: 'http://127.0.0.1:9/v1', extra }))
  const env = { ...isolatedEnv(home, codexHome), RUST_BACKTRACE: '0' }

  // A local marketplace with one plugin that brings a stdio MCP server, installed with the CLI.
  const market = join(root, 'marketplace')
  mkdirSync(join(market, '.agents', 'plugins'), { recursive: true })
  mkdirSync(join(market, 'plugins', PLUGIN, '.codex-plugin'), { recursive: true })
  writeFileSync(
    join(market, '.agents', 'plugins', 'marketplace.json'),
    JSON.stringify({
      name: MARKETPLACE,
      interface: { displayName: 'Rennet evidence' },
      plugins: [{ name: PLUGIN, source: { source: 'local', path: `./plugins/${PLUGIN}` }, policy: { installation: 'AVAILABLE', authentication: 'ON_INSTALL' }, category: 'Productivity' }],
    }),
  )
  writeFileSync(
    join(market, 'plugins', PLUGIN, '.codex-plugin', 'plugin.json'),
    JSON.stringify({ name: PLUGIN, version: '0.0.1', description: 'brings one MCP server', mcpServers: './.mcp.json', interface: { displayName: 'Probe' } }),
  )
  writeFileSync(
    join(market, 'plugins', PLUGIN, '.mcp.json'),
    JSON.stringify({ mcpServers: { plugin_tools: { command: process.execPath, args: [STDIO_SERVER, marker, 'plugin_tools'] } } }),
  )
  const cli = (...args) => {
    try {
      return { ok: true, out: execFileSync(codexPath, args, { env: { ...process.env, ...env }, cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim() }
    } catch (error) {
      return { ok: false, out: `${error.stdout ?? ''}${error.stderr ?? ''}`.trim().split('\n').slice(-3).join(' ') }
    }
  }
  // The user config turns plugins off (no catalogue refresh); the install needs them on.
  const on = ['-c', 'features.plugins=true']
  const pluginInstall = [cli(...on, 'plugin', 'marketplace', 'add', market), cli(...on, 'plugin', 'add', `${PLUGIN}@${MARKETPLACE}`)]
  const starts = () =>
    existsSync(marker)
      ? readFileSync(marker, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l).name)
      : []
  return {
    root,
    project: project.path,
    env,
    pluginInstall: pluginInstall.map((r) => (r.ok ? 'ok' : `failed: ${r.out}`)),
    starts,
    cleanup() {
      project.cleanup()
      rmSync(root, { recursive: true, force: true })
    },
  }
}

/** Every page of a list, with what each page looked like. */
async function pages(server, method, params) {
  const out = { entries: [], pages: [] }
  let cursor = null
  for (let i = 0; i < 500; i++) {
    let result
    try {
      result = await server.request(method, { ...params, ...(cursor !== null ? { cursor } : {}) })
    } catch (error) {
      out.error = error.rpc ?? { message: error.message }
      return out
    }
    const data = Array.isArray(result?.data) ? result.data : null
    out.pages.push({ count: data?.length ?? null, nextCursor: result?.nextCursor, keys: Object.keys(result ?? {}) })
    if (!data) return out
    out.entries.push(...data)
    cursor = result.nextCursor ?? null
    if (cursor === null) return out
  }
  out.error = { message: 'more than 500 pages' }
  return out
}

const keysOf = (entries) => [...new Set(entries.flatMap((e) => Object.keys(e)))].sort()
const summariseServers = (entries) => entries.map((e) => ({ name: e.name, runtimeStatus: e.runtimeStatus, pluginId: e.pluginId ?? null, authStatus: e.authStatus, tools: Object.keys(e.tools ?? {}) }))

async function probe({ codexPath, fx, args, threadConfig, settle }) {
  const server = startAppServer({ codexPath, args, cwd: fx.project, env: fx.env, requestTimeoutMs: 20_000 })
  const report = { args }
  try {
    const init = await server.initialize('rennet-evidence')
    report.initialize = { keys: Object.keys(init).sort(), userAgent: init.userAgent }
    const config = await server.request('config/read', { cwd: fx.project, includeLayers: true }).catch((e) => ({ error: e.rpc ?? e.message }))
    report.configRead = config.error
      ? { error: config.error }
      : {
          mcpServers: Object.fromEntries(Object.entries(config.config?.mcp_servers ?? {}).map(([n, s]) => [n, { enabled: s.enabled ?? null, origin: config.origins?.[`mcp_servers.${n}.command`]?.name?.type ?? config.origins?.[`mcp_servers.${n}.url`]?.name?.type ?? null }])),
          layers: (config.layers ?? []).map((l) => ({ type: l.name?.type, disabledReason: l.disabledReason ?? null, mcpServers: Object.keys(l.config?.mcp_servers ?? {}) })),
          plugins: config.config?.plugins ?? null,
          features: config.config?.features ?? null,
        }
    const thread = await server.request('thread/start', { cwd: fx.project, approvalPolicy: 'never', sandbox: 'read-only', config: threadConfig })
    const threadId = thread.thread.id
    report.thread = { sandbox: thread.sandbox, approvalPolicy: thread.approvalPolicy, keys: Object.keys(thread).sort() }
    if (settle) {
      // Let every server that starts report ready or failed (bounded; disabled ones never report).
      for (const name of settle) {
        await server
          .waitFor((n) => n.method === 'mcpServer/startupStatus/updated' && n.params?.name === name && ['ready', 'failed', 'cancelled'].includes(n.params?.status), 20_000, name)
          .catch(() => {})
      }
    }
    const features = await pages(server, 'experimentalFeature/list', { threadId })
    report.features = {
      error: features.error ?? null,
      pages: features.pages.length,
      total: features.entries.length,
      firstPage: features.pages[0] ?? null,
      entryKeys: keysOf(features.entries),
      stages: [...new Set(features.entries.map((e) => e.stage))].sort(),
      enabledValues: [...new Set(features.entries.map((e) => JSON.stringify(e.enabled)))].sort(),
      entries: features.entries.map((e) => ({ name: e.name, enabled: e.enabled, defaultEnabled: e.defaultEnabled, stage: e.stage })),
    }
    const limited = await pages(server, 'experimentalFeature/list', { threadId, limit: 10 })
    report.features.limit10 = { error: limited.error ?? null, pages: limited.pages.length, total: limited.entries.length, cursors: limited.pages.slice(0, 3).map((p) => p.nextCursor) }
    const withoutThread = await pages(server, 'experimentalFeature/list', {})
    report.features.withoutThreadId = { error: withoutThread.error ?? null, total: withoutThread.entries.length }
    const servers = await pages(server, 'mcpServerStatus/list', { threadId, detail: 'toolsAndAuthOnly' })
    report.servers = { error: servers.error ?? null, pages: servers.pages, entryKeys: keysOf(servers.entries), entries: summariseServers(servers.entries) }
    const one = await pages(server, 'mcpServerStatus/list', { threadId, detail: 'toolsAndAuthOnly', limit: 1 })
    report.servers.limit1 = { error: one.error ?? null, pages: one.pages.length, cursors: one.pages.map((p) => p.nextCursor) }
    report.startups = server.notifications.filter((n) => n.method === 'mcpServer/startupStatus/updated').map((n) => `${n.params.name}:${n.params.status}`)
  } catch (error) {
    report.error = error.message
    report.stderr = server.stderr.slice(-10)
  } finally {
    await server.close()
  }
  return report
}

async function collect(version, codexPath, features) {
  const fx = setup(codexPath)
  try {
    const names = ['user_tools', 'user_off', 'user_http', 'project_tools']
    const readOnlyArgs = [...features.flatMap((f) => ['-c', `features.${f}=false`]), '-c', 'web_search="disabled"']
    const readOnly = await probe({ codexPath, fx, args: readOnlyArgs, threadConfig: { mcp_servers: Object.fromEntries(names.map((n) => [n, { enabled: false }])) } })
    readOnly.startedServers = fx.starts()
    const ambient = await probe({
      codexPath,
      fx,
      args: ['-c', 'features.plugins=true'],
      threadConfig: { mcp_servers: { user_tools: { enabled: false } } },
      settle: ['user_http', 'project_tools', 'plugin_tools'],
    })
    ambient.startedServers = [...new Set(fx.starts())]
    // Can the thread's config switch a plugin's server off, by server name or by plugin?
    const allOff = Object.fromEntries(names.map((n) => [n, { enabled: false }]))
    const pluginByName = await probe({
      codexPath,
      fx,
      args: ['-c', 'features.plugins=true'],
      threadConfig: { mcp_servers: { ...allOff, plugin_tools: { enabled: false } } },
    })
    const pluginOff = await probe({
      codexPath,
      fx,
      args: ['-c', 'features.plugins=true'],
      threadConfig: { mcp_servers: allOff, plugins: { [`${PLUGIN}@${MARKETPLACE}`]: { enabled: false } } },
    })
    return { version, codexPath, disabledFeatures: features, pluginInstall: fx.pluginInstall, readOnly, ambient, pluginByName, pluginOff }
  } finally {
    fx.cleanup()
  }
}

function summary(r) {
  const lines = [`codex-cli ${r.version}`]
  lines.push(`  plugin install: ${r.pluginInstall.join(', ')}`)
  for (const [label, p] of [['readOnly', r.readOnly], ['ambient', r.ambient]]) {
    if (p.error) {
      lines.push(`  ${label}: ERROR ${p.error} ${(p.stderr ?? []).join(' | ')}`)
      continue
    }
    const f = p.features
    const ours = r.disabledFeatures.map((name) => {
      const e = f.entries.find((x) => x.name === name)
      return e ? `${name}=${e.enabled}` : `${name}=(not listed)`
    })
    lines.push(`  ${label}: initialize keys ${p.initialize.keys.join(',')}; thread sandbox ${JSON.stringify(p.thread.sandbox)} approval ${JSON.stringify(p.thread.approvalPolicy)}`)
    lines.push(`    config/read mcp_servers ${JSON.stringify(p.configRead.mcpServers ?? p.configRead)}`)
    lines.push(`    config/read layers ${JSON.stringify(p.configRead.layers)}`)
    lines.push(`    experimentalFeature/list: ${f.error ? `ERROR ${JSON.stringify(f.error)}` : `${f.total} entries in ${f.pages} page(s), first page nextCursor ${JSON.stringify(f.firstPage?.nextCursor)}; limit 10 → ${f.limit10.pages} pages, cursors ${JSON.stringify(f.limit10.cursors)}; without threadId ${f.withoutThreadId.total}`}`)
    lines.push(`      entry keys ${f.entryKeys.join(',')}; enabled values ${f.enabledValues.join(',')}`)
    if (label === 'readOnly') lines.push(`      ours: ${ours.join(' ')}`)
    const s = p.servers
    lines.push(`    mcpServerStatus/list: ${s.error ? `ERROR ${JSON.stringify(s.error)}` : `${s.entries.length} entries, pages ${JSON.stringify(s.pages.map((x) => [x.count, x.nextCursor]))}; limit 1 → ${s.limit1.pages} pages, cursors ${JSON.stringify(s.limit1.cursors)}`}`)
    for (const e of s.entries ?? []) lines.push(`      ${e.name}: runtimeStatus ${JSON.stringify(e.runtimeStatus)} pluginId ${JSON.stringify(e.pluginId)} tools [${e.tools.join(',')}]`)
    lines.push(`    startup notifications: ${p.startups.join(' ') || 'none'}; servers started: ${p.startedServers.join(' ') || 'none'}`)
  }
  for (const [label, p] of [['plugin server off by name', r.pluginByName], ['plugin off in the thread config', r.pluginOff]]) {
    const outcome = p.error
      ? `ERROR ${p.error}`
      : (p.servers.entries ?? []).map((e) => `${e.name}=${JSON.stringify(e.runtimeStatus)}${e.pluginId ? `(${e.pluginId})` : ''}`).join(' ')
    lines.push(`  ${label}: ${outcome}`)
  }
  return lines.join('\n')
}

async function inside(plan, json) {
  const features = disabledFeatures()
  const results = []
  for (const { version, path } of plan) {
    process.stderr.write(`isolation-evidence: codex-cli ${version}\n`)
    results.push(await collect(version, path, features))
  }
  for (const r of results) process.stdout.write(summary(r) + '\n\n')
  if (json) writeFileSync(json, JSON.stringify(results, null, 2))
}

const argv = process.argv.slice(2)
if (argv[0] === '--inside') {
  await inside(JSON.parse(argv[1]), argv[2] || null)
} else {
  let json = null
  const words = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--json') json = resolve(argv[++i])
    else words.push(argv[i])
  }
  const { versions, rest } = versionsFromArgs(words)
  if (rest.length) throw new Error(`unknown argument(s): ${rest.join(' ')}`)
  // Installs first, with the network; then everything else inside the namespace.
  const plan = versions.map((v) => ensureCodex(v, { log: (l) => process.stderr.write(`isolation-evidence: ${l}\n`) }))
  const result = runIsolated([process.execPath, SELF, '--inside', JSON.stringify(plan), json ?? ''], { stdio: 'inherit', cwd: ROOT })
  process.exit(result.status ?? 1)
}
