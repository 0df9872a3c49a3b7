'use strict'
// `outputSchema` of runTurn and runUtility: a JSON Schema (draft-07, 2019-09 or 2020-12) or a
// Standard Schema (zod, valibot, arktype, …). Turns it into the JSON Schema Codex sends to the
// model, checks that schema against what strict structured output accepts, and validates the
// parsed reply. Loaded on first use, so importing the package does not load ajv.

const { plain, option, isArray } = require('./plain.js')

/** JSON Schema drafts by `$schema` (without a trailing `#`); absent means 2020-12. */
const DRAFTS = [
  { name: 'draft-07', pattern: /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/, id: 'http://json-schema.org/draft-07/schema#', module: 'ajv' },
  { name: '2019-09', pattern: /^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/, id: 'https://json-schema.org/draft/2019-09/schema', module: 'ajv/dist/2019' },
  { name: '2020-12', pattern: /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/, id: 'https://json-schema.org/draft/2020-12/schema', module: 'ajv/dist/2020' },
]
const DEFAULT_DRAFT = DRAFTS[2]

// What strict structured output accepts in a schema (the model's constrained decoding compiles
// the schema ahead of time and refuses anything else with a 400): these keywords, every object
// closed (`additionalProperties: false`) with all of its properties required, and a root that
// is an object.
const KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
  '$comment',
  'default',
  'examples',
  'readOnly',
  'writeOnly',
  'pattern',
  'format',
  'multipleOf',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
])
const ROOT_KEYWORDS = new Set(['$schema', '$id'])
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'])
const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'])
/** Advice for the refused keywords people meet most. */
const INSTEAD = {
  oneOf: 'use anyOf',
  allOf: 'merge the schemas into one object',
  minLength: 'check lengths after the call, or pass a Standard Schema whose library checks them',
  maxLength: 'check lengths after the call, or pass a Standard Schema whose library checks them',
  uniqueItems: 'check it after the call, or pass a Standard Schema whose library checks it',
  prefixItems: 'use an object with named properties',
  patternProperties: 'use an object with named properties',
}
/**
 * Keywords a converted Standard Schema may carry that strict output refuses but that only
 * narrow a value: they are left out of what the model is sent, and the library still enforces
 * them when it validates the reply.
 */
const NARROWING = new Set([
  'minLength',
  'maxLength',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'contains',
  'minContains',
  'maxContains',
  'propertyNames',
  'contentEncoding',
  'contentMediaType',
  'deprecated',
])

const isPlainObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

/** `.name`, or `["odd name"]` for keys that are not identifiers. */
function segment(key) {
  if (typeof key === 'number') return `[${key}]`
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
}

/**
 * A Standard Schema (https://standardschema.dev): `~standard` with version 1 and `validate`.
 * `~standard` is read once; a getter or a Proxy's trap that throws is a TypeError naming `name`.
 */
function isStandardSchema(value, name = 'schema') {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false
  const props = option(value, '~standard', name)
  if (props === null || typeof props !== 'object') return false
  try {
    return props.version === 1 && typeof props.validate === 'function'
  } catch {
    throw new TypeError(`${name}["~standard"] could not be read`)
  }
}

// ---------------------------------------------------------------------------------------------
// the strict check

/** The first thing strict structured output would refuse in `schema`, as a message with its path. */
function strictProblem(schema, name) {
  if (!isPlainObject(schema)) return `${name} must be a JSON Schema object`
  if (schema.type !== 'object') {
    return `${name} must describe an object (type: "object" at the root): strict structured output replies with a JSON object`
  }
  if ('anyOf' in schema) return `${name}.anyOf: the root of a strict output schema cannot be a union; put the union in a property`
  return nodeProblem(schema, name, true)
}

