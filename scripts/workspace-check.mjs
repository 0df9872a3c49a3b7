#!/usr/bin/env node
// `pnpm workspace:check` (Nx: `rennet-adapters:workspace-check`): this package as a project of
// a pnpm + Nx monorepo shaped like Rennet's. It lays out a scratch workspace
//
//   package.json, pnpm-workspace.yaml, nx.json   the workspace's own (none of this repository's)
//   packages/codex/                              this repository's files, without its root-only ones
//   apps/desktop/                                an app: "@rennet/codex": "workspace:*", TypeScript
//                                                (ESM) and a vitest suite
//
// and runs from the workspace root, as a developer there would:
//
//   pnpm install
//   nx run rennet-adapters:build                       (then again with the build's files removed,
//                                                       as in a fresh clone: it must restore them
//                                                       from the cache, the guard beside the addon
//                                                       included)
//   nx run rennet-adapters:real-mcp-isolation:fixture
//   nx run @rennet/desktop:typecheck
//   nx run @rennet/desktop:test                        (a real turn: the pinned Codex against the
//                                                       loopback mock model; the live test skipped)
//
// It fails on a failed step and on any warning pnpm or Nx prints about the configuration.
// The install reuses the pnpm store, and the build this repository's cargo target directory
// (CARGO_TARGET_DIR), so nothing is downloaded or compiled twice. `--keep` keeps the workspace.

