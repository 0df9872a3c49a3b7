// The Codex CLI the schema tooling talks to: RENNET_CODEX_BIN when set, else the pinned
// `@openai/codex` devDependency. Generation runs under a throwaway HOME/CODEX_HOME so that
// neither the user's configuration nor their credentials are read.

import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { codexBinaryPath, codexVersion } from '../testing/codex-home.js'

export { codexVersion }

export function codexCli() {
  return process.env.RENNET_CODEX_BIN || codexBinaryPath()
}

/**
 * Runs `codex app-server <subcommand> --out <dir> [args…]` into a fresh temporary directory and
 * hands it to `use`; the directory is removed afterwards.
 */
export function withGenerated(bin, subcommand, use, args = []) {
  const root = mkdtempSync(join(tmpdir(), 'rennet-schema-'))
  try {
    const home = join(root, 'home')
    const out = join(root, 'out')
    mkdirSync(join(home, '.codex'), { recursive: true })
    execFileSync(bin, ['app-server', subcommand, '--out', out, ...args], {
      env: { ...process.env, HOME: home, CODEX_HOME: join(home, '.codex'), USERPROFILE: home },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    return use(out)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
