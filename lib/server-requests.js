'use strict'
// Server requests the app answers itself (`onServerRequest`): each one is handed to the app's
// handler as `{ method, id, params, agent }`; its answer — returned or resolved — is read as
// given (lib/plain.js) and checked against the method's response type from the pinned CLI's
// schema (types/codex/server-request-responses.json) before it is sent: this is the one place
// an answer is checked. `undefined`, a throw or a rejection: the fixed policy's reply goes
// instead. An answer that does not fit (it cannot be read as data, or the schema refuses it) is
// handed to the native side as unfit, with why: it sends the method's refusal whatever the
// access mode, says why on the `serverRequest` event and logs it at warn. The deadline
// (`serverRequestTimeoutMs`) and a turn that is ending are the native side's: a late answer is
// dropped there. A turn with app tools (`tools`) runs its tools' calls in lib/tools.js, which
// hands every other request to this bridge.

const { plain } = require('./plain.js')

let checks = null

/** The check of `method`'s response, or null for a method the schema does not know. */
function checkOf(method) {
  if (checks === null) {
    const Ajv = require('ajv')
    // No logger: ajv's default writes to the app's console (the pinned schema's formats, such
    // as `uint`, which ajv does not know and ignores). The package writes nothing there.
    const ajv = new Ajv({ allErrors: false, strict: false, logger: false })
    const { responses } = require('../types/codex/server-request-responses.json')
    checks = new Map(Object.entries(responses).map(([name, schema]) => [name, { ajv, validate: ajv.compile(schema) }]))
  }
  return checks.get(method) ?? null
}

/** Checks that `handler` can answer server requests. */
function checkHandler(handler, path = 'options.onServerRequest') {
  if (handler !== undefined && typeof handler !== 'function') throw new TypeError(`${path} must be a function`)
}

/**
 * The callback the native turn hands each request to (JSON text of `{key, method, id, params,
 * agent}`); `native()` is the native turn that takes the answers (undefined once collected:
 * nobody holds the turn any more, which has ended it, and the answer has nowhere to go).
 */
function serve(handler, native) {
  return (json) => {
    const { key, method, id, params, agent } = JSON.parse(json)
    const pass = (why = null) => native()?.answer(key, null, why)
    let answered
    try {
      answered = handler({ method, id, params, agent })
      // A thenable is awaited; reading `then` of a hostile value may throw too.
      answered = Promise.resolve(answered)
    } catch {
      pass()
      return
    }
    answered.then(
      (reply) => {
        if (reply === undefined) return pass()
        let copy
        try {
          copy = plain(reply, 'answer')
        } catch (error) {
          return pass(error.message)
        }
        const check = checkOf(method)
        if (check && !check.validate(copy)) return pass(check.ajv.errorsText(check.validate.errors, { dataVar: 'answer' }))
        native()?.answer(key, JSON.stringify(copy), null)
      },
      () => pass(),
    )
  }
}

module.exports = { serve, checkHandler }
