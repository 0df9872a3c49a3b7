// One measured call in a fresh Node process: this package's call, or the same requests through
// the plain one-shot client (baseline-call.mjs). Prints one JSON line: wall time from the call
// to its settling (the child has exited for both), and this process's CPU over it.
//
//   node calls-worker.mjs '{"client":"addon"|"baseline","call":"readAccount",…}'

import { oneShot } from './baseline-call.mjs'

const config = JSON.parse(process.argv[2])
const { client, call, codexPath, env, cwd, threadId } = config
const addon = client === 'addon' ? await import(process.env.BENCH_ADDON || '../index.js') : null
const api = addon?.default ?? addon

/** The requests each call makes, as the plain client sends them. */
const REQUESTS = {
  readAccount: [['account/read', {}], ['account/rateLimits/read', {}]],
  listModels: [['model/list', {}]],
  listThreads: [['thread/list', {}]],
  readThread: [['thread/read', { threadId }]],
  forkThread: [['thread/fork', { threadId, approvalPolicy: 'never', sandbox: 'read-only' }]],
}

const errors = []
const cpu = process.cpuUsage()
const started = performance.now()
let answer
if (api) {
  const args = call === 'readThread' || call === 'forkThread' ? [threadId, { codexPath, env, cwd }] : [{ codexPath, env, cwd }]
  answer = await api[call](...args).catch((error) => errors.push(`${error.code}: ${error.message}`))
} else {
  answer = await oneShot({ codexPath, env, cwd, requests: REQUESTS[call] })
  // A refused rate-limit read is an answer too (not logged in); any other error is not.
  for (const [i, a] of answer.entries()) if (a.error && !(call === 'readAccount' && i === 1)) errors.push(a.error.message)
}
const wallMs = performance.now() - started
const used = process.cpuUsage(cpu)
if (answer === undefined) errors.push('no answer')
console.log(JSON.stringify({ wallMs, cpuMs: (used.user + used.system) / 1000, errors }))
