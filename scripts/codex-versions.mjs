// The codex-cli versions this package is proven against, and the one cache they are installed
// into from the npm registry (never as devDependencies of the repository).
//
// Cache: RENNET_CODEX_CACHE, else $XDG_CACHE_HOME/rennet-codex, else ~/.cache/rennet-codex.
// The pinned version is the devDependency's binary and is not installed again. Each other
// version lives in `<cache>/codex-cli/<version>/` as a plain npm install of
// `@openai/codex@<version>` (the launcher and this platform's binary package). An install goes
// to a scratch directory beside it and is renamed into place only after its binary answered
// `--version` with the right version, so a present directory is a complete install and is
// reused as it is; concurrent installs of the same version do not disturb each other.

import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { codexBinaryPath, codexVersion, PINNED_CODEX_VERSION } from '../testing/codex-home.js'

/**
 * The compatibility matrix, oldest first: the oldest version discovery accepts, one between
 * it and 0.160.0, the versions seed 003 was measured on (0.160.0, 0.162.0), one between those
 * and the pinned newest, and the pinned newest (the devDependency).
 */
export const MATRIX = ['0.150.0', '0.155.0', '0.160.0', '0.162.0', '0.166.0', PINNED_CODEX_VERSION]

/** What CI runs: the oldest and the newest of the matrix. */
export const CI_VERSIONS = [MATRIX[0], MATRIX.at(-1)]

const VERSION = /^\d+\.\d+\.\d+$/

export function cacheDir(env = process.env) {
  if (env.RENNET_CODEX_CACHE) return resolve(env.RENNET_CODEX_CACHE)
  return join(env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homedir(), '.cache'), 'rennet-codex')
}

function checkVersion(version) {
  if (!VERSION.test(version)) throw new TypeError(`not a codex-cli release version: ${JSON.stringify(version)} (want e.g. 0.171.0)`)
}

/** The native binary of `version` in the cache, or null when it is not installed there. */
export function cachedCodex(version, env = process.env) {
  checkVersion(version)
  const dir = join(cacheDir(env), 'codex-cli', version)
  if (!existsSync(dir)) return null
  return codexBinaryPath({ from: dir })
}

/**
 * The native binary of `version`: the pinned devDependency's for its version, else from the
 * cache, installed there first when missing. `log` hears what is being done (an install takes
 * a while: each version is ~300 MB).
 * @returns {{ version: string, path: string, source: 'devDependency' | 'cache' | 'installed' }}
 */
export function ensureCodex(version, { env = process.env, log = () => {} } = {}) {
  checkVersion(version)
  if (version === PINNED_CODEX_VERSION) return { version, path: codexBinaryPath(), source: 'devDependency' }
  const present = cachedCodex(version, env)
  if (present) return { version, path: present, source: 'cache' }
  const parent = join(cacheDir(env), 'codex-cli')
  mkdirSync(parent, { recursive: true })
  const scratch = mkdtempSync(join(parent, `.install-${version}-`))
  try {
    log(`installing @openai/codex@${version} into ${parent}`)
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    execFileSync(
      npm,
      ['install', '--prefix', scratch, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', `@openai/codex@${version}`],
      { stdio: ['ignore', 'ignore', 'inherit'], shell: process.platform === 'win32' },
    )
    const reported = codexVersion(codexBinaryPath({ from: scratch }))
    if (reported !== version) throw new Error(`@openai/codex@${version} installed a binary that reports ${reported}`)
    try {
      renameSync(scratch, join(parent, version))
    } catch (error) {
      // Another install of the same version got there first: use that one.
      if (!cachedCodex(version, env)) throw error
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  return { version, path: cachedCodex(version, env), source: 'installed' }
}

/**
 * Versions from command-line words: `--ci` (CI_VERSIONS), `--versions a,b`, bare versions, or
 * none (the whole MATRIX). Returns the versions and the words left over.
 */
export function versionsFromArgs(argv) {
  const versions = []
  const rest = []
  let ci = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--ci') ci = true
    else if (arg === '--versions') versions.push(...String(argv[++i] ?? '').split(','))
    else if (arg.startsWith('--versions=')) versions.push(...arg.slice('--versions='.length).split(','))
    else if (VERSION.test(arg)) versions.push(arg)
    else rest.push(arg)
  }
  const chosen = [...(ci ? CI_VERSIONS : []), ...versions.filter(Boolean)]
  for (const v of chosen) checkVersion(v)
  return { versions: chosen.length ? [...new Set(chosen)] : [...MATRIX], rest }
}
