#!/usr/bin/env node
// The property-based sweep of the public API (__test__/sweep) at a larger size than CI runs it:
//
//   pnpm sweep                 5× the CI size (≥ 1,500 runTurn option objects), a fresh seed
//   pnpm sweep --runs 10       10× the CI size
//   pnpm sweep --seed 42       a given seed (a failure prints the seed and path that reproduce it)
//
// Needs the built addon (pnpm build).
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const args = process.argv.slice(2)
const flag = (name, fallback) => {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : fallback
}
const runs = flag('--runs', '5')
const seed = flag('--seed', String(Date.now() % 2 ** 31))
console.log(`sweep: ${runs}× the CI size, seed ${seed}`)
const result = spawnSync(process.execPath, [join(root, 'scripts', 'test.mjs'), '__test__/sweep'], {
  stdio: 'inherit',
  cwd: root,
  env: { ...process.env, RENNET_SWEEP_RUNS: runs, RENNET_SWEEP_SEED: seed },
})
process.exit(result.status ?? 1)
