// Loading never throws. A packed copy of the package with no addon anywhere (no platform
// package, no rennet-codex.*.node beside it) is imported from CommonJS and from ESM, here and
// with the platform of a machine that has an addon package (Windows arm64) and of one that has
// none (FreeBSD); every call then reports NATIVE_ADDON_UNAVAILABLE with the platform, the
// package that would carry the addon and what the loader itself reported.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { npmPack, plainEnv } from '../../scripts/npm-pack.mjs'
import type { Discovery, TerminalEvent } from '../../index.js'
import { discover, sandboxPerTest } from '../discovery/fakes.js'

const ROOT = resolve(__dirname, '../..')

/** Every call that settles a promise, as the core's call table lists them (`startLogin` is a handle: `login` below). */
const CALLS: Array<{ name: string; args: string[] }> = createRequire(__filename)(join(ROOT, 'lib', 'surface.js')).calls.filter(
  (row: { resolves: string }) => row.resolves !== 'handle',
)
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string
  napi: { binaryName: string }
  dependencies: Record<string, string>
  optionalDependencies: Record<string, string>
}

interface Probe {
  exports: string[]
  discovery: Discovery
  events: { type: string }[]
  outcome: TerminalEvent
  utility: { name: string; isUtilityError: boolean; source: string; code: string; message: string; terminal: TerminalEvent }
  typeError: string
  logger: string
  calls: Array<{ name: string; isCallError: boolean; source: string; code: string; message: string }>
  conversation: TerminalEvent
  login: Array<{ name: string; isCallError: boolean; source: string; code: string; message: string }>
}

// What a user's code does first: import, ask discovery, run a turn, make a utility call, the
// calls, a conversation's send, set a logger. Printed as one JSON line.
const body = `
  const out = { exports: Object.keys(codex).sort() }
  out.discovery = await codex.discoverCodex()
  const turn = codex.runTurn({ prompt: 'Say hello.', cwd: process.cwd() })
  out.events = []
  for await (const event of turn) out.events.push(event)
  out.outcome = await turn.outcome
  try {
    await codex.runUtility({ prompt: 'Say hello.', cwd: process.cwd(), outputSchema: { type: 'object', properties: {}, required: [], additionalProperties: false } })
    out.utility = 'resolved'
  } catch (error) {
    const { name, source, code, message, terminal } = error
    out.utility = { name, isUtilityError: error instanceof codex.UtilityError, source, code, message, terminal }
  }
  try {
    codex.runTurn({ prompt: 'p', cwd: '/', signal: 'no' })
    out.typeError = 'none'
  } catch (error) {
    out.typeError = error instanceof TypeError ? error.message : String(error)
  }
  out.calls = []
  // Each call with a string for each of its arguments: nothing checks them without the addon.
  const calls = ${JSON.stringify(CALLS.map(({ name, args }) => [name, args.map(() => 't')]))}
  for (const [call, args] of calls) {
    try {
      await codex[call](...args)
      out.calls.push('resolved')
    } catch (error) {
      const { name, source, code, message } = error
      out.calls.push({ name, isCallError: error instanceof codex.CallError, source, code, message })
    }
  }
  const conversation = codex.openConversation({ cwd: process.cwd() })
  out.conversation = await conversation.send('Say hello.').outcome
  await conversation.close()
  const login = codex.startLogin()
  out.login = []
  for (const promise of [login.started, login.completed]) {
    const { name, source, code, message } = await promise.then(() => ({ name: 'resolved' }), (error) => error)
    out.login.push({ name, isCallError: name === 'CallError', source, code, message })
  }
  codex.setLogger(() => {}, { filter: 'rennet_codex=debug' })
  codex.setLogger(null)
  out.logger = 'accepted'
  console.log(JSON.stringify(out))
`
const CJS = `const codex = require(${JSON.stringify(pkg.name)})\n;(async () => {${body}})()\n`
const ESM = `import * as codex from ${JSON.stringify(pkg.name)}\n${body}\n`
/** Makes this Node report another platform before the package loads. */
const fakePlatform = (platform: string, arch: string) =>
  `Object.defineProperty(process, 'platform', { value: ${JSON.stringify(platform)} })\n` +
  `Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} })\n`

let scratch: string
let installed: string

beforeAll(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-no-addon-')))
  const { tarball, files } = npmPack(ROOT, scratch)
  expect(files.filter((f) => f.endsWith('.node'))).toEqual([])
  installed = join(scratch, 'node_modules', ...pkg.name.split('/'))
  mkdirSync(installed, { recursive: true })
  execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'])
  // Its dependencies, linked from this repository's install (the test runs offline).
  for (const dependency of Object.keys(pkg.dependencies)) {
    // Its directory as this repository installed it (not through its package.json, which a
    // package's `exports` may not expose, as smol-toml's does not).
    const from = realpathSync(join(ROOT, 'node_modules', ...dependency.split('/')))
    symlinkSync(from, join(scratch, 'node_modules', dependency), process.platform === 'win32' ? 'junction' : 'dir')
  }
  writeFileSync(join(scratch, 'probe.cjs'), CJS)
  writeFileSync(join(scratch, 'probe.mjs'), ESM)
  writeFileSync(join(scratch, 'win32-arm64.cjs'), fakePlatform('win32', 'arm64'))
  writeFileSync(join(scratch, 'freebsd-x64.cjs'), fakePlatform('freebsd', 'x64'))
}, 120_000)

afterAll(() => rmSync(scratch, { recursive: true, force: true }))

