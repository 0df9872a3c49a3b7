'use strict'
// Public API of @rennet/codex over the generated native binding (binding.js), loaded through
// native.js so that a platform without the addon gets NATIVE_ADDON_UNAVAILABLE, not a throw.
// Each export lives in lib/: turns, conversations, calls, errors, the options' front door,
// signals, logging.

const { runTurn, prepareTurn, runReview } = require('./lib/turn.js')
const { runUtility } = require('./lib/utility.js')
const { discoverCodex } = require('./lib/discovery.js')
const { setLogger } = require('./lib/logger.js')
const { CodexError, CallError, UtilityError, SteerError } = require('./lib/errors.js')
const { calls } = require('./lib/calls.js')
const { openConversation } = require('./lib/conversation.js')
const { startLogin } = require('./lib/login.js')

module.exports = {
  runTurn,
  prepareTurn,
  runReview,
  openConversation,
  runUtility,
  discoverCodex,
  setLogger,
  CodexError,
  UtilityError,
  SteerError,
  startLogin,
  ...calls,
  CallError,
}