function nodeProblem(node, path, root) {
  if (!isPlainObject(node)) return `${path} must be a schema object (a boolean schema is not accepted by strict structured output)`
  for (const key of Object.keys(node)) {
    if (KEYWORDS.has(key) || (root && ROOT_KEYWORDS.has(key))) continue
    const hint = INSTEAD[key] ? `: ${INSTEAD[key]}` : ''
    if (ROOT_KEYWORDS.has(key)) return `${path}${segment(key)} is only accepted at the root of the schema`
    return `${path}${segment(key)}: strict structured output does not accept the keyword ${JSON.stringify(key)}${hint}`
  }
  const type = node.type
  const types = Array.isArray(type) ? type : type === undefined ? [] : [type]
  for (const t of types) {
    if (!TYPES.has(t)) return `${path}.type: ${JSON.stringify(t)} is not a JSON Schema type`
  }
  if (types.length === 0 && !['anyOf', '$ref', 'enum', 'const'].some((k) => k in node)) {
    return `${path} must say what it holds (type, enum, const, anyOf or $ref): strict structured output accepts no schema that allows anything`
  }
  if ('format' in node && !FORMATS.has(node.format)) {
    return `${path}.format: ${JSON.stringify(node.format)} is not a format strict structured output accepts (${[...FORMATS].join(', ')})`
  }
  if (types.includes('object') || 'properties' in node || 'additionalProperties' in node) {
    if (node.additionalProperties !== false) {
      return `${path} must set additionalProperties: false (strict structured output accepts only closed objects)`
    }
    const properties = node.properties ?? {}
    if (!isPlainObject(properties)) return `${path}.properties must be an object`
    const required = node.required ?? []
    if (!Array.isArray(required)) return `${path}.required must be an array`
    for (const key of Object.keys(properties)) {
      if (!required.includes(key)) {
        return `${path}.properties${segment(key)} is optional, but strict structured output needs every property listed in required: list it and allow null instead (type: [..., "null"]; in zod .nullable() rather than .optional())`
      }
    }
    for (const key of required) {
      if (!Object.prototype.hasOwnProperty.call(properties, key)) return `${path}.required names ${JSON.stringify(key)}, which is not in properties`
    }
    for (const [key, child] of Object.entries(properties)) {
      const problem = nodeProblem(child, `${path}.properties${segment(key)}`, false)
      if (problem) return problem
    }
  }
  if ('items' in node) {
    if (!isPlainObject(node.items)) return `${path}.items must be one schema (tuples are not accepted by strict structured output)`
    const problem = nodeProblem(node.items, `${path}.items`, false)
    if (problem) return problem
  }
  if ('anyOf' in node) {
    if (!Array.isArray(node.anyOf) || node.anyOf.length === 0) return `${path}.anyOf must be a non-empty array`
    for (let i = 0; i < node.anyOf.length; i++) {
      const problem = nodeProblem(node.anyOf[i], `${path}.anyOf[${i}]`, false)
      if (problem) return problem
    }
  }
  for (const defs of ['$defs', 'definitions']) {
    if (!(defs in node)) continue
    if (!isPlainObject(node[defs])) return `${path}.${defs} must be an object`
    for (const [key, child] of Object.entries(node[defs])) {
      const problem = nodeProblem(child, `${path}.${defs}${segment(key)}`, false)
      if (problem) return problem
    }
  }
  return null
}

/**
 * What a library's JSON Schema needs to become what strict output accepts, where that keeps
 * its meaning (the library validates the reply anyway): objects without `additionalProperties`
 * are closed, `oneOf` becomes `anyOf`, and keywords that only narrow a value are dropped.
 * Works on a copy; what cannot be mended is left for the check to report.
 */
function mendConverted(schema) {
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (!isPlainObject(node)) return
    const objectShaped = node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object')) || 'properties' in node
    if (objectShaped && !('additionalProperties' in node)) node.additionalProperties = false
    if ('oneOf' in node && !('anyOf' in node)) {
      node.anyOf = node.oneOf
      delete node.oneOf
    }
    if ('format' in node && !FORMATS.has(node.format)) delete node.format
    for (const key of NARROWING) delete node[key]
    for (const key of ['properties', '$defs', 'definitions']) {
      if (isPlainObject(node[key])) Object.values(node[key]).forEach(visit)
    }
    visit(node.items)
    visit(node.anyOf)
  }
  visit(schema)
  return schema
}

// ---------------------------------------------------------------------------------------------
// JSON Schema (ajv)

const ajvs = new Map()

function ajvFor(draft) {
  let ajv = ajvs.get(draft.name)
  if (!ajv) {
    const Ajv = require(draft.module)
    const AjvClass = Ajv.default ?? Ajv
    // No logger: ajv's default writes to the app's console, where the package writes nothing.
    ajv = new AjvClass({ allErrors: true, strict: false, addUsedSchema: false, logger: false })
    const addFormats = require('ajv-formats')
    ;(addFormats.default ?? addFormats)(ajv)
    ajvs.set(draft.name, ajv)
  }
  return ajv
}