function probe(script: string, preload?: string): Probe {
  const env: Record<string, string> = { ...plainEnv, RENNET_LOG: '' }
  delete env.NAPI_RS_NATIVE_LIBRARY_PATH
  const args = [...(preload ? ['--require', `./${preload}`] : []), script]
  const out = execFileSync(process.execPath, args, { cwd: scratch, env, encoding: 'utf8' })
  return JSON.parse(out.trim().split('\n').pop()!) as Probe
}

/** The checks every probe must pass; returns the failure for the platform-specific ones. */
function expectUnavailable(result: Probe) {
  const api = ['UtilityError', 'discoverCodex', 'runTurn', 'prepareTurn', 'runReview', 'openConversation', 'runUtility', 'setLogger', 'SteerError', 'CodexError']
  // Every call fails as a turn does, and a login's two results too.
  const calls = CALLS.map((call) => call.name)
  expect(result.exports).toEqual([...api, 'CallError', ...calls, 'startLogin'].concat(result.exports.includes('default') ? ['default'] : []).sort())
  const { discovery, events, outcome, utility } = result
  expect(discovery).toMatchObject({ available: false, selected: null, candidates: [] })
  expect(events).toEqual([outcome])
  expect(outcome).toMatchObject({ type: 'terminal', status: 'failed', threadId: null, turnId: null, finalMessage: null, usage: null })
  const failure = outcome.failure!
  expect(failure).toMatchObject({ source: 'spawn', code: 'NATIVE_ADDON_UNAVAILABLE' })
  expect(failure.message).toBe(discovery.reason)
  expect(discovery.hostGuard).toEqual({ available: false, path: null, reason: failure.message })
  expect(failure.message).not.toMatch(/npm has a bug/)
  expect(utility).toMatchObject({ name: 'UtilityError', isUtilityError: true, source: 'spawn', code: 'NATIVE_ADDON_UNAVAILABLE', message: failure.message })
  expect(utility.terminal).toEqual(outcome)
  expect(result.typeError).toBe('options.signal must be an AbortSignal')
  expect(result.logger).toBe('accepted')
  const unavailable = { name: 'CallError', isCallError: true, source: 'spawn', code: 'NATIVE_ADDON_UNAVAILABLE', message: failure.message }
  expect(result.calls).toEqual(calls.map(() => unavailable))
  expect(result.login).toEqual([unavailable, unavailable])
  // A conversation's turn ends as any turn does there (its prepared child could not start either).
  expect(result.conversation).toEqual(outcome)
  return failure as { message: string; detail: { platform: string; package: string; supported: boolean; loaderErrors: string[] } }
}

describe('a packed copy without the addon', () => {
  it('imports from CommonJS and ESM and reports NATIVE_ADDON_UNAVAILABLE for this platform', () => {
    for (const script of ['probe.cjs', 'probe.mjs']) {
      const failure = expectUnavailable(probe(script))
      const { platform, package: name, supported, loaderErrors } = failure.detail
      expect(platform).toMatch(new RegExp(`^${process.platform}-${process.arch}`))
      expect(name).toBe(`${pkg.name}-${platform}`)
      expect(supported).toBe(name in pkg.optionalDependencies)
      // The loader's own attempts: the file beside the package, then the platform package.
      expect(loaderErrors.some((e) => e.includes(`./${pkg.napi.binaryName}.${platform}.node`))).toBe(true)
      expect(loaderErrors.some((e) => e.includes(`'${name}'`))).toBe(true)
      expect(failure.message).toContain(platform)
      expect(failure.message).toContain(name)
      for (const e of loaderErrors) expect(failure.message).toContain(e)
    }
  })

  it('names the package of a platform that has one (Windows arm64)', () => {
    const failure = expectUnavailable(probe('probe.cjs', 'win32-arm64.cjs'))
    expect(failure.detail).toMatchObject({ platform: 'win32-arm64-msvc', package: `${pkg.name}-win32-arm64-msvc`, supported: true })
    expect(failure.message).toMatch(/could not load its native addon for win32-arm64-msvc\. It comes from the optional dependency @rennet\/codex-win32-arm64-msvc/)
  })

  it('says that a platform has no addon at all (FreeBSD)', () => {
    const failure = expectUnavailable(probe('probe.cjs', 'freebsd-x64.cjs'))
    expect(failure.detail).toMatchObject({ platform: 'freebsd-x64', package: `${pkg.name}-freebsd-x64`, supported: false })
    expect(failure.message).toMatch(/has no native addon for freebsd-x64: no @rennet\/codex-freebsd-x64 is published \(platforms: .*linux-x64-gnu.*win32-arm64-msvc/)
  })

  it("passes on the loader's error for an addon that is there but does not load", () => {
    const { platform } = expectUnavailable(probe('probe.cjs')).detail
    const addon = join(installed, `${pkg.napi.binaryName}.${platform}.node`)
    writeFileSync(addon, 'not a shared library')
    try {
      const failure = expectUnavailable(probe('probe.cjs'))
      const fromFile = failure.detail.loaderErrors.find((e) => e.includes(addon))
      expect(fromFile).toBeDefined()
      expect(fromFile).not.toMatch(/Cannot find module/)
    } finally {
      rmSync(addon)
    }
  })
})

describe('the stand-in discovery report', () => {
  const sandbox = sandboxPerTest()

  it("names the addon's own supported versions", async () => {
    const real = await discover({ env: sandbox().env({}) })
    expect(real.available).toBe(false)
    const stub = probe('probe.cjs').discovery
    expect(stub.supportedVersions).toEqual(real.supportedVersions)
    expect(Object.keys(stub).sort()).toEqual(Object.keys(real).sort())
  })
})
