'use strict'
// The front door: options are read as they were given, not as JSON.stringify would leave them.
// What JSON would drop or change (a function, a symbol, a BigInt, NaN, a Map, a class
// instance, a `toJSON`, a getter that throws, a cycle, nesting beyond MAX_DEPTH) is a
// TypeError naming its path: a value that is present but unusable is an error, never
// "absent", so nothing that narrows access or isolation is dropped in silence. The copy this
// returns is plain data that JSON.stringify writes as it is; the native core then checks what
// each option means, and names it too.
//
// A Proxy (a store's observable array, a framework's reactive object) is read as the array or
// plain object it presents: once, through its traps — its kind, its prototype, its keys, then
// each property once — into the copy, so that what is checked and sent is what was read. A
// revoked Proxy, or a trap that throws, is a TypeError naming the path.

const { types } = require('node:util')

/** How deep an option (an outputSchema included) may nest. */
const MAX_DEPTH = 100

/** `.name`, or `["odd name"]` for keys that are not identifiers. */
function segment(key) {
  if (typeof key === 'number') return `[${key}]`
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
}

/** What kind of thing an object whose prototype is `proto` is, in words for an error (never its contents). */
function kind(proto) {
  try {
    const name = proto && Object.getOwnPropertyDescriptor(proto, 'constructor')?.value?.name
    if (typeof name === 'string' && name) return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`
  } catch {
    // A prototype that cannot be read says nothing.
  }
  return 'not a plain object'
}

/**
 * `read()` of the object `value` at `path`: for a Proxy, a trap that throws is a TypeError
 * naming the path (what it threw says nothing the caller needs, and may be anything).
 */
function throughTraps(value, path, read) {
  if (!types.isProxy(value)) return read()
  try {
    return read()
  } catch {
    throw new TypeError(`${path} could not be read: its Proxy threw`)
  }
}

/** Whether the object `value` is an array; a revoked Proxy (which is neither) is named. */
function isArray(value, path) {
  try {
    // Runs no trap: it throws only for a revoked Proxy.
    return Array.isArray(value)
  } catch {
    throw new TypeError(`${path} is a revoked Proxy`)
  }
}

/**
 * The own enumerable string-keyed properties of the object `value` at `path` but those in
 * `skip`, each read once, as `[key, value, at]`. Symbol keys (which JSON drops) and a `toJSON`
 * (which it would apply) are refused.
 */
function entries(value, path, skip = []) {
  const keys = throughTraps(value, path, () => Reflect.ownKeys(value))
  if (keys.some((key) => typeof key === 'symbol')) throw new TypeError(`${path} has symbol keys, which JSON drops`)
  const found = []
  for (const key of keys) {
    if (skip.includes(key)) continue
    const at = `${path}${segment(key)}`
    if (!throughTraps(value, path, () => Object.prototype.propertyIsEnumerable.call(value, key))) continue
    if (key === 'toJSON') throw new TypeError(`${at}: options are read as given; a toJSON is not applied`)
    found.push([key, read(value, key, at), at])
  }
  return found
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
  if (seen.has(value)) throw new TypeError(`${path} refers back to an object that contains it (a cycle)`)
  if (depth >= MAX_DEPTH) throw new TypeError(`${path} is nested more than ${MAX_DEPTH} levels deep`)
  seen.add(value)
  try {
    const array = isArray(value, path)
    const proto = throughTraps(value, path, () => Object.getPrototypeOf(value))
    return array ? plainArray(value, proto, path, depth, seen) : plainObject(value, proto, path, depth, seen)
  } finally {
    seen.delete(value)
  }
}

function plainArray(value, proto, path, depth, seen) {
  if (proto !== Array.prototype) throw new TypeError(`${path} must be a plain array, not ${kind(proto)}`)
  const copy = []
  const length = read(value, 'length', `${path}.length`)
  for (let i = 0; i < length; i++) {
    const at = `${path}[${i}]`
    // JSON writes a hole or an undefined element as null: refused, as any other change.
    const item = plain(read(value, i, at), at, depth + 1, seen)
    if (item === undefined) throw new TypeError(`${at} is missing (undefined)`)
    copy.push(item)
  }
  return copy
}

function plainObject(value, proto, path, depth, seen) {
  if (proto !== Object.prototype && proto !== null) throw new TypeError(`${path} must be a plain object, not ${kind(proto)}`)
  const copy = {}
  for (const [key, given, at] of entries(value, path)) {
    const item = plain(given, at, depth + 1, seen)
    // Defined, not assigned: a key named __proto__ stays a key and never changes a prototype.
    if (item !== undefined) Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true })
  }
  return copy
}

/** `object[key]`, where a getter (or a Proxy's trap) that throws is named rather than rethrown. */
function read(object, key, at) {
  try {
    return object[key]
  } catch {
    throw new TypeError(`${at} could not be read: ${types.isProxy(object) ? 'its Proxy threw' : 'its getter threw'}`)
  }
}

/**
 * The top level of a function's options: an own property `key` of `options`, read once (a
 * getter that throws is named). `options` has been checked to be a plain object.
 */
function option(options, key, path = 'options') {
  return read(options, key, `${path}${segment(key)}`)
}

/**
 * `options` is an object the caller wrote: a plain one (a class instance is named). Returns what
 * to read the options from: `options` itself, or for a Proxy a copy of its properties, each
 * read once through its traps (values as given: a signal or a handler stays what it is).
 * `path` names them in errors (`options`, or `input` for a prepared turn's start input).
 */
function checkOptions(options, name, { optional = false, path = 'options' } = {}) {
  if (options === undefined && optional) return options
  if (options === null || typeof options !== 'object') throw new TypeError(`${name}: options must be an object`)
  if (isArray(options, `${name}: options`)) throw new TypeError(`${name}: options must be an object`)
  const proto = throughTraps(options, `${name}: options`, () => Object.getPrototypeOf(options))
  if (proto !== Object.prototype && proto !== null) throw new TypeError(`${name}: options must be a plain object, not ${kind(proto)}`)
  if (!types.isProxy(options)) return options
  const copy = {}
  for (const [key, value] of entries(options, path)) {
    Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true })
  }
  return copy
}

/**
 * A plain copy of `options` without the keys in `skip` (the ones JavaScript handles itself:
 * `signal`, a handler, …), as the JSON the native core reads.
 */
function wire(options, skip = [], path = 'options') {
  const rest = {}
  for (const [key, given, at] of entries(options, path, skip)) {
    const item = plain(given, at, 1)
    if (item !== undefined) Object.defineProperty(rest, key, { value: item, enumerable: true, writable: true, configurable: true })
  }
  return rest
}

/** Whether `value` is a Proxy (which may be revoked, and whose traps may throw). */
const isProxy = (value) => types.isProxy(value)

module.exports = { plain, wire, option, checkOptions, segment, isProxy, isArray, MAX_DEPTH }
