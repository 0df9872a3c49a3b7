'use strict'
// App tools (`tools`): what only JavaScript can do for them. Each tool's `execute` stays here and
// its `inputSchema` is turned into the JSON Schema Codex is sent (a Standard Schema through
// lib/output-schema.js); what crosses to the core is `{ description, inputSchema, timeoutMs?,
// execute: true }`, and the core holds every rule of a definition (it names the tool). A call
// reaches this module on the turn's server-request callback as `{ key, method, id, params,
// agent, tool: true, timeoutMs }`: the arguments are checked (ajv for a JSON Schema, a Standard
// Schema's own `validate`, whose output `execute` receives), `execute` runs with one
// AbortController per call, and its result becomes `{ contentItems, success }` with its reply
// kind (`app`, `invalidArguments`, `failed`). The deadline and the turn's abort are the core's:
// it answers the call itself and sends `{ cancel: key, why }`, which aborts that call's signal
// (a `TimeoutError` DOMException at the deadline, the turn's abort reason at an abort, an
// `AbortError` when the turn ended otherwise, its child gone); whatever
// `execute` returns after that is not sent (the core would drop it anyway).

const { plain, option, isArray, segment } = require('./plain.js')

/** What a tool's result may carry of text, in UTF-8 bytes, all its texts together: 64 KiB. */
const TEXT_BOUND = 64 * 1024
/** The largest image a result may carry, as its `data:` URL: 10 MiB. */
const IMAGE_BOUND = 10 * 1024 * 1024

const isPlainObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * The tools of `options.tools` (read as given): `wire`, what the core checks and Codex is sent,
 * and `table`, each tool's `execute` and argument check by name. A schema that cannot be read or
 * converted is a TypeError naming its path; everything else the core names.
 */
function prepareTools(tools, path = 'options.tools') {
  if (tools === null || typeof tools !== 'object' || isArray(tools, path)) {
    throw new TypeError(`${path} must be an object of tools by name: { [name]: { description, inputSchema, execute, timeoutMs? } }`)
  }
  const proto = Object.getPrototypeOf(tools)
  if (proto !== Object.prototype && proto !== null) throw new TypeError(`${path} must be a plain object of tools by name`)
  const wire = {}
  const table = new Map()
  for (const name of Object.keys(tools)) {
    const at = `${path}${segment(name)}`
    const tool = option(tools, name, path)
    if (tool === null || typeof tool !== 'object' || isArray(tool, at)) {
      throw new TypeError(`${at} must be a tool: { description, inputSchema, execute, timeoutMs? }`)
    }
    const execute = option(tool, 'execute', at)
    const schema = option(tool, 'inputSchema', at)
    const { execute: _, inputSchema: __, ...rest } = plainRest(tool, at)
    const given = { ...rest }
    // The core says what a missing or wrong `execute` is; it is told whether there is a function.
    if (execute !== undefined) given.execute = typeof execute === 'function'
    let validate = null
    if (schema !== undefined) {
      const prepared = require('./output-schema.js').prepareToolSchema(schema, `${at}.inputSchema`)
      given.inputSchema = prepared.wire
      validate = prepared.validate
    }
    Object.defineProperty(wire, name, { value: given, enumerable: true, writable: true, configurable: true })
    table.set(name, { name, tool, execute, validate })
  }
  return { wire, table }
}

/** The definition's fields but `execute` and `inputSchema`, as plain data (the core checks them). */
function plainRest(tool, at) {
  const rest = {}
  for (const key of Object.keys(tool)) {
    if (key === 'execute' || key === 'inputSchema') continue
    const value = plain(option(tool, key, at), `${at}${segment(key)}`)
    if (value !== undefined) Object.defineProperty(rest, key, { value, enumerable: true, writable: true, configurable: true })
  }
  return rest
}

