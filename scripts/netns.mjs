// A loopback-only network namespace for anything that runs a real Codex: where the machine
// allows it (Linux, `unshare -n` permitted, not switched off by RENNET_TEST_NO_NETNS=1), a
// command runs in a fresh namespace whose only interface is loopback, so nothing it starts can
// reach beyond 127.0.0.1 even by mistake. Elsewhere it runs as it is.

import { spawnSync } from 'node:child_process'

export function canIsolate(env = process.env) {
  if (process.platform !== 'linux' || env.RENNET_TEST_NO_NETNS === '1') return false
  const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' })
  return probe.status === 0
}

/**
 * Runs `argv` (program and arguments) to completion: inside a fresh namespace when `isolate`
 * (by default: when the machine allows it), else as it is. Returns spawnSync's result.
 * @param {string[]} argv
 * @param {import('node:child_process').SpawnSyncOptions} [options]
 */
export function runIsolated(argv, options = {}, isolate = canIsolate(options.env ?? process.env)) {
  if (!isolate) return spawnSync(argv[0], argv.slice(1), options)
  const quoted = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ')
  return spawnSync('unshare', ['-n', 'sh', '-c', `ip link set lo up && exec ${quoted}`], options)
}
