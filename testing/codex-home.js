'use strict'
// Per-test Codex environment for real-binary runs: a fresh temporary HOME and CODEX_HOME whose
// config.toml selects the loopback mock provider, the env to hand to runTurn, the native binary
// under test (the pinned one unless RENNET_TEST_CODEX_BIN names another), a git-initialised
// temporary cwd, and a config.toml fingerprint to prove a turn did not write to the user's
// configuration (no `[projects."<cwd>"] trust_level` entry).
//
// Part of `@rennet/codex/testing`; also what this package's own suites, `pnpm demo` and the
// bench use. CommonJS, so that it loads from `require` and `import` alike. Types: codex-home.d.ts.

const { execFileSync } = require('node:child_process')
const { createHash } = require('node:crypto')
const { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync, existsSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { dirname, join } = require('node:path')

const TARGETS = {
  'linux-x64': { pkg: '@openai/codex-linux-x64', triple: 'x86_64-unknown-linux-musl' },
  'linux-arm64': { pkg: '@openai/codex-linux-arm64', triple: 'aarch64-unknown-linux-musl' },
  'darwin-x64': { pkg: '@openai/codex-darwin-x64', triple: 'x86_64-apple-darwin' },
  'darwin-arm64': { pkg: '@openai/codex-darwin-arm64', triple: 'aarch64-apple-darwin' },
  'win32-x64': { pkg: '@openai/codex-win32-x64', triple: 'x86_64-pc-windows-msvc' },
  'win32-arm64': { pkg: '@openai/codex-win32-arm64', triple: 'aarch64-pc-windows-msvc' },
}

/** The codex-cli version this package is tested with (its pinned devDependency). */
const PINNED_CODEX_VERSION = '0.171.0'

/** Where `@openai/codex` is looked for: `from`, then beside this package, then the working directory. */
function resolveLauncher(from) {
  const paths = [from, __dirname, process.cwd()].filter(Boolean)
  for (const path of paths) {
    try {
      return require.resolve('@openai/codex/package.json', { paths: [path] })
    } catch {
      // next place
    }
  }
  throw new Error(
    `@openai/codex is not installed where ${paths.join(', ')} can see it: add it as a devDependency (npm i -D @openai/codex) to run the real Codex CLI`,
  )
}

/**
 * Absolute path of the native `codex` binary of the installed `@openai/codex`: resolve the
 * launcher package, then its platform package from that package's own directory (pnpm keeps
 * it there, not at the top level), then `vendor/<triple>/bin/codex`.
 * @param {{ from?: string }} [options] a directory to resolve `@openai/codex` from first
 */
function codexBinaryPath(options = {}) {
  const key = `${process.platform}-${process.arch}`
  const target = TARGETS[key]
  if (!target) throw new Error(`no Codex binary is published for ${key}`)
  const launcherDir = dirname(realpathSync(resolveLauncher(options.from)))
  let platformPkg
  try {
    platformPkg = require.resolve(`${target.pkg}/package.json`, { paths: [launcherDir] })
  } catch (err) {
    throw new Error(`cannot resolve ${target.pkg} from ${launcherDir}: ${err instanceof Error ? err.message : err}`)
  }
  const exe = process.platform === 'win32' ? 'codex.exe' : 'codex'
  const binary = join(dirname(realpathSync(platformPkg)), 'vendor', target.triple, 'bin', exe)
  if (!existsSync(binary)) throw new Error(`the Codex binary is missing at ${binary}`)
  return binary
}

/** The version a `codex --version` prints (`codex-cli 0.171.0` → `0.171.0`). */
function codexVersion(bin) {
  const out = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()
  const match = /(\d+\.\d+\.\d+\S*)/.exec(out)
  if (!match) throw new Error(`${bin} --version printed no version: ${out}`)
  return match[1]
}

let underTest = null

/**
 * The Codex the real-binary suites run: `RENNET_TEST_CODEX_BIN` (an absolute path to a native
 * binary; the compatibility suite sets it to each version of its matrix), else the pinned
 * devDependency. Its version is asked once.
 * @returns {{ path: string, version: string }}
 */
function codexUnderTest() {
  const path = process.env.RENNET_TEST_CODEX_BIN || codexBinaryPath()
  if (underTest?.path !== path) underTest = { path, version: codexVersion(path) }
  return underTest
}

/**
 * The config.toml that selects the loopback mock provider (reference §13.1), with `extra` (more
 * TOML) merged into it: a table the kit writes too (`[features]`, `[model_providers.mock]`) gets
 * the extra keys (the extra value wins where both set one), never a second table of the same
 * name, which Codex refuses by falling back to its defaults. Extra text that is not TOML is a
 * TypeError naming what is wrong.
 */
function renderConfigToml({ baseUrl, model = 'mock-model', extra = '' }) {
  const base = kitConfigToml({ baseUrl, model })
  if (typeof extra !== 'string') throw new TypeError('extraConfig must be TOML text')
  if (!extra.trim()) return base
  const TOML = require('smol-toml')
  let added
  try {
    added = TOML.parse(extra)
  } catch (error) {
    throw new TypeError(`extraConfig is not valid TOML: ${error instanceof Error ? error.message : error}`)
  }
  return TOML.stringify(mergeTables(TOML.parse(base), added)).replace(/\n*$/, '\n')
}

const isTable = (value) => value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)

