'use strict'
// A conversation, for the app that shows a chat: a thin layer over runTurn and prepareTurn that
// keeps the thread id between turns, prepares the next turn's child while the user types, and
// decides what a send does while a turn runs (steer it, queue behind it, or refuse). Still one
// turn, one child: a conversation never reuses a child and never runs two on its thread at once
// (Codex refuses a second child on a thread another one holds: "already has an active writer"),
// so a child is started on the thread only once the previous one is gone.

const binding = require('../native.js')
const { runTurn, prepareTurn, WAITING } = require('./turn.js')
const { forkThread } = require('./calls.js')
const { CodexError, SteerError, failure, nativeCall } = require('./errors.js')
const { checkOptions, wire, option, plain, isArray } = require('./plain.js')
const { serialIterator } = require('./iterator.js')
const { checkHandler } = require('./server-requests.js')
const { prepareTools } = require('./tools.js')
// The options of the calls around turns, as a fork takes them from the conversation's.
const { callOptions: CALL_OPTIONS, prelude, codes } = require('./surface.js')

/** Events a prepared turn yields before its turn starts: held until it is clear the turn runs on this child. */
const PRELUDE = new Set(prelude)

/**
 * Has the core check the options of `entry` (`openConversation`, `send`, `fork`): `given` is
 * their plain copy, `own` the values JavaScript keeps (a function, a signal) by name, of which the
 * core is told `true` where one was given. Throws a TypeError naming a bad option.
 */
function checkWithCore(entry, given, own = {}) {
  const told = { ...given }
  for (const [key, value] of Object.entries(own)) if (value !== undefined) told[key] = true
  nativeCall(() => binding.checkOptions(entry, JSON.stringify(told)))
}

/**
 * An AbortSignal that has aborted with exactly `reason` (`undefined` included, which
 * `AbortSignal.abort()` would replace with an AbortError): a turn given it starts nothing and
 * ends `cancelled` with that `abortReason`.
 */
const abortedSignal = (reason) => ({ aborted: true, reason, addEventListener() {}, removeEventListener() {} })

/** The error of a conversation's state (`TURN_RUNNING`, `CONVERSATION_CLOSED`), as every error of the package: a CodexError. */
const stateError = (code, message) => new CodexError(failure('turn', code, message))
const closedError = (what) => stateError(codes.CONVERSATION_CLOSED, `the conversation was closed: ${what}`)

/**
 * Whether the Turn of a prepared child ended before its turn began for a reason another child
 * can get past: the child died while it waited, or its preparation failed (a child started at
 * send time retries it). A `turn/start` that Codex refused is its answer to the input and stays.
 */
function diedBeforeTurn(terminal) {
  if (terminal.status !== 'failed' || terminal.turnId !== null || terminal.failure === null) return false
  const { source, detail } = terminal.failure
  return !(source === 'jsonrpc' && detail !== null && typeof detail === 'object' && detail.method === 'turn/start')
}

/**
 * One Turn of a conversation, as `send` returns it: a Turn that forwards to the turn that runs
 * for it, which may start later (a queued send, a send that waits for the previous child to let
 * go of the thread) or, for a prepared child that died before its turn began, be a fresh child's
 * (the dead one's events are dropped: the Turn yields one attempt's events and one terminal).
 * It keeps the Turn contract: one terminal, last; `abort()` before it started ends it
 * `cancelled` with nothing started; `outcome` never rejects.
 */
class ConversationTurn {
  /** The attempt events and the outcome come from now: `{ turn, fallback, state, held }`. */
  #current = null
  #launched
  #launch
  #abortRequested = false
  #abortReason = undefined
  /** Makes the Turn of an abort before anything started: `(reason) => Turn`. */
  #cancelled
  /** Checks a steer's input before it waits for the turn (throws a TypeError). */
  #check
  #onEnd
  #final = null
  #outcome
  #resolveOutcome

  // iteration
  #iterator = null
  #reading = null
  #inner = null
  #ready = []
  #done = false

  constructor({ cancelled, check, onEnd }) {
    this.#cancelled = cancelled
    this.#check = check
    this.#onEnd = onEnd
    this.#launched = new Promise((resolve) => (this.#launch = resolve))
    this.#outcome = new Promise((resolve) => (this.#resolveOutcome = resolve))
  }

  /** Whether a turn runs (or ran) for it. */
  get launched() {
    return this.#current !== null
  }

