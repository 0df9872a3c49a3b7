#!/usr/bin/env node
// Runs the vitest suites. Where the machine allows it (Linux, `unshare -n` permitted), they run
// in a fresh network namespace whose only interface is loopback, so no test can reach beyond
// 127.0.0.1 even by mistake. Elsewhere they run as they are.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import path from 'node:path'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs')
const args = [vitest, 'run', ...process.argv.slice(2)]

function canIsolate() {
  if (process.platform !== 'linux' || process.env.RENNET_TEST_NO_NETNS === '1') return false
  const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' })
  return probe.status === 0
}

let result
if (canIsolate()) {
  console.log('tests: running in a loopback-only network namespace')
  const quoted = [process.execPath, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ')
  result = spawnSync('unshare', ['-n', 'sh', '-c', `ip link set lo up && exec ${quoted}`], {
    stdio: 'inherit',
    cwd: root,
  })
} else {
  console.log('tests: no network namespace available here; running with the host network')
  result = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root })
}
process.exit(result.status ?? 1)
