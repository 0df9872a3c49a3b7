'use strict'
// The front door: options are read as they were given, not as JSON.stringify would leave them.
// What JSON would drop or change (a function, a symbol, a BigInt, NaN, a Map, a class
// instance, a `toJSON`, a getter that throws, a Proxy, a cycle, nesting beyond MAX_DEPTH) is
// a TypeError naming its path: a value that is present but unusable is an error, never
// "absent", so nothing that narrows access or isolation is dropped in silence. The copy this
// returns is plain data that JSON.stringify writes as it is; the native core then checks what
// each option means, and names it too.

const { types } = require('node:util')

/** How deep an option (an outputSchema included) may nest. */
const MAX_DEPTH = 100

/** `.name`, or `["odd name"]` for keys that are not identifiers. */
function segment(key) {
  if (typeof key === 'number') return `[${key}]`
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
}

/** What kind of thing `value` is, in words for an error (never its contents). */
function kind(value) {
  if (types.isProxy(value)) return 'a Proxy'
  try {
    const proto = Object.getPrototypeOf(value)
    const name = proto && Object.getOwnPropertyDescriptor(proto, 'constructor')?.value?.name
    if (typeof name === 'string' && name) return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`
  } catch {
    // A prototype that cannot be read says nothing.
  }
  return 'not a plain object'
}

/**
 * A plain copy of `value` at `path` (`options.env`), or a TypeError naming the path. `undefined`
 * comes back for an absent value (the caller leaves the key out, as JSON does).
 */
function plain(value, path, depth = 0, seen = new Set()) {
  switch (typeof value) {
    case 'undefined':
    case 'boolean':
    case 'string':
      return value
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${path} must be a finite number`)
      return value
    case 'bigint':
      throw new TypeError(`${path} is a BigInt, which JSON cannot carry: pass a number or a string`)
    case 'symbol':
      throw new TypeError(`${path} is a symbol: pass a string`)
    case 'function':
      throw new TypeError(`${path} is a function: pass plain data`)
  }
  if (value === null) return null
  if (types.isProxy(value)) throw new TypeError(`${path} is a Proxy: pass plain data`)
  if (seen.has(value)) throw new TypeError(`${path} refers back to an object that contains it (a cycle)`)
  if (depth >= MAX_DEPTH) throw new TypeError(`${path} is nested more than ${MAX_DEPTH} levels deep`)
  seen.add(value)
  try {
    return Array.isArray(value) ? plainArray(value, path, depth, seen) : plainObject(value, path, depth, seen)
  } finally {
    seen.delete(value)
  }
}

function plainArray(value, path, depth, seen) {
  if (Object.getPrototypeOf(value) !== Array.prototype) throw new TypeError(`${path} must be a plain array, not ${kind(value)}`)
  const copy = []
  for (let i = 0; i < value.length; i++) {
    const at = `${path}[${i}]`
    // JSON writes a hole or an undefined element as null: refused, as any other change.
    const item = plain(read(value, i, at), at, depth + 1, seen)
    if (item === undefined) throw new TypeError(`${at} is missing (undefined)`)
    copy.push(item)
  }
  return copy
}

function plainObject(value, path, depth, seen) {
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) throw new TypeError(`${path} must be a plain object, not ${kind(value)}`)
  if (Object.getOwnPropertySymbols(value).length > 0) throw new TypeError(`${path} has symbol keys, which JSON drops`)
  const copy = {}
  for (const key of Object.keys(value)) {
    const at = `${path}${segment(key)}`
    if (key === 'toJSON') throw new TypeError(`${at}: options are read as given; a toJSON is not applied`)
    const item = plain(read(value, key, at), at, depth + 1, seen)
    // Defined, not assigned: a key named __proto__ stays a key and never changes a prototype.
    if (item !== undefined) Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true })
  }
  return copy
}

/** `object[key]`, where a getter that throws is named rather than rethrown. */
function read(object, key, at) {
  try {
    return object[key]
  } catch {
    throw new TypeError(`${at} could not be read: its getter threw`)
  }
}

/**
 * The top level of a function's options: an own property `key` of `options`, read once (a
 * getter that throws is named). `options` has been checked to be a plain object.
 */
function option(options, key, path = 'options') {
  return read(options, key, `${path}${segment(key)}`)
}

/** `options` is an object the caller wrote: a plain one (a Proxy or class instance is named). */
function checkOptions(options, name, { optional = false } = {}) {
  if (options === undefined && optional) return
  // Before anything else looks at it: even Array.isArray throws on a revoked Proxy.
  if (types.isProxy(options)) throw new TypeError(`${name}: options must be a plain object, not a Proxy`)
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${name}: options must be an object`)
  }
  const proto = Object.getPrototypeOf(options)
  if (proto !== Object.prototype && proto !== null) throw new TypeError(`${name}: options must be a plain object, not ${kind(options)}`)
}

/**
 * A plain copy of `options` without the keys in `skip` (the ones JavaScript handles itself:
 * `signal`, a handler, …), as the JSON the native core reads.
 */
function wire(options, skip = [], path = 'options') {
  const rest = {}
  if (Object.getOwnPropertySymbols(options).length > 0) throw new TypeError(`${path} has symbol keys, which JSON drops`)
  for (const key of Object.keys(options)) {
    if (skip.includes(key)) continue
    const at = `${path}${segment(key)}`
    if (key === 'toJSON') throw new TypeError(`${at}: options are read as given; a toJSON is not applied`)
    const item = plain(read(options, key, at), at, 1)
    if (item !== undefined) Object.defineProperty(rest, key, { value: item, enumerable: true, writable: true, configurable: true })
  }
  return rest
}

/** Milliseconds as a timer takes them: an integer from `min` to 2^31 − 1. */
const MAX_MS = 2 ** 31 - 1

function checkMilliseconds(value, path, min = 0) {
  if (value === undefined) return
  if (!(Number.isInteger(value) && value >= min && value <= MAX_MS)) {
    throw new TypeError(`${path} must be an integer number of milliseconds from ${min} to ${MAX_MS}`)
  }
}

/** Whether `value` is a Proxy (which is never plain data, and may be revoked). */
const isProxy = (value) => types.isProxy(value)

module.exports = { plain, wire, option, checkOptions, checkMilliseconds, segment, isProxy, MAX_DEPTH, MAX_MS }
