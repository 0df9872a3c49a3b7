// The yardstick: the least a plain Node client of `codex app-server` does per event, and what
// the bench's ratios are taken against (throughput, the paced latency, the real-CLI edges).
// One child spawned in its own process group; `readline` over its stdout; `JSON.parse` of every
// line; the owned thread and turn routed, other threads' and turns' frames set aside as
// `passthrough`; one event object per frame in this package's shapes; a FIFO drained by an async
// generator, with the child's stdout paused while more than HIGH_WATER events wait. The
// terminal event comes at `turn/completed` (its `finalMessage` is the text of the last
// completed agent message item, so no text is joined per delta), and the group is killed when
// the generator ends.
//
// It matches, event for event in the work it does, the yardstick client the issue measured
// with (spawn, readline, JSON.parse, routing, an async generator; about 120 lines): a client
// that does more per event flatters the package. `node bench/run.mjs --only yardstickCheck`
// with BENCH_YARDSTICK=<that client's path> measures the two side by side (BENCHMARKS.md).
// The heavier reference of baseline-client.mjs (its handshake, server-request replies, usage
// baselines, abort) is reported beside this one, never instead of it.

import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

const HIGH_WATER = 4096
const LOW_WATER = 512

const usageOf = (b) => ({ input: b.inputTokens, cacheRead: b.cachedInputTokens, output: b.outputTokens, reasoning: b.reasoningOutputTokens, total: b.totalTokens })
const statusOf = (status) => (status === 'completed' ? 'completed' : status === 'interrupted' ? 'cancelled' : 'failed')

/**
 * Runs one turn on a fresh `codex app-server` and yields its events; the last is the terminal.
 * @param {{prompt: string, cwd: string, codexPath: string, env?: Record<string, string>}} options
 */
export async function* yardstickTurn({ prompt, cwd, codexPath, env }) {
  const child = spawn(codexPath, ['app-server'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env }, detached: true })
  child.stderr.resume()
  const lines = createInterface({ input: child.stdout, crlfDelay: Infinity })

  // Events waiting for the consumer: taken from `head` on, the array cut down now and then
  // (Array#shift on a long array copies it).
  let queue = []
  let head = 0
  let wake = null
  let paused = false
  let ended = false
  const push = (event) => {
    queue.push(event)
    if (!paused && queue.length - head > HIGH_WATER) {
      paused = true
      lines.pause()
    }
    if (wake) {
      const w = wake
      wake = null
      w()
    }
  }
  const take = () => {
    if (head === queue.length) return undefined
    const event = queue[head++]
    if (head > 1024 && head * 2 > queue.length) {
      queue = queue.slice(head)
      head = 0
    }
    if (paused && queue.length - head < LOW_WATER) {
      paused = false
      lines.resume()
    }
    return event
  }

  let nextId = 1
  const pending = new Map()
  const send = (message) => child.stdin.write(JSON.stringify(message) + '\n')
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++
      pending.set(id, { resolve, reject })
      send({ id, method, params })
    })

  let threadId = null
  let turnId = null
  let finalMessage = null
  let usage = null
  const end = (status, failure = null) => {
    if (ended) return
    ended = true
    push({ type: 'terminal', status, threadId, turnId, finalMessage, usage, failure })
  }

  lines.on('line', (line) => {
    if (ended) return
    let msg
    try {
      msg = JSON.parse(line)
    } catch {
      end('failed', { source: 'parse', message: 'malformed line' })
      return
    }
    if (msg.method === undefined && msg.id !== undefined) {
      const waiting = pending.get(msg.id)
      if (waiting === undefined) return push({ type: 'passthrough', reason: 'unknownResponse', message: msg })
      pending.delete(msg.id)
      if (msg.error) waiting.reject(Object.assign(new Error(msg.error.message), { rpc: msg.error }))
      else waiting.resolve(msg.result)
      return
    }
    if (msg.id !== undefined) {
      // A server request: refused, and said so.
      send({ id: msg.id, error: { code: -32601, message: `unsupported: ${msg.method}` } })
      return push({ type: 'serverRequest', method: msg.method, id: msg.id, reply: 'methodError' })
    }
    const p = msg.params || {}
    if (threadId && p.threadId && p.threadId !== threadId) return push({ type: 'passthrough', reason: 'foreignThread', message: msg })
    if (turnId && p.turnId && p.turnId !== turnId) return push({ type: 'passthrough', reason: 'foreignTurn', message: msg })
    switch (msg.method) {
      case 'item/agentMessage/delta':
        return push({ type: 'messageDelta', itemId: p.itemId, delta: p.delta })
      case 'item/commandExecution/outputDelta':
        return push({ type: 'commandOutput', itemId: p.itemId, delta: p.delta })
      case 'turn/started':
        turnId = p.turn.id
        return push({ type: 'turnStarted', threadId, turnId })
      case 'item/started':
        return push({ type: 'itemStarted', item: p.item })
      case 'item/completed':
        if (p.item?.type === 'agentMessage') finalMessage = p.item.text
        return push({ type: 'itemCompleted', item: p.item })
      case 'thread/tokenUsage/updated':
        usage = usageOf(p.tokenUsage.total)
        return push({ type: 'usage', turn: usage, thread: usage, contextWindow: p.tokenUsage.modelContextWindow ?? null })
      case 'turn/completed':
        if (turnId && p.turn?.id !== turnId) return push({ type: 'passthrough', reason: 'foreignTurn', message: msg })
        return end(statusOf(p.turn.status), p.turn.error ? { source: 'turn', message: p.turn.error.message } : null)
      default:
        return push({ type: 'native', method: msg.method, params: p })
    }
  })
  child.on('exit', () => end('failed', { source: 'exit', message: 'codex app-server exited' }))

  try {
    await request('initialize', { clientInfo: { name: 'yardstick', version: '0.0.0' } })
    send({ method: 'initialized', params: {} })
    const started = await request('thread/start', { cwd, approvalPolicy: 'never' })
    threadId = started.thread.id
    push({ type: 'threadStarted', threadId, resumed: false })
    const turn = { threadId, input: [{ type: 'text', text: prompt }], cwd, approvalPolicy: 'never', sandboxPolicy: { type: 'dangerFullAccess' } }
    request('turn/start', turn).then(
      (r) => (turnId ??= r.turn.id),
      (e) => end('failed', { source: 'jsonrpc', message: e.message }),
    )
    for (;;) {
      const event = take()
      if (event === undefined) {
        await new Promise((resolve) => (wake = resolve))
        continue
      }
      yield event
      if (event.type === 'terminal') return
    }
  } finally {
    child.stdin.end()
    try {
      process.kill(-child.pid, 'SIGKILL')
    } catch {}
  }
}
