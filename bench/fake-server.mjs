#!/usr/bin/env node
// A fast fake `codex app-server` for the benchmarks: the handshake of codex-cli 0.171.0, then
// one agent message streamed as `item/agentMessage/delta` notifications, then `turn/completed`.
// Unlike the hermetic suite's fake it logs nothing and pre-builds its stream, so that the
// server costs as little as possible next to the client being measured.
//
// Environment:
//   BENCH_EVENTS=N        deltas to send; 0 = until interrupted (default 1000)
//   BENCH_INTERVAL_MS=M   0 (default): the whole stream is pre-built and written as fast as
//                         the pipe takes it. M > 0: one delta every M ms whose text is the
//                         monotonic clock (process.hrtime, ns) at the moment it was written.
//   BENCH_MESSAGE_DELTAS=K  deltas per agent message (default: all in one message). Each
//                         message is item/started, its deltas, item/completed with its text.
//   BENCH_TAG=T           item ids are `msg_T.<n>`, so concurrent turns can prove no cross-talk
//   BENCH_INTERRUPT=M     `honour` (default): turn/interrupt ends the turn as interrupted;
//                         `ignore`: answer {} and keep streaming
//   BENCH_SIGTERM=ignore  the process ignores SIGTERM (with the two below: a wedged server
//                         that only SIGKILL ends)
//   BENCH_STDIN_EOF=ignore  EOF on stdin does not end the process (default: it exits, as
//                         codex app-server does)
//   BENCH_MIXED=1         before the deltas: a foreign thread's frame, a foreign turn's frame,
//                         a usage update, an unknown notification and a server request, so that
//                         both clients' routing and event shapes can be compared
//
// Deltas of the pre-built stream carry their sequence number as text ("0", "1", …).

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000)
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 0)
const TAG = process.env.BENCH_TAG ?? '1'
const HONOUR_INTERRUPT = (process.env.BENCH_INTERRUPT ?? 'honour') === 'honour'
const MIXED = process.env.BENCH_MIXED === '1'
const PER_MESSAGE = Number(process.env.BENCH_MESSAGE_DELTAS ?? 0) || Infinity

const THREAD_ID = `01a22f3f-395c-74e0-a930-${TAG.padStart(12, '0')}`
const TURN_ID = `01a22f3f-3972-7112-84af-${TAG.padStart(12, '0')}`
const itemId = (n) => `msg_${TAG}.${n}`

if (process.argv[2] !== 'app-server') {
  process.stderr.write(`error: unrecognized subcommand '${process.argv[2] ?? ''}'\n`)
  process.exit(2)
}

const out = process.stdout
const write = (frame) => out.write(JSON.stringify(frame) + '\n')
const notify = (method, params) => write({ method, params, emittedAtMs: Date.now() })
const ids = { threadId: THREAD_ID, turnId: TURN_ID }

function deltaLine(n, text) {
  return JSON.stringify({
    method: 'item/agentMessage/delta',
    params: { ...ids, itemId: itemId(n), delta: text },
    emittedAtMs: Date.now(),
  })
}

function agentMessage(n, text, completed) {
  return {
    type: 'agentMessage',
    id: itemId(n),
    text,
    phase: null,
    memoryCitation: null,
    startedAtMs: Date.now(),
    completedAtMs: completed ? Date.now() : null,
  }
}

function turnObject(status) {
  return { id: TURN_ID, items: [], itemsView: 'notLoaded', status, error: null, startedAt: null, completedAt: null, durationMs: null }
}

const itemStartedLine = (n) =>
  JSON.stringify({ method: 'item/started', params: { ...ids, item: agentMessage(n, '', false), startedAtMs: Date.now() }, emittedAtMs: Date.now() })
const itemCompletedLine = (n, text) =>
  JSON.stringify({
    method: 'item/completed',
    params: { ...ids, item: agentMessage(n, text, true), contentTokenCount: null, completedAtMs: Date.now() },
    emittedAtMs: Date.now(),
  })