function draftOf(schema, name) {
  const declared = schema.$schema
  if (declared === undefined) return DEFAULT_DRAFT
  const draft = typeof declared === 'string' ? DRAFTS.find((d) => d.pattern.test(declared)) : undefined
  if (!draft) {
    throw new TypeError(
      `${name}.$schema ${JSON.stringify(declared)} is not a JSON Schema draft this package understands: use draft-07, 2019-09 or 2020-12, or leave $schema out (2020-12)`,
    )
  }
  return draft
}

function prepareJsonSchema(given, name) {
  // Read as given, once: a cycle, a depth beyond the bound, a getter that throws or a value JSON
  // would change is a TypeError naming its path, before anything else walks the schema.
  const schema = plain(given, name)
  const draft = draftOf(schema, name)
  const problem = strictProblem(schema, name)
  if (problem) throw new TypeError(problem)
  const ajv = ajvFor(draft)
  let check
  try {
    check = ajv.compile(schema.$schema === undefined ? schema : { ...schema, $schema: draft.id })
  } catch (error) {
    throw new TypeError(`${name} is not a valid JSON Schema (${draft.name}): ${error.message}`)
  }
  return {
    wire: schema,
    async validate(value) {
      if (check(value)) return { ok: true, value }
      const errors = check.errors ?? []
      return { ok: false, message: ajv.errorsText(errors), detail: { errors } }
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Standard Schema

/** The JSON Schema of what the library accepts (its input: the reply before transforms). */
function convert(standard, name) {
  const props = standard['~standard']
  const vendor = typeof props.vendor === 'string' ? props.vendor : 'unknown library'
  const exporter = props.jsonSchema
  let write
  if (exporter && typeof exporter.input === 'function') {
    // The Standard JSON Schema interface: ask for 2020-12 (the Responses API's draft), and for
    // draft-07 from a library that does not write 2020-12.
    write = () => {
      try {
        return exporter.input({ target: 'draft-2020-12' })
      } catch {
        return exporter.input({ target: 'draft-07' })
      }
    }
  } else if (typeof standard.toJSONSchema === 'function') {
    write = () => standard.toJSONSchema({ io: 'input' })
  } else if (typeof standard.toJsonSchema === 'function') {
    write = () => standard.toJsonSchema()
  } else {
    const valibot = vendor === 'valibot' ? ' (for valibot: wrap the schema with toStandardJsonSchema() from @valibot/to-json-schema)' : ''
    throw new TypeError(
      `${name} is a Standard Schema of ${vendor} that offers no JSON Schema, which the model needs to be told the shape: use a schema that implements the Standard JSON Schema interface (~standard.jsonSchema)${valibot}, or pass a JSON Schema`,
    )
  }
  let converted
  try {
    converted = write()
  } catch (error) {
    throw new TypeError(`${name} (${vendor}) cannot be written as JSON Schema: ${error && error.message}`)
  }
  let copy
  try {
    copy = plain(converted, `${name} (as JSON Schema from ${vendor})`)
  } catch (error) {
    throw new TypeError(`${name} (${vendor}) converted to a JSON Schema that is not JSON: ${error.message}`)
  }
  if (!isPlainObject(copy)) throw new TypeError(`${name} (${vendor}) converted to ${typeof copy}, not a JSON Schema object`)
  return { schema: mendConverted(copy), vendor }
}

function issuesText(issues) {
  return issues
    .map((issue) => {
      const path = (issue.path ?? []).map((p) => (p !== null && typeof p === 'object' ? p.key : p)).map(String).join('.')
      return path ? `${path}: ${issue.message}` : issue.message
    })
    .join('; ')
}

function prepareStandardSchema(standard, name) {
  const { schema, vendor } = convert(standard, name)
  const problem = strictProblem(schema, `${name} (as JSON Schema from ${vendor})`)
  if (problem) throw new TypeError(problem)
  return {
    wire: schema,
    async validate(value) {
      const result = await standard['~standard'].validate(value)
      if (!result.issues) return { ok: true, value: result.value }
      return { ok: false, message: issuesText(result.issues), detail: { issues: result.issues } }
    },
  }
}

// ---------------------------------------------------------------------------------------------

// A Standard Schema (zod, valibot, …) does not change once built: cached per object. A JSON
// Schema is plain data the app may change between turns (an enum of the files open now): read
// anew each time, and cached by its text, so that a changed schema is never served stale.
const prepared = new WeakMap()
const byText = new Map()
const BY_TEXT_BOUND = 256

/** `make(copy)` for the plain JSON Schema `copy`, cached by its text under `kind`. */
function cachedByText(kind, copy, make) {
  const key = `${kind}\n${JSON.stringify(copy)}`
  let result = byText.get(key)
  if (result === undefined) {
    result = make(copy)
    if (byText.size >= BY_TEXT_BOUND) byText.delete(byText.keys().next().value)
    byText.set(key, result)
  }
  return result
}

/**
 * `outputSchema` as the model is sent it (`wire`) and `validate(value)` for the parsed reply.
 * Throws a TypeError naming the offending path for a schema that is not one, that strict
 * structured output would refuse, or whose draft is unknown. Cached: a Standard Schema per object, a JSON Schema by its text.
 */
function prepareOutputSchema(schema, name = 'options.outputSchema') {
  if (schema === null || (typeof schema !== 'object' && typeof schema !== 'function') || isArray(schema, name)) {
    throw new TypeError(`${name} must be a JSON Schema object or a Standard Schema (zod, valibot, arktype, …)`)
  }
  if (!isStandardSchema(schema, name)) {
    // A JSON Schema (a Proxy's included) is read as given, into a plain copy.
    return cachedByText('output', plain(schema, name), (copy) => prepareJsonSchema(copy, name))
  }
  let result = prepared.get(schema)
  if (!result) {
    result = prepareStandardSchema(schema, name)
    prepared.set(schema, result)
  }
  return result
}

// ---------------------------------------------------------------------------------------------
// an app tool's inputSchema

/** An ajv error as the model reads it: the argument's path from `arguments`, and the rule. */
function argumentError(error) {
  const path = (error.instancePath ?? '')
    .split('/')
    .slice(1)
    .map((p) => segment(/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')))
    .join('')
  const at = `arguments${path}`
  if (error.keyword === 'required') return `${at}${segment(error.params.missingProperty)} is required`
  if (error.keyword === 'additionalProperties') return `${at}${segment(error.params.additionalProperty)} is not allowed (additionalProperties: false)`
  return `${at} ${error.message}`
}

const toolSchemas = new WeakMap()

/**
 * An app tool's `inputSchema` as Codex is sent it (`wire`: a JSON Schema, a Standard Schema's
 * converted, verbatim — Codex sends tools with strict mode off) and `validate(arguments)`: `{ok,
 * value}` (a Standard Schema's output) or `{ok: false, message}` naming each argument and the
 * rule it breaks. Whether it is an object schema is the core's check; a schema that is not an
 * object is handed over for it to name, with no check of its own. Cached: a Standard Schema per
 * object, a JSON Schema by its text (an app may change it between turns).
 */
function prepareToolSchema(schema, name) {
  const object = schema !== null && (typeof schema === 'object' || typeof schema === 'function')
  if (object && isStandardSchema(schema, name)) {
    let result = toolSchemas.get(schema)
    if (!result) {
      const { schema: wire } = convert(schema, name)
      result = {
        wire,
        async validate(value) {
          const checked = await schema['~standard'].validate(value)
          if (!checked.issues) return { ok: true, value: checked.value }
          return { ok: false, message: issuesText(checked.issues.map((i) => ({ ...i, path: ['arguments', ...(i.path ?? [])] }))) }
        },
      }
      toolSchemas.set(schema, result)
    }
    return result
  }
  const wire = plain(schema, name)
  if (!isPlainObject(wire) || wire.type !== 'object') return { wire, validate: null }
  return cachedByText('tool', wire, (copy) => {
    const draft = draftOf(copy, name)
    const ajv = ajvFor(draft)
    let check
    try {
      check = ajv.compile(copy.$schema === undefined ? copy : { ...copy, $schema: draft.id })
    } catch (error) {
      throw new TypeError(`${name} is not a valid JSON Schema (${draft.name}): ${error.message}`)
    }
    return {
      wire: copy,
      async validate(value) {
        if (check(value)) return { ok: true, value }
        return { ok: false, message: (check.errors ?? []).map(argumentError).join('; ') }
      },
    }
  })
}

module.exports = { prepareOutputSchema, prepareToolSchema, strictProblem, isStandardSchema }
