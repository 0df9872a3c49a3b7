'use strict'
// setLogger: the native core's log records for a function of the app's. Delivery is decoupled
// from the turns: records wait in a bounded queue and reach the logger one per macrotask, so a
// slow logger never holds back an event (events cross between two records); when the queue is
// full the oldest records are dropped, and the next record delivered says how many (`dropped`).
// A logger that throws — whatever it throws — is reported once as a process warning.

const binding = require('../native.js')
const { nativeCall } = require('./errors.js')

/** Records waiting for a slow logger; beyond this the oldest are dropped and counted. */
const QUEUE = 1000

let warned = false
let logger = null
const queue = []
let dropped = 0
let draining = false

/** What a thrown value says, read without anything that could throw again. */
function describe(value) {
  try {
    if (value instanceof Error && typeof value.message === 'string') return value.message
    return String(value)
  } catch {
    return 'a value that cannot be described'
  }
}

function deliverOne() {
  draining = false
  if (logger === null || queue.length === 0) return
  const record = JSON.parse(queue.shift())
  if (dropped > 0) {
    record.dropped = (record.dropped ?? 0) + dropped
    dropped = 0
  }
  try {
    logger(record)
  } catch (error) {
    if (!warned) {
      warned = true
      process.emitWarning(`@rennet/codex: the logger threw: ${describe(error)}`)
    }
  }
  schedule()
}

function schedule() {
  if (!draining && queue.length > 0) {
    draining = true
    setImmediate(deliverOne)
  }
}

/** Called by the native side with each record's JSON text: it only queues. */
function onRecord(json) {
  if (queue.length >= QUEUE) {
    queue.shift()
    dropped++
  }
  queue.push(json)
  schedule()
}

/**
 * Sends the native core's log records to `fn` instead of stderr; `null` removes it.
 * A logger that throws is reported once as a process warning and never reaches the turn.
 */
function setLogger(fn, options) {
  if (fn !== null && typeof fn !== 'function') {
    throw new TypeError('setLogger: logger must be a function or null')
  }
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    throw new TypeError('setLogger: options must be an object')
  }
  let filter
  try {
    filter = options === undefined ? undefined : options.filter
  } catch {
    throw new TypeError('options.filter could not be read: its getter threw')
  }
  if (filter !== undefined && typeof filter !== 'string') {
    throw new TypeError('options.filter must be a string')
  }
  nativeCall(() => binding.setLogger(fn === null ? null : onRecord, filter))
  logger = fn
  if (fn === null) {
    queue.length = 0
    dropped = 0
  }
}

module.exports = { setLogger }