/** The pre-built stream (everything after turn/started up to turn/completed), in chunks. */
function prebuild(count) {
  const chunks = []
  let lines = []
  let text = ''
  let message = 0
  for (let i = 0; i < count; i++) {
    if (i % PER_MESSAGE === 0) {
      if (i > 0) lines.push(itemCompletedLine(message++, text))
      lines.push(itemStartedLine(message))
      text = ''
    }
    const delta = String(i)
    text += delta
    lines.push(deltaLine(message, delta))
    if (lines.length >= 4096) {
      chunks.push(Buffer.from(lines.join('\n') + '\n'))
      lines = []
    }
  }
  lines.push(itemCompletedLine(message, text))
  chunks.push(Buffer.from(lines.join('\n') + '\n'))
  return chunks
}

const prebuilt = INTERVAL_MS === 0 && EVENTS > 0 ? prebuild(EVENTS) : null

let streaming = false
let ended = false

function drained() {
  return new Promise((resolve) => out.once('drain', resolve))
}

function complete(status) {
  if (ended) return
  ended = true
  notify('turn/completed', { threadId: THREAD_ID, turn: turnObject(status) })
}

function mixedPrelude() {
  const foreignThread = '01a22f3f-aaaa-7000-8000-000000000001'
  notify('item/agentMessage/delta', { threadId: foreignThread, turnId: 'other-turn', itemId: 'msg_x', delta: 'not ours' })
  notify('item/agentMessage/delta', { threadId: THREAD_ID, turnId: 'earlier-turn', itemId: 'msg_y', delta: 'not ours either' })
  const breakdown = { totalTokens: 30, inputTokens: 20, cachedInputTokens: 5, cacheWriteInputTokens: 0, outputTokens: 10, reasoningOutputTokens: 2 }
  notify('thread/tokenUsage/updated', { ...ids, tokenUsage: { total: breakdown, last: breakdown, modelContextWindow: 258400 } })
  notify('thread/status/changed', { threadId: THREAD_ID, status: { type: 'active', activeFlags: [] } })
  write({ method: 'item/commandExecution/requestApproval', id: 0, params: { ...ids, itemId: 'call_1', command: 'true' } })
  write({ id: 999, result: {} })
}

async function stream() {
  streaming = true
  notify('turn/started', { threadId: THREAD_ID, turn: turnObject('inProgress') })
  if (MIXED) mixedPrelude()
  if (prebuilt) {
    for (const chunk of prebuilt) {
      if (ended) return
      if (!out.write(chunk)) await drained()
    }
    complete('completed')
    return
  }
  // One message, one delta per tick; an interrupt may end it at any point.
  out.write(itemStartedLine(0) + '\n')
  let sent = 0
  let text = ''
  const tick = () => {
    if (ended) return
    if (EVENTS > 0 && sent === EVENTS) {
      out.write(itemCompletedLine(0, text) + '\n')
      complete('completed')
      return
    }
    const delta = INTERVAL_MS > 0 ? process.hrtime.bigint().toString() : String(sent)
    text += delta
    out.write(deltaLine(0, delta) + '\n')
    sent++
    setTimeout(tick, INTERVAL_MS)
  }
  tick()
}

function onMessage(msg) {
  if (msg.id === undefined || msg.method === undefined) return // notifications and replies
  switch (msg.method) {
    case 'initialize':
      write({ id: msg.id, result: { userAgent: `rennet/0.171.0 (Linux; x86_64) bench (${msg.params?.clientInfo?.name}; 0)`, platformFamily: 'unix', platformOs: 'linux' } })
      break
    case 'thread/start':
      write({ id: msg.id, result: { thread: { id: THREAD_ID, turns: [] }, model: 'gpt-fake', cwd: msg.params?.cwd ?? null } })
      break
    case 'turn/start':
      write({ id: msg.id, result: { turn: turnObject('inProgress') } })
      if (!streaming) stream()
      break
    case 'turn/interrupt':
      write({ id: msg.id, result: {} })
      if (HONOUR_INTERRUPT) complete('interrupted')
      break
    default:
      write({ id: msg.id, error: { code: -32601, message: `${msg.method} is not handled by the bench server` } })
  }
}

let pending = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', (data) => {
  pending += data
  let nl
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl)
    pending = pending.slice(nl + 1)
    if (line.trim()) onMessage(JSON.parse(line))
  }
})
// Like codex app-server: EOF on stdin ends the process (unless it plays a wedged server).
if (process.env.BENCH_STDIN_EOF !== 'ignore') process.stdin.on('end', () => process.exit(0))
if (process.env.BENCH_SIGTERM === 'ignore') process.on('SIGTERM', () => {})
