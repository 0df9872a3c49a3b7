// `pnpm schema:check`: does the resolved Codex still speak what this package speaks?
//
// Generates the JSON schema with `codex app-server generate-json-schema` (RENNET_CODEX_BIN, else
// the pinned devDependency; or each codex-cli version named on the command line, `--matrix`
// for the whole compatibility matrix, `--ci` for its oldest and newest) and checks every
// method, notification and field listed in scripts/protocol-surface.json against it: that
// each method exists, that each field we send is accepted with the type and values we send,
// that the schema requires nothing we do not send, and that each field we read exists, is
// present whenever we rely on it, and carries only types we handle. It also checks that the
// list names every method the Rust source uses, so the list cannot fall behind the code. A
// method the list marks `"experimental": true` is one the package asks for with the protocol's
// experimental surface (`initialize.capabilities.experimentalApi`), because some versions have
// it only there (`thread/revert` before 0.171.0): it is checked against the schema generated
// with `--experimental`. A field read only where present that a CLI older than the pinned one
// lacks is noted as such, not drift (the code goes on without it).
// Prints a report; exits 1 on drift.

import { readFileSync } from 'node:fs'
import { PINNED_CODEX_VERSION } from '../testing/codex-home.js'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { codexCli, codexVersion, withGenerated } from './codex-cli.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const SURFACE_FILE = join(ROOT, 'scripts', 'protocol-surface.json')
const BUNDLE = 'codex_app_server_protocol.schemas.json'

// ---------------------------------------------------------------------------------------------
// the list against the source

/** Method names the Rust source uses: the rows of its one method table (crates/core/src/protocol/methods.rs). */
export function methodsInSource(root = ROOT) {
  const file = 'crates/core/src/protocol/methods.rs'
  const found = new Map()
  for (const [, name] of readFileSync(join(root, file), 'utf8').matchAll(/^\s*[A-Z_]+ = "([^"]+)", \w+/gm)) {
    if (!found.has(name)) found.set(name, file)
  }
  return found
}

// ---------------------------------------------------------------------------------------------
// schema model: a node flattens into alternatives {types, values, props, required, items, open}

const ALL = ['string', 'integer', 'number', 'boolean', 'object', 'array', 'null']

