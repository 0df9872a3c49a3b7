'use strict'
// Turns: runTurn, prepareTurn and the Turn they give (crates/core/src/turn/).

const binding = require('../native.js')
const { SteerError, CodexError, settle, failure, nativeCall } = require('./errors.js')
const { checkOptions, wire, option, isArray } = require('./plain.js')
const { checkSignal, listen } = require('./signal.js')
const { BatchReader } = require('./batch.js')
const { serialIterator } = require('./iterator.js')
const { serve, checkHandler } = require('./server-requests.js')
const { prepareTools, serveTools } = require('./tools.js')

/** The abort reason a Turn (or a prepared turn) was given, for lib/tools.js's bridge: not part of the API. */
const ABORT_REASON = Symbol('rennet.turn.abortReason')
const { codes } = require('./surface.js')

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

  /**
   * `stop` detaches the caller's signal once the turn has ended. Asking for the outcome at once
   * is also what keeps the process alive until the terminal, whether or not anybody iterates
   * the turn or awaits it: a running turn is work (a pending promise of the binding holds
   * Node's event loop).
   */
  constructor(native, stop) {
    this.#native = native
    native.outcome().then(stop, stop)
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
   * SteerError (TURN_NOT_STEERABLE, TURN_ENDED), or with a TypeError naming the item.
   */
  steer(input) {
    try {
      const items = typeof input === 'string' ? [{ type: 'text', text: input }] : input
      if (items === null || typeof items !== 'object' || !isArray(items, 'input')) throw new TypeError('input must be a string or an array of input items')
      const given = wellFormed(wire({ input: items }, [], 'steer').input, 'input')
      return nativeCall(() => this.#native.steer(JSON.stringify(given))).then((json) => {
        settle(json, SteerError)
      })
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /** The terminal event. Never rejects; awaiting it alone never stalls the turn. */
  get outcome() {
    if (this.#outcome === null) {
      if (this.#iterator === null) this.#native.unbound()
      this.#outcome = this.#native.outcome().then((json) => this.#terminal(JSON.parse(json)))
    }
    return this.#outcome
  }

  /** The first abort's reason (undefined before one), for the tools' signals. */
  get [ABORT_REASON]() {
    return this.#abortReason
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
    this.#iterator ??= serialIterator({
      next: () => this.#next(),
      leave: () => this.#leave(),
      ready: () => (this.#batch.more ? this.#take() : null),
    })
    return this.#iterator
  }
}

/**
 * Text sliced through a character (an emoji cut in half) keeps its text, with U+FFFD where the
 * lone half was: Codex sends it as UTF-8, which cannot hold the half. `items` is a plain copy;
 * other values are left to the native checks, which name them.
 */
function wellFormed(items) {
  for (const item of items) {
    if (item !== null && typeof item === 'object' && typeof item.text === 'string') item.text = item.text.toWellFormed()
  }
  return items
}

/**
 * Runs one Codex turn. Returns at once; events stream through `for await`, the terminal event
 * is also `turn.outcome`. Throws a TypeError naming the option for invalid options.
 */
function runTurn(options) {
  options = checkOptions(options, 'runTurn')
  const schema = option(options, 'outputSchema')
  const prepared = schema === undefined ? undefined : require('./output-schema.js').prepareOutputSchema(schema, 'options.outputSchema')
  return startTurn(options, prepared === undefined ? undefined : prepared.wire)
}

/**
 * Starts the turn of `options` (checked to be an object); `schema`: the JSON Schema the model is
 * sent; `start`: the binding's call (a turn's, or a review's).
 */
function startTurn(options, schema, start = binding.startTurn, defaults = {}) {
  let turn = null
  const reason = () => turn?.[ABORT_REASON]
  const { native, listening } = startNative(options, ['outputSchema'], start, (reason) => turn.abort(reason), reason, (given) => {
    for (const [key, value] of Object.entries(defaults)) if (given[key] === undefined) given[key] = value
    if (schema !== undefined) given.outputSchema = schema
    if (typeof given.prompt === 'string') given.prompt = given.prompt.toWellFormed()
    if (Array.isArray(given.input)) wellFormed(given.input)
  })
  turn = new Turn(native, () => listening.stop())
  // An already-aborted signal: the turn ends before anything starts.
  if (listening.aborted) turn.abort(listening.reason)
  return turn
}

/**
 * The native turn of `options` (checked to be an object): the signal, the handler and the tools
 * read and checked, the rest read as given but for `skip` (JavaScript's own), `adjust`ed, and
 * started by the binding's `start`; `onAbort(reason)` once the signal aborts — attached before
 * the child exists, so a signal that cannot be listened to starts nothing. `abortReason()`: the
 * turn's abort reason, which a tool's signal aborts with.
 */
function startNative(options, skip, start, onAbort, abortReason, adjust = () => {}) {
  const signal = option(options, 'signal')
  checkSignal(signal)
  const handler = option(options, 'onServerRequest')
  checkHandler(handler)
  const toolsGiven = option(options, 'tools')
  const tools = toolsGiven === undefined ? undefined : prepareTools(toolsGiven)
  const given = wire(options, ['signal', 'onServerRequest', 'tools', ...skip])
  if (handler !== undefined) given.onServerRequest = true
  if (tools !== undefined) given.tools = tools.wire
  adjust(given)
  let native
  // The handler's bridge lives as long as the turn's work: it reaches the native turn only
  // weakly, so that a prepared turn nobody holds can still be collected (and its child ended).
  let weak
  const listening = listen(signal, onAbort)
  try {
    const reach = () => weak?.deref()
    const others = handler === undefined ? undefined : serve(handler, reach)
    const requests = tools === undefined ? others : serveTools(tools.table, others, reach, abortReason)
    native = nativeCall(() => start(JSON.stringify(given), listening.aborted, requests))
    weak = new WeakRef(native)
  } catch (error) {
    listening.stop()
    throw error
  }
  return { native, listening }
}

/** Why a prepared turn that was never started ended (its `abortReason`): the core's words. */
class IdleTimeoutError extends Error {
  constructor(message) {
    super(message)
    this.name = 'TimeoutError'
  }
}

/**
 * What lib/conversation.js reads of a prepared turn, under a key of this module (not part of
 * the API): whether `start()` would still run a turn on the waiting child (it is not started,
 * disposed, or ended), and a promise that resolves once the child and everything it started
 * are gone.
 */
const WAITING = Symbol('rennet.preparedTurn.waiting')

/**
 * A prepared turn that waits for `start()` holds nothing that keeps the process alive, nor
 * anything that keeps itself from being collected: no pending promise of the binding (napi-rs
 * settles an async export through a referenced threadsafe function, and keeps its receiver
 * until then). Its idle end (`idleTimeoutMs`) is the core's. Reading `ready` is asking for the
 * preparation's result: that promise keeps the process until it settles. From `start()` on it
 * is a running turn, whose pending outcome keeps the process until its terminal; after
 * `dispose()` its child's end is work too.
 */
class PreparedTurn {
  #native
  #listening
  #turn = null
  #disposed = false
  #reason = undefined
  #ready = null
  #gone = null

  constructor(native, listening) {
    this.#native = native
    this.#listening = listening
  }

  /**
   * Resolves once the child and everything it started are gone; asked only once the turn was
   * started or disposed, or it ended by itself (then it resolves at once). A waiting child
   * that died leaves the caller's signal listened to until then: nothing else notices the
   * death while nobody waits for it.
   */
  #whenGone() {
    this.#gone ??= this.#native.outcome().then(
      () => this.#listening.stop(),
      () => this.#listening.stop(),
    )
    return this.#gone
  }

  /** How the preparation ended: `{ threadId }` or `{ failure }`. Never rejects. */
  get ready() {
    this.#ready ??= this.#native.ready().then((json) => {
      const envelope = JSON.parse(json)
      return envelope.failure === undefined ? envelope.ok : { failure: envelope.failure }
    })
    return this.#ready
  }

  /**
   * Sends `turn/start` (at once if the thread is ready, else as soon as it is) and returns the
   * Turn, which yields every event from `started` on. Once: a second call throws a CodexError
   * ALREADY_STARTED; invalid input throws a TypeError naming the field.
   */
  start(input) {
    if (this.#turn !== null) {
      throw new CodexError(failure('turn', codes.ALREADY_STARTED, 'start() was called already: a prepared turn is started once'))
    }
    let given
    if (typeof input === 'string') given = { prompt: input }
    else if (input !== null && typeof input === 'object' && isArray(input, 'input')) given = { input }
    else {
      if (input === null || typeof input !== 'object') {
        throw new TypeError('start: input must be a string, an array of input items or { prompt?, input?, outputSchema?, effort?, model? }')
      }
      given = checkOptions(input, 'start', { path: 'input' })
    }
    const schema = option(given, 'outputSchema', 'input')
    const rest = wire(given, ['outputSchema'], 'input')
    if (typeof rest.prompt === 'string') rest.prompt = rest.prompt.toWellFormed()
    if (Array.isArray(rest.input)) wellFormed(rest.input)
    if (schema !== undefined) rest.outputSchema = require('./output-schema.js').prepareOutputSchema(schema, 'input.outputSchema').wire
    // Checked (and handed over) even after dispose: the runner, aborted first, ignores it.
    nativeCall(() => this.#native.start(JSON.stringify(rest)))
    // From now on the Turn answers the signal.
    const listening = this.#listening
    this.#turn = new Turn(this.#native, () => listening.stop())
    this.#forward = (reason) => this.#turn.abort(reason)
    if (this.#disposed) this.#turn.abort(this.#reason)
    else if (this.#idled() !== null) this.#turn.abort(new IdleTimeoutError(this.#idled()))
    return this.#turn
  }

  /** The abort reason of its Turn, or of its dispose (for the tools' signals). */
  get [ABORT_REASON]() {
    return this.#turn === null ? this.#reason : this.#turn[ABORT_REASON]
  }

  /** Where the caller's signal goes: `dispose` before start, the Turn's `abort` after. */
  #forward = (reason) => this.dispose(reason)

  /** The caller's signal aborted. */
  onSignal(reason) {
    this.#forward(reason)
  }

  /** Why the core ended it before `start()` (it waited longer than `idleTimeoutMs`), or null. */
  #idled() {
    return this.#native.idled() ?? null
  }

  /** For lib/conversation.js: `{ waiting, gone }` (see WAITING); `gone` is read once the turn no longer waits. */
  get [WAITING]() {
    const whenGone = () => this.#whenGone()
    return {
      waiting: this.#turn === null && !this.#disposed && this.#idled() === null && !this.#native.finished(),
      get gone() {
        return whenGone()
      },
    }
  }

  /** Before start: ends the child at once (the Turn start() then returns is cancelled). After: nothing. */
  dispose(reason) {
    if (this.#turn !== null || this.#disposed) return
    this.#disposed = true
    this.#reason = reason
    this.#native.abort()
    // Its child's end is work: the process stays until it is gone.
    this.#whenGone()
  }
}

/**
 * Starts everything of a turn up to `turn/start` (discovery, the child, `initialize`, the
 * account and isolation checks, the thread) and waits for `start()`. Throws a TypeError naming
 * the option for invalid options.
 */
function prepareTurn(options) {
  options = checkOptions(options, 'prepareTurn')
  let prepared = null
  const reason = () => prepared?.[ABORT_REASON]
  const { native, listening } = startNative(options, [], binding.prepareTurn, (reason) => prepared.onSignal(reason), reason)
  prepared = new PreparedTurn(native, listening)
  if (listening.aborted) prepared.dispose(listening.reason)
  return prepared
}

/**
 * Reviews changes (`review/start`, inline on the thread — a new one unless `threadId`): a Turn
 * whose `finalMessage` is the review. Throws a TypeError naming the option for invalid options.
 */
function runReview(options) {
  options = checkOptions(options, 'runReview')
  return startTurn(options, undefined, binding.startReview)
}

module.exports = { runTurn, prepareTurn, runReview, startTurn, Turn, PreparedTurn, WAITING }
