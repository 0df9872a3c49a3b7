'use strict'
// A loopback mock of the OpenAI Responses API for driving the real `codex app-server`: part of
// `@rennet/codex/testing`, and what this package's own real-Codex suites, `pnpm demo` and the
// bench use. CommonJS, so that it loads from `require` and `import` alike. Types:
// mock-responses.d.ts.
//
// A scenario is a list of scripted responses, one per `POST /v1/responses`, in order:
//   - an array of SSE event objects          → 200 text/event-stream, each sent as `data: <json>\n\n`, then end
//   - sse(events, { delayMs })               → same, with a pause before each event (a number, or
//                                              (event, index) => ms to pace events one by one)
//   - httpError(status, body)                → plain HTTP error with a JSON body (no SSE)
//   - hang(events)                           → sends the events, then keeps the stream open until
//                                              the client disconnects or the server closes
//   - closeEarly(events)                     → sends the events, then ends the body (no response.completed)
//   - (req) => response                      → computed from the recorded request
// A request beyond the script gets HTTP 400 with a message naming the request index, so that an
// unexpected extra model call surfaces verbatim as the turn's failure message.
//
// An SSE body may hold `checkpoint(fn)` among its events: the mock calls fn when it gets there
// and goes on when fn's promise settles (to hold a stream until the test releases it, or to
// tell the test that a stream now hangs).
//
// Each recorded request carries times on the monotonic clock (`monotonicMs()`, the same clock
// in every process of the machine), so that another process can measure against them: when it
// arrived, when each SSE event was written, when its connection closed.
//
// Wire facts are from codex-cli 0.171.0 (reference/app-server-protocol.md §13).

const { createServer } = require('node:http')

/** @typedef {Record<string, unknown>} SseEvent */

const KIND = Symbol('mockResponseKind')

/** Milliseconds on the monotonic clock (process.hrtime), comparable between processes. */
function monotonicMs() {
  return Number(process.hrtime.bigint()) / 1e6
}

/** A point in an SSE body where the mock calls `fn` and waits for the promise it returns. */
function checkpoint(fn) {
  return { [KIND]: 'checkpoint', fn }
}

/** SSE body that ends normally after the events. */
function sse(events, { delayMs = 0 } = {}) {
  return { [KIND]: 'sse', events, delayMs, end: 'end' }
}

/** SSE body that stays open after the events (until the client goes away or close()). */
function hang(events = [], { delayMs = 0 } = {}) {
  return { [KIND]: 'sse', events, delayMs, end: 'hang' }
}

/** SSE body that ends after the events without `response.completed`. */
function closeEarly(events = [], { delayMs = 0, destroy = false } = {}) {
  return { [KIND]: 'sse', events, delayMs, end: destroy ? 'destroy' : 'end' }
}

/** Plain HTTP error status with a JSON body. */
function httpError(status, body = { error: { message: `mock status ${status}`, type: 'server_error', code: null } }) {
  return { [KIND]: 'http', status, body }
}

/**
 * A script entry that answers its request and every later one from per-thread queues, told apart
 * by each request's `thread-id` header: the first thread to ask (the user's) takes `queues[0]`,
 * the next new thread (its first sub-agent) `queues[1]`, and so on; each queue in order, one
 * response per request of its thread (functions of the request included). Beyond its queue, or
 * for a thread without one, a request gets HTTP 400 naming the thread and the request.
 * `threads` lists the thread ids in the order they first asked.
 */
function byThread(...queues) {
  const lists = queues.map((queue, i) => {
    if (!Array.isArray(queue)) throw new TypeError(`byThread: queue ${i} must be an array of scripted responses`)
    return [...queue]
  })
  const threads = []
  const asked = []
  return {
    [KIND]: 'byThread',
    threads,
    choose(record) {
      const header = record.headers['thread-id']
      const thread = Array.isArray(header) ? header[0] : (header ?? '')
      let n = threads.indexOf(thread)
      if (n < 0) {
        n = threads.push(thread) - 1
        asked.push(0)
      }
      const k = asked[n]++
      record.thread = { id: thread, index: n, request: k }
      const entry = lists[n]?.[k]
      if (entry === undefined) record.unscripted = `mock: no scripted response for request #${k + 1} of thread #${n + 1} (${thread || 'no thread-id header'})`
      return entry
    },
  }
}