function makeResolver(bundle) {
  const pointer = (ref) => {
    if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref}`)
    return ref
      .slice(2)
      .split('/')
      .reduce((node, key) => (node === undefined ? undefined : node[key.replace(/~1/g, '/').replace(/~0/g, '~')]), bundle)
  }

  function alternatives(node, depth = 0) {
    if (depth > 50) throw new Error('schema nesting too deep')
    if (node === true || node === undefined) return [{ open: true }]
    if (node.$ref) {
      const target = pointer(node.$ref)
      if (target === undefined) throw new Error(`dangling $ref ${node.$ref}`)
      const { $ref, ...rest } = node
      return intersect(alternatives(target, depth + 1), Object.keys(rest).length ? alternatives(rest, depth + 1) : [{ open: true }])
    }
    let base = [own(node)]
    for (const key of ['oneOf', 'anyOf']) {
      if (Array.isArray(node[key])) base = intersect(base, node[key].flatMap((n) => alternatives(n, depth + 1)))
    }
    if (Array.isArray(node.allOf)) for (const part of node.allOf) base = intersect(base, alternatives(part, depth + 1))
    return base
  }

  /** The constraints written on the node itself. */
  function own(node) {
    const alt = { open: true }
    let types = node.type === undefined ? null : new Set([node.type].flat())
    const values = node.enum ?? ('const' in node ? [node.const] : null)
    if (values) {
      alt.values = new Set(values)
      const valueTypes = new Set(values.map((v) => (v === null ? 'null' : typeof v === 'number' ? 'number' : typeof v)))
      types = types ?? valueTypes
    }
    if (node.properties || node.required || node.additionalProperties !== undefined) types = types ?? new Set(['object'])
    if (node.items) types = types ?? new Set(['array'])
    if (types) {
      alt.open = false
      alt.types = types
    }
    alt.props = node.properties ?? {}
    alt.required = new Set(node.required ?? [])
    alt.additional = node.additionalProperties
    alt.items = node.items
    return alt
  }

  function intersect(as, bs) {
    const out = []
    for (const a of as) {
      for (const b of bs) {
        const m = merge(a, b)
        if (m) out.push(m)
      }
    }
    return out
  }

  function merge(a, b) {
    if (a.open && !hasShape(a)) return b
    if (b.open && !hasShape(b)) return a
    const types = a.open ? b.types : b.open ? a.types : new Set([...a.types].filter((t) => typeAccepts(b.types, t)))
    if (types && types.size === 0) return null
    let values = a.values ?? b.values
    if (a.values && b.values) values = new Set([...a.values].filter((v) => b.values.has(v)))
    if (values && values.size === 0) return null
    return {
      open: a.open && b.open,
      types,
      values,
      props: { ...(a.props ?? {}), ...(b.props ?? {}) },
      required: new Set([...(a.required ?? []), ...(b.required ?? [])]),
      additional: a.additional ?? b.additional,
      items: a.items ?? b.items,
    }
  }

  const hasShape = (alt) =>
    Object.keys(alt.props ?? {}).length > 0 || (alt.required?.size ?? 0) > 0 || alt.items !== undefined || alt.values

  return { pointer, alternatives }
}

function typeAccepts(types, type) {
  return types.has(type) || (type === 'integer' && types.has('number'))
}

// ---------------------------------------------------------------------------------------------
// the checks

/** `a.b[].c` → ['a', 'b', '[]', 'c'] */
function segments(path) {
  return path.split('.').flatMap((part) => (part.endsWith('[]') ? [part.slice(0, -2), '[]'] : [part]))
}

function parseSpec(spec) {
  const types = new Set()
  const literals = new Set()
  for (const part of spec.split('|').map((s) => s.trim())) {
    if (part.startsWith('"')) literals.add(JSON.parse(part))
    else if (part === 'any' || ALL.includes(part)) types.add(part)
    else throw new Error(`unknown type ${part} in ${JSON.stringify(spec)}`)
  }
  return { types, literals }
}

const describeAlt = (alt) =>
  alt.open ? 'anything' : alt.values ? [...alt.values].map((v) => JSON.stringify(v)).join('|') : [...alt.types].join('|')

/**
 * Follows `path` from `root` alternatives. Returns the alternatives found at the end, whether
 * the last field is present in every variant that has its parent (an optional parent is the
 * parent's own entry), and where the path breaks off.
 */
function walk(schema, rootAlts, path) {
  let alts = rootAlts
  let always = true
  let missing = null
  for (const seg of segments(path)) {
    always = true
    const next = []
    let absentSomewhere = false
    for (const alt of alts) {
      if (seg !== '[]' && !alt.open && alt.types.has('null') && alt.types.size === 1) continue
      if (alt.open) {
        next.push({ open: true })
        continue
      }
      if (seg === '[]') {
        if (alt.types.has('array')) next.push(...schema.alternatives(alt.items))
        continue
      }
      if (!alt.types.has('object')) continue
      if (seg in alt.props) {
        next.push(...schema.alternatives(alt.props[seg]))
        if (!alt.required.has(seg)) absentSomewhere = true
      } else if (alt.additional !== undefined && alt.additional !== false) {
        next.push(...schema.alternatives(alt.additional === true ? undefined : alt.additional))
        absentSomewhere = true
      } else {
        absentSomewhere = true
      }
    }
    if (absentSomewhere) always = false
    if (next.length === 0) {
      missing = seg
      return { alts: [], always: false, missing }
    }
    alts = next
  }
  return { alts, always, missing }
}

function checkSends(schema, rootAlts, fields, problems, label) {
  const sent = new Map()
  for (const [key, spec] of Object.entries(fields)) {
    const optional = key.endsWith('?')
    const path = optional ? key.slice(0, -1) : key
    sent.set(path, optional)
    const { alts, missing } = walk(schema, rootAlts, path)
    if (missing) {
      problems.push(`${label} ${path}: sent, but the schema has no such field`)
      continue
    }
    const { types, literals } = parseSpec(spec)
    for (const type of types) {
      if (type === 'any') continue
      if (!alts.some((a) => a.open || typeAccepts(a.types, type))) {
        problems.push(`${label} ${path}: sent as ${type}, the schema accepts ${alts.map(describeAlt).join(' | ')}`)
      }
    }
    for (const literal of literals) {
      const ok = alts.some((a) => a.open || (a.types.has(typeof literal) && (!a.values || a.values.has(literal))))
      if (!ok) problems.push(`${label} ${path}: sent as ${JSON.stringify(literal)}, the schema accepts ${alts.map(describeAlt).join(' | ')}`)
    }
  }
  // Whatever the schema requires of an object we send, we must send.
  const parents = new Set([''])
  for (const path of sent.keys()) {
    const segs = path.split('.')
    for (let i = 1; i < segs.length; i++) parents.add(segs.slice(0, i).join('.'))
  }
  for (const parent of parents) {
    const { alts } = parent === '' ? { alts: rootAlts } : walk(schema, rootAlts, parent)
    const children = [...sent.keys()]
      .filter((p) => parent === '' || p.startsWith(`${parent}.`))
      .map((p) => (parent === '' ? p : p.slice(parent.length + 1)).split('.')[0].replace(/\[\]$/, ''))
    // The variants our literal values select (e.g. sandboxPolicy {type: "readOnly"}).
    const fitting = alts.filter((a) => !a.open && a.types.has('object') && literalsFit(schema, a, parent, fields))
    if (fitting.length === 0) continue
    const unmet = fitting.map((a) => [...a.required].filter((r) => !children.includes(r)))
    if (unmet.every((u) => u.length > 0)) {
      problems.push(`${label} ${parent || 'params'}: the schema requires ${[...new Set(unmet.flat())].join(', ')}, which is not sent`)
    }
  }
}

function literalsFit(schema, alt, parent, fields) {
  for (const [key, spec] of Object.entries(fields)) {
    const path = key.replace(/\?$/, '')
    const rest = parent === '' ? path : path.startsWith(`${parent}.`) ? path.slice(parent.length + 1) : null
    if (rest === null || rest.includes('.')) continue
    const { literals, types } = parseSpec(spec)
    if (literals.size === 0 || types.size > 0 || !(rest in alt.props)) continue
    const values = schema.alternatives(alt.props[rest])
    if (![...literals].some((l) => values.some((v) => v.open || !v.values || v.values.has(l)))) return false
  }
  return true
}

/**
 * `absent`: where an older CLI's schema lacks a field we read only where present (`?`), it is
 * noted there instead of reported (the code goes on without it); null: every missing field is
 * drift (the pinned CLI, where a missing field is a wrong name).
 */
function checkReads(schema, rootAlts, fields, problems, label, absent = null) {
  for (const [key, spec] of Object.entries(fields)) {
    const optional = key.endsWith('?')
    const path = optional ? key.slice(0, -1) : key
    const { alts, always, missing } = walk(schema, rootAlts, path)
    if (missing && optional && absent) {
      absent.push(`${label} ${path}: read where present, and this CLI does not have it`)
      continue
    }
    if (missing) {
      problems.push(`${label} ${path}: read, but the schema has no such field`)
      continue
    }
    if (!optional && !always) problems.push(`${label} ${path}: read as always present, the schema makes it optional`)
    const { types, literals } = parseSpec(spec)
    if (!types.has('any')) {
      for (const alt of alts) {
        if (alt.open) {
          problems.push(`${label} ${path}: read as ${[...types].join('|')}, the schema leaves it unconstrained`)
          break
        }
        const unhandled = [...alt.types].filter((t) => !typeAccepts(types, t))
        if (unhandled.length) {
          problems.push(`${label} ${path}: read as ${[...types].join('|')}, the schema allows ${unhandled.join('|')}`)
          break
        }
      }
    }
    for (const literal of literals) {
      const possible = alts.some((a) => a.open || (a.types.has(typeof literal) && (!a.values || a.values.has(literal))))
      if (!possible) problems.push(`${label} ${path}: compared with ${JSON.stringify(literal)}, which the schema never sends (${alts.map(describeAlt).join(' | ')})`)
    }
  }
}

/** method → {params, response} refs from a oneOf of `{method: {enum: [m]}, params: {$ref}}`. */
function methodTable(bundle, name) {
  const table = new Map()
  for (const entry of bundle.definitions[name]?.oneOf ?? []) {
    const method = entry.properties?.method?.enum?.[0]
    const params = entry.properties?.params?.$ref ?? null
    if (method) table.set(method, { params, response: params ? params.replace(/Params$/, 'Response') : null })
  }
  return table
}

export function check(bundle, surface, sourceMethods, experimentalBundle = bundle, { olderCli = false } = {}) {
  const stable = makeResolver(bundle)
  const experimental = experimentalBundle === bundle ? stable : makeResolver(experimentalBundle)
  const tables = {
    clientRequests: methodTable(bundle, 'ClientRequest'),
    clientNotifications: methodTable(bundle, 'ClientNotification'),
    serverNotifications: methodTable(bundle, 'ServerNotification'),
    serverRequests: methodTable(bundle, 'ServerRequest'),
  }
  const where = {
    clientRequests: 'client request',
    clientNotifications: 'client notification',
    serverNotifications: 'server notification',
    serverRequests: 'server request',
  }
  const experimentalRequests = methodTable(experimentalBundle, 'ClientRequest')
  const report = []
  let drift = 0
  const listed = new Set()
  for (const [kind, methods] of Object.entries(surface)) {
    if (kind.startsWith('$')) continue
    if (!tables[kind]) throw new Error(`protocol-surface.json: unknown section ${kind}`)
    for (const [method, spec] of Object.entries(methods)) {
      listed.add(method)
      const problems = []
      const absent = olderCli ? [] : null
      const asExperimental = spec.experimental === true && kind === 'clientRequests'
      const schema = asExperimental ? experimental : stable
      const entry = (asExperimental ? experimentalRequests : tables[kind]).get(method)
      let fieldCount = 0
      if (!entry) {
        problems.push(`no ${where[kind]} ${method} in the schema`)
      } else {
        const alts = (ref) => {
          if (ref && schema.pointer(ref) === undefined) {
            problems.push(`the schema has no ${ref.split('/').pop()}`)
            return null
          }
          return schema.alternatives(ref ? { $ref: ref } : undefined)
        }
        if (spec.sends) {
          // A field whose key starts with `~` is experimental within a stable request: sent only
          // after `initialize` asked for the experimental API, so checked against that schema.
          const stableFields = Object.fromEntries(Object.entries(spec.sends).filter(([key]) => !key.startsWith('~')))
          const newer = Object.fromEntries(Object.entries(spec.sends).filter(([key]) => key.startsWith('~')).map(([key, v]) => [key.slice(1), v]))
          const root = alts(entry.params)
          if (root) checkSends(schema, root, stableFields, problems, 'params')
          if (Object.keys(newer).length) {
            const experimentalEntry = experimentalRequests.get(method)
            const experimentalRoot = experimentalEntry && experimental.alternatives({ $ref: experimentalEntry.params })
            if (experimentalRoot) checkSends(experimental, experimentalRoot, { ...stableFields, ...newer }, problems, 'params (experimental)')
            else problems.push(`no ${where[kind]} ${method} in the experimental schema`)
          }
          fieldCount += Object.keys(spec.sends).length
        }
        if (spec.reads) {
          const ref = kind === 'clientRequests' ? entry.response : entry.params
          const root = alts(ref)
          if (root) checkReads(schema, root, spec.reads, problems, kind === 'clientRequests' ? 'result' : 'params', absent)
          fieldCount += Object.keys(spec.reads).length
        }
        if (spec.replies) {
          const root = alts(entry.response)
          if (root) checkSends(schema, root, spec.replies, problems, 'reply')
          fieldCount += Object.keys(spec.replies).length
        }
      }
      drift += problems.length
      report.push({ kind, method, fields: fieldCount, problems, absent: absent ?? [] })
    }
  }
  const unlisted = [...sourceMethods].filter(([m]) => !listed.has(m))
  return { report, drift, unlisted }
}

// ---------------------------------------------------------------------------------------------
// one binary, and the command line

/** Checks one Codex binary's schema against the surface list and the source. */
export function checkBinary(bin, { surface = JSON.parse(readFileSync(SURFACE_FILE, 'utf8')), sourceMethods = methodsInSource() } = {}) {
  const version = codexVersion(bin)
  const generate = (args) => withGenerated(bin, 'generate-json-schema', (dir) => JSON.parse(readFileSync(join(dir, BUNDLE), 'utf8')), args)
  // An older CLI than the pinned one may lack fields the package reads only where present.
  const olderCli = version !== PINNED_CODEX_VERSION
  return { bin, version, ...check(generate([]), surface, sourceMethods, generate(['--experimental']), { olderCli }) }
}

/** The report of one binary as text lines; `full` lists the methods without drift too. */
export function reportLines({ bin, version, report, drift, unlisted }, { full = true } = {}) {
  const lines = [`schema:check against codex-cli ${version} (${bin})`]
  for (const { kind, method, fields, problems } of report) {
    if (!full && !problems.length) continue
    lines.push(`  ${problems.length ? 'DRIFT' : 'ok   '} ${kind.padEnd(19)} ${method} (${fields} fields)`)
    for (const p of problems) lines.push(`          - ${p}`)
  }
  for (const { method, absent = [] } of report) for (const a of absent) lines.push(`  older ${method}: ${a}`)
  for (const [method, file] of unlisted) lines.push(`  LIST  ${method}: used in ${file} but missing from scripts/protocol-surface.json`)
  const methods = report.length
  const fields = report.reduce((n, r) => n + r.fields, 0)
  lines.push(
    drift || unlisted.length
      ? `${drift} drift finding(s), ${unlisted.length} unlisted method(s) in ${methods} methods / ${fields} fields`
      : `no drift: ${methods} methods, ${fields} fields`,
  )
  return lines
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // No arguments: the resolved Codex (RENNET_CODEX_BIN, else the pinned devDependency).
  // Versions (`--matrix`, `--ci`, `--versions a,b` or bare versions): each of them, installed
  // into the version cache when missing (scripts/codex-versions.mjs), then a summary.
  const argv = process.argv.slice(2)
  let results
  if (argv.length === 0) {
    results = [checkBinary(codexCli())]
    console.log(reportLines(results[0]).join('\n'))
  } else {
    const { ensureCodex, versionsFromArgs } = await import('./codex-versions.mjs')
    const { versions, rest } = versionsFromArgs(argv.filter((a) => a !== '--matrix'))
    if (rest.length) throw new Error(`unknown argument(s): ${rest.join(' ')} (want --matrix, --ci, --versions a,b or versions)`)
    const log = (line) => console.error(line)
    results = versions.map((v) => checkBinary(ensureCodex(v, { log }).path))
    for (const result of results) console.log(reportLines(result, { full: false }).join('\n') + '\n')
    console.log('codex-cli  schema')
    for (const r of results) {
      const findings = r.drift + r.unlisted.length
      const where = r.report.filter((x) => x.problems.length).map((x) => x.method)
      console.log(`${r.version.padEnd(9)}  ${findings ? `${findings} drift finding(s): ${where.join(', ')}` : 'no drift'}`)
    }
  }
  if (results.some((r) => r.drift || r.unlisted.length)) process.exit(1)
}