  /**
   * Starts the turn: `make()` gives its Turn; `fallback()`, for a prepared child's Turn, a fresh
   * child's should it die before its turn began. After an abort, nothing starts.
   */
  start(make, fallback = null) {
    if (this.#current !== null) return
    if (this.#abortRequested) return this.#attach(() => this.#cancelled(this.#abortReason), null)
    this.#attach(make, fallback)
  }

  #attach(make, fallback) {
    let turn
    try {
      turn = make()
    } catch (error) {
      // Options and input were checked when the conversation and the send were: this is a
      // defect, and the turn ends cancelled with the error as its reason rather than hang.
      turn = this.#cancelled(error)
    }
    const attempt = { turn, fallback, state: fallback === null ? 'final' : 'open', held: [] }
    this.#current = attempt
    this.#launch(attempt)
    this.#watch(attempt)
    return attempt
  }

  /** The outcome, for a caller that does not iterate (and for the conversation, always). */
  async #watch(attempt) {
    const terminal = await attempt.turn.outcome
    if (this.#decide(attempt, terminal) === null) this.#finish(terminal)
  }

  /**
   * What follows the terminal of `attempt`: `null` when it is the final one, else the attempt
   * that replaced it (decided once, whichever of iteration and outcome sees it first).
   */
  #decide(attempt, terminal) {
    if (attempt.state === 'switched') return this.#current
    if (attempt.state === 'open' && !this.#abortRequested && diedBeforeTurn(terminal)) {
      attempt.state = 'switched'
      return this.#attach(attempt.fallback, null)
    }
    attempt.state = 'final'
    return null
  }

  #finish(terminal) {
    if (this.#final !== null) return
    this.#final = terminal
    this.#onEnd(this, terminal)
    this.#resolveOutcome(terminal)
  }