function normalise(response) {
  if (Array.isArray(response)) return sse(response)
  if (response && typeof response === 'object' && response[KIND]) return response
  if (response && typeof response === 'object' && typeof response.status === 'number') {
    return httpError(response.status, response.body)
  }
  throw new TypeError(`mock-responses: not a scripted response: ${JSON.stringify(response)}`)
}

/**
 * Starts the mock on 127.0.0.1 with an ephemeral port.
 * @param {Array<unknown>} scenario
 * @param {{ log?: (line: string) => void }} [options]
 */
async function start(scenario = [], options = {}) {
  const script = [...scenario]
  /** Every `POST …/responses`, in arrival order. */
  const requests = []
  /** Every HTTP request of any path (for "nothing else was called" checks). */
  const allRequests = []
  const openResponses = new Set()
  const sockets = new Set()
  const log = options.log ?? (() => {})

  const server = createServer((req, res) => {
    const arrivedAtMs = monotonicMs()
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8')
      let body = null
      try {
        body = rawBody ? JSON.parse(rawBody) : null
      } catch {
        body = null
      }
      const record = {
        index: -1,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: { ...req.headers },
        body,
        rawBody,
        receivedAt: Date.now(),
        /** Set when the client went away before the mock finished the response. */
        clientClosed: false,
        /** Set when the mock finished writing the body (not for hangs). */
        finished: false,
        /** Monotonic times (monotonicMs): the request's head arrived; its connection closed. */
        arrivedAtMs,
        connectionClosedAtMs: null,
        /** Every SSE event written: its type and the monotonic time of the write. */
        sent: [],
      }
      req.socket.once('close', () => (record.connectionClosedAtMs = monotonicMs()))
      allRequests.push(record)
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      if (req.method !== 'POST' || !url.pathname.endsWith('/responses')) {
        log(`mock: ${req.method} ${req.url} → 404`)
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: `mock: no route ${req.method} ${url.pathname}` } }))
        return
      }
      record.index = requests.length
      requests.push(record)
      let scripted = scriptedFor(record)
      if (typeof scripted === 'function') scripted = scripted(record)
      if (scripted === undefined) {
        const message = record.unscripted ?? `mock: no scripted response for model request #${record.index + 1}`
        log(message)
        res.writeHead(400, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: null } }))
        record.finished = true
        return
      }
      respond(normalise(scripted), record, req, res)
    })
  })

  /**
   * The script's entry for a request: the one at its index, unless a `byThread` entry came at or
   * before it (that one answers it, and every later request).
   */
  function scriptedFor(record) {
    const chooser = script.slice(0, record.index + 1).find((entry) => entry?.[KIND] === 'byThread')
    return chooser ? chooser.choose(record) : script[record.index]
  }

  function respond(response, record, req, res) {
    if (response[KIND] === 'http') {
      log(`mock: request #${record.index + 1} → HTTP ${response.status}`)
      res.writeHead(response.status, { 'content-type': 'application/json' })
      res.end(typeof response.body === 'string' ? response.body : JSON.stringify(response.body))
      record.finished = true
      return
    }
    log(`mock: request #${record.index + 1} → SSE (${response.events.length} events, ${response.end})`)
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    })
    res.flushHeaders()
    openResponses.add(res)
    res.on('close', () => {
      openResponses.delete(res)
      if (!record.finished) record.clientClosed = true
    })
    const events = [...response.events]
    let index = 0
    const delay = (ev) => (typeof response.delayMs === 'function' ? response.delayMs(ev, index) : response.delayMs)
    // Writes the next event after its pause (none for a checkpoint; a fixed pause also comes
    // before the end of the body).
    const schedule = () => {
      const ev = events[0]
      const ms = ev?.[KIND] === 'checkpoint' ? 0 : ev !== undefined ? delay(ev) : typeof response.delayMs === 'number' ? response.delayMs : 0
      if (ms > 0) setTimeout(next, ms)
      else next()
    }
    const next = () => {
      if (res.destroyed) return
      const ev = events.shift()
      if (ev?.[KIND] === 'checkpoint') {
        Promise.resolve()
          .then(ev.fn)
          .then(schedule, (error) => {
            log(`mock: checkpoint failed: ${error}`)
            res.destroy()
          })
        return
      }
      if (ev !== undefined) {
        res.write(`data: ${JSON.stringify(ev)}\n\n`)
        record.sent.push({ type: ev.type, atMs: monotonicMs() })
        index++
        schedule()
        return
      }
      if (response.end === 'hang') return
      record.finished = true
      if (response.end === 'destroy') res.destroy()
      else res.end()
    }
    schedule()
  }

  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve(undefined)
    })
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const url = `http://127.0.0.1:${port}/v1`

  let closed = false
  async function close() {
    if (closed) return
    closed = true
    for (const res of openResponses) res.destroy()
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(() => resolve(undefined)))
  }

  /** Appends responses to the script (for interactive use, e.g. the demo). */
  function push(...responses) {
    script.push(...responses)
  }

  return { url, port, requests, allRequests, close, push }
}

