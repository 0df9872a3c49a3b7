// The reference the calls around turns are measured against (and checked against, in the real
// suite): the plain one-shot Node client anyone would write for one app-server request.
// `child_process.spawn`, `readline` over stdout, `JSON.parse` per line, `initialize`,
// `initialized`, the request(s), then stdin closed and the exit awaited. No deadlines, no
// abort, no process-tree ending, no guard.

import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

/**
 * Spawns `codexPath app-server` and sends `requests` ([method, params] pairs, in order, each
 * after the previous one's answer); resolves with their answers ({result} or {error}) once the
 * child has exited.
 */
export function oneShot({ codexPath, env, cwd, requests }) {
  const child = spawn(codexPath, ['app-server'], { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'ignore'] })
  const exited = new Promise((resolve) => child.on('exit', resolve))
  const lines = createInterface({ input: child.stdout })
  let next = 1
  const waiting = new Map()
  lines.on('line', (line) => {
    const message = JSON.parse(line)
    if (message.method !== undefined && message.id !== undefined) {
      // Nothing is granted.
      child.stdin.write(JSON.stringify({ id: message.id, error: { code: -32601, message: 'not supported' } }) + '\n')
    } else if (message.method === undefined && waiting.has(message.id)) {
      waiting.get(message.id)(message)
      waiting.delete(message.id)
    }
  })
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = next++
      waiting.set(id, resolve)
      child.stdin.write(JSON.stringify({ id, method, params }) + '\n')
    })
  return (async () => {
    await request('initialize', { clientInfo: { name: 'rennet', title: null, version: '0.1.0' } })
    child.stdin.write(JSON.stringify({ method: 'initialized' }) + '\n')
    const answers = []
    for (const [method, params] of requests) {
      const { result, error } = await request(method, params)
      answers.push(error ? { error } : { result })
    }
    child.stdin.end()
    await exited
    return answers
  })()
}
