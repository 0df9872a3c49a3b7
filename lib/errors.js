'use strict'
// One error family: what every promise of the package rejects with at run time is a CodexError
// carrying a failure as a terminal event has it (source, stable code, the provider's message
// verbatim, detail, retryable, and a reason where Codex gave one). The classes below it only say
// which function rejected. Bad options are a TypeError instead, naming the option.

const { types } = require('node:util')
const { codes } = require('./surface.js')

class CodexError extends Error {
  constructor(failure, options) {
    super(failure.message, options)
    this.name = 'CodexError'
    this.source = failure.source
    this.code = failure.code
    this.detail = failure.detail
    this.retryable = failure.retryable === true
    if (failure.reason !== undefined) this.reason = failure.reason
  }
}

/** What the calls around turns reject with. */
class CallError extends CodexError {
  constructor(failure, options) {
    super(failure, options)
    this.name = 'CallError'
  }
}

/** What `runUtility` rejects with; `terminal` is the turn's terminal event. */
class UtilityError extends CodexError {
  constructor(terminal, failure, options) {
    super(failure, options)
    this.name = 'UtilityError'
    this.terminal = terminal
  }
}

/** What `Turn.steer` rejects with: the server's refusal (`TURN_NOT_STEERABLE`) or `TURN_ENDED`. */
class SteerError extends CodexError {
  constructor(failure, options) {
    super(failure, options)
    this.name = 'SteerError'
  }
}

/**
 * The value of a native result envelope (`{ok}` or `{failure}`, crates/core/src/envelope.rs),
 * or the failure thrown as `ErrorClass`. A `CANCELLED` failure gets `reason` (the abort's, as
 * given) as its `cause`; nothing is read of the reason itself.
 */
function settle(json, ErrorClass, reason) {
  const envelope = JSON.parse(json)
  if (envelope.failure === undefined) return envelope.ok
  const failure = envelope.failure
  if (failure.code !== 'CANCELLED') throw new ErrorClass(failure)
  throw new ErrorClass({ ...failure, message: failure.message + reasonText(reason) }, { cause: reason })
}

/**
 * ` (why)` for an abort reason that says something — a string, or an Error's own `message` —
 * read without touching anything that could throw (a getter, a Proxy's trap).
 */
function reasonText(reason) {
  if (typeof reason === 'string') return reason ? `: ${reason}` : ''
  if (reason === null || typeof reason !== 'object' || types.isProxy(reason) || !types.isNativeError(reason)) return ''
  const own = Object.getOwnPropertyDescriptor(reason, 'message')
  return own && typeof own.value === 'string' && own.value ? `: ${own.value}` : ''
}

/** A failure the JavaScript side reports itself, in the core's shape; `code` is one the core declares. */
function failure(source, code, message, detail) {
  if (!Object.hasOwn(codes, code)) throw new Error(`${code} is not a failure code of the core (lib/surface.js)`)
  const made = { source, code, message, retryable: false }
  if (detail !== undefined) made.detail = detail
  return made
}

/**
 * Runs a call into the binding: its `InvalidArg` (the core's refusal of an option or argument,
 * named in its message) becomes the TypeError callers expect, thrown — or, for a promise,
 * rejected.
 */
function nativeCall(fn) {
  const asTypeError = (error) => {
    if (error && error.code === 'InvalidArg') throw new TypeError(error.message)
    throw error
  }
  let result
  try {
    result = fn()
  } catch (error) {
    asTypeError(error)
  }
  return result instanceof Promise ? result.catch(asTypeError) : result
}

module.exports = { CodexError, CallError, UtilityError, SteerError, settle, failure, reasonText, nativeCall }
