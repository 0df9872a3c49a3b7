#!/usr/bin/env node
// Runs the vitest suites. Where the machine allows it (Linux, `unshare -n` permitted), they run
// in a fresh network namespace whose only interface is loopback, so no test can reach beyond
// 127.0.0.1 even by mistake (scripts/netns.mjs). Elsewhere they run as they are.
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { canIsolate, runIsolated } from './netns.mjs'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs')
const isolate = canIsolate()
console.log(isolate ? 'tests: running in a loopback-only network namespace' : 'tests: no network namespace available here; running with the host network')
const result = runIsolated([process.execPath, vitest, 'run', ...process.argv.slice(2)], { stdio: 'inherit', cwd: root }, isolate)
process.exit(result.status ?? 1)