import { spawnSync } from 'node:child_process'
import { accessSync, constants, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { plainEnv } from './npm-pack.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const pkg = require(join(ROOT, 'package.json'))
const keep = process.argv.includes('--keep')

/** Files of this repository that belong to its own root, not to the package as a project. */
const ROOT_ONLY = /^(nx\.json|pnpm-workspace\.yaml|pnpm-lock\.yaml|\.ci\/|\.github\/|\.gitignore$)/

/** The versions this repository installed, so that the workspace resolves to what the store holds. */
const installed = (name) => require(`${name}/package.json`).version
const PNPM = pkg.packageManager.replace(/^pnpm@/, '').split('+')[0]

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-workspace-')))
const write = (path, text) => {
  mkdirSync(dirname(join(scratch, path)), { recursive: true })
  writeFileSync(join(scratch, path), typeof text === 'string' ? text : `${JSON.stringify(text, null, 2)}\n`)
}

function layOut() {
  write('package.json', {
    name: 'rennet',
    private: true,
    packageManager: `pnpm@${PNPM}`,
    devDependencies: { nx: installed('nx') },
  })
  write(
    'pnpm-workspace.yaml',
    [
      'packages:',
      "  - 'apps/*'",
      "  - 'packages/*'",
      // The addon is built from source here (rennet-adapters:build), so the prebuilt platform
      // packages of a release are not installed.
      'ignoredOptionalDependencies:',
      "  - '@rennet/codex-*'",
      // nx's postinstall only fetches an Nx Cloud client.
      'ignoredBuiltDependencies:',
      '  - nx',
      '',
    ].join('\n'),
  )
  write('nx.json', {
    $schema: './node_modules/nx/schemas/nx-schema.json',
    neverConnectToCloud: true,
    useDaemonProcess: false,
    analytics: false,
    namedInputs: {
      default: ['{projectRoot}/**/*'],
      production: ['default', '!{projectRoot}/**/*.test.ts'],
    },
    targetDefaults: {
      typecheck: { dependsOn: ['^build'], cache: true, inputs: ['default', '^production'] },
      test: { dependsOn: ['^build'] },
    },
  })

  // The package: what git tracks or would track here, less the repository's root-only files.
  const git = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  if (git.status !== 0) fail(`git ls-files failed: ${git.stderr}`)
  const files = git.stdout.split('\0').filter((f) => f && !ROOT_ONLY.test(f) && existsSync(join(ROOT, f)))
  for (const file of files) {
    mkdirSync(dirname(join(scratch, 'packages/codex', file)), { recursive: true })
    cpSync(join(ROOT, file), join(scratch, 'packages/codex', file))
  }

  const app = 'apps/desktop'
  write(`${app}/package.json`, {
    name: '@rennet/desktop',
    private: true,
    type: 'module',
    scripts: { typecheck: 'tsc -p tsconfig.json', test: 'vitest run --reporter=verbose' },
    dependencies: { [pkg.name]: 'workspace:*' },
    devDependencies: {
      '@types/node': installed('@types/node'),
      typescript: installed('typescript'),
      vitest: installed('vitest'),
    },
  })
  write(`${app}/tsconfig.json`, {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      types: ['node'],
    },
    include: ['src/**/*.ts', 'vitest.config.ts'],
  })
  write(
    `${app}/vitest.config.ts`,
    `import { defineConfig } from 'vitest/config'

export default defineConfig({ test: { testTimeout: 120_000, hookTimeout: 60_000 } })
`,
  )
  write(
    `${app}/src/agent.ts`,
    `// The app's use of the package: one turn, its transcript and outcome.
import { runTurn, type HarnessEvent, type RunTurnOptions, type TerminalEvent } from '@rennet/codex'

export interface Answer {
  text: string
  commands: string[]
  kinds: HarnessEvent['type'][]
  outcome: TerminalEvent
}

export async function ask(options: RunTurnOptions): Promise<Answer> {
  const answer: Answer = { text: '', commands: [], kinds: [], outcome: undefined as never }
  const turn = runTurn(options)
  for await (const event of turn) {
    answer.kinds.push(event.type)
    if (event.type === 'messageDelta') answer.text += event.delta
    if (event.type === 'itemCompleted' && event.item.type === 'commandExecution') answer.commands.push(event.item.command)
  }
  answer.outcome = await turn.outcome
  return answer
}
`,
  )
  // The package's test kit, as an app imports it: the loopback mock of the model API and
  // throwaway Codex homes.
  write(
    `${app}/src/agent.test.ts`,
    `import { afterAll, beforeAll, expect, it } from 'vitest'
import { discoverCodex, runUtility, UtilityError } from '@rennet/codex'
import { createCodexHome, createGitCwd, messageResponse, sse, startMockResponses } from '@rennet/codex/testing'
import { ask } from './agent.js'

let server: Awaited<ReturnType<typeof startMockResponses>>
let home: ReturnType<typeof createCodexHome>
let cwd: ReturnType<typeof createGitCwd>

beforeAll(async () => {
  server = await startMockResponses([sse(messageResponse(['Hello ', 'from ', 'the workspace.']))])
  home = createCodexHome({ baseUrl: server.url, prefix: 'rennet-desktop-home-' })
  cwd = createGitCwd({ prefix: 'rennet-desktop-cwd-' })
})

afterAll(async () => {
  await server?.close()
  home?.cleanup()
  cwd?.cleanup()
})

it('runs a turn with the pinned Codex against the loopback model', async () => {
  const answer = await ask({ prompt: 'Say hello.', cwd: cwd.path, codexPath: home.codexPath, env: home.env })
  expect(answer.outcome.status).toBe('completed')
  expect(answer.outcome.failure).toBeNull()
  expect(answer.text).toBe('Hello from the workspace.')
  expect(answer.outcome.finalMessage).toBe('Hello from the workspace.')
  expect(answer.kinds).toContain('started')
  expect(answer.kinds.filter((kind) => kind === 'terminal')).toHaveLength(1)
  expect(answer.kinds.at(-1)).toBe('terminal')
})

it('finds the pinned Codex when pointed at it, with the host-death guard beside the addon', async () => {
  const report = await discoverCodex({ env: { RENNET_CODEX_BIN: home.codexPath, HOME: home.home }, refresh: true })
  expect(report.available).toBe(true)
  expect(report.selected?.path).toBe(home.codexPath)
  // The build replayed from the cache brought the guard back too (without it the turn above
  // would have failed with HOST_GUARD_UNAVAILABLE).
  expect(report.hostGuard).toMatchObject({ available: true, reason: null })
  expect(report.hostGuard.path?.endsWith('/packages/codex/rennet-codex-guard'), String(report.hostGuard.path)).toBe(true)
})

it('rejects a utility call whose Codex does not exist with a UtilityError', async () => {
  const call = runUtility({ prompt: 'p', cwd: cwd.path, codexPath: '/nonexistent/codex', outputSchema: { type: 'object', properties: {}, additionalProperties: false } })
  await expect(call).rejects.toBeInstanceOf(UtilityError)
  await expect(call).rejects.toMatchObject({ source: 'spawn', code: 'CODEX_NOT_FOUND' })
})
`,
  )
  write(
    `${app}/src/live.test.ts`,
    `// Opt-in: spends one real model turn with the developer's own Codex installation and login.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ask } from './agent.js'

const live = process.env.RENNET_LIVE_CODEX === '1'

describe.skipIf(!live)('live Codex (skipped unless RENNET_LIVE_CODEX=1)', () => {
  it('answers with the Codex that discovery finds', async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-desktop-live-')))
    try {
      const answer = await ask({ prompt: 'Reply with the word PELICAN only.', cwd })
      expect(answer.outcome.status).toBe('completed')
      expect(answer.text.toUpperCase()).toContain('PELICAN')
    } finally {
      rmSync(cwd, { recursive: true, force: true })
    }
  })
})
`,
  )
}

/**
 * The addon and, where the platform needs it, the host-death guard beside it (where the addon
 * looks for it), executable: without it every turn of the app fails HOST_GUARD_UNAVAILABLE.
 */