// ---------------------------------------------------------------------------------------------
// Builders for common payloads (§13.3). Each `…Item` returns the events of one output item;
// `response()` wraps items into a full response (created … completed with usage).

/** SSE `usage` object. `total` defaults to input + output. */
function usage({ input = 0, cached = 0, output = 0, reasoning = 0, total } = {}) {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: total ?? input + output,
  }
}

function created(id) {
  return { type: 'response.created', response: { id } }
}

function completed(id, usageObject) {
  const response = { id }
  if (usageObject) response.usage = usageObject
  return { type: 'response.completed', response }
}

/**
 * A reasoning item. `summary` is a list of parts, each a string or a list of deltas;
 * `raw` is a list of raw reasoning texts (each a string or a list of deltas), one per content index.
 */
function reasoningItem({ id = 'rs_1', outputIndex = 0, summary = [], raw = [] } = {}) {
  const parts = summary.map((p) => (Array.isArray(p) ? p : [p]))
  const raws = raw.map((p) => (Array.isArray(p) ? p : [p]))
  const events = [
    { type: 'response.output_item.added', output_index: outputIndex, item: { type: 'reasoning', id, summary: [] } },
  ]
  parts.forEach((deltas, summaryIndex) => {
    events.push({
      type: 'response.reasoning_summary_part.added',
      item_id: id,
      output_index: outputIndex,
      summary_index: summaryIndex,
      part: { type: 'summary_text', text: '' },
    })
    for (const delta of deltas) {
      events.push({
        type: 'response.reasoning_summary_text.delta',
        item_id: id,
        output_index: outputIndex,
        summary_index: summaryIndex,
        delta,
      })
    }
  })
  raws.forEach((deltas, contentIndex) => {
    for (const delta of deltas) {
      events.push({
        type: 'response.reasoning_text.delta',
        item_id: id,
        output_index: outputIndex,
        content_index: contentIndex,
        delta,
      })
    }
  })
  events.push({
    type: 'response.output_item.done',
    output_index: outputIndex,
    item: {
      type: 'reasoning',
      id,
      summary: parts.map((d) => ({ type: 'summary_text', text: d.join('') })),
      content: raws.map((d) => ({ type: 'reasoning_text', text: d.join('') })),
      encrypted_content: null,
    },
  })
  return events
}

/** An assistant message streamed as `deltas` (a string is one delta). */
function messageItem({ id = 'msg_1', outputIndex = 0, deltas = [] } = {}) {
  const list = typeof deltas === 'string' ? [deltas] : deltas
  const events = [
    {
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { type: 'message', role: 'assistant', id, content: [] },
    },
  ]
  for (const delta of list) {
    events.push({ type: 'response.output_text.delta', item_id: id, output_index: outputIndex, content_index: 0, delta })
  }
  events.push({
    type: 'response.output_item.done',
    output_index: outputIndex,
    item: { type: 'message', role: 'assistant', id, content: [{ type: 'output_text', text: list.join('') }] },
  })
  return events
}

