// `pnpm pack:check`: the package as a user installs it. Packs the root package and this
// machine's platform package with `npm pack`, installs both into a scratch project outside the
// repository, and from there runs one real turn (the pinned Codex against the loopback mock
// model) through `import` and through `require`, one turn against the test kit's scripted fake
// and one structured call, all with `@rennet/codex/testing` as installed, and compiles TypeScript
// consumers of the main entry and of the kit against the installed types; every relative link
// of the installed README.md and docs/*.md, and each `docs/…` page the installed declaration
// files name, must lead to a file of the installed package (scripts/doc-links.mjs). Proves the
// `files` lists, the loader, the kit, the types and the documents. Needs a built addon (`pnpm build`); the install
// fetches the package's own dependencies (ajv, ajv-formats, smol-toml) from the registry. The consumer has
// no `@openai/codex` of its own, so the kit is pointed at this repository's pinned CLI.

import { execFileSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { npm, npmPack, plainEnv } from './npm-pack.mjs'
import { brokenLinks } from './doc-links.mjs'

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
  // The host-death guard travels beside the addon (Linux and macOS).
  const guard = process.platform === 'win32' ? null : 'rennet-codex-guard'
  if (guard) copyFileSync(join(ROOT, guard), join(stage, guard))
  const platform = pack(stage)
  const root = pack(ROOT)
  console.log(`packed ${root.files.length} files in the root package, ${platform.files.length} in ${platformDir}`)

  const mustShip = [
    'index.js',
    'index.mjs',
    'index.d.ts',
    'index.d.mts',
    'native.js',
    'binding.js',
    'binding.d.ts',
    'lib/output-schema.js',
    'package.json',
    'LICENSE',
    'types/codex/v2/ThreadItem.d.ts',
    'types/surface.d.ts',
    'docs/README.md',
    'docs/testing-your-app.md',
    ...['index.js', 'index.mjs', 'index.d.ts', 'index.d.mts', 'fake-codex.js', 'fake-codex-server.js', 'fake-codex-wire.js', 'fake-codex-process.js', 'fake-codex-agent-loop.js', 'fake-codex-tools.js', 'mock-responses.js', 'mock-responses.d.ts', 'codex-home.js', 'codex-home.d.ts'].map((f) => `testing/${f}`),
  ]
  const missing = mustShip.filter((f) => !root.files.includes(f))
  if (missing.length) fail(`the root package lacks ${missing.join(', ')}`)
  const stray = root.files.filter((f) => /(^|\/)(src|__test__|scripts|npm|target|node_modules)\//.test(f) || f.endsWith('.node'))
  if (stray.length) fail(`the root package ships files it should not: ${stray.join(', ')}`)
  if (!platform.files.includes(addon)) fail(`the platform package lacks ${addon}`)
  if (guard && !platform.files.includes(guard)) fail(`the platform package lacks ${guard}`)

  // 2. A consumer project outside the repository.
  const consumer = join(scratch, 'consumer')
  mkdirSync(consumer)
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, version: '0.0.0' }, null, 2))
  run(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error', platform.tarball, root.tarball], consumer)
  const installed = join(consumer, 'node_modules', ...pkg.name.split('/'))
  if (readdirSync(installed).some((f) => f.endsWith('.node'))) fail('the installed root package carries an addon of its own')

  // The documents as a reader of node_modules sees them: every relative link leads to a file
  // of the installed package.
  const installedFiles = readdirSync(installed, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name).slice(installed.length + 1).split(/[\\/]/).join('/'))
    .filter((file) => !file.startsWith('node_modules/'))
  const broken = brokenLinks(installedFiles, (file) => readFileSync(join(installed, file), 'utf8'))
  if (broken.length) fail(`links that lead nowhere in the installed package:\n${broken.join('\n')}`)
  console.log(`documents: every relative link of the installed README.md and docs/ resolves (${installedFiles.filter((f) => f.endsWith('.md')).length} Markdown files)`)

  // 3. Through each entry: one real turn (the pinned CLI against the kit's mock model), one turn
  // against the kit's scripted fake, one structured call; the addon can only come from the
  // platform package, and the main entry loads nothing of the kit.
  const turnScript = (load, loadKit) => `
${load}
const testingLoaded = Object.keys(require.cache).filter((file) => file.includes(${JSON.stringify(`${pkg.name.split('/').pop()}/testing/`)}))
${loadKit}
const model = await kit.startMockModel([kit.messageResponse(['packed ', 'and ', 'installed']), kit.jsonMessageResponse({ answer: 42 })])
const cwd = kit.createGitCwd({ prefix: 'rennet-pack-cwd-' })
try {
  const codexPath = kit.codexBinaryPath({ from: ${JSON.stringify(ROOT)} })
  const turn = codex.runTurn({ prompt: 'Say it.', cwd: cwd.path, codexPath, env: model.env })
  const kinds = new Set()
  // The guard runs beside the turn, from the installed platform package (seen where /proc is).
  const guardSeen = () => {
    const { readdirSync, readFileSync } = require('node:fs')
    for (const pid of readdirSync('/proc').filter((name) => /^\\d+$/.test(name))) {
      try {
        const ppid = Number(readFileSync(\`/proc/\${pid}/stat\`, 'utf8').split(') ')[1].split(' ')[1])
        const argv0 = readFileSync(\`/proc/\${pid}/cmdline\`, 'utf8').split('\\0')[0]
        if (ppid === process.pid && argv0.endsWith('rennet-codex-guard')) return argv0
      } catch {}
    }
    return null
  }
  let guard = null
  for await (const event of turn) {
    kinds.add(event.type)
    if (event.type === 'started' && process.platform === 'linux') guard = guardSeen()
  }
  const outcome = await turn.outcome
  const schema = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false }
  const utility = await codex.runUtility({ prompt: 'Answer.', cwd: cwd.path, codexPath, env: model.env, outputSchema: schema })
  const fakePath = kit.writeFakeCodex({ steps: [{ type: 'message', text: ['fake ', 'and ', 'installed'] }] })
  const fake = await codex.runTurn({ prompt: 'Say it.', cwd: cwd.path, codexPath: fakePath }).outcome
  const fakeRuns = kit.fakeCodexRuns(fakePath).map((run) => run.argv[0])
  const loadedFrom = require.resolve(${JSON.stringify(`${pkg.name}-${platformDir}`)})
  console.log(JSON.stringify({ status: outcome.status, finalMessage: outcome.finalMessage, failure: outcome.failure, events: [...kinds], loadedFrom, guard, utility: utility.output, fake: fake.finalMessage, fakeRuns, testingLoaded }))
} finally {
  await model.close()
  cwd.cleanup()
}
`
  const requireLine = `import { createRequire } from 'node:module'\nconst require = createRequire(import.meta.url)\n`
  writeFileSync(
    join(consumer, 'turn-esm.mjs'),
    turnScript(`${requireLine}import * as codex from ${JSON.stringify(pkg.name)}`, `const kit = await import(${JSON.stringify(`${pkg.name}/testing`)})`),
  )
  writeFileSync(
    join(consumer, 'turn-cjs.mjs'),
    turnScript(`${requireLine}const codex = require(${JSON.stringify(pkg.name)})`, `const kit = require(${JSON.stringify(`${pkg.name}/testing`)})`),
  )
  for (const script of ['turn-esm.mjs', 'turn-cjs.mjs']) {
    const result = JSON.parse(run(process.execPath, [script], consumer, { env: { ...plainEnv, RENNET_LOG: '' } }).trim().split('\n').pop())
    console.log(`${script}: ${result.status}, "${result.finalMessage}", events ${result.events.join(' ')}; utility ${JSON.stringify(result.utility)}; fake "${result.fake}"`)
    if (result.status !== 'completed' || result.finalMessage !== 'packed and installed') {
      fail(`${script} did not complete the turn: ${JSON.stringify(result)}`)
    }
    if (!result.loadedFrom.startsWith(join(consumer, 'node_modules'))) fail(`${script} resolved the platform package outside the consumer`)
    if (process.platform === 'linux' && !result.guard?.startsWith(join(consumer, 'node_modules'))) {
      fail(`${script}: no host-death guard from the installed platform package ran beside the turn (${result.guard})`)
    }
    if (result.utility?.answer !== 42) fail(`${script}: the structured call gave ${JSON.stringify(result.utility)}`)
    if (result.fake !== 'fake and installed' || result.fakeRuns.join() !== 'app-server') fail(`${script}: the kit's fake gave ${JSON.stringify(result)}`)
    if (result.testingLoaded.length) fail(`${script}: the main entry loaded ${result.testingLoaded.join(', ')}`)
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
    join(consumer, 'kit.mts'),
    `import { runTurn } from '${pkg.name}'
import { writeFakeCodex, fakeCodexRuns, startMockModel, messageResponse, type FakeStep } from '${pkg.name}/testing'
const steps: FakeStep[] = [{ type: 'message', text: ['a', 'b'] }, { type: 'fail', message: 'no' }]
export const path: string = writeFakeCodex({ steps })
export const argv: string[] = fakeCodexRuns(path)[0].argv
export const go = async () => runTurn({ prompt: 'p', cwd: '/', env: (await startMockModel([messageResponse('hi')])).env })
`,
  )
  writeFileSync(
    join(consumer, 'kit.cts'),
    `import kit = require('${pkg.name}/testing')
export const path: string = kit.writeFakeCodex({ steps: [{ type: 'hang' }], interrupt: 'ignore' })
`,
  )
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: [] },
      files: ['consumer.mts', 'consumer.cts', 'kit.mts', 'kit.cts'],
    }),
  )
  run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], consumer)
  console.log('types: ESM and CommonJS consumers of the package and of its test kit compile against the installed package')
  console.log(`pack:check passed${keep ? ` (kept ${scratch})` : ''}`)
} finally {
  if (!keep) rmSync(scratch, { recursive: true, force: true })
}
