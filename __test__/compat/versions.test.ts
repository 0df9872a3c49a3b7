// scripts/codex-versions.mjs: the matrix, the command-line words that pick versions, and where
// the cache is. No install happens here (the tests run without a network).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

// @ts-expect-error plain ESM scripts without declarations
import { CI_VERSIONS, MATRIX, cacheDir, cachedCodex, ensureCodex, versionsFromArgs } from '../../scripts/codex-versions.mjs'
import { codexBinaryPath, PINNED_CODEX_VERSION } from '../../testing/codex-home.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('the codex-cli version matrix', () => {
  it('runs from the oldest accepted version to the pinned one, in order; CI takes both ends', () => {
    expect(MATRIX[0]).toBe('0.150.0')
    expect(MATRIX.at(-1)).toBe(PINNED_CODEX_VERSION)
    for (const v of ['0.160.0', '0.162.0']) expect(MATRIX).toContain(v)
    const key = (v: string) => v.split('.').map(Number).reduce((n, part) => n * 1000 + part, 0)
    expect([...MATRIX].sort((a, b) => key(a) - key(b))).toEqual(MATRIX)
    expect(CI_VERSIONS).toEqual([MATRIX[0], PINNED_CODEX_VERSION])
  })

  it('picks versions from the command line', () => {
    expect(versionsFromArgs([])).toEqual({ versions: MATRIX, rest: [] })
    expect(versionsFromArgs(['--ci'])).toEqual({ versions: CI_VERSIONS, rest: [] })
    expect(versionsFromArgs(['--versions', '0.160.0,0.171.0', '--markdown'])).toEqual({ versions: ['0.160.0', '0.171.0'], rest: ['--markdown'] })
    expect(versionsFromArgs(['0.158.0', '--versions=0.158.0'])).toEqual({ versions: ['0.158.0'], rest: [] })
    expect(() => versionsFromArgs(['--versions', 'latest'])).toThrow(/not a codex-cli release version: "latest"/)
  })

  it('keeps the cache where RENNET_CODEX_CACHE, else XDG_CACHE_HOME, else ~/.cache says', () => {
    expect(cacheDir({ RENNET_CODEX_CACHE: '/x/cache', XDG_CACHE_HOME: '/y' })).toBe('/x/cache')
    expect(cacheDir({ XDG_CACHE_HOME: '/y' })).toBe('/y/rennet-codex')
    expect(cacheDir({ HOME: '/h' })).toMatch(/[\\/]\.cache[\\/]rennet-codex$/)
  })

  it('finds nothing in an empty cache, and serves the pinned version from the devDependency', () => {
    const cache = mkdtempSync(join(tmpdir(), 'rennet-codex-cache-'))
    dirs.push(cache)
    mkdirSync(join(cache, 'codex-cli'))
    const env = { RENNET_CODEX_CACHE: cache }
    expect(cachedCodex('0.150.0', env)).toBeNull()
    expect(ensureCodex(PINNED_CODEX_VERSION, { env })).toEqual({ version: PINNED_CODEX_VERSION, path: codexBinaryPath(), source: 'devDependency' })
    expect(() => ensureCodex('0.150', { env })).toThrow(TypeError)
  })
})
