'use strict'
// The async iterator a Turn is: calls are chained so that concurrent next() calls still receive
// events in order, and `return()`/`throw()` leave after whatever is in flight.

/**
 * An iterator over `next()` (a step: `{ done, value }`) that leaves through `leave()`. `ready()`:
 * while nothing is in flight, a step that needs no waiting (an event already read) is handed out
 * at once — the common case, one promise per event instead of a chain of three; null otherwise.
 */
function serialIterator({ next, leave, ready = () => null }) {
  let chain = Promise.resolve()
  let inFlight = 0
  const serialize = (step) => {
    inFlight++
    const settled = () => inFlight--
    chain = chain.then(step, step)
    chain.then(settled, settled)
    return chain
  }
  return {
    next: () => {
      const now = inFlight === 0 ? ready() : null
      return now === null ? serialize(next) : Promise.resolve(now)
    },
    return: () => serialize(leave),
    throw: (error) =>
      serialize(() => {
        leave()
        throw error
      }),
    [Symbol.asyncIterator]() {
      return this
    },
  }
}

module.exports = { serialIterator }