/**
 * The turn's server-request callback when it has tools: a tool's call runs here, a cancel aborts
 * a running call, anything else goes to `others` (the app's `onServerRequest` bridge; none
 * without a handler, and then the core sends nothing else). `native()` is the native turn that
 * takes the answers; `abortReason()` the turn's abort reason, once it was aborted.
 */
function serveTools(table, others, native, abortReason) {
  /** The calls running: key → { controller, timeoutMs }. */
  const running = new Map()
  return (json) => {
    const message = JSON.parse(json)
    if (message.cancel !== undefined) {
      const call = running.get(message.cancel)
      if (call === undefined) return
      running.delete(message.cancel)
      let reason
      if (message.why === 'timedOut') reason = new DOMException(`the tool call timed out after ${call.timeoutMs} ms`, 'TimeoutError')
      else if (message.why === 'aborted') reason = abortReason() ?? new DOMException('the turn was aborted', 'AbortError')
      else reason = new DOMException('the turn ended before the tool answered', 'AbortError')
      call.controller.abort(reason)
      return
    }
    if (message.tool !== true) {
      others?.(json)
      return
    }
    const { key, params, agent, timeoutMs } = message
    const controller = new AbortController()
    running.set(key, { controller, timeoutMs })
    const context = {
      signal: controller.signal,
      threadId: params.threadId,
      turnId: params.turnId,
      callId: params.callId,
      agent: agent ?? null,
    }
    answer(table.get(params.tool), params, context).then(({ reply, kind }) => {
      running.delete(key)
      // Cancelled: the core answered it already.
      if (controller.signal.aborted) return
      native()?.answer(key, JSON.stringify(reply), null, kind)
    })
  }
}

/** A reply of one text. */
const textReply = (text, success) => ({ contentItems: [{ type: 'inputText', text }], success })

/** The answer to one call of `tool` (never rejects): `{ reply, kind }`. */
async function answer(tool, params, context) {
  const name = params.tool
  if (tool === undefined) return { reply: textReply(`the app does not offer the tool ${name} now`, false), kind: 'failed' }
  let checked
  try {
    checked = await tool.validate(params.arguments)
  } catch (error) {
    return { reply: textReply(`the arguments of the tool ${name} could not be checked: ${messageOf(error)}`, false), kind: 'failed' }
  }
  if (!checked.ok) {
    const text = `invalid arguments for the tool ${name}: ${checked.message}. The tool was not run; call it again with arguments that match its schema.`
    return { reply: textReply(text, false), kind: 'invalidArguments' }
  }
  let result
  try {
    // Called on its tool, as a method of it (a class's `execute` may use `this`).
    result = await Reflect.apply(tool.execute, tool.tool, [checked.value, context])
  } catch (error) {
    const message = messageOf(error)
    return { reply: textReply(message === '' ? `the tool ${name} failed without a message` : message, false), kind: 'failed' }
  }
  return toReply(result, name)
}

/** An error's message as the model may read it: never its stack. */
function messageOf(error) {
  try {
    if (error instanceof Error) return String(error.message)
    if (typeof error === 'string') return error
    if (isPlainObject(error) && typeof error.message === 'string') return error.message
  } catch {
    // A message that cannot be read says nothing.
  }
  return `the tool threw ${error === null ? 'null' : typeof error}`
}

/**
 * What `execute` returned as `{ reply, kind }`: a string is one text; `{ content, isError? }`
 * its parts (`isError`: `success: false`); anything else is `failed`, saying so.
 */
