'use strict'
// AbortSignal wiring that cannot hurt the app: the listener is attached before anything starts
// (a signal whose addEventListener throws fails the call before any child exists), and taking it
// off again never throws, never rejects and never changes a result.

let removeWarned = false

/** Whether `value` can be used as a signal; a signal whose properties cannot be read cannot. */
function isAbortSignal(value) {
  try {
    return (
      value !== null &&
      typeof value === 'object' &&
      typeof value.aborted === 'boolean' &&
      typeof value.addEventListener === 'function' &&
      typeof value.removeEventListener === 'function'
    )
  } catch {
    return false
  }
}

function checkSignal(signal, path = 'options.signal') {
  if (signal !== undefined && !isAbortSignal(signal)) throw new TypeError(`${path} must be an AbortSignal`)
}

/** The signal's reason, as given; a `reason` getter that throws gives none. */
function reasonOf(signal) {
  try {
    return signal.reason
  } catch {
    return undefined
  }
}

/**
 * Calls `onAbort(reason)` once when `signal` aborts. Returns `{ aborted, reason, stop }`: whether
 * it was aborted already (then nothing is attached), its reason, and `stop()` to detach. Throws
 * what the signal's addEventListener throws, before the caller started anything.
 */
function listen(signal, onAbort) {
  if (signal === undefined) return { aborted: false, reason: undefined, stop() {} }
  if (signal.aborted) return { aborted: true, reason: reasonOf(signal), stop() {} }
  const handler = () => onAbort(reasonOf(signal))
  signal.addEventListener('abort', handler, { once: true })
  let attached = true
  return {
    aborted: false,
    reason: undefined,
    stop() {
      if (!attached) return
      attached = false
      try {
        signal.removeEventListener('abort', handler)
      } catch {
        if (!removeWarned) {
          removeWarned = true
          process.emitWarning('@rennet/codex: an AbortSignal threw from removeEventListener; it was ignored')
        }
      }
    },
  }
}

module.exports = { isAbortSignal, checkSignal, listen, reasonOf }
