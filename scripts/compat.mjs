#!/usr/bin/env node
// The compatibility suite over the codex-cli version matrix:
//
//   pnpm compat                          every version of the matrix (scripts/codex-versions.mjs)
//   pnpm compat --ci                     its oldest and newest (what CI runs)
//   pnpm compat 0.158.0 0.171.0          the versions named (or --versions a,b)
//   pnpm compat … --markdown             the table in Markdown (as in docs/codex-versions.md)
//   pnpm compat … --json FILE            everything as JSON (per version: scenarios, messages, schema)
//   pnpm nx run rennet-adapters:compat[:ci]
//
// Each version comes from the one cache outside the repository (installed from the npm registry
// on first use; the pinned one is the devDependency). For each version it runs
// __test__/compat/scenarios.test.ts, __test__/real/input-steer-login.test.ts, __test__/real/calls.test.ts,
// __test__/real/agent-loop.test.ts and __test__/real/app-tools.test.ts with RENNET_TEST_CODEX_BIN
// set to that binary (through scripts/test.mjs, so in a loopback-only network namespace where
// the machine allows) and `schema:check` against that version's generated schema, then prints
// one table, version × scenario, and for each failure its first lines. Exits 1 when any cell is not a pass.
//
// Needs the built addon (pnpm build; the Nx target builds it first).

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureCodex, versionsFromArgs } from './codex-versions.mjs'
import { checkBinary } from './schema-check.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
// The turn scenarios, what a turn is given besides a prompt (images, steering, no login), the
// calls around turns (which each version answers), the agent loop (sub-agents, goals, plan
// mode, approvals, reviews, terminal sessions), and app tools (Codex's dynamic tools: one
// column, `tools`).
const SUITES = [
  '__test__/compat/scenarios.test.ts',
  '__test__/real/input-steer-login.test.ts',
  '__test__/real/calls.test.ts',
  '__test__/real/agent-loop.test.ts',
  '__test__/real/app-tools.test.ts',
]

function parseArgs(argv) {
  const options = { markdown: false, json: null }
  const words = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--markdown') options.markdown = true
    else if (arg === '--json') options.json = argv[++i]
    else if (arg.startsWith('--json=')) options.json = arg.slice('--json='.length)
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write('usage: compat.mjs [--ci | --versions a,b | VERSION…] [--markdown] [--json FILE]\n')
      process.exit(0)
    } else words.push(arg)
  }
  const { versions, rest } = versionsFromArgs(words)
  if (rest.length) throw new Error(`unknown argument(s): ${rest.join(' ')}`)
  return { ...options, versions }
}

/** The scenario (column) of a test: its title up to the colon. */
const scenarioOf = (title) => title.split(':')[0].trim()

/** Runs the scenarios against one binary; returns `{scenario: {status, message}}` in file order. */
function runScenarios(bin, scratch, version) {
  const output = join(scratch, `vitest-${version}.json`)
  const run = spawnSync(
    process.execPath,
    [join(ROOT, 'scripts', 'test.mjs'), ...SUITES, '--reporter=default', '--reporter=json', `--outputFile.json=${output}`],
    { cwd: ROOT, stdio: 'inherit', env: { ...process.env, RENNET_TEST_CODEX_BIN: bin } },
  )
  let report
  try {
    report = JSON.parse(readFileSync(output, 'utf8'))
  } catch {
    return { error: `the suite produced no report (exit ${run.status ?? run.signal})`, scenarios: {} }
  }
  const scenarios = {}
  for (const file of report.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      const message = (test.failureMessages ?? []).join('\n').split('\n').slice(0, 3).join(' ').trim()
      // Several tests may share a scenario (a control beside it): any that did not pass decides.
      const previous = scenarios[scenarioOf(test.title)]
      if (!previous || previous.status === 'passed') scenarios[scenarioOf(test.title)] = { status: test.status, title: test.title, message }
    }
    if (file.status === 'failed' && !(file.assertionResults ?? []).length) {
      return { error: (file.message ?? 'the suite failed to load').split('\n')[0], scenarios }
    }
  }
  return { error: null, scenarios }
}

function runSchema(bin) {
  try {
    const result = checkBinary(bin)
    const findings = result.report.flatMap((r) => r.problems.map((p) => `${r.method}: ${p}`))
    findings.push(...result.unlisted.map(([method]) => `${method}: missing from scripts/protocol-surface.json`))
    return { status: findings.length ? 'failed' : 'passed', findings }
  } catch (error) {
    return { status: 'failed', findings: [`schema:check could not run: ${error instanceof Error ? error.message : error}`] }
  }
}

const CELL = { passed: 'pass', failed: 'FAIL', skipped: 'skipped', pending: 'skipped', todo: 'skipped' }

function table(results, markdown) {
  const scenarios = [...new Set(results.flatMap((r) => Object.keys(r.scenarios)))]
  const head = ['codex-cli', ...scenarios, 'schema']
  const rows = results.map((r) => [
    r.version,
    ...scenarios.map((s) => (r.scenarios[s] ? CELL[r.scenarios[s].status] ?? r.scenarios[s].status : r.error ? 'error' : 'not run')),
    r.schema.status === 'passed' ? 'no drift' : `${r.schema.findings.length} drift`,
  ])
  if (markdown) {
    return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n')
  }
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)))
  const line = (cells) => cells.map((c, i) => c.padEnd(width[i])).join('  ').trimEnd()
  return [line(head), line(width.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')
}

async function main() {
  const options = parseArgs(process.argv.slice(2))
  const log = (line) => process.stderr.write(`compat: ${line}\n`)
  // Every install first (outside the network namespace the suites run in).
  const binaries = options.versions.map((version) => ensureCodex(version, { log }))
  const scratch = mkdtempSync(join(tmpdir(), 'rennet-compat-'))
  const results = []
  try {
    for (const { version, path, source } of binaries) {
      log(`codex-cli ${version} (${source}: ${path})`)
      const { error, scenarios } = runScenarios(path, scratch, version)
      results.push({ version, path, source, error, scenarios, schema: runSchema(path) })
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }

  process.stdout.write(`\n${table(results, options.markdown)}\n`)
  const problems = []
  for (const r of results) {
    if (r.error) problems.push(`${r.version}: ${r.error}`)
    for (const [scenario, s] of Object.entries(r.scenarios)) {
      if (s.status !== 'passed') problems.push(`${r.version} ${scenario}: ${s.message || s.status}`)
    }
    for (const finding of r.schema.findings) problems.push(`${r.version} schema: ${finding}`)
  }
  if (problems.length) process.stdout.write(`\n${problems.map((p) => `- ${p}`).join('\n')}\n`)
  const cells = results.reduce((n, r) => n + Object.keys(r.scenarios).length + 1, 0)
  process.stdout.write(`\ncompat: ${options.versions.length} version(s), ${cells - problems.length} of ${cells} cells pass\n`)
  if (options.json) writeFileSync(options.json, JSON.stringify(results, null, 2))
  return problems.length ? 1 : 0
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`compat: ${error?.stack ?? error}\n`)
    process.exit(2)
  },
)
