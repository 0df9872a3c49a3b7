'use strict'
// App tools as the test kit's fake plays them: Codex's "dynamic tools" (codex-cli 0.171.0, as
// observed against the real binary with a plain client; 0.150.0 and 0.160.0 behave the same).
// `thread/start.dynamicTools` needs the experimentalApi capability and is checked as Codex checks
// it; the tools belong to the thread (a resume or a fork keeps them, whatever it sends); the
// model's call of one is an `item/tool/call` request between the `dynamicToolCall` item's start
// and completion, and the client's answer becomes what the model is given next, in Codex's words.

const { appendFileSync, readFileSync } = require('node:fs')
const { dirname, join } = require('node:path')
const wire = require('./fake-codex-wire.js')

const { nowMs } = wire

const GATE = 'thread/start.dynamicTools requires experimentalApi capability'
const NAME = /^[a-zA-Z0-9_-]+$/
const MAX_NAME = 128
const MAX_NAMESPACE = 64
const MAX_NAMESPACE_DESCRIPTION = 1024
/** Namespaces the Responses API keeps for itself (Codex 0.171.0 refuses each by name). */
const RESPONSES_NAMESPACES = ['functions', 'multi_tool_use', 'web', 'file_search', 'browser', 'python', 'container', 'image_gen', 'computer', 'api_tool']

/** What the model is given, in Codex's words. */
const TEXT = {
  failed: 'dynamic tool request failed',
  invalid: 'dynamic tool response was invalid',
  remoteImage: 'remote image URLs are not supported; use an inline data URL instead',
  remoteAudio: 'audio URLs must use an inline data URL',
  cancelled: 'dynamic tool call was cancelled before receiving a response',
  badImage: 'image content omitted because it could not be processed',
  // The mock model's fallback metadata has no audio input.
  audio: 'audio content omitted because you do not support audio input',
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)
const chars = (text) => [...text].length

/** A name as Rust's `escape_default` writes it in Codex's messages (`wetter_\u{fc}`). */
function escaped(text) {
  let out = ''
  for (const ch of text) {
    const code = ch.codePointAt(0)
    if (ch === '\t') out += '\\t'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\n') out += '\\n'
    else if (ch === '\\' || ch === "'" || ch === '"') out += `\\${ch}`
    else if (code >= 0x20 && code <= 0x7e) out += ch
    else out += `\\u{${code.toString(16)}}`
  }
  return out
}

/** How serde names a JSON value it did not expect (from raw JSON text). */
function unexpected(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'sequence'
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`
  if (typeof value === 'boolean') return `boolean \`${value}\``
  if (typeof value === 'number') return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``
  return 'map'
}

/** The same, for a value already parsed into a JSON tree (Codex reads a schema so). */
const unexpectedInTree = (value) => (typeof value === 'number' ? 'number' : unexpected(value))

// ---------------------------------------------------------------------------------------------
// definitions

/**
 * Why Codex refuses `thread/start`'s `dynamicTools`, in its words (`-32600`), or null. In Codex's
 * order: the request's shape ("Invalid request: …", also without the capability), then the
 * capability, then each definition in turn.
 */
function refusal(dynamicTools, experimentalApi) {
  if (dynamicTools === undefined || dynamicTools === null) return null
  const shape = shapeProblem(dynamicTools)
  if (shape) return `Invalid request: ${shape}`
  if (!experimentalApi) return GATE
  return definitionProblem(dynamicTools)
}

/** Codex's deserialization of the list: canonical (`type`) or legacy entries, never both. */
function shapeProblem(list) {
  if (!Array.isArray(list)) return `invalid type: ${unexpected(list)}, expected a sequence`
  const canonical = list.filter((entry) => isObject(entry) && 'type' in entry).length
  if (canonical > 0 && canonical < list.length) return 'dynamic tools must use either canonical or legacy format consistently'
  for (const entry of list) {
    const problem = canonical ? canonicalShape(entry) : legacyShape(entry)
    if (problem) return problem
  }
  return null
}

