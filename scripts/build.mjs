#!/usr/bin/env node
// pnpm build / build:debug: `napi build` (the addon, binding.js, binding.d.ts), then the
// host-death guard next to the addon, where the addon looks for it and where a platform
// package carries it. Arguments go on to `napi build` (`--release`, `--target <triple>`,
// `--use-napi-cross`, `-x`, `-o <dir>`…). `napi build` builds every crate of the workspace in
// one cargo run, the guard included, with the same toolchain and linker: it is copied, not
// built again. Windows needs no guard (Job Objects end a turn with its host).
import { execFileSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const args = process.argv.slice(2)
const napi = join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')
execFileSync(process.execPath, [napi, 'build', '--platform', '--js', 'binding.js', '--dts', 'binding.d.ts', ...args], {
  cwd: root,
  stdio: 'inherit',
})

const valueOf = (...names) => {
  const i = args.findIndex((a) => names.includes(a))
  return i >= 0 ? args[i + 1] : undefined
}
const triple =
  valueOf('--target', '-t') ||
  process.env.CARGO_BUILD_TARGET ||
  /^host: (.+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))[1]
if (triple.includes('windows')) {
  console.log('rennet-codex-guard: none for Windows (Job Objects end a turn with its host)')
  process.exit(0)
}
const profile = args.includes('--release') || args.includes('-r') ? 'release' : 'debug'
const cargo = (cargoArgs, options = {}) => execFileSync('cargo', cargoArgs, { cwd: root, encoding: 'utf8', ...options })
const { target_directory } = JSON.parse(cargo(['metadata', '--format-version', '1', '--no-deps']))
const built = join(target_directory, triple, profile, 'rennet-codex-guard')
if (!existsSync(built)) {
  // `napi build` was told to build one package only.
  cargo(['build', '-p', 'rennet-codex-guard', '--target', triple, ...(profile === 'release' ? ['--release'] : [])], {
    stdio: 'inherit',
  })
}
const placed = join(resolve(root, valueOf('--output-dir', '-o') ?? '.'), 'rennet-codex-guard')
copyFileSync(built, placed)
chmodSync(placed, 0o755)
console.log(`rennet-codex-guard: ${placed}`)