function checkBuilt(what) {
  const project = join(scratch, 'packages/codex')
  const addons = readdirSync(project).filter((f) => /^rennet-codex\..+\.node$/.test(f))
  if (addons.length !== 1) fail(`${what}: expected one addon in packages/codex, found ${JSON.stringify(addons)}`)
  if (process.platform === 'win32') return
  const guard = join(project, 'rennet-codex-guard')
  try {
    accessSync(guard, constants.X_OK)
  } catch (e) {
    fail(`${what}: no executable host-death guard beside the addon ${addons[0]} (${guard}: ${e.code ?? e.message})`)
  }
  console.log(`${what}: ${addons[0]} with rennet-codex-guard beside it`)
}

function fail(message) {
  console.error(`workspace:check: ${message}`)
  process.exitCode = 1
  throw new Error(message)
}

const env = {
  ...plainEnv,
  CI: 'true',
  NX_DAEMON: 'false',
  NX_NO_CLOUD: 'true',
  NX_TUI: 'false',
  NX_SKIP_NX_CACHE: '',
  CARGO_TARGET_DIR: process.env.CARGO_TARGET_DIR || join(ROOT, 'target'),
  RENNET_LIVE_CODEX: '',
  RENNET_CODEX_BIN: '',
  // The app's turn must find the guard beside the addon, not one named from outside.
  RENNET_HOST_GUARD: '',
  NAPI_RS_NATIVE_LIBRARY_PATH: '',
  FORCE_COLOR: '0',
  NO_COLOR: '1',
}

/**
 * A warning of pnpm (any `WARN` but a dependency's deprecation notice, which says nothing about
 * this configuration; build scripts it skipped) or Nx (a setting that does not take effect,
 * an input that is not one).
 */
const WARNING = /\bWARN\b(?!.*\bdeprecated\b)|Ignored build scripts|not take effect|invalid fileset|\bwarning\b.*(nx\.json|project\.json|package\.json|pnpm|input)/i

/** Runs one step from the workspace root; returns its output, printed as it was. */
function step(title, cmd, args, { expect: expected = [] } = {}) {
  console.log(`\n== ${title}: ${cmd} ${args.join(' ')}`)
  const started = Date.now()
  const result = spawnSync(cmd, args, { cwd: scratch, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  const output = `${result.stdout}${result.stderr}`
  process.stdout.write(output)
  console.log(`-- ${title}: exit ${result.status}, ${((Date.now() - started) / 1000).toFixed(1)} s`)
  if (result.status !== 0) fail(`${title} failed (exit ${result.status ?? result.signal})`)
  const warnings = output.split('\n').filter((line) => WARNING.test(line))
  if (warnings.length) fail(`${title} warned:\n  ${warnings.join('\n  ')}`)
  for (const pattern of expected) if (!pattern.test(output)) fail(`${title}: the output does not show ${pattern}`)
  return output
}

try {
  layOut()
  console.log(`workspace: ${scratch} (CARGO_TARGET_DIR=${env.CARGO_TARGET_DIR})`)
  const nx = (...args) => ['exec', 'nx', ...args, '--outputStyle=static']
  step('install', 'pnpm', ['install', '--prefer-offline'])
  step('build', 'pnpm', nx('run', 'rennet-adapters:build'), { expect: [/Successfully ran target build/] })
  checkBuilt('the build')
  // A fresh clone has none of the build's files: Nx restores only the declared outputs, and
  // whatever it does not restore is missing where the addon looks for it.
  const project = join(scratch, 'packages/codex')
  const built = readdirSync(project).filter((f) => /^rennet-codex\..+\.node$|^rennet-codex-guard$|^binding\.(js|d\.ts)$/.test(f))
  for (const file of built) rmSync(join(project, file))
  console.log(`removed the build's files before the replay: ${built.join(', ')}`)
  step('build again', 'pnpm', nx('run', 'rennet-adapters:build'), { expect: [/\[local cache\]/] })
  checkBuilt('the build replayed from the cache')
  step('MCP isolation proof', 'pnpm', nx('run', 'rennet-adapters:real-mcp-isolation:fixture'))
  step('app type check', 'pnpm', nx('run', '@rennet/desktop:typecheck'))
  step('app tests', 'pnpm', nx('run', '@rennet/desktop:test'), {
    expect: [/runs a turn with the pinned Codex/, /live Codex \(skipped unless RENNET_LIVE_CODEX=1\)/, /Tests\s+3 passed \| 1 skipped \(4\)/],
  })
  console.log(`\nworkspace:check passed${keep ? ` (kept ${scratch})` : ''}`)
} catch (error) {
  if (!process.exitCode) {
    console.error(error)
    process.exitCode = 1
  }
  if (!keep) console.error(`(run with --keep to keep the workspace for a look)`)
} finally {
  if (!keep) rmSync(scratch, { recursive: true, force: true })
}