/** `added` over `base`, table by table (a value of `added` wins; tables merge key by key). */
function mergeTables(base, added) {
  const out = { ...base }
  for (const [key, value] of Object.entries(added)) out[key] = isTable(out[key]) && isTable(value) ? mergeTables(out[key], value) : value
  return out
}

function kitConfigToml({ baseUrl, model }) {
  return [
    `model = ${JSON.stringify(model)}`,
    'model_provider = "mock"',
    '',
    '[model_providers.mock]',
    'name = "mock"',
    `base_url = ${JSON.stringify(baseUrl)}`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[features]',
    'plugins = false',
    'unbounded_connection_retries = false',
    '',
  ].join('\n')
}

/** sha256 of a file's bytes, or null when it does not exist (a home's config fingerprint). */
function hashFile(path) {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex')
  } catch {
    return null
  }
}

function tempDir(prefix) {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)))
}

/**
 * The environment that confines a Codex child to temporary homes: merged over the inherited
 * one, it also blanks variables that would make the child reach outside (API keys, BASH_ENV)
 * and keeps loopback off any proxy.
 * @param {string} home
 * @param {string} codexHome
 * @returns {Record<string, string>}
 */
function isolatedEnv(home, codexHome) {
  return {
    HOME: home,
    CODEX_HOME: codexHome,
    OPENAI_API_KEY: '',
    CODEX_API_KEY: '',
    OPENAI_BASE_URL: '',
    BASH_ENV: '',
    ENV: '',
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  }
}

/**
 * A temporary root holding a fresh `home` and `codex-home` (both present: Codex exits when
 * CODEX_HOME is missing), `codex-home/config.toml` written as `configText`, and the removal of
 * it all (retried: on Windows a child that just ended may still hold a file open for a moment).
 */
function freshHomes(prefix, configText) {
  const root = tempDir(prefix)
  const home = join(root, 'home')
  const codexHome = join(root, 'codex-home')
  mkdirSync(home, { recursive: true })
  mkdirSync(codexHome, { recursive: true })
  const configPath = join(codexHome, 'config.toml')
  writeFileSync(configPath, configText)
  const cleanup = () => rmSync(root, { recursive: true, force: true, maxRetries: 10 })
  return { root, home, codexHome, configPath, cleanup }
}

/**
 * A fresh HOME and CODEX_HOME (both temporary) with config.toml pointing at `baseUrl`.
 * `env` is what to pass to runTurn: it is merged over the inherited environment, so it
 * also blanks variables that would make the child reach outside (API keys, BASH_ENV) and
 * keeps loopback off any proxy.
 */
function createCodexHome({ baseUrl, model, extraConfig = '', prefix = 'rennet-codex-' }) {
  const configText = renderConfigToml({ baseUrl, model, extra: extraConfig })
  const { root, home, codexHome, configPath, cleanup } = freshHomes(prefix, configText)
  const env = {
    ...isolatedEnv(home, codexHome),
    // Deterministic git inside the child (commands the scripted model runs).
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
  }
  const initialHash = hashFile(configPath)
  return {
    root,
    home,
    codexHome,
    configPath,
    configText,
    env,
    /** The binary under test (`codexUnderTest()`, looked up on first read). */
    get codexPath() {
      return codexUnderTest().path
    },
    /** sha256 of config.toml as written. */
    initialHash,
    /** sha256 of config.toml now. */
    configHash: () => hashFile(configPath),
    /** config.toml as it is now (for failure messages). */
    readConfig: () => readFileSync(configPath, 'utf8'),
    cleanup,
  }
}

/**
 * A fresh HOME and CODEX_HOME (both temporary, both present: Codex exits when CODEX_HOME is
 * missing) for a Codex nobody is logged in to: the default OpenAI provider, no login, no API key
 * (`env` blanks the variables Codex reads one from). `account/read` reports
 * `{ account: null, requiresOpenaiAuth: true }`, so a turn fails `AUTH_REQUIRED` before its
 * thread and `readAccount` says so. `config` is its config.toml (default empty).
 */
function createLoggedOutHome({ prefix = 'rennet-logged-out-', config = '' } = {}) {
  const homes = freshHomes(prefix, config)
  return { ...homes, env: isolatedEnv(homes.home, homes.codexHome) }
}

/**
 * A temporary directory initialised as a git repository (so the trust-write hazard of a
 * writable thread sandbox is real), with one committed file.
 */
function createGitCwd({ prefix = 'rennet-cwd-', files = { 'README.md': 'scratch repo for a Codex turn\n' } } = {}) {
  const path = tempDir(prefix)
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(path, name)), { recursive: true })
    writeFileSync(join(path, name), text)
  }
  const gitEnv = {
    ...process.env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'rennet',
    GIT_AUTHOR_EMAIL: 'rennet@example.invalid',
    GIT_COMMITTER_NAME: 'rennet',
    GIT_COMMITTER_EMAIL: 'rennet@example.invalid',
  }
  const git = (...args) => execFileSync('git', args, { cwd: path, env: gitEnv, stdio: 'ignore' })
  git('init', '-q')
  git('add', '-A')
  git('commit', '-q', '-m', 'init', '--allow-empty')
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true, maxRetries: 10 }) }
}

module.exports = {
  PINNED_CODEX_VERSION,
  codexBinaryPath,
  codexVersion,
  codexUnderTest,
  renderConfigToml,
  isolatedEnv,
  createCodexHome,
  createLoggedOutHome,
  createGitCwd,
}