function fieldsProblem(entry, fields) {
  for (const [field, kind] of fields) {
    if (!(field in entry)) {
      if (kind.endsWith('?')) continue
      return `missing field \`${field}\``
    }
    const value = entry[field]
    const type = kind.replace('?', '')
    if (type === 'string' && typeof value !== 'string' && !(kind.endsWith('?') && value === null)) return `invalid type: ${unexpected(value)}, expected a string`
    if (type === 'boolean' && typeof value !== 'boolean' && value !== null) return `invalid type: ${unexpected(value)}, expected a boolean`
    if (type === 'sequence' && !Array.isArray(value)) return `invalid type: ${unexpected(value)}, expected a sequence`
  }
  return null
}

const FUNCTION_FIELDS = [
  ['name', 'string'],
  ['description', 'string'],
  ['inputSchema', 'any'],
  ['deferLoading', 'boolean?'],
]

function canonicalShape(entry, variants = ['function', 'namespace']) {
  if (entry.type === null || typeof entry.type !== 'string') return `invalid type: ${unexpected(entry.type)}, expected variant identifier`
  if (!variants.includes(entry.type)) return `unknown variant \`${entry.type}\`, expected ${variants.map((v) => `\`${v}\``).join(' or ')}`
  if (entry.type === 'function') return fieldsProblem(entry, FUNCTION_FIELDS)
  const problem = fieldsProblem(entry, [
    ['name', 'string'],
    ['description', 'string'],
    ['tools', 'sequence'],
  ])
  if (problem) return problem
  for (const tool of entry.tools) {
    if (!isObject(tool)) return `invalid type: ${unexpected(tool)}, expected internally tagged enum`
    const inner = canonicalShape(tool, ['function'])
    if (inner) return inner
  }
  return null
}

function legacyShape(entry) {
  if (!isObject(entry)) return `invalid type: ${unexpected(entry)}, expected struct LegacyDynamicToolSpec`
  return fieldsProblem(entry, [...FUNCTION_FIELDS, ['namespace', 'string?']])
}

/** The first definition Codex refuses, in its words; null when it takes them all. */
function definitionProblem(list) {
  const legacy = list.length > 0 && !('type' in list[0])
  const functions = new Set()
  const namespaces = new Set()
  /** Legacy entries name their namespace one by one: the names seen in each. */
  const legacyNamespaces = new Map()
  for (const entry of list) {
    if (legacy) {
      const namespace = entry.namespace ?? null
      if (namespace !== null) {
        const problem = namespaceNameProblem(namespace)
        if (problem) return problem
      }
      const problem = functionProblem(entry, { namespace })
      if (problem) return problem
      const seen = namespace === null ? functions : legacyNamespaces.get(namespace) ?? legacyNamespaces.set(namespace, new Set()).get(namespace)
      if (seen.has(entry.name)) return duplicate(namespace, entry.name)
      seen.add(entry.name)
      const schema = schemaProblem(entry.inputSchema)
      if (schema) return `dynamic tool input schema is not supported for ${entry.name}: ${schema}`
      continue
    }
    if (entry.type === 'function') {
      const problem = functionProblem(entry, { namespace: null })
      if (problem) return problem
      if (functions.has(entry.name)) return duplicate(null, entry.name)
      functions.add(entry.name)
      const schema = schemaProblem(entry.inputSchema)
      if (schema) return `dynamic tool input schema is not supported for ${entry.name}: ${schema}`
      continue
    }
    const problem = namespaceNameProblem(entry.name)
    if (problem) return problem
    if (chars(entry.description) > MAX_NAMESPACE_DESCRIPTION) return `dynamic tool namespace description must be at most ${MAX_NAMESPACE_DESCRIPTION} characters`
    if (namespaces.has(entry.name)) return `duplicate dynamic tool namespace: ${escaped(entry.name)}`
    namespaces.add(entry.name)
    if (entry.tools.length === 0) return `dynamic tool namespace must contain at least one tool: ${escaped(entry.name)}`
    const seen = new Set()
    for (const tool of entry.tools) {
      const inner = functionProblem(tool, { namespace: entry.name })
      if (inner) return inner
      if (seen.has(tool.name)) return duplicate(entry.name, tool.name)
      seen.add(tool.name)
      const schema = schemaProblem(tool.inputSchema)
      if (schema) return `dynamic tool input schema is not supported for ${tool.name}: ${schema}`
    }
  }
  return null
}

function duplicate(namespace, name) {
  return namespace === null ? `duplicate dynamic tool name: ${escaped(name)}` : `duplicate dynamic tool name in namespace ${escaped(namespace)}: ${escaped(name)}`
}

/** A function's name (and `deferLoading`, which only a namespace's tool may have). */
function functionProblem(entry, { namespace }) {
  const problem = nameProblem('name', entry.name, MAX_NAME)
  if (problem) return problem
  // Codex keeps `mcp` and `mcp__…` for its MCP tools: a top-level function's name too.
  if (namespace === null && (entry.name === 'mcp' || entry.name.startsWith('mcp__'))) return `dynamic tool name is reserved: ${escaped(entry.name)}`
  if (entry.deferLoading === true && namespace === null) return `deferred dynamic tool must include a namespace: ${escaped(entry.name)}`
  return null
}

function namespaceNameProblem(name) {
  const problem = nameProblem('namespace', name, MAX_NAMESPACE)
  if (problem) return problem
  if (name === 'mcp' || name.startsWith('mcp__')) return `dynamic tool namespace is reserved: ${escaped(name)}`
  if (RESPONSES_NAMESPACES.includes(name)) return `dynamic tool namespace collides with a reserved Responses API namespace: ${escaped(name)}`
  return null
}

/** Codex's checks of a name, in its order: empty, whitespace around it, the pattern, the length. */
function nameProblem(what, name, max) {
  if (/^\p{White_Space}*$/u.test(name)) return `dynamic tool ${what} must not be empty`
  if (/^\p{White_Space}|\p{White_Space}$/u.test(name)) return `dynamic tool ${what} has leading/trailing whitespace: ${escaped(name)}`
  if (!NAME.test(name)) return `dynamic tool ${what} must match ^[a-zA-Z0-9_-]+$ to match Responses API: ${escaped(name)}`
  if (chars(name) > max) return `dynamic tool ${what} must be at most ${max} characters to match Responses API: ${escaped(name)}`
  return null
}

/**
 * Codex reads a schema into its own JSON Schema type: a schema that is null, a number, a string
 * or an empty array is refused (so is one such under `properties` or `items`); `true`, `false`
 * and objects pass (Codex rewrites some). An array Codex reads position by position; the fake
 * does not follow it there and takes a non-empty one.
 */
function schemaProblem(schema) {
  if (schema === null || typeof schema === 'number' || typeof schema === 'string') return `invalid type: ${unexpectedInTree(schema)}, expected struct JsonSchema`
  if (Array.isArray(schema)) return schema.length === 0 ? 'invalid length 0, expected struct JsonSchema with 15 elements' : null
  if (!isObject(schema)) return null
  if (schema.properties !== undefined && schema.properties !== null) {
    if (!isObject(schema.properties)) return `invalid type: ${unexpectedInTree(schema.properties)}, expected a map`
    for (const sub of Object.values(schema.properties)) {
      const problem = schemaProblem(sub)
      if (problem) return problem
    }
  }
  if (schema.required !== undefined && schema.required !== null && !Array.isArray(schema.required)) {
    return `invalid type: ${unexpectedInTree(schema.required)}, expected a sequence`
  }
  if (schema.items !== undefined && schema.items !== null) return schemaProblem(schema.items)
  return null
}

/** The tools a list defines, as the thread keeps them: `{ namespace, name }` each. */
function toolsOf(list) {
  if (!Array.isArray(list)) return []
  return list.flatMap((entry) =>
    entry.type === 'namespace' ? entry.tools.map((tool) => ({ namespace: entry.name, name: tool.name })) : [{ namespace: entry.namespace ?? null, name: entry.name }],
  )
}

// ---------------------------------------------------------------------------------------------
// the thread's tools

/**
 * The fake's state of app tools, shared by every player of the process: the capability, each
 * thread's tools, and the calls waiting for the client's answer. Threads started by earlier
 * processes of the same fake are read from `storePath` (a `thread/start` with tools appends its
 * thread there, as Codex stores them with the thread), then from the script's `threadTools`.
 */
function state(script, logPath) {
  return { experimentalApi: false, threads: new Map(), pending: new Map(), storePath: join(dirname(logPath), 'threads.jsonl'), seeded: script.threadTools ?? {} }
}

/** The tools a thread was started with, wherever the fake knows it from. */
function storedTools(fake, threadId) {
  const tools = fake.tools
  if (tools.threads.has(threadId)) return tools.threads.get(threadId)
  let found = null
  try {
    for (const line of readFileSync(tools.storePath, 'utf8').split('\n')) {
      if (!line.trim()) continue
      const entry = JSON.parse(line)
      if (entry.threadId === threadId) found = entry.tools
    }
  } catch {
    // no thread of an earlier process had tools
  }
  return found ?? toolsOf(tools.seeded[threadId])
}

/** Keeps `list` as the tools of `threadId` (also for the fake's later processes), and notes it. */
function keep(fake, threadId, list, from) {
  fake.tools.threads.set(threadId, list)
  // What a later process reads back (the last entry of a thread wins: the fake's thread ids are
  // the script's, so a later `thread/start` starts the same thread over).
  if (from === 'start' || from === 'fork') {
    try {
      appendFileSync(fake.tools.storePath, JSON.stringify({ threadId, tools: list }) + '\n')
    } catch {
      // the test may have removed the directory already
    }
  }
  fake.log({ event: 'thread-tools', threadId, from, tools: list })
}

/** `thread/start`: its tools; `thread/resume`: the ones it was started with (what it sends is ignored, as Codex ignores it). */
function threadOpened(fake, method, threadId, params) {
  if (method === 'thread/start') keep(fake, threadId, toolsOf(params.dynamicTools), 'start')
  else keep(fake, threadId, storedTools(fake, threadId), 'stored')
}

/** A `thread/fork` the script answered: the new thread keeps the tools of the one it forks. */
function forked(fake, params, result) {
  const id = result?.thread?.id
  if (typeof id === 'string' && typeof params?.threadId === 'string') keep(fake, id, storedTools(fake, params.threadId), 'fork')
}

/** A sub-agent's thread: the parent's tools as a `fork_context: true` child gets them, or none. */
function inherit(fake, parentThreadId, childThreadId, forkContext) {
  keep(fake, childThreadId, forkContext ? storedTools(fake, parentThreadId) : [], 'agent')
}

// ---------------------------------------------------------------------------------------------
// calls

const IMAGE_HEADERS = [
  // PNG: the signature, then the IHDR chunk.
  (b) => b.length >= 33 && b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR',
  (b) => b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  (b) => b.length >= 10 && /^GIF8[79]a/.test(b.toString('latin1', 0, 6)),
  (b) => b.length >= 16 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP',
]

/** Whether Codex could read an inline image: the fake reads only the header of its bytes. */
function readableImage(url) {
  const match = /^data:[^,]*;base64,(.*)$/s.exec(url)
  if (!match) return false
  const bytes = Buffer.from(match[1], 'base64')
  return IMAGE_HEADERS.some((test) => test(bytes))
}

const isData = (url) => url.startsWith('data:')

/** The answer's content items as Codex reads them (unknown fields dropped), or null when it does not parse. */
function parsedItems(result) {
  if (!isObject(result) || !Array.isArray(result.contentItems) || typeof result.success !== 'boolean') return null
  const items = []
  for (const item of result.contentItems) {
    if (!isObject(item)) return null
    if (item.type === 'inputText' && typeof item.text === 'string') items.push({ type: 'inputText', text: item.text })
    else if (item.type === 'inputImage' && typeof item.imageUrl === 'string') items.push({ type: 'inputImage', imageUrl: item.imageUrl })
    else if (item.type === 'inputAudio' && typeof item.audioUrl === 'string') items.push({ type: 'inputAudio', audioUrl: item.audioUrl })
    else return null
  }
  return items
}

const failure = (text) => ({ status: 'failed', contentItems: [{ type: 'inputText', text }], success: false })

/** How a call's item completes after the client's reply (a JSON-RPC response frame). */
function outcomeOf(reply) {
  if (!isObject(reply) || !('result' in reply)) return failure(TEXT.failed)
  const items = parsedItems(reply.result)
  if (items === null) return failure(TEXT.invalid)
  for (const item of items) {
    if (item.type === 'inputImage' && !isData(item.imageUrl)) return failure(TEXT.remoteImage)
    if (item.type === 'inputAudio' && !isData(item.audioUrl)) return failure(TEXT.remoteAudio)
  }
  return { status: reply.result.success ? 'completed' : 'failed', contentItems: items, success: reply.result.success }
}

/**
 * What the model is given for a call's content items (its `function_call_output.output`): one
 * text alone is the plain string; anything else an array of `input_text`/`input_image` parts.
 * `success` never reaches the model.
 */
function modelOutput(contentItems) {
  if (contentItems.length === 1 && contentItems[0].type === 'inputText') return contentItems[0].text
  return contentItems.map((item) => {
    if (item.type === 'inputText') return { type: 'input_text', text: item.text }
    if (item.type === 'inputImage') return readableImage(item.imageUrl) ? { type: 'input_image', image_url: item.imageUrl, detail: 'high' } : { type: 'input_text', text: TEXT.badImage }
    return { type: 'input_text', text: TEXT.audio }
  })
}

/** Notes a call and what the model was given for it (`FakeCodexRun.toolCalls`). */
function record(fake, call, fields) {
  fake.log({ event: 'tool-call', ...call, ...fields })
}

/**
 * The model calls app tools, all at once (a `toolCall` step is one): for each the thread has, its
 * `dynamicToolCall` item starts and `item/tool/call` goes to the client, before any answer; each
 * item completes as its answer comes; the step ends once every call is answered (or the turn is
 * interrupted). A call of a tool the thread does not have is Codex's "unsupported call": no
 * item, no request, only the model is told.
 */
async function play(fake, calls, ids) {
  const have = fake.tools.threads.get(ids.threadId) ?? []
  const waiting = []
  for (const given of calls) {
    const call = {
      callId: fake.id('call', given.callId),
      threadId: ids.threadId,
      turnId: ids.turnId,
      namespace: given.namespace ?? null,
      tool: given.tool,
      arguments: given.arguments === undefined ? {} : given.arguments,
    }
    if (!have.some((t) => t.name === call.tool && t.namespace === call.namespace)) {
      record(fake, call, { requestId: null, reply: null, status: 'unsupported', contentItems: null, success: null, output: `unsupported call: ${call.namespace ?? ''}${call.tool}` })
      continue
    }
    const item = wire.dynamicToolCall({ id: call.callId, namespace: call.namespace, tool: call.tool, arguments: call.arguments })
    fake.itemStarted(item)
    const requestId = fake.nextRequestId++
    const pending = { fake, call, item, requestId, settled: false }
    waiting.push(new Promise((resolve) => (pending.done = resolve)))
    const listen = () =>
      fake.pending.set(requestId, (reply) => {
        // Another turn that ended answered every request with null (and then forgot them): this
        // call's turn goes on, and so does its wait, once that is done.
        if (reply === null && !pending.settled) return void queueMicrotask(listen)
        settle(pending, reply)
      })
    listen()
    fake.tools.pending.set(requestId, pending)
    fake.send({ method: 'item/tool/call', id: requestId, params: { threadId: call.threadId, turnId: call.turnId, callId: call.callId, namespace: call.namespace, tool: call.tool, arguments: call.arguments } })
  }
  await Promise.all(waiting)
  return fake.interrupted || fake.turnDone ? 'end' : undefined
}

function complete(pending, outcome, reply, output) {
  pending.settled = true
  pending.fake.tools.pending.delete(pending.requestId)
  pending.fake.pending.delete(pending.requestId)
  const completedAtMs = nowMs()
  pending.fake.itemCompleted({ ...pending.item, ...outcome, durationMs: completedAtMs - pending.item.startedAtMs, completedAtMs })
  record(pending.fake, pending.call, { requestId: pending.requestId, reply, ...outcome, output })
  pending.done()
}

function settle(pending, reply) {
  if (pending.settled) return
  const outcome = outcomeOf(reply)
  complete(pending, outcome, reply, modelOutput(outcome.contentItems))
}

/**
 * `turn/interrupt` honoured for `turnId`: each of its calls still waiting fails at once (no
 * content, before the interrupt is answered, as Codex does), and an answer that comes later is
 * ignored.
 */
function interrupted(fake, turnId) {
  for (const pending of [...fake.tools.pending.values()]) {
    if (pending.call.turnId !== turnId) continue
    complete(pending, { status: 'failed', contentItems: [], success: false }, null, TEXT.cancelled)
  }
}

/** Throws (through `fail(path, what)`) at the first field of a tool step that is wrong. */
function checkStep(step, path, fail) {
  const checkCall = (call, at) => {
    if (!isObject(call)) fail(at, 'must be an object { tool, namespace?, arguments?, callId? }')
    if (typeof call.tool !== 'string' || !call.tool) fail(`${at}.tool`, 'must be a non-empty string')
    if (call.namespace !== undefined && call.namespace !== null && typeof call.namespace !== 'string') fail(`${at}.namespace`, 'must be a string or null')
    if (call.callId !== undefined && (typeof call.callId !== 'string' || !call.callId)) fail(`${at}.callId`, 'must be a non-empty string')
  }
  if (step.type === 'toolCall') checkCall(step, path)
  if (step.type === 'toolCalls') {
    if (step.calls.length === 0) fail(`${path}.calls`, 'must name at least one call')
    step.calls.forEach((call, i) => checkCall(call, `${path}.calls[${i}]`))
  }
}

/** Throws at the script's `threadTools` when it is not `{ [threadId]: dynamicTools }`. */
function checkScript(script, fail) {
  if (script.threadTools === undefined) return
  if (!isObject(script.threadTools)) fail('.threadTools', 'must be an object { [threadId]: the dynamicTools it was started with }')
  for (const [threadId, list] of Object.entries(script.threadTools)) {
    const problem = shapeProblem(list) ?? definitionProblem(list)
    if (problem) fail(`.threadTools[${JSON.stringify(threadId)}]`, `is not a list Codex takes: ${problem}`)
  }
}

/** The steps this module plays, with their required fields (checked by writeFakeCodex). */
const STEPS = { toolCall: { tool: 'string' }, toolCalls: { calls: 'array' } }

/** Plays a step of this module. */
function step(fake, s, ids) {
  return play(fake, s.type === 'toolCalls' ? s.calls : [s], ids)
}

module.exports = { STEPS, TEXT, state, refusal, threadOpened, forked, inherit, step, interrupted, checkStep, checkScript, modelOutput }
