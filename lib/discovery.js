'use strict'
// discoverCodex: which Codex CLIs there are, and which one a turn would use
// (crates/core/src/discovery/).

const binding = require('../native.js')
const { nativeCall } = require('./errors.js')
const { checkOptions, wire } = require('./plain.js')

/**
 * Finds the user's Codex CLI and reports every candidate considered (cached per locus and
 * environment; `refresh: true` probes again). Rejects with a TypeError naming the option for
 * invalid options; an unavailable Codex is a report with `available: false`, not an error.
 */
async function discoverCodex(options) {
  options = checkOptions(options, 'discoverCodex', { optional: true })
  const given = options === undefined ? undefined : JSON.stringify(wire(options))
  return JSON.parse(await nativeCall(() => binding.discoverCodex(given)))
}

module.exports = { discoverCodex }
