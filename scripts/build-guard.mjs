#!/usr/bin/env node
// Builds the host-death guard (crates/guard) for this machine and puts it next to the addon
// that `napi build` wrote into the package root, which is where the addon looks for it (a
// platform package carries it the same way). Windows needs no guard: Job Objects end with the
// host. Usage: node scripts/build-guard.mjs [--release]
import { execFileSync } from 'node:child_process'
import { chmodSync, copyFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
if (process.platform === 'win32') {
  console.log('rennet-codex-guard: not built on Windows (Job Objects end a turn with its host)')
  process.exit(0)
}
const release = process.argv.includes('--release')
const triple =
  process.env.CARGO_BUILD_TARGET ||
  /^host: (.+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))[1]
const run = (args) => execFileSync('cargo', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
run(['build', '-p', 'rennet-codex-guard', '--target', triple, ...(release ? ['--release'] : [])])
const { target_directory } = JSON.parse(run(['metadata', '--format-version', '1', '--no-deps']))
const built = join(target_directory, triple, release ? 'release' : 'debug', 'rennet-codex-guard')
const placed = join(root, 'rennet-codex-guard')
copyFileSync(built, placed)
chmodSync(placed, 0o755)
console.log(`rennet-codex-guard: ${placed}`)
