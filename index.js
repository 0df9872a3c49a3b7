'use strict'
// Public API of @rennet/codex over the generated native binding (binding.js), loaded through
// native.js so that a platform without the addon gets NATIVE_ADDON_UNAVAILABLE, not a throw.

const binding = require('./native.js')

function isAbortSignal(value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof value.aborted === 'boolean' &&
    typeof value.addEventListener === 'function' &&
    typeof value.removeEventListener === 'function'
  )
}

/** Turns the native `InvalidArg` error of option validation into the TypeError callers expect. */
function nativeCall(fn) {
  try {
    return fn()
  } catch (error) {
    if (error && error.code === 'InvalidArg') throw new TypeError(error.message)
    throw error
  }
}

const COLON = 58
const SAME_ITEM = 61

/**
 * Reads the events of the batches the native side writes (their text is described in
 * crates/core/src/batch.rs): deltas are built from slices of the text, everything else is parsed JSON.
 */
class BatchReader {
  text = ''
  pos = 0
  /** The item id of the previous delta, which a later delta of the batch may repeat. */
  itemId = ''

  get more() {
    return this.pos < this.text.length
  }

  next() {
    switch (this.text.charCodeAt(this.pos++)) {
      case 109: {
        const itemId = this.#item()
        return { type: 'messageDelta', itemId, delta: this.#string() }
      }
      case 99: {
        const itemId = this.#item()
        return { type: 'commandOutput', itemId, delta: this.#string() }
      }
      case 115:
        return this.#reasoning('summary')
      case 116:
        return this.#reasoning('text')
      case 74:
        return JSON.parse(this.#string())
      default:
        throw new Error(`@rennet/codex: unreadable event batch at ${this.pos - 1}`)
    }
  }

  #string() {
    const text = this.text
    let i = this.pos
    let length = 0
    let c
    while ((c = text.charCodeAt(i++)) !== COLON) length = length * 10 + c - 48
    this.pos = i + length
    return text.slice(i, i + length)
  }

  #reasoning(part) {
    const itemId = this.#item()
    const delta = this.#string()
    return { type: 'reasoningDelta', itemId, delta, part, index: Number(this.#string()) }
  }

  #item() {
    if (this.text.charCodeAt(this.pos) === SAME_ITEM) {
      this.pos++
      return this.itemId
    }
    return (this.itemId = this.#string())
  }
}

class Turn {
  #native
  #batch = new BatchReader()
  #done = false
  #outcome = null
  #iterator = null
  #abortRequested = false
  /** What the first abort gave as its reason (the signal's `reason`, or `abort(reason)`'s). */
  #abortReason = undefined

  #resolveBatch = null
  /** Called by the native side with the batch `waitBatch` promised (null: nothing follows). */
  #onBatch = (text) => {
    const resolve = this.#resolveBatch
    this.#resolveBatch = null
    resolve(text)
  }

  constructor(native, signal) {
    this.#native = native
    if (signal) {
      const onAbort = () => this.abort(signal.reason)
      signal.addEventListener('abort', onAbort, { once: true })
      native.outcome().then(() => signal.removeEventListener('abort', onAbort))
    }
  }

  /**
   * Idempotent; safe before, during and after the turn. The first call's `reason` becomes the
   * `abortReason` of a cancelled turn's terminal event.
   */
  abort(reason) {
    if (!this.#abortRequested) {
      this.#abortRequested = true
      this.#abortReason = reason
    }
    this.#native.abort()
  }

  /**
   * Adds input to the running turn. Resolves once the server took it; rejects with a
   * SteerError (TURN_NOT_STEERABLE, TURN_ENDED). Throws a TypeError naming the item.
   */
  steer(input) {
    const items = typeof input === 'string' ? [{ type: 'text', text: input }] : input
    if (!Array.isArray(items)) throw new TypeError('input must be a string or an array of input items')
    const pending = nativeCall(() => this.#native.steer(JSON.stringify(wellFormed(items))))
    return pending.then((refusal) => {
      if (refusal !== null) {
        const { code, message, detail } = JSON.parse(refusal)
        throw new SteerError(code, message, detail)
      }
    })
  }

  /** The terminal event. Never rejects; awaiting it alone never stalls the turn. */
  get outcome() {
    if (this.#outcome === null) {
      if (this.#iterator === null) this.#native.unbound()
      this.#outcome = this.#native.outcome().then((json) => this.#terminal(JSON.parse(json)))
    }
    return this.#outcome
  }

  /** A cancelled turn's terminal (and turnCompleted) event carries the abort reason, as given. */
  #terminal(event) {
    if (event.status === 'cancelled') event.abortReason = this.#abortReason
    return event
  }

  #take() {
    const value = this.#batch.next()
    if (value.type === 'terminal') {
      this.#done = true
      this.#terminal(value)
    } else if (value.type === 'turnCompleted') {
      this.#terminal(value)
    }
    return { done: false, value }
  }

  async #next() {
    if (this.#batch.more) return this.#take()
    if (this.#done) return { done: true, value: undefined }
    let text = this.#native.takeBatch()
    if (text === null) {
      text = this.#native.waitBatch(this.#onBatch) ?? (await new Promise((resolve) => (this.#resolveBatch = resolve)))
    }
    if (text === null) {
      this.#done = true
      return { done: true, value: undefined }
    }
    this.#batch.text = text
    this.#batch.pos = 0
    return this.#take()
  }

  #leave() {
    if (!this.#done) {
      this.#done = true
      this.abort()
      this.#native.detach()
    }
    return { done: true, value: undefined }
  }

  [Symbol.asyncIterator]() {
    if (this.#iterator === null) {
      // Calls are chained so that concurrent next() calls still receive events in order.
      // While nothing is in flight, an event of the current batch is handed out at once:
      // that is the common case, one promise per event instead of a chain of three.
      let chain = Promise.resolve()
      let inFlight = 0
      const serialize = (step) => {
        inFlight++
        const settled = () => inFlight--
        chain = chain.then(step, step)
        chain.then(settled, settled)
        return chain
      }
      this.#iterator = {
        next: () => {
          if (inFlight === 0 && this.#batch.more) return Promise.resolve(this.#take())
          return serialize(() => this.#next())
        },
        return: () => serialize(() => this.#leave()),
        throw: (error) =>
          serialize(() => {
            this.#leave()
            throw error
          }),
        [Symbol.asyncIterator]() {
          return this
        },
      }
    }
    return this.#iterator
  }
}

/** What `Turn.steer` rejects with: the server's refusal (`TURN_NOT_STEERABLE`) or `TURN_ENDED`. */
class SteerError extends Error {
  constructor(code, message, detail) {
    super(message)
    this.name = 'SteerError'
    this.code = code
    if (detail !== undefined) this.detail = detail
  }
}

/**
 * Text sliced through a character (an emoji cut in half) keeps its text, with U+FFFD where the
 * lone half was: Codex sends it as UTF-8, which cannot hold the half. Other values are left to
 * the native checks, which name them.
 */
function wellFormed(items) {
  return items.map((item) =>
    item !== null && typeof item === 'object' && typeof item.text === 'string' ? { ...item, text: item.text.toWellFormed() } : item,
  )
}

/**
 * Runs one Codex turn. Returns at once; events stream through `for await`, the terminal event
 * is also `turn.outcome`. Throws a TypeError naming the option for invalid options.
 */
function runTurn(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError('runTurn: options must be an object')
  }
  const wire = options.outputSchema === undefined ? undefined : outputSchema(options.outputSchema).wire
  return startTurn(options, wire)
}

/** A prepared turn that is not started ends its child after this. */
const DEFAULT_IDLE_TIMEOUT_MS = 300_000

/** Why a prepared turn that was never started ended (its `abortReason`). */
class IdleTimeoutError extends Error {
  constructor(ms) {
    super(`the prepared turn was not started within idleTimeoutMs (${ms} ms)`)
    this.name = 'TimeoutError'
  }
}

class PreparedTurn {
  #native
  #signal
  #onAbort = null
  #idle = null
  #turn = null
  #disposed = false
  #reason = undefined
  #ready = null

  constructor(native, signal, idleTimeoutMs) {
    this.#native = native
    this.#signal = signal
    if (signal) {
      this.#onAbort = () => this.dispose(signal.reason)
      signal.addEventListener('abort', this.#onAbort, { once: true })
      native.outcome().then(() => this.#unlisten())
    }
    this.#idle = setTimeout(() => this.dispose(new IdleTimeoutError(idleTimeoutMs)), idleTimeoutMs)
    // A waiting prepared turn does not keep the process alive.
    this.#idle.unref?.()
  }

  #unlisten() {
    if (this.#onAbort) this.#signal.removeEventListener('abort', this.#onAbort)
    this.#onAbort = null
  }

  /** How the preparation ended: `{ threadId }` or `{ failure }`. Never rejects. */
  get ready() {
    this.#ready ??= this.#native.ready().then((json) => JSON.parse(json))
    return this.#ready
  }

  /**
   * Sends `turn/start` (at once if the thread is ready, else as soon as it is) and returns the
   * Turn, which yields every event from `started` on. Once; throws a TypeError naming the
   * field for invalid input.
   */
  start(input) {
    if (this.#turn !== null) throw new Error('start() was called already: a prepared turn is started once')
    const given = typeof input === 'string' || Array.isArray(input) ? startInput(input) : input
    if (given === null || typeof given !== 'object') {
      throw new TypeError('start: input must be a string, an array of input items or { prompt?, input?, outputSchema?, effort? }')
    }
    const { outputSchema: schema, ...rest } = given
    if (typeof rest.prompt === 'string') rest.prompt = rest.prompt.toWellFormed()
    if (Array.isArray(rest.input)) rest.input = wellFormed(rest.input)
    if (schema !== undefined) rest.outputSchema = outputSchema(schema).wire
    // Checked (and handed over) even after dispose: the runner, aborted first, ignores it.
    nativeCall(() => this.#native.start(JSON.stringify(rest)))
    clearTimeout(this.#idle)
    this.#unlisten()
    this.#turn = new Turn(this.#native, this.#disposed ? undefined : this.#signal)
    if (this.#disposed) this.#turn.abort(this.#reason)
    return this.#turn
  }

  /** Before start: ends the child at once (the Turn start() then returns is cancelled). After: nothing. */
  dispose(reason) {
    if (this.#turn !== null || this.#disposed) return
    this.#disposed = true
    this.#reason = reason
    clearTimeout(this.#idle)
    this.#native.abort()
  }
}

/** `start('text')` and `start([items])`: the input alone. */
function startInput(input) {
  return typeof input === 'string' ? { prompt: input } : { input }
}

/**
 * Starts everything of a turn up to `turn/start` (discovery, the child, `initialize`, the
 * account and isolation checks, the thread) and waits for `start()`. Throws a TypeError naming
 * the option for invalid options.
 */
function prepareTurn(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError('prepareTurn: options must be an object')
  }
  const { idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS, ...rest } = options
  if (!(Number.isInteger(idleTimeoutMs) && idleTimeoutMs > 0)) {
    throw new TypeError('options.idleTimeoutMs must be a positive integer number of milliseconds')
  }
  const { native, signal, aborted } = startNative(rest, binding.prepareTurn)
  const prepared = new PreparedTurn(native, signal, idleTimeoutMs)
  if (aborted) prepared.dispose(signal.reason)
  return prepared
}

/** Options counted in milliseconds: JSON would turn NaN and Infinity into null (the default). */
const MILLISECOND_OPTIONS = ['interruptGraceMs', 'requestTimeoutMs']

function checkMilliseconds(options, names) {
  for (const name of names) {
    const value = options[name]
    if (value !== undefined && !(Number.isInteger(value) && value >= 0)) {
      throw new TypeError(`options.${name} must be a non-negative integer number of milliseconds`)
    }
  }
}

/** Starts the turn of checked options; `wire` is the JSON Schema the model is sent, if any. */
function startTurn(options, wire) {
  if (wire !== undefined) options = { ...options, outputSchema: wire }
  const { native, signal, aborted } = startNative(options, binding.startTurn)
  const turn = new Turn(native, signal)
  if (aborted) turn.abort(signal.reason)
  return turn
}

/** The native turn (or prepared turn) of `options`, checked: `start` is the binding's call. */
function startNative(options, start) {
  const { signal, ...rest } = options
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new TypeError('options.signal must be an AbortSignal')
  }
  checkMilliseconds(rest, MILLISECOND_OPTIONS)
  if (typeof rest.prompt === 'string') rest.prompt = rest.prompt.toWellFormed()
  if (Array.isArray(rest.input)) rest.input = wellFormed(rest.input)
  // An already-aborted signal: the turn ends before anything starts.
  const aborted = signal !== undefined && signal.aborted
  const native = nativeCall(() => start(JSON.stringify(rest), aborted))
  return { native, signal, aborted }
}

/** The prepared `outputSchema` (see output-schema.js, loaded on first use with ajv). */
function outputSchema(schema) {
  return require('./output-schema.js').prepareOutputSchema(schema, 'options.outputSchema')
}

/**
 * Finds the user's Codex CLI and reports every candidate considered (cached per locus and
 * environment; `refresh: true` probes again). Rejects with a TypeError naming the option for
 * invalid options; an unavailable Codex is a report with `available: false`, not an error.
 */
async function discoverCodex(options) {
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    throw new TypeError('discoverCodex: options must be an object')
  }
  let json
  try {
    json = await binding.discoverCodex(options === undefined ? undefined : JSON.stringify(options))
  } catch (error) {
    if (error && error.code === 'InvalidArg') throw new TypeError(error.message)
    throw error
  }
  return JSON.parse(json)
}

/** The Error runUtility rejects with: the terminal failure's source, code and detail. */
class UtilityError extends Error {
  constructor(terminal, failure, options) {
    super(failure.message, options)
    this.name = 'UtilityError'
    this.source = failure.source
    this.code = failure.code
    this.detail = failure.detail
    this.terminal = terminal
  }
}

/** ` (why)` for an abort reason that says something: an Error's message, or a string. */
function reasonText(reason) {
  if (reason instanceof Error && reason.message) return `: ${reason.message}`
  if (typeof reason === 'string' && reason) return `: ${reason}`
  return ''
}

/**
 * A structured one-shot call on the same runner: resolves with the parsed final message,
 * validated against `outputSchema` (a JSON Schema through ajv, a Standard Schema through its
 * own library, so refinements and transforms apply). Codex itself does not validate it.
 */
async function runUtility(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError('runUtility: options must be an object')
  }
  if (options.outputSchema === undefined) {
    throw new TypeError('options.outputSchema is required: a JSON Schema object or a Standard Schema (zod, valibot, arktype, …)')
  }
  const schema = outputSchema(options.outputSchema)
  const terminal = await startTurn(options, schema.wire).outcome
  if (terminal.status === 'cancelled') {
    const reason = terminal.abortReason
    throw new UtilityError(
      terminal,
      {
        source: 'turn',
        code: 'CANCELLED',
        message: `the utility call was cancelled (${terminal.cancellation})${reasonText(reason)}`,
        detail: { cancellation: terminal.cancellation },
      },
      { cause: reason },
    )
  }
  if (terminal.status !== 'completed') throw new UtilityError(terminal, terminal.failure)
  const checked = await schema.validate(terminal.structuredOutput)
  if (!checked.ok) {
    throw new UtilityError(terminal, {
      source: 'turn',
      code: 'STRUCTURED_OUTPUT_MISMATCH',
      message: `the final message does not match outputSchema: ${checked.message}`,
      detail: { text: terminal.finalMessage, ...checked.detail },
    })
  }
  return {
    output: checked.value,
    text: terminal.finalMessage,
    usage: terminal.usage,
    threadId: terminal.threadId,
    turnId: terminal.turnId,
  }
}

let loggerWarned = false

/**
 * Sends the native core's log records to `logger` instead of stderr; `null` removes it.
 * A logger that throws is reported once as a process warning and never reaches the turn.
 */
function setLogger(logger, options) {
  if (logger !== null && typeof logger !== 'function') {
    throw new TypeError('setLogger: logger must be a function or null')
  }
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    throw new TypeError('setLogger: options must be an object')
  }
  const filter = options === undefined ? undefined : options.filter
  if (filter !== undefined && typeof filter !== 'string') {
    throw new TypeError('options.filter must be a string')
  }
  const deliver =
    logger === null
      ? null
      : (json) => {
          try {
            logger(JSON.parse(json))
          } catch (error) {
            if (!loggerWarned) {
              loggerWarned = true
              process.emitWarning(`@rennet/codex: the logger threw: ${error && error.message}`)
            }
          }
        }
  nativeCall(() => binding.setLogger(deliver, filter))
}

/**
 * What the calls around turns reject with: the source, code and verbatim message a turn's
 * terminal failure would carry, or `CANCELLED` with the abort reason as `cause`.
 */
class CallError extends Error {
  constructor(failure, options) {
    super(failure.message, options)
    this.name = 'CallError'
    this.source = failure.source
    this.code = failure.code
    this.detail = failure.detail
  }
}

/**
 * Runs call `name` (one short-lived app-server child, see crates/core/src/call/). Throws a
 * TypeError naming the option for bad options; the promise settles once the child is gone.
 */
function startCall(name, threadId, options) {
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    throw new TypeError(`${name}: options must be an object`)
  }
  const { signal, ...rest } = options === undefined ? {} : options
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new TypeError('options.signal must be an AbortSignal')
  }
  checkMilliseconds(rest, ['requestTimeoutMs'])
  // JSON would turn NaN into null, which reads as "not given".
  if (rest.limit !== undefined && !Number.isInteger(rest.limit)) {
    throw new TypeError('options.limit must be a positive integer')
  }
  const aborted = signal !== undefined && signal.aborted
  const native = nativeCall(() => binding.startCall(name, threadId, JSON.stringify(rest), aborted))
  const onAbort = () => native.abort()
  if (signal !== undefined) signal.addEventListener('abort', onAbort, { once: true })
  return native.outcome().then((json) => {
    if (signal !== undefined) signal.removeEventListener('abort', onAbort)
    const outcome = JSON.parse(json)
    if ('ok' in outcome) return outcome.ok
    if (outcome.cancelled) {
      const reason = signal === undefined ? undefined : signal.reason
      const failure = {
        source: 'jsonrpc',
        code: 'CANCELLED',
        message: `${name} was cancelled${reasonText(reason)}`,
        detail: { call: name },
      }
      throw new CallError(failure, { cause: reason })
    }
    throw new CallError(outcome.failure)
  })
}

function threadArgument(name, threadId) {
  if (typeof threadId !== 'string' || threadId === '') {
    throw new TypeError(`${name}: threadId must be a non-empty string`)
  }
  return threadId
}

/** Who is logged in (`account/read`) and the plan's limits (`account/rateLimits/read`, else null). */
function readAccount(options) {
  return startCall('readAccount', undefined, options)
}

/** Every page of `model/list`; hidden models only with `includeHidden`. */
function listModels(options) {
  return startCall('listModels', undefined, options)
}

/** One page of `thread/list`: `{ threads, nextCursor }`; `cwd` filters by the thread's directory. */
function listThreads(options) {
  return startCall('listThreads', undefined, options)
}

/** The stored thread (`thread/read`), as the server sent it. */
function readThread(threadId, options) {
  return startCall('readThread', threadArgument('readThread', threadId), options)
}

/** A new thread with this one's history (`thread/fork`, through `lastTurnId`): `{ threadId }`. */
function forkThread(threadId, options) {
  return startCall('forkThread', threadArgument('forkThread', threadId), options)
}

module.exports = {
  runTurn,
  prepareTurn,
  runUtility,
  discoverCodex,
  setLogger,
  UtilityError,
  SteerError,
  readAccount,
  listModels,
  listThreads,
  readThread,
  forkThread,
  CallError,
}
