// Discovery on Windows, as users install Codex: `npm i -g @openai/codex` puts `codex.cmd` (and
// `codex.ps1`) in `%APPDATA%\npm`, over `node …\@openai\codex\bin\codex.js`, which starts the
// vendored `codex.exe` of `@openai/codex-win32-x64`. Discovery starts that `codex.exe` itself
// (no Node between), falls back to `[node.exe, codex.js]` without it, takes RENNET_CODEX_BIN
// and PATH, and reports a Store (`WindowsApps`) path as never started, with the reason.
//
// The global-install layout is made from the npm packages this repository installed (the
// Windows lane installs them for win32): the launcher package copied, its codex.exe linked.
//
// Runs on Windows only; elsewhere the suite is skipped and says so (the core's tests cover the
// same rules with Windows paths on every platform).
import { randomUUID } from 'node:crypto'
import { copyFileSync, cpSync, linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

import { discoverCodex, runTurn } from '../../index.js'
import { codexBinaryPath, createCodexHome } from '../../testing/codex-home.js'
import { messageResponse, start } from '../../testing/mock-responses.js'
import { collect, within } from '../support/fake.js'

const onWindows = process.platform === 'win32'
if (!onWindows) console.log(`Windows discovery tests skipped: they run on Windows only (this is ${process.platform})`)

const BOUND_MS = 60_000
const dirs: string[] = []
const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
})

/** What npm's cmd-shim writes for a bin whose script is `rel` (npm 10 and 11). */
const npmShim = (rel: string) =>
  [
    '@ECHO off',
    'GOTO start',
    ':find_dp0',
    'SET dp0=%~dp0',
    'EXIT /b',
    ':start',
    'SETLOCAL',
    'CALL :find_dp0',
    '',
    'IF EXIST "%dp0%\\node.exe" (',
    '  SET "_prog=%dp0%\\node.exe"',
    ') ELSE (',
    '  SET "_prog=node"',
    '  SET PATHEXT=%PATHEXT:;.JS;=;%',
    ')',
    '',
    `endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  "%dp0%\\${rel}" %*`,
    '',
  ].join('\r\n')

/** A hard link where the file system allows it (the binary is large), else a copy. */
function linkOrCopy(from: string, to: string) {
  mkdirSync(dirname(to), { recursive: true })
  try {
    linkSync(from, to)
  } catch {
    cpSync(from, to)
  }
}

/**
 * `%APPDATA%\npm` after `npm i -g @openai/codex`: the shims, the launcher package, and (unless
 * `withBinary` is false) its platform package below it, as npm lays out a global install.
 */
function globalInstall({ withBinary = true } = {}) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-npm-global-')))
  dirs.push(root)
  const appData = join(root, 'AppData', 'Roaming')
  const prefix = join(appData, 'npm')
  const exe = codexBinaryPath()
  // …\@openai\codex-win32-x64\vendor\x86_64-pc-windows-msvc\bin\codex.exe
  const platformPackage = dirname(dirname(dirname(dirname(exe))))
  const launcherPackage = join(prefix, 'node_modules', '@openai', 'codex')
  mkdirSync(join(launcherPackage, 'bin'), { recursive: true })
  const installed = dirname(createRequire(__filename).resolve('@openai/codex/package.json'))
  copyFileSync(join(installed, 'package.json'), join(launcherPackage, 'package.json'))
  copyFileSync(join(installed, 'bin', 'codex.js'), join(launcherPackage, 'bin', 'codex.js'))
  writeFileSync(join(prefix, 'codex.cmd'), npmShim('node_modules\\@openai\\codex\\bin\\codex.js'))
  writeFileSync(join(prefix, 'codex.ps1'), '# the PowerShell shim: never started (it needs a shell)\r\n')
  const vendored = join(launcherPackage, 'node_modules', '@openai', 'codex-win32-x64')
  const binary = join(vendored, 'vendor', 'x86_64-pc-windows-msvc', 'bin', 'codex.exe')
  if (withBinary) {
    linkOrCopy(exe, binary)
    copyFileSync(join(platformPackage, 'package.json'), join(vendored, 'package.json'))
  }
  return { root, appData, prefix, shim: join(prefix, 'codex.cmd'), script: join(launcherPackage, 'bin', 'codex.js'), binary }
}

/**
 * A Codex home for the probes' `app-server`. It holds an installation id: Codex writes one on
 * first start under a file lock that Wine 8.0 answers with another error than Windows, and exits.
 */
