'use strict'
// runUtility: a structured one-shot call on the turn's runner.

const { UtilityError, failure, reasonText } = require('./errors.js')
const { codes } = require('./surface.js')
const { checkOptions, option } = require('./plain.js')
const { startTurn } = require('./turn.js')

/**
 * A structured one-shot call on the same runner: resolves with the parsed final message,
 * validated against `outputSchema` (a JSON Schema through ajv, a Standard Schema through its
 * own library, so refinements and transforms apply). Codex itself does not validate it.
 */
async function runUtility(options) {
  options = checkOptions(options, 'runUtility')
  const given = option(options, 'outputSchema')
  if (given === undefined) {
    throw new TypeError('options.outputSchema is required: a JSON Schema object or a Standard Schema (zod, valibot, arktype, …)')
  }
  const schema = require('./output-schema.js').prepareOutputSchema(given, 'options.outputSchema')
  // A utility call is not a conversation: its thread is not stored (not listed, not resumable)
  // unless the caller says otherwise.
  const terminal = await startTurn(options, schema.wire, undefined, { ephemeral: true }).outcome
  if (terminal.status === 'cancelled') {
    const cancelled = failure('turn', codes.CANCELLED, `the utility call was cancelled (${terminal.cancellation})${reasonText(terminal.abortReason)}`, {
      cancellation: terminal.cancellation,
    })
    throw new UtilityError(terminal, cancelled, { cause: terminal.abortReason })
  }
  if (terminal.status !== 'completed') throw new UtilityError(terminal, terminal.failure)
  const checked = await schema.validate(terminal.structuredOutput)
  if (!checked.ok) {
    throw new UtilityError(
      terminal,
      failure('turn', codes.STRUCTURED_OUTPUT_MISMATCH, `the final message does not match outputSchema: ${checked.message}`, {
        text: terminal.finalMessage,
        ...checked.detail,
      }),
    )
  }
  return {
    output: checked.value,
    text: terminal.finalMessage,
    usage: terminal.usage,
    threadId: terminal.threadId,
    turnId: terminal.turnId,
  }
}

module.exports = { runUtility }
