'use strict'
// The calls around turns: each runs one short-lived app-server child (crates/core/src/call/).
// Every call is a row of the core's call table (crates/core/src/call/table.rs, generated into
// lib/surface.js); each function here is built from its row: the arguments before the options
// read as given (lib/plain.js), the options without `signal`, and the core checks both (a
// TypeError naming what is wrong). Every one returns a promise and never throws: bad arguments
// or options reject with a TypeError naming them, everything else with a CallError. A ChatGPT
// login has a handle of its own (lib/login.js).

const binding = require('../native.js')
const { CallError, settle, nativeCall } = require('./errors.js')
const { checkOptions, wire, option, plain } = require('./plain.js')
const { checkSignal, listen } = require('./signal.js')
const { calls: rows } = require('./surface.js')

/**
 * Runs call `name` with `args` (its arguments before the options, by name, already plain) and
 * `options`; settles once the child is gone.
 */
function startCall(name, args, options) {
  return new Promise((resolve, reject) => {
    options = checkOptions(options, name, { optional: true })
    const signal = options === undefined ? undefined : option(options, 'signal')
    checkSignal(signal)
    const given = options === undefined ? {} : wire(options, ['signal'])
    let native = null
    let reason
    const listening = listen(signal, (why) => {
      reason = why
      native.abort()
    })
    try {
      native = nativeCall(() => binding.startCall(name, JSON.stringify(args), JSON.stringify(given), listening.aborted))
    } catch (error) {
      listening.stop()
      throw error
    }
    if (listening.aborted) reason = listening.reason
    native.outcome().then((json) => {
      listening.stop()
      try {
        resolve(settle(json, CallError, reason))
      } catch (error) {
        reject(error)
      }
    }, reject)
  })
}

/**
 * The arguments of call `name` named as its row names them, each a plain copy (`undefined`
 * left out); what cannot be read is a TypeError naming the call and the argument.
 */
function readArguments(name, names, given) {
  const args = {}
  names.forEach((arg, i) => {
    try {
      const copy = plain(given[i], arg)
      if (copy !== undefined) args[arg] = copy
    } catch (error) {
      throw error instanceof TypeError ? new TypeError(`${name}: ${error.message}`) : error
    }
  })
  return args
}

/** The function of one row: its arguments, then its options. */
function callOf({ name, args: names, resolves }) {
  const call = (...given) => {
    try {
      const settled = startCall(name, readArguments(name, names, given), given[names.length])
      return resolves === 'void' ? settled.then(() => undefined) : settled
    } catch (error) {
      return Promise.reject(error)
    }
  }
  return Object.defineProperty(call, 'name', { value: name })
}

/** The calls around turns, as the package exports them (a handle's call is its own module's). */
const calls = Object.fromEntries(rows.filter((row) => row.resolves !== 'handle').map((row) => [row.name, callOf(row)]))

module.exports = { calls, ...calls }
