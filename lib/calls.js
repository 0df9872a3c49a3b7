'use strict'
// The calls around turns: each runs one short-lived app-server child (crates/core/src/call/).
// Every one returns a promise and never throws: bad options reject with a TypeError naming the
// option, everything else with a CallError.

const binding = require('../native.js')
const { CallError, settle } = require('./errors.js')
const { checkOptions, wire, option, checkMilliseconds } = require('./plain.js')
const { checkSignal, listen } = require('./signal.js')
const { nativeCall } = require('./turn.js')

/**
 * Runs call `name` with `threadId` (the thread argument of the thread calls) and `options`;
 * settles once the child is gone.
 */
function startCall(name, threadId, options) {
  return new Promise((resolve, reject) => {
    checkOptions(options, name, { optional: true })
    const signal = options === undefined ? undefined : option(options, 'signal')
    checkSignal(signal)
    if (options !== undefined) checkMilliseconds(option(options, 'requestTimeoutMs'), 'options.requestTimeoutMs', 1)
    const given = options === undefined ? {} : wire(options, ['signal'])
    let native = null
    let reason
    const listening = listen(signal, (why) => {
      reason = why
      native.abort()
    })
    try {
      native = nativeCall(() => binding.startCall(name, threadId, JSON.stringify(given), listening.aborted))
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

/** `threadId` as the thread calls take it, else a rejected TypeError. */
function threadCall(name, threadId, options) {
  if (typeof threadId !== 'string' || threadId === '') {
    return Promise.reject(new TypeError(`${name}: threadId must be a non-empty string`))
  }
  return startCall(name, threadId, options)
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
  return threadCall('readThread', threadId, options)
}

/** A new thread with this one's history (`thread/fork`, through `lastTurnId`): `{ threadId }`. */
function forkThread(threadId, options) {
  return threadCall('forkThread', threadId, options)
}

module.exports = { startCall, threadCall, readAccount, listModels, listThreads, readThread, forkThread }