function codexHome(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-codex-home-')))
  dirs.push(dir)
  writeFileSync(join(dir, 'installation_id'), randomUUID())
  return dir
}

/** An environment in which only what a test lays out can be found. */
function only(extra: Record<string, string>): Record<string, string> {
  const system = process.env.SystemRoot ?? 'C:\\windows'
  return {
    CODEX_HOME: codexHome(),
    RENNET_CODEX_BIN: '',
    APPDATA: '',
    LOCALAPPDATA: '',
    NPM_CONFIG_PREFIX: '',
    PNPM_HOME: '',
    ProgramFiles: '',
    USERPROFILE: '',
    PATH: [join(system, 'system32'), system].join(';'),
    ...extra,
  }
}

describe.skipIf(!onWindows)('Windows discovery: Codex as npm installs it', () => {
  it('finds the npm shim in %APPDATA%\\npm and starts the codex.exe its script would start', async () => {
    const npm = globalInstall()
    const found = await discoverCodex({ env: only({ APPDATA: npm.appData }), refresh: true })
    expect(found.selected, JSON.stringify(found.candidates, null, 1)).toMatchObject({
      path: npm.shim,
      source: 'knownDir',
      launcher: [npm.binary],
      version: '0.171.0',
      usable: true,
    })
  }, BOUND_MS)

  it('finds it on PATH too, and a turn through discovery runs that codex.exe', async () => {
    const npm = globalInstall()
    const mock = await start([messageResponse(['Found on PATH.'])])
    const home = createCodexHome({ baseUrl: mock.url })
    cleanups.push(() => mock.close(), () => home.cleanup())
    writeFileSync(join(home.codexHome, 'installation_id'), randomUUID())
    const env = { ...only({ PATH: `${npm.prefix};${only({}).PATH}` }), ...home.env, USERPROFILE: home.home }
    const found = await discoverCodex({ env, refresh: true })
    expect(found.selected).toMatchObject({ path: npm.shim, source: 'processPath', launcher: [npm.binary], usable: true })
    const events = await within(collect(runTurn({ prompt: 'x', cwd: home.home, env, requestTimeoutMs: BOUND_MS })), BOUND_MS, 'the turn')
    // Codex's stderr may come first (diagnostics); the started event names what runs.
    expect(events.find((e) => e.type === 'started')).toMatchObject({ codexPath: npm.shim, codexVersion: '0.171.0' })
    expect(events.at(-1)).toMatchObject({ type: 'terminal', status: 'completed', finalMessage: 'Found on PATH.' })
  }, BOUND_MS)

  it('without the vendored codex.exe runs the shim’s script with node.exe, and reports what it said', async () => {
    const npm = globalInstall({ withBinary: false })
    const node = process.execPath
    const env = only({ APPDATA: npm.appData, PATH: `${dirname(node)};${only({}).PATH}` })
    const found = await discoverCodex({ env, refresh: true })
    const candidate = found.candidates.find((c) => c.path === npm.shim)
    expect(candidate, JSON.stringify(found.candidates, null, 1)).toMatchObject({ launcher: [node, npm.script], usable: false })
    // The launcher's own words: its platform package is missing.
    expect(candidate!.reason).toMatch(/codex-win32-x64/)
  }, BOUND_MS)

  it('takes RENNET_CODEX_BIN as given', async () => {
    const found = await discoverCodex({ env: only({ RENNET_CODEX_BIN: codexBinaryPath() }), refresh: true })
    expect(found.selected).toMatchObject({ path: codexBinaryPath(), source: 'env', launcher: null, version: '0.171.0', usable: true })
  }, BOUND_MS)

  it('reports a Microsoft Store (WindowsApps) alias on PATH as never started, and selects the npm install', async () => {
    const npm = globalInstall()
    const store = join(npm.root, 'Local', 'Microsoft', 'WindowsApps')
    linkOrCopy(codexBinaryPath(), join(store, 'codex.exe'))
    const found = await discoverCodex({ env: only({ APPDATA: npm.appData, PATH: `${store};${only({}).PATH}` }), refresh: true })
    const alias = found.candidates.find((c) => c.path === join(store, 'codex.exe'))
    expect(alias, JSON.stringify(found.candidates, null, 1)).toMatchObject({ usable: false, version: null })
    expect(alias!.reason).toMatch(/Microsoft Store/)
    expect(found.selected).toMatchObject({ path: npm.shim, usable: true })
  }, BOUND_MS)
})
