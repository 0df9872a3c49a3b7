// discoverCodex against the real pinned `@openai/codex` (temporary HOME and CODEX_HOME): the
// native binary passes all three probes and no probe process is left behind; the npm launcher
// script, with no node on PATH, runs through the Node beside it.
import { readdirSync, readFileSync, readlinkSync, realpathSync, symlinkSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { codexBinaryPath, PINNED_CODEX_VERSION } from '../../testing/codex-home.js'
import { BOUND_MS, eventually } from '../support/procs.js'
import { discover, sandboxPerTest } from './fakes.js'

const sandbox = sandboxPerTest()
/** Live processes running `exe` whose environment mentions `marker`. */
function running(exe: string, marker: string): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readlinkSync(`/proc/${name}/exe`) !== exe) continue
      if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(marker)) out.push(Number(name))
    } catch {}
  }
  return out
}

describe('discoverCodex with the pinned Codex', () => {
  it('passes the executable, version and handshake probes', async () => {
    const sb = sandbox()
    const codex = codexBinaryPath()
    const codexHome = sb.dir('codex-home')
    const d = await discover({
      env: sb.env({
        RENNET_CODEX_BIN: codex,
        CODEX_HOME: codexHome,
        PATH: '/usr/bin:/bin',
        RENNET_DISCOVERY_TIMEOUT_MS: '20000',
      }),
    })
    expect(d.available).toBe(true)
    expect(d.selected).toEqual({
      path: codex,
      source: 'env',
      launcher: null,
      version: PINNED_CODEX_VERSION,
      usable: true,
      reason: null,
    })
    expect(await eventually(() => running(codex, codexHome).length === 0, BOUND_MS)).toBe(true)
  })

  it('runs the npm launcher through the node beside it when PATH has no node', async () => {
    const sb = sandbox()
    const require = createRequire(__filename)
    const launcher = join(dirname(require.resolve('@openai/codex/package.json')), 'bin', 'codex.js')
    // A global npm prefix as a GUI process would see it: bin/codex links to the launcher and
    // node sits beside it, but neither is on PATH.
    const bin = sb.dir('prefix/bin')
    symlinkSync(launcher, join(bin, 'codex'))
    symlinkSync(process.execPath, join(bin, 'node'))
    const d = await discover({
      env: sb.env({
        RENNET_CODEX_BIN: join(bin, 'codex'),
        CODEX_HOME: sb.dir('codex-home'),
        PATH: sb.dir('empty'),
        RENNET_DISCOVERY_TIMEOUT_MS: '20000',
      }),
    })
    expect(d.selected).toEqual({
      path: join(bin, 'codex'),
      source: 'env',
      launcher: [join(bin, 'node'), realpathSync(launcher)],
      version: PINNED_CODEX_VERSION,
      usable: true,
      reason: null,
    })
  })
})
