// `pnpm pack:check`: the package as a user installs it. Packs the root package and this
// machine's platform package with `npm pack`, installs both into a scratch project outside the
// repository, and from there runs one real turn (the pinned Codex against the loopback mock
// model) through `import` and through `require`, and compiles a TypeScript consumer against the
// installed types. Proves the `files` lists, the loader and the types. Needs a built addon
// (`pnpm build`); the install fetches the package's own dependencies (ajv) from the registry.

import { execFileSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createRequire } from 'node:module'
import { npm, npmPack, plainEnv } from './npm-pack.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const pkg = require(join(ROOT, 'package.json'))

// The addon `pnpm build` made here names this machine's platform package: rennet-codex.<platform>.node.
const built = readdirSync(ROOT).filter((f) => f.startsWith(`${pkg.napi.binaryName}.`) && f.endsWith('.node'))
if (built.length !== 1) fail(built.length ? `several addons are built here (${built.join(', ')}): keep one` : 'no addon is built: run pnpm build first')
const addon = built[0]
const platformDir = addon.slice(pkg.napi.binaryName.length + 1, -'.node'.length)
if (!existsSync(join(ROOT, 'npm', platformDir))) fail(`no platform package npm/${platformDir}`)

const keep = process.argv.includes('--keep')
const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-pack-')))
const run = (cmd, args, cwd, extra = {}) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], shell: process.platform === 'win32', env: plainEnv, ...extra })

function fail(message) {
  console.error(`pack:check: ${message}`)
  process.exit(1)
}

const pack = (dir) => npmPack(dir, scratch)

try {
  // 1. The tarballs, and what is in them.
  const stage = join(scratch, 'stage', platformDir)
  cpSync(join(ROOT, 'npm', platformDir), stage, { recursive: true })
  copyFileSync(join(ROOT, addon), join(stage, addon))
  const platform = pack(stage)
  const root = pack(ROOT)
  console.log(`packed ${root.files.length} files in the root package, ${platform.files.length} in ${platformDir}`)

  const mustShip = ['index.js', 'index.mjs', 'index.d.ts', 'index.d.mts', 'native.js', 'binding.js', 'binding.d.ts', 'package.json', 'LICENSE', 'types/codex/v2/ThreadItem.d.ts']
  const missing = mustShip.filter((f) => !root.files.includes(f))
  if (missing.length) fail(`the root package lacks ${missing.join(', ')}`)
  const stray = root.files.filter((f) => /(^|\/)(src|__test__|scripts|npm|target|node_modules)\//.test(f) || f.endsWith('.node'))
  if (stray.length) fail(`the root package ships files it should not: ${stray.join(', ')}`)
  if (!platform.files.includes(addon)) fail(`the platform package lacks ${addon}`)

  // 2. A consumer project outside the repository.
  const consumer = join(scratch, 'consumer')
  mkdirSync(consumer)
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, version: '0.0.0' }, null, 2))
  run(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error', platform.tarball, root.tarball], consumer)
  const installed = join(consumer, 'node_modules', ...pkg.name.split('/'))
  if (readdirSync(installed).some((f) => f.endsWith('.node'))) fail('the installed root package carries an addon of its own')

  // 3. One real turn through each entry; the addon can only come from the platform package.
  const support = (name) => pathToFileURL(join(ROOT, '__test__', 'support', name)).href
  const turnScript = (load) => `
${load}
const mock = await import(${JSON.stringify(support('mock-responses.mjs'))})
const { createCodexHome, createGitCwd } = await import(${JSON.stringify(support('codex-home.mjs'))})
const server = await mock.start([mock.sse(mock.messageResponse(['packed ', 'and ', 'installed']))])
const home = createCodexHome({ baseUrl: server.url, prefix: 'rennet-pack-home-' })
const cwd = createGitCwd({ prefix: 'rennet-pack-cwd-' })
try {
  const turn = codex.runTurn({ prompt: 'Say it.', cwd: cwd.path, codexPath: home.codexPath, env: home.env })
  const kinds = new Set()
  for await (const event of turn) kinds.add(event.type)
  const outcome = await turn.outcome
  const loadedFrom = require.resolve(${JSON.stringify(`${pkg.name}-${platformDir}`)})
  console.log(JSON.stringify({ status: outcome.status, finalMessage: outcome.finalMessage, failure: outcome.failure, events: [...kinds], loadedFrom }))
} finally {
  await server.close()
  home.cleanup()
  cwd.cleanup()
}
`
  const requireLine = `import { createRequire } from 'node:module'\nconst require = createRequire(import.meta.url)\n`
  writeFileSync(join(consumer, 'turn-esm.mjs'), turnScript(`${requireLine}import * as codex from ${JSON.stringify(pkg.name)}`))
  writeFileSync(join(consumer, 'turn-cjs.mjs'), turnScript(`${requireLine}const codex = require(${JSON.stringify(pkg.name)})`))
  for (const script of ['turn-esm.mjs', 'turn-cjs.mjs']) {
    const result = JSON.parse(run(process.execPath, [script], consumer, { env: { ...plainEnv, RENNET_LOG: '' } }).trim().split('\n').pop())
    console.log(`${script}: ${result.status}, "${result.finalMessage}", events ${result.events.join(' ')}`)
    if (result.status !== 'completed' || result.finalMessage !== 'packed and installed') {
      fail(`${script} did not complete the turn: ${JSON.stringify(result)}`)
    }
    if (!result.loadedFrom.startsWith(join(consumer, 'node_modules'))) fail(`${script} resolved the platform package outside the consumer`)
  }

  // 4. The installed types, from ESM and CommonJS consumers.
  writeFileSync(
    join(consumer, 'consumer.mts'),
    `import { runTurn, type HarnessEvent } from '${pkg.name}'
export const text = (e: HarnessEvent): string =>
  e.type === 'itemCompleted' && e.item.type === 'agentMessage' ? e.item.text : e.type
export const start = () => runTurn({ prompt: 'p', cwd: '/' })
`,
  )
  writeFileSync(
    join(consumer, 'consumer.cts'),
    `import codex = require('${pkg.name}')
export const text = (e: codex.HarnessEvent): string =>
  e.type === 'itemCompleted' && e.item.type === 'commandExecution' ? e.item.command : e.type
`,
  )
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: [] },
      files: ['consumer.mts', 'consumer.cts'],
    }),
  )
  run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], consumer)
  console.log('types: an ESM and a CommonJS consumer compile against the installed package')
  console.log(`pack:check passed${keep ? ` (kept ${scratch})` : ''}`)
} finally {
  if (!keep) rmSync(scratch, { recursive: true, force: true })
}