function toReply(result, name) {
  const notOne = (why) => ({
    reply: textReply(`the tool ${name} returned ${why}, not a tool result (a string, or { content: [{ type: 'text', text } | { type: 'image', url }], isError? })`, false),
    kind: 'failed',
  })
  let value
  try {
    value = plain(result, 'result')
  } catch (error) {
    return notOne(`a value that is not plain data (${error.message})`)
  }
  if (typeof value === 'string') return { reply: { contentItems: bound([{ type: 'inputText', text: value.toWellFormed() }]), success: true }, kind: 'app' }
  if (!isPlainObject(value) || !Array.isArray(value.content)) return notOne(kindOf(value))
  if (value.isError !== undefined && typeof value.isError !== 'boolean') return notOne('an isError that is not a boolean')
  const items = []
  for (const [i, part] of value.content.entries()) {
    if (isPlainObject(part) && part.type === 'text' && typeof part.text === 'string') items.push({ type: 'inputText', text: part.text.toWellFormed() })
    else if (isPlainObject(part) && part.type === 'image' && typeof part.url === 'string') items.push(image(part.url))
    else return notOne(`content[${i}] that is neither { type: 'text', text } nor { type: 'image', url }`)
  }
  return { reply: { contentItems: bound(items), success: value.isError !== true }, kind: 'app' }
}

/** What a value that is not a tool result is, in words (`an object without content`, …). */
function kindOf(value) {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (isPlainObject(value)) return 'an object without a content array'
  return `a ${typeof value}`
}

/**
 * An image part: a `data:image/…` URL goes as it is (up to IMAGE_BOUND); anything else (a file
 * path, a remote URL, which Codex refuses; a `data:` URL of another type, which the model cannot
 * see) is not read, and a text says so in its place.
 */
function image(url) {
  if (!/^data:/i.test(url)) {
    return {
      type: 'inputText',
      text: '[an image of the tool was not sent: only data: URLs reach the model; a file path or a remote URL is not read]',
    }
  }
  if (!/^data:image\/[^;,]+[;,]/i.test(url)) {
    return { type: 'inputText', text: '[an image of the tool was not sent: its data: URL is not of an image type (data:image/…)]' }
  }
  if (url.length > IMAGE_BOUND) {
    return { type: 'inputText', text: `[an image of the tool was not sent: its data: URL is ${url.length} bytes, more than the ${IMAGE_BOUND} bytes an image may have]` }
  }
  return { type: 'inputImage', imageUrl: url }
}

/**
 * The texts of `items` bounded to TEXT_BOUND bytes of UTF-8 together: the text past the bound is
 * cut at a character boundary, and a note at the head of the first text says how many bytes were
 * cut. At the head, because Codex cuts further by the model's truncation policy: it keeps a
 * text's beginning and end and drops later text parts, so a note of its own or at the end
 * would not reach the model.
 */
function bound(items) {
  let left = TEXT_BOUND
  let cut = 0
  const kept = []
  for (const item of items) {
    if (item.type !== 'inputText') {
      kept.push(item)
      continue
    }
    const bytes = Buffer.byteLength(item.text)
    if (bytes <= left) {
      left -= bytes
      kept.push(item)
      continue
    }
    const text = utf8Prefix(item.text, left)
    const keptBytes = Buffer.byteLength(text)
    cut += bytes - keptBytes
    left -= keptBytes
    if (text !== '') kept.push({ type: 'inputText', text })
  }
  if (cut === 0) return kept
  const note = `[${cut} bytes of the tool's text were cut: a result carries at most ${TEXT_BOUND} bytes of text]`
  const first = kept.findIndex((item) => item.type === 'inputText')
  if (first < 0) kept.unshift({ type: 'inputText', text: note })
  else kept[first] = { type: 'inputText', text: `${note}\n${kept[first].text}` }
  return kept
}

/** The longest prefix of `text` of at most `bytes` bytes of UTF-8, ending at a character boundary. */
function utf8Prefix(text, bytes) {
  const buffer = Buffer.from(text, 'utf8')
  let end = Math.min(bytes, buffer.length)
  // Back off continuation bytes (10xxxxxx) to the start of the character cut through.
  while (end > 0 && end < buffer.length && (buffer[end] & 0xc0) === 0x80) end--
  return buffer.subarray(0, end).toString('utf8')
}

module.exports = { prepareTools, serveTools, TEXT_BOUND, IMAGE_BOUND }