/** A function call of Codex's shell tool `exec_command`. */
function execCommandItem({ cmd, callId = 'call_1', outputIndex = 0, yieldTimeMs = 3000, args = {} } = {}) {
  const argumentsText = JSON.stringify({ cmd, yield_time_ms: yieldTimeMs, ...args })
  const id = `fc_${callId}`
  return [
    {
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { type: 'function_call', id, call_id: callId, name: 'exec_command', arguments: '' },
    },
    { type: 'response.function_call_arguments.delta', item_id: id, output_index: outputIndex, delta: argumentsText },
    {
      type: 'response.output_item.done',
      output_index: outputIndex,
      item: { type: 'function_call', id, call_id: callId, name: 'exec_command', arguments: argumentsText, status: 'completed' },
    },
  ]
}

/**
 * A function call of an MCP tool. Codex offers MCP tools as namespaced functions
 * (`namespace: "mcp__<server>"`, `name: <tool>`); the flat `mcp__<server>__<tool>` is refused.
 */
function mcpToolCallItem({ namespace, name, args = {}, callId = 'call_1', outputIndex = 0 }) {
  const id = `fc_${callId}`
  const argumentsText = JSON.stringify(args)
  return [
    {
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { type: 'function_call', id, call_id: callId, name, namespace, arguments: '' },
    },
    {
      type: 'response.output_item.done',
      output_index: outputIndex,
      item: { type: 'function_call', id, call_id: callId, name, namespace, arguments: argumentsText, status: 'completed' },
    },
  ]
}

/** A complete response: created, the items' events, completed (with usage when given). */
function response({ id = 'resp_1', items = [], usage: usageObject } = {}) {
  return [created(id), ...items.flat(), completed(id, usageObject)]
}

let responses = 0
/**
 * A response id of its own for each response built without one (`<prefix>_<n>`): Codex keys
 * items by id, so two turns of a thread must not both see `msg_resp_msg`.
 */
const freshId = (prefix) => `${prefix}_${++responses}`

/** One response with a streamed assistant message (ids of its own unless given). */
function messageResponse(deltas, { id = freshId('resp_msg'), itemId = `msg_${id}`, usage: usageObject, reasoning } = {}) {
  const items = []
  let outputIndex = 0
  if (reasoning) items.push(reasoningItem({ id: `rs_${id}`, outputIndex: outputIndex++, ...reasoning }))
  items.push(messageItem({ id: itemId, outputIndex, deltas }))
  return response({ id, items, usage: usageObject })
}

/** One response whose only output is an `exec_command` call. */
function execCommandResponse(cmd, { id = 'resp_fc', callId = 'call_1', usage: usageObject, yieldTimeMs, reasoning, args } = {}) {
  const items = []
  let outputIndex = 0
  if (reasoning) items.push(reasoningItem({ id: `rs_${id}`, outputIndex: outputIndex++, ...reasoning }))
  items.push(execCommandItem({ cmd, callId, outputIndex, yieldTimeMs, args }))
  return response({ id, items, usage: usageObject })
}

/** A message whose text is `JSON.stringify(value)` (structured output). */
function jsonMessageResponse(value, options = {}) {
  return messageResponse([JSON.stringify(value)], options)
}

/**
 * A response that starts an assistant message, streams one delta, then keeps the stream open
 * (until the client goes away): the model is still "thinking" when a test aborts.
 */
function hangingMessage({ id = freshId('resp_hang'), itemId = `msg_${id}`, delta = 'thinking about it' } = {}) {
  return hang([created(id), ...messageItem({ id: itemId, deltas: [delta] }).slice(0, 2)])
}

/**
 * A function call of any of Codex's tools: `name`, and for a tool in a namespace its
 * `namespace` (e.g. `multi_agent_v1` for `spawn_agent`); `args` become its JSON arguments.
 */
