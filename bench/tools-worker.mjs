// One measured turn with app tools in a fresh Node process: the pinned `codex app-server`
// against a loopback mock model (in this process) that calls the app's tool `calls` times, one
// call per model response, then answers. The client is this package (`runTurn({ tools })`) or
// the plain client below answering the same calls with the same function. For each call: from
// the moment the app's function is called (the package's `execute`, the plain client's handler
// of `item/tool/call`) to the moment the model's next request (the one carrying that call's
// output) arrives at the mock, both on the monotonic clock of this process; and the way in, from
// the mock's last write of the response making the call to the function being called. Prints
// one JSON line.
//
//   node tools-worker.mjs '{"client":"addon"|"plain","calls":5}'

import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { monotonicMs } from './common.mjs'

const { client, calls } = JSON.parse(process.argv[2])
const { start, messageResponse, toolCallResponse, functionCallOutputs } = await import('../testing/mock-responses.js')
const { createCodexHome, createGitCwd } = await import('../testing/codex-home.js')

const TOOL = {
  name: 'lookup',
  description: 'Looks a thing up in the app',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
}
/** The app's function, the same for both clients; each call's start time by its argument. */
const calledAt = new Map()
const lookup = ({ q }) => {
  calledAt.set(q, monotonicMs())
  return `found ${q}`
}

// The package is loaded before anything is measured (the plain client has nothing to load).
const api = client === 'addon' ? await import(process.env.BENCH_ADDON || '../index.js') : null

/** This package: the tool as an option of runTurn. */
async function addonTurn({ cwd, codexPath, env }) {
  const { runTurn } = api.default ?? api
  const turn = runTurn({
    prompt: 'Look things up.',
    cwd,
    codexPath,
    env,
    tools: { [TOOL.name]: { description: TOOL.description, inputSchema: TOOL.inputSchema, execute: (args) => lookup(args) } },
  })
  const terminal = await turn.outcome
  return terminal.status === 'completed' ? null : `the turn ended ${terminal.status}: ${terminal.failure?.message}`
}

/**
 * The plain client: spawn, readline, JSON.parse per line, `initialize` with the experimental
 * API, `thread/start` with the tool as a dynamic tool, `turn/start`, `item/tool/call` answered
 * with the function's text, every other server request refused, the group killed at
 * `turn/completed`. No validation, no deadline, no abort.
 */
function plainTurn({ cwd, codexPath, env }) {
  const child = spawn(codexPath, ['app-server'], { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'ignore'], detached: true })
  const exited = new Promise((resolve) => child.on('exit', resolve))
  const send = (message) => child.stdin.write(JSON.stringify(message) + '\n')
  let next = 1
  const waiting = new Map()
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = next++
      waiting.set(id, resolve)
      send({ id, method, params })
    })
  let ended
  const completed = new Promise((resolve) => (ended = resolve))
  createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
    const message = JSON.parse(line)
    if (message.method === 'item/tool/call' && message.id !== undefined) {
      const text = lookup(message.params.arguments)
      send({ id: message.id, result: { contentItems: [{ type: 'inputText', text }], success: true } })
    } else if (message.method !== undefined && message.id !== undefined) {
      send({ id: message.id, error: { code: -32601, message: 'not supported' } })
    } else if (message.method === undefined && waiting.has(message.id)) {
      waiting.get(message.id)(message)
      waiting.delete(message.id)
    } else if (message.method === 'turn/completed') {
      ended(message.params.turn.status)
    }
  })
  return (async () => {
    try {
      await request('initialize', { clientInfo: { name: 'plain', title: null, version: '0.1.0' }, capabilities: { experimentalApi: true } })
      send({ method: 'initialized' })
      const thread = await request('thread/start', { cwd, dynamicTools: [{ type: 'function', ...TOOL }] })
      if (thread.error) return `thread/start: ${thread.error.message}`
      const turn = await request('turn/start', { threadId: thread.result.thread.id, input: [{ type: 'text', text: 'Look things up.' }] })
      if (turn.error) return `turn/start: ${turn.error.message}`
      const status = await completed
      return status === 'completed' ? null : `the turn ended ${status}`
    } finally {
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {}
      await exited
    }
  })()
}

const errors = []
const scenario = [...Array.from({ length: calls }, (_, i) => toolCallResponse(TOOL.name, { q: `q${i}` }, { callId: `c${i}` })), messageResponse('Done.')]
const mock = await start(scenario)
const home = createCodexHome({ baseUrl: mock.url })
const cwd = createGitCwd()
const cpu = process.cpuUsage()
const started = performance.now()
try {
  const problem = await (client === 'addon' ? addonTurn : plainTurn)({ cwd: cwd.path, codexPath: home.codexPath, env: home.env })
  if (problem) errors.push(problem)
} catch (error) {
  errors.push(String(error?.stack ?? error))
}
const wallMs = performance.now() - started
const used = process.cpuUsage(cpu)
// Per call: its start in the app → the arrival of the first request that carries its output
// (`gapsMs`, the measure); and, the other way, the mock's last write of the response
// that made the call → its start in the app (`inboundMs`: Codex reads the call, sends
// item/tool/call, the client routes it and checks the arguments).
const gapsMs = []
const inboundMs = []
for (let i = 0; i < calls; i++) {
  const made = mock.requests.find((r) => r.index === i)
  const carried = mock.requests.find((r) => functionCallOutputs(r.body).some((o) => o.call_id === `c${i}`))
  const at = calledAt.get(`q${i}`)
  if (!carried || at === undefined) errors.push(`call c${i}: ${at === undefined ? 'the app was never called' : 'no model request carried its output'}`)
  else gapsMs.push(carried.arrivedAtMs - at)
  if (made?.sent.length && at !== undefined) inboundMs.push(at - made.sent.at(-1).atMs)
}
await mock.close()
home.cleanup()
cwd.cleanup()
console.log(JSON.stringify({ gapsMs, inboundMs, wallMs, cpuMs: (used.user + used.system) / 1000, errors }))
