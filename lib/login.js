'use strict'
// startLogin: a ChatGPT login as a handle with two results (crates/core/src/call/login.rs). Its
// child lives until the login completes, is cancelled (`account/login/cancel` first, then the
// child ends), times out or the signal aborts. `started` says what to show the user, `completed`
// the account once logged in. Nothing throws: bad options reject both with a TypeError.

const binding = require('../native.js')
const { CallError, settle, nativeCall } = require('./errors.js')
const { checkOptions, wire, option } = require('./plain.js')
const { checkSignal, listen } = require('./signal.js')

const noop = () => {}

class LoginHandle {
  #native = null
  #listening = null
  /** The signal's reason, or `cancel(reason)`'s: the cause of a `CANCELLED` rejection. */
  #reason = undefined
  #cancelled = false

  constructor(options) {
    let failed = null
    try {
      options = checkOptions(options, 'startLogin', { optional: true })
      const signal = options === undefined ? undefined : option(options, 'signal')
      checkSignal(signal)
      const given = options === undefined ? {} : wire(options, ['signal'])
      this.#listening = listen(signal, (why) => this.cancel(why))
      try {
        this.#native = nativeCall(() => binding.startLogin(JSON.stringify(given), this.#listening.aborted))
      } catch (error) {
        this.#listening.stop()
        throw error
      }
      if (this.#listening.aborted) {
        this.#cancelled = true
        this.#reason = this.#listening.reason
      }
    } catch (error) {
      failed = error
    }
    const native = this.#native
    /** @type {Promise<{loginId: string, authUrl: string|null, verificationUrl: string|null, userCode: string|null}>} */
    this.started = failed ? Promise.reject(failed) : native.started().then((json) => settle(json, CallError, this.#reason))
    /** @type {Promise<unknown>} */
    this.completed = failed
      ? Promise.reject(failed)
      : native.completed().then(
          (json) => {
            this.#listening.stop()
            return settle(json, CallError, this.#reason)
          },
          (error) => {
            this.#listening.stop()
            throw error
          },
        )
    // An app may await only one of them: the other's rejection is not an unhandled one.
    this.started.catch(noop)
    this.completed.catch(noop)
    Object.freeze(this)
  }

  /**
   * Cancels the login: Codex is asked to end it (`account/login/cancel`), then the child ends;
   * `completed` (and `started`, when it had not resolved) rejects with `CANCELLED`, `reason` as
   * its cause. Idempotent; nothing once the login has completed.
   */
  cancel(reason) {
    if (this.#native === null || this.#cancelled) return
    this.#cancelled = true
    this.#reason = reason
    this.#native.cancel()
  }
}

/** Starts a ChatGPT login (`type`: `'chatgpt'`, in the browser, by default; or `'chatgptDeviceCode'`). */
function startLogin(options) {
  return new LoginHandle(options)
}

module.exports = { startLogin, LoginHandle }