function functionCallItem({ name, namespace, args = {}, callId = freshId('call'), outputIndex = 0 }) {
  const id = `fc_${callId}`
  const argumentsText = typeof args === 'string' ? args : JSON.stringify(args)
  const item = (more) => ({ type: 'function_call', id, call_id: callId, name, ...(namespace ? { namespace } : {}), ...more })
  return [
    { type: 'response.output_item.added', output_index: outputIndex, item: item({ arguments: '' }) },
    { type: 'response.output_item.done', output_index: outputIndex, item: item({ arguments: argumentsText, status: 'completed' }) },
  ]
}

/** One response whose only output is a call of tool `name` (see `functionCallItem`). */
function functionCallResponse(name, args = {}, { namespace, callId, id = freshId('resp_fc'), usage: usageObject } = {}) {
  return response({ id, items: [functionCallItem({ name, namespace, args, callId })], usage: usageObject })
}

/**
 * The model calls an app's tool (one the app gave `thread/start.dynamicTools`): `name`, and for a
 * tool in a namespace its `namespace`; `args` become its JSON arguments. Codex sends the app
 * `item/tool/call` and gives the model the app's answer in its next request (`toolOutput`).
 */
function toolCallResponse(name, args = {}, { namespace, callId, id, usage: usageObject } = {}) {
  return functionCallResponse(name, args, { namespace, callId, id, usage: usageObject })
}

/**
 * The model calls several app tools in one response (`{ name, args?, namespace?, callId? }`
 * each): Codex sends every `item/tool/call` at once and asks the model again once all are
 * answered.
 */
function toolCallsResponse(calls, { id = freshId('resp_fc'), usage: usageObject } = {}) {
  if (!Array.isArray(calls) || calls.length === 0) throw new TypeError('toolCallsResponse: calls must be a non-empty array of { name, args?, namespace?, callId? }')
  const items = calls.map((call, outputIndex) => functionCallItem({ name: call.name, namespace: call.namespace, args: call.args, callId: call.callId, outputIndex }))
  return response({ id, items, usage: usageObject })
}

/** The model starts a sub-agent with `message` (`multi_agent_v1.spawn_agent`); its output names the child (`spawnedAgents`). */
function spawnAgentResponse(message, { callId, id, usage: usageObject, args = {} } = {}) {
  return functionCallResponse('spawn_agent', { message, ...args }, { namespace: 'multi_agent_v1', callId, id, usage: usageObject })
}

/** The model waits for sub-agents (`multi_agent_v1.wait_agent`); `targets` are their ids (`spawnedAgents(body)`). */
function waitAgentResponse(targets, { timeoutMs = 60_000, callId, id, usage: usageObject } = {}) {
  return functionCallResponse('wait_agent', { targets, timeout_ms: timeoutMs }, { namespace: 'multi_agent_v1', callId, id, usage: usageObject })
}

/** The model sets a goal (`create_goal`); while it is active Codex goes on in turns of its own. */
function createGoalResponse(objective, { tokenBudget, callId, id, usage: usageObject } = {}) {
  return functionCallResponse('create_goal', { objective, ...(tokenBudget === undefined ? {} : { token_budget: tokenBudget }) }, { callId, id, usage: usageObject })
}

/** The model ends or pauses the goal (`update_goal`): `complete`, `blocked` or `paused`. */
function updateGoalResponse(status, { callId, id, usage: usageObject } = {}) {
  return functionCallResponse('update_goal', { status }, { callId, id, usage: usageObject })
}

/**
 * The model asks the user (`request_user_input`; plan mode only): each question `{ id, question,
 * header?, options? }` (an option as a string is its label). Codex sends the app
 * `item/tool/requestUserInput` and gives the model the answer as its output.
 */
function requestUserInputResponse(questions, { callId, id, usage: usageObject } = {}) {
  const list = questions.map((q) => ({
    id: q.id,
    header: q.header ?? q.id,
    question: q.question,
    options: (q.options ?? []).map((o) => (typeof o === 'string' ? { label: o, description: o } : o)),
  }))
  return functionCallResponse('request_user_input', { questions: list }, { callId, id, usage: usageObject })
}

/**
 * The `exec_command` text that edits files through Codex's `apply_patch` (a heredoc): `add`
 * creates files with their text, `update` replaces a file's whole text, `remove` deletes them.
 * Run it with `execCommandResponse(applyPatchCommand({ … }))`.
 */
