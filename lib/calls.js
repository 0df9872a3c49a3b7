'use strict'
// The calls around turns: each runs one short-lived app-server child (crates/core/src/call/).
// Every one returns a promise and never throws: bad arguments or options reject with a
// TypeError naming them, everything else with a CallError. A ChatGPT login has a handle of its
// own (lib/login.js).

const binding = require('../native.js')
const { CallError, settle } = require('./errors.js')
const { checkOptions, wire, option, checkMilliseconds, plain } = require('./plain.js')
const { checkSignal, listen } = require('./signal.js')
const { nativeCall } = require('./turn.js')

/**
 * Runs call `name` with `threadId` (the thread argument of the thread calls), `options` and
 * `args` (the call's other arguments by name, already plain); settles once the child is gone.
 */
function startCall(name, threadId, options, args) {
  return new Promise((resolve, reject) => {
    options = checkOptions(options, name, { optional: true })
    const signal = options === undefined ? undefined : option(options, 'signal')
    checkSignal(signal)
    if (options !== undefined) checkMilliseconds(option(options, 'requestTimeoutMs'), 'options.requestTimeoutMs', 1)
    const given = options === undefined ? {} : wire(options, ['signal'])
    const argsJson = args === undefined ? undefined : JSON.stringify(args)
    let native = null
    let reason
    const listening = listen(signal, (why) => {
      reason = why
      native.abort()
    })
    try {
      native = nativeCall(() => binding.startCall(name, threadId, argsJson, JSON.stringify(given), listening.aborted))
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
function threadCall(name, threadId, options, args) {
  if (typeof threadId !== 'string' || threadId === '') {
    return Promise.reject(new TypeError(`${name}: threadId must be a non-empty string`))
  }
  return startCall(name, threadId, options, args)
}

/** A call that resolves with nothing. */
const done = (promise) => promise.then(() => undefined)

/** `value` as a plain copy named `path`, or a rejected TypeError. */
function argument(name, value, path, run) {
  let copy
  try {
    copy = plain(value, path)
  } catch (error) {
    return Promise.reject(error instanceof TypeError ? new TypeError(`${name}: ${error.message}`) : error)
  }
  return run(copy)
}

/** Who is logged in (`account/read`), the plan's limits (`account/rateLimits/read`, else null), and whether a turn can authenticate. */
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

/**
 * Stores `apiKey` as the user's Codex login (`account/login/start {type: 'apiKey'}`: Codex
 * writes it to `auth.json`), then reads the account as `readAccount` does. The key goes into
 * that request's params and nowhere else.
 */
function loginWithApiKey(apiKey, options) {
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    return Promise.reject(new TypeError('loginWithApiKey: apiKey must be a non-empty string'))
  }
  return startCall('loginWithApiKey', undefined, options, { apiKey })
}

/** Removes the stored login (`account/logout`: Codex deletes `auth.json`). */
function logout(options) {
  return done(startCall('logout', undefined, options))
}

/** `thread/name/set`: the title a sidebar shows. */
function renameThread(threadId, name, options) {
  if (typeof name !== 'string' || name.trim() === '') {
    return Promise.reject(new TypeError('renameThread: name must be a non-empty string'))
  }
  return done(threadCall('renameThread', threadId, options, { name }))
}

/** `thread/archive`: out of `listThreads()`, into `listThreads({ archived: true })`. */
function archiveThread(threadId, options) {
  return done(threadCall('archiveThread', threadId, options))
}

/** `thread/unarchive`: back into `listThreads()`. */
function unarchiveThread(threadId, options) {
  return done(threadCall('unarchiveThread', threadId, options))
}

/** `thread/delete`: gone from both lists and from disk. */
function deleteThread(threadId, options) {
  return done(threadCall('deleteThread', threadId, options))
}

/** `thread/revert` (the thread loaded first): `beforeTurnId` and every later turn are removed from its history. */
function revertThread(threadId, options) {
  return done(threadCall('revertThread', threadId, options))
}

/** `thread/compact/start` (the thread loaded first), waiting for the compaction's turn: `{ usage }`. */
function compactThread(threadId, options) {
  return threadCall('compactThread', threadId, options)
}

/** `thread/goal/get`: the thread's goal, or null. */
function readGoal(threadId, options) {
  return threadCall('readGoal', threadId, options)
}

/** `thread/goal/set` (never loading the thread): the goal as it is now. */
function setGoal(threadId, goal, options) {
  if (goal === null || typeof goal !== 'object' || Array.isArray(goal)) {
    return Promise.reject(new TypeError('setGoal: goal must be an object { objective?, status?, tokenBudget? }'))
  }
  return argument('setGoal', goal, 'goal', (copy) => threadCall('setGoal', threadId, options, { goal: copy }))
}

/** `thread/goal/clear`. */
function clearGoal(threadId, options) {
  return done(threadCall('clearGoal', threadId, options))
}

/** `skills/list` for `cwd`: each skill as Codex describes it (for an @-menu; `{type: 'skill', name, path}` input). */
function listSkills(options) {
  return startCall('listSkills', undefined, options)
}

/** Every page of `mcpServerStatus/list`: without `connect`, no server is started to ask it. */
function listMcpServers(options) {
  return startCall('listMcpServers', undefined, options)
}

/**
 * Any other client method of the protocol, on one child: `params` as given (`{}` when absent),
 * the server's result as it sent it. The methods of a turn (`turn/*`, `thread/start`,
 * `thread/resume`, `review/start`) and `initialize` are refused with a TypeError naming what to use.
 */
function request(method, params, options) {
  if (typeof method !== 'string' || method === '') {
    return Promise.reject(new TypeError('request: method must be a non-empty string'))
  }
  if (params === undefined) return startCall('request', undefined, options, { method })
  return argument('request', params, 'params', (copy) => startCall('request', undefined, options, { method, params: copy }))
}

/** The calls around turns, as the package exports them. */
const calls = {
  readAccount,
  listModels,
  listThreads,
  readThread,
  forkThread,
  loginWithApiKey,
  logout,
  renameThread,
  archiveThread,
  unarchiveThread,
  deleteThread,
  revertThread,
  compactThread,
  readGoal,
  setGoal,
  clearGoal,
  listSkills,
  listMcpServers,
  request,
}

module.exports = { startCall, threadCall, calls, ...calls }