  /** Idempotent; safe before, during and after the turn. Before it started: it never will. */
  abort(reason) {
    if (!this.#abortRequested) {
      this.#abortRequested = true
      this.#abortReason = reason
    }
    if (this.#current === null) this.start(null)
    else this.#current.turn.abort(this.#abortReason)
  }

  /** The terminal event. Never rejects. */
  get outcome() {
    return this.#outcome
  }

  /** Adds input to the turn, once it runs (a queued turn's steer waits for its start). */
  steer(input) {
    try {
      this.#check(input)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.#steer(input)
  }

  async #steer(input) {
    let attempt = this.#current ?? (await this.#launched)
    for (;;) {
      try {
        return await attempt.turn.steer(input)
      } catch (error) {
        // A prepared child that died before its turn: the input goes to the child after it.
        if (!(error instanceof SteerError && error.code === 'TURN_ENDED') || attempt.fallback === null) throw error
        const next = this.#decide(attempt, await attempt.turn.outcome)
        if (next === null) throw error
        attempt = next
      }
    }
  }

  async #next() {
    for (;;) {
      if (this.#ready.length > 0) return { done: false, value: this.#ready.shift() }
      if (this.#done) return { done: true, value: undefined }
      if (this.#reading === null) {
        this.#reading = this.#current ?? (await this.#launched)
        this.#inner = this.#reading.turn[Symbol.asyncIterator]()
      }
      const reading = this.#reading
      const step = await this.#inner.next()
      if (step.done) {
        this.#done = true
        continue
      }
      const event = step.value
      if (event.type === 'terminal') {
        const next = this.#decide(reading, event)
        const held = reading.held
        reading.held = []
        if (next === null) {
          this.#ready.push(...held, event)
          this.#done = true
          this.#finish(event)
        } else {
          // The dead child's events are dropped; the fresh child's come instead.
          this.#reading = null
        }
        continue
      }
      if (reading.state === 'switched') continue
      if (reading.state === 'open' && PRELUDE.has(event.type)) {
        reading.held.push(event)
        continue
      }
      if (reading.state === 'open') reading.state = 'committed'
      this.#ready.push(...reading.held, event)
      reading.held = []
    }
  }

  #leave() {
    if (!this.#done) {
      this.#done = true
      this.#ready = []
      this.abort()
      // Ends the inner iteration as a `break` does: its child is ended, its queue dropped.
      if (this.#inner !== null) this.#inner.return()
    }
    return { done: true, value: undefined }
  }

  [Symbol.asyncIterator]() {
    this.#iterator ??= serialIterator({ next: () => this.#next(), leave: () => this.#leave() })
    return this.#iterator
  }
}

/** `send`'s input as a turn's: `{ prompt }` or `{ input }`, a plain copy (what is sent later is what was given). */
function turnInput(input) {
  if (typeof input === 'string') return { prompt: input }
  if (input !== null && typeof input === 'object' && isArray(input, 'input')) return { input: plain(input, 'input') }
  throw new TypeError('send: input must be a string or an array of input items')
}

/** Nothing is sent: the prompt of a turn that is checked, or cancelled before it started. */
const UNSENT = '(not sent)'

/** A send's TypeError as the caller wrote the call: the input is `input`, not `options.input`. */
function asSent(error) {
  if (error instanceof TypeError && /^options\.(input|prompt)\b/.test(error.message)) {
    return new TypeError(error.message.replace(/^options\.(input|prompt)/, 'input'))
  }
  return error
}

class Conversation {
  /** The turns' options but the thread, model and effort: plain data, read once. */
  #base
  #handler
  /** The app's tools as given (`tools`): every turn and fork passes them on. */
  #tools
  #onTurn
  #prepareNext
  /** How long a prepared child waits for the next send (prepareTurn's idleTimeoutMs; undefined: its default). */
  #idleTimeoutMs
  #threadId
  #model
  #effort
  /** `{ turn: PreparedTurn }` waiting for the next send, or null. */
  #prepared = null
  /** Resolves once no child this conversation started holds its thread (one disposed is ending). */
  #gone = Promise.resolve()
  #running = null
  /** Sends waiting for the running turn to end: `{ turn, spec }`. */
  #queue = []
  #closed = false
  #closing = null
  /** Forks under way: their AbortControllers and promises. */
  #forks = new Map()

  constructor(settings) {
    this.#base = settings.base
    this.#handler = settings.handler
    this.#tools = settings.tools
    this.#onTurn = settings.onTurn
    this.#prepareNext = settings.prepareNext
    this.#idleTimeoutMs = settings.idleTimeoutMs
    this.#threadId = settings.threadId
    this.#model = settings.model
    this.#effort = settings.effort
    this.#prepare()
  }

  /** The conversation's thread: the one it was opened on, or the one its first turn started. */
  get threadId() {
    return this.#threadId
  }

  /** The turn running now, or null. */
  get running() {
    return this.#running
  }

  /** For the tests and the host fixture (not part of the API): the prepared turn waiting, or null. */
  get [WAITING]() {
    return this.#prepared === null ? null : this.#prepared.turn
  }

  /**
   * A turn's options: the conversation's, its thread (`threadId`: as it was when the send was
   * launched), and `more` (the input, model, effort, signal).
   */
  #options(more, { effort = true, threadId = this.#threadId } = {}) {
    const options = { ...this.#base }
    if (threadId !== null) options.threadId = threadId
    if (this.#handler !== undefined) options.onServerRequest = this.#handler
    if (this.#tools !== undefined) options.tools = this.#tools
    for (const [key, value] of Object.entries(more)) {
      if (value !== undefined && (effort || key !== 'effort')) options[key] = value
    }
    return options
  }

  /**
   * A send's input (and model, effort) checked as the turn will read them, with nothing
   * started: `{ prompt }` or `{ input }` (a plain copy).
   */
  #check(input, model = this.#model, effort = this.#effort) {
    try {
      const given = turnInput(input)
      runTurn(this.#options({ ...given, model, effort, signal: abortedSignal(undefined) }))
      return given
    } catch (error) {
      throw asSent(error)
    }
  }

  /**
   * Sends the user's input: a new turn on the conversation's thread (the prepared one, when one
   * waits), or, while a turn runs, what `whileRunning` says. Returns the Turn the input went to.
   */
  send(input, options) {
    if (this.#closed) throw closedError('send() after close()')
    options = checkOptions(options, 'send', { optional: true })
    const given = options === undefined ? {} : wire(options, [])
    checkWithCore('send', given)
    const whileRunning = given.whileRunning ?? 'steer'
    const model = given.model ?? this.#model
    const effort = given.effort ?? this.#effort
    const spec = { ...this.#check(input, model, effort), model, effort }
    if (this.#running !== null && whileRunning === 'reject') {
      throw stateError(codes.TURN_RUNNING, 'a turn is running: wait for its end, steer it or queue the input')
    }
    // Codex keeps a turn's model and effort for the turns after it: so does the conversation
    // (its next child is prepared with them).
    this.#model = model
    this.#effort = effort
    if (this.#running !== null) {
      if (whileRunning === 'queue') return this.#enqueue(spec)
      const running = this.#running
      // Too late to steer (the turn ended, or is ending) or refused: the input is not lost, it
      // becomes the next turn (`onTurn` hands it to the app).
      running.steer(spec.prompt ?? spec.input).catch((error) => {
        if (!(error instanceof SteerError) || this.#closed) return
        this.#submit(spec)
      })
      return running
    }
    return this.#begin(spec)
  }

  /** A new Turn for `spec`: now, or after the running one. */
  #submit(spec) {
    return this.#running === null ? this.#begin(spec) : this.#enqueue(spec)
  }

  #turn() {
    return new ConversationTurn({
      cancelled: (reason) => runTurn(this.#options({ prompt: UNSENT, signal: abortedSignal(reason) })),
      check: (input) => this.#check(input),
      onEnd: (turn, terminal) => this.#ended(turn, terminal),
    })
  }

  #begin(spec) {
    const turn = this.#turn()
    this.#running = turn
    this.#launch(turn, spec)
    this.#onTurn?.(turn)
    return turn
  }

  #enqueue(spec) {
    const turn = this.#turn()
    this.#queue.push({ turn, spec })
    this.#onTurn?.(turn)
    return turn
  }

  /** Starts `turn` on the prepared child if one waits, else on a fresh one once the thread is free. */
  #launch(turn, spec) {
    // The thread as it is now: a prepared child that dies after it opened a new thread leaves
    // no thread to continue, and the fresh child starts one.
    const threadId = this.#threadId
    const fresh = () => runTurn(this.#options(spec, { threadId }))
    const prepared = this.#prepared
    this.#prepared = null
    if (prepared !== null && prepared.turn[WAITING].waiting) {
      const { prompt, input, model, effort } = spec
      const start = { prompt, input, model, effort }
      for (const key of Object.keys(start)) if (start[key] === undefined) delete start[key]
      turn.start(() => prepared.turn.start(start), fresh)
      prepared.turn.ready.then((ready) => {
        if (this.#threadId === null && ready.threadId !== undefined) this.#threadId = ready.threadId
      })
      return
    }
    if (prepared !== null) this.#dispose(prepared)
    this.#gone.then(() => turn.start(fresh))
  }

  /** Ends a prepared child that will not be started; the thread is free once it is gone. */
  #dispose(prepared, reason) {
    prepared.turn.dispose(reason)
    const gone = prepared.turn[WAITING].gone
    const before = this.#gone
    this.#gone = Promise.all([before, gone]).then(() => {})
    return gone
  }

  /** Prepares the next turn's child on the thread (nothing else holds it now). */
  #prepare() {
    if (!this.#prepareNext || this.#closed || this.#prepared !== null || this.#running !== null) return
    let turn
    try {
      turn = prepareTurn(this.#options({ model: this.#model, idleTimeoutMs: this.#idleTimeoutMs }, { effort: false }))
    } catch {
      // Checked when the conversation was opened; a send then starts its own child.
      return
    }
    // Nothing of it is read while it waits (its `ready` would keep the process alive until the
    // thread is open): a preparation that failed has ended its child, and WAITING says so.
    this.#prepared = { turn }
  }

  /** A Turn of the conversation has its final terminal (called at once, before anyone sees it). */
  #ended(turn, terminal) {
    this.#queue = this.#queue.filter((queued) => queued.turn !== turn)
    // A queued send aborted before it started changes nothing else.
    if (this.#running !== turn) return
    if (typeof terminal.threadId === 'string') this.#threadId = terminal.threadId
    this.#running = null
    if (this.#closed) return
    const next = this.#queue.shift()
    if (next !== undefined) {
      this.#running = next.turn
      this.#launch(next.turn, next.spec)
      return
    }
    this.#prepare()
  }

  /**
   * A new conversation on a fork of this one's thread (`forkThread`, through `lastTurnId`), with
   * this one's options (and `onTurn`, unless given).
   */
  fork(options) {
    try {
      if (this.#closed) throw closedError('fork() after close()')
      options = checkOptions(options, 'fork', { optional: true })
      const onTurn = options === undefined ? undefined : option(options, 'onTurn')
      if (onTurn !== undefined && typeof onTurn !== 'function') throw new TypeError('options.onTurn must be a function')
      const given = options === undefined ? {} : wire(options, ['onTurn'])
      checkWithCore('fork', given, { onTurn })
      return this.#fork(given.lastTurnId, onTurn ?? this.#onTurn)
    } catch (error) {
      return Promise.reject(error)
    }
  }

  async #fork(lastTurnId, onTurn) {
    // A first turn still running has no thread id yet: the fork is of what it leaves.
    if (this.#threadId === null && this.#running !== null) await this.#running.outcome
    if (this.#closed) throw closedError('closed before the fork was made')
    const settings = {
      base: this.#base,
      handler: this.#handler,
      tools: this.#tools,
      onTurn,
      prepareNext: this.#prepareNext,
      idleTimeoutMs: this.#idleTimeoutMs,
      threadId: null,
      model: this.#model,
      effort: this.#effort,
    }
    if (this.#threadId === null) {
      if (lastTurnId !== undefined) throw new TypeError('options.lastTurnId names a turn, but the conversation has no thread yet')
      return new Conversation(settings)
    }
    const call = {}
    for (const key of CALL_OPTIONS) if (this.#base[key] !== undefined) call[key] = this.#base[key]
    if (lastTurnId !== undefined) call.lastTurnId = lastTurnId
    const controller = new AbortController()
    call.signal = controller.signal
    const forked = forkThread(this.#threadId, call)
    this.#forks.set(controller, forked.catch(() => {}))
    let threadId
    try {
      ;({ threadId } = await forked)
    } catch (error) {
      if (this.#closed) throw closedError('closed before the fork was made')
      throw error
    } finally {
      this.#forks.delete(controller)
    }
    if (this.#closed) throw closedError('closed before the fork was made')
    return new Conversation({ ...settings, threadId })
  }

  /**
   * Aborts the running turn and every queued one, disposes the prepared one and cancels a fork
   * under way; settles once every child the conversation started is gone. Later sends throw a
   * CodexError CONVERSATION_CLOSED. Never rejects.
   */
  close() {
    if (this.#closing === null) {
      this.#closed = true
      const reason = closedError('close()')
      const waits = [this.#gone]
      for (const [controller, settled] of this.#forks) {
        controller.abort(reason)
        waits.push(settled)
      }
      for (const { turn } of this.#queue) {
        turn.abort(reason)
        waits.push(turn.outcome)
      }
      if (this.#running !== null) {
        this.#running.abort(reason)
        waits.push(this.#running.outcome)
      }
      if (this.#prepared !== null) {
        waits.push(this.#dispose(this.#prepared, reason))
        this.#prepared = null
      }
      this.#closing = Promise.all(waits).then(() => {})
    }
    return this.#closing
  }
}

/**
 * Opens a conversation: `options` are every turn's (`runTurn`'s without the input), plus
 * `threadId` (continue a stored thread), `prepareNext` (default true: the next turn's child
 * waits for the next send), `idleTimeoutMs` (how long it waits, as prepareTurn's) and
 * `onTurn`. Throws a TypeError naming a bad option.
 */
function openConversation(options) {
  options = checkOptions(options, 'openConversation')
  const onTurn = option(options, 'onTurn')
  if (onTurn !== undefined && typeof onTurn !== 'function') throw new TypeError('options.onTurn must be a function')
  const handler = option(options, 'onServerRequest')
  checkHandler(handler)
  const signal = option(options, 'signal')
  const tools = option(options, 'tools')
  const given = wire(options, ['onTurn', 'onServerRequest', 'signal', 'tools'])
  // Every option checked by the core, as a turn reads it and as a conversation takes it (the
  // tools as a turn sends them).
  checkWithCore('openConversation', tools === undefined ? given : { ...given, tools: prepareTools(tools).wire }, { onTurn, onServerRequest: handler, signal })
  const { prepareNext, idleTimeoutMs, ...base } = given
  const { threadId = null, model, effort, ...rest } = base
  return new Conversation({ base: rest, handler, tools, onTurn, prepareNext: prepareNext ?? true, idleTimeoutMs, threadId, model, effort })
}

module.exports = { openConversation, Conversation, ConversationTurn }