function applyPatchCommand({ add = {}, remove = [] } = {}) {
  const lines = ['*** Begin Patch']
  const body = (text) => text.replace(/\n$/, '').split('\n').map((line) => `+${line}`)
  for (const [path, text] of Object.entries(add)) lines.push(`*** Add File: ${path}`, ...body(text))
  for (const path of remove) lines.push(`*** Delete File: ${path}`)
  lines.push('*** End Patch')
  const end = 'PATCH_EOF'
  if (lines.some((line) => line === end)) throw new TypeError('applyPatchCommand: a line of the patch is the heredoc terminator')
  return `apply_patch <<'${end}'\n${lines.join('\n')}\n${end}`
}

/** The sub-agents a request's input says the model spawned: each spawn call's output (`{ agent_id, nickname }`). */
function spawnedAgents(body) {
  const calls = new Set(
    (Array.isArray(body?.input) ? body.input : []).filter((i) => i?.type === 'function_call' && i.name === 'spawn_agent').map((i) => i.call_id),
  )
  return functionCallOutputs(body)
    .filter((o) => calls.has(o.call_id))
    .flatMap((o) => {
      try {
        const parsed = JSON.parse(typeof o.output === 'string' ? o.output : JSON.stringify(o.output))
        return typeof parsed?.agent_id === 'string' ? [{ agent_id: parsed.agent_id, nickname: parsed.nickname ?? null }] : []
      } catch {
        return []
      }
    })
}

/** The thread a recorded request was made for (its `thread-id` header), or null. */
function threadOf(request) {
  const header = request?.headers?.['thread-id']
  return (Array.isArray(header) ? header[0] : header) ?? null
}

/** `response.failed` with the given error code and message. */
function failedResponse({ id = 'resp_f', code = 'server_error', message = 'The model failed to generate a response (mock).' } = {}) {
  return [
    created(id),
    { type: 'response.failed', response: { id, status: 'failed', error: { code, message } } },
  ]
}

/** The `function_call_output` input items of a recorded request body. */
function functionCallOutputs(body) {
  const input = body && Array.isArray(body.input) ? body.input : []
  return input.filter((item) => item && item.type === 'function_call_output')
}

/**
 * What the model was given back for call `callId` in a recorded request body (its
 * `function_call_output.output`: a string, or an array of `input_text`/`input_image` parts), or
 * undefined when the request carries no output of that call.
 */
function toolOutput(body, callId) {
  return functionCallOutputs(body).find((output) => output.call_id === callId)?.output
}

/**
 * The function a recorded request offered the model as `name` (inside `namespace` when given):
 * its `{ type: 'function', name, description, strict, parameters }` entry, or undefined when it
 * was not offered.
 */
function offeredTool(body, name, { namespace } = {}) {
  const tools = body && Array.isArray(body.tools) ? body.tools : []
  const within = namespace === undefined ? tools : (tools.find((tool) => tool?.type === 'namespace' && tool.name === namespace)?.tools ?? [])
  return within.find((tool) => tool?.type === 'function' && tool.name === name)
}

/** The names of the tools a recorded request offered the model (functions and namespaces). */
function offeredTools(body) {
  const tools = body && Array.isArray(body.tools) ? body.tools : []
  return tools.filter((tool) => typeof tool?.name === 'string').map((tool) => tool.name)
}

module.exports = {
  monotonicMs,
  checkpoint,
  sse,
  hang,
  closeEarly,
  httpError,
  start,
  usage,
  created,
  completed,
  reasoningItem,
  messageItem,
  execCommandItem,
  response,
  messageResponse,
  execCommandResponse,
  jsonMessageResponse,
  mcpToolCallItem,
  hangingMessage,
  failedResponse,
  functionCallOutputs,
  offeredTools,
  toolCallResponse,
  toolCallsResponse,
  toolOutput,
  offeredTool,
  byThread,
  functionCallItem,
  functionCallResponse,
  spawnAgentResponse,
  waitAgentResponse,
  createGoalResponse,
  updateGoalResponse,
  requestUserInputResponse,
  applyPatchCommand,
  spawnedAgents,
  threadOf,
}
