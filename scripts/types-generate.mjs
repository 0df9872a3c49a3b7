// Regenerates types/codex/: the TypeScript types of the server's own objects the package hands
// out verbatim — `ThreadItem` (the `item` of itemStarted and itemCompleted), a plan's steps, a
// rate-limit snapshot, the account, a model, a thread, a goal, a skill, an MCP server's status —
// and everything they reference, from `codex app-server generate-ts` of the pinned CLI (or
// RENNET_CODEX_BIN). Only that closure is kept, not the whole protocol.
//
// Also `ClientRequestMap.d.ts`, what `request()` is typed by: every client method of the CLI's
// `ClientRequest` union with its params type and its result type. The generated sources pair a
// method with its params only; the result is the params type's name with `Params` → `Response`
// (`ThreadArchiveParams` → `ThreadArchiveResponse`), which holds for all but the few methods
// named in RESULTS below (no params type, or a shared result type). A method whose result type
// cannot be found stops the generation, so that a new CLI's exception is added here, not guessed.
// `ServerRequestMap.d.ts` is the same for the server's requests (`ServerRequest`), whose
// responses are what an app's `onServerRequest` answers with: the rule holds for every one of
// them, and one it does not hold for stops the generation too.
//
// And `notification-methods.json`: every method of the CLI's `ServerNotification` union. The core
// reads it (crates/core/src/events/): a notification without an event of its own comes out as
// `native` when the schema lists its method (typed by method), as `unknownNotification` when not.
//
//   pnpm types:generate           rewrite types/codex/
//   pnpm types:generate --check   exit 1 when the committed files differ from the CLI's

import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { codexCli, codexVersion, withGenerated } from './codex-cli.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
/** The request maps this script writes beside the CLI's own output. */
const MAP = 'ClientRequestMap.ts'
const SERVER_MAP = 'ServerRequestMap.ts'
const OUT = join(ROOT, 'types', 'codex')
/** The generated types the public API names. */
const ENTRY_POINTS = [
  // The protocol's unions the events are typed by (native, serverRequest) and a failure's reason.
  'ServerNotification.ts',
  'ServerRequest.ts',
  'v2/CodexErrorInfo.ts',
  'v2/ThreadItem.ts',
  'v2/TurnPlanStep.ts',
  'v2/RateLimitSnapshot.ts',
  'v2/Account.ts',
  'v2/Model.ts',
  'v2/Thread.ts',
  'v2/GetAccountRateLimitsResponse.ts',
  'v2/ThreadGoal.ts',
  'v2/ThreadGoalStatus.ts',
  'v2/SkillMetadata.ts',
  'v2/McpServerStatus.ts',
  'v2/ThreadSortKey.ts',
  'v2/ThreadSourceKind.ts',
  MAP,
  SERVER_MAP,
]

/**
 * The result types the `Params` → `Response` rule does not find: methods without a params type,
 * and results shared by several methods. `null`: the CLI generates no result type for it (the
 * map says `unknown`).
 */
const RESULTS = {
  'account/logout': 'LogoutAccountResponse',
  'account/gatewayOAuth/cancel': 'GatewayOAuthCancelResponse',
  'account/securitySetup/read': 'GetAccountSecuritySetupResponse',
  'account/workspaceMessages/read': 'GetWorkspaceMessagesResponse',
  'config/mcpServer/reload': 'McpServerRefreshResponse',
  'config/value/write': 'ConfigWriteResponse',
  'config/batchWrite': 'ConfigWriteResponse',
  'configRequirements/read': 'ConfigRequirementsReadResponse',
  'externalAgentConfig/import/readHistories': 'ExternalAgentConfigImportHistoriesReadResponse',
  'windowsSandbox/readiness': 'WindowsSandboxReadinessResponse',
  'modelProvider/default/set': null,
}

const check = process.argv.includes('--check')

/** What each request map is written from, and what it says of itself. */
const MAPS = {
  [MAP]: {
    union: 'ClientRequest.ts',
    results: RESULTS,
    doc: ['Every client method of this Codex with its params and its result, by method: what', '`request()` is typed by.'],
    name: 'ClientRequestMap',
  },
  [SERVER_MAP]: {
    union: 'ServerRequest.ts',
    results: {},
    doc: ['Every request this Codex sends its client, with its params and the result it expects', 'back, by method: what an app answers `onServerRequest` with.'],
    name: 'ServerRequestMap',
  },
}

/**
 * The text of a request map (`map`, one of MAPS), beside the generated union of `generated`:
 * `{ [method]: { params, result } }` for every method of the union.
 */
function requestMap(generated, map) {
  const { union: unionFile, results, doc, name: mapName } = MAPS[map]
  const union = readFileSync(join(generated, unionFile), 'utf8')
  const imports = new Map()
  for (const [, name, spec] of union.matchAll(/import type \{ (\w+) \} from "(\.[^"]+)";/g)) imports.set(name, spec)
  const find = (name) => {
    for (const dir of ['', 'v2/', 'v1/']) if (existsSync(join(generated, `${dir}${name}.ts`))) return `./${dir}${name}`
    return null
  }
  const rows = []
  const used = new Map()
  const entries = [...union.matchAll(/\{ "method": "([^"]+)", id: RequestId, params(\??): ([^,]+?), \}/g)]
  if (entries.length === 0) throw new Error(`${unionFile} lists no methods: its shape changed`)
  for (const [, method, optional, paramsText] of entries) {
    const paramsName = /^(\w+)/.exec(paramsText.trim())?.[1]
    const params = paramsName && imports.has(paramsName) ? paramsName : null
    if (params) used.set(params, imports.get(params))
    const resultName = method in results ? results[method] : params?.replace(/Params$/, 'Response')
    let result = 'unknown'
    if (resultName) {
      const spec = find(resultName)
      if (!spec) throw new Error(`no result type ${resultName} for ${method}: add the method to RESULTS in scripts/types-generate.mjs`)
      used.set(resultName, spec)
      result = resultName
    } else if (resultName === undefined) {
      throw new Error(`${method} has no params type to name its result by: add it to RESULTS in scripts/types-generate.mjs`)
    }
    const paramsType = params ? (optional ? `${params} | undefined` : params) : 'undefined'
    rows.push(`  ${JSON.stringify(method)}: { params: ${paramsType}; result: ${result} };`)
  }
  const importLines = [...used].sort(([a], [b]) => a.localeCompare(b)).map(([name, spec]) => `import type { ${name} } from "${spec}";`)
  return [
    '',
    ...importLines,
    '',
    '/**',
    ...doc.map((line) => ` * ${line}`),
    ' */',
    `export type ${mapName} = {`,
    ...rows,
    '};',
    '',
  ].join('\n')
}
const bin = codexCli()
const version = codexVersion(bin)

/** path relative to the generated root → file text, for the closure of ENTRY_POINTS. */
function closure(generated) {
  const files = new Map()
  const queue = [...ENTRY_POINTS]
  while (queue.length) {
    const rel = queue.shift()
    if (files.has(rel)) continue
    const text = readFileSync(join(generated, rel), 'utf8')
    files.set(rel, text)
    for (const [, spec] of text.matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
      const target = relative(generated, resolve(generated, dirname(rel), `${spec}.ts`)).split('\\').join('/')
      queue.push(target)
    }
  }
  return files
}

const header = (rel) =>
  `// Generated by scripts/types-generate.mjs from \`codex app-server generate-ts\` of codex-cli ${version}\n` +
  `// (${rel}). Regenerate with \`pnpm types:generate\`; do not edit.\n`

/** The file of the notification methods the core reads. */
const NOTIFICATIONS = 'notification-methods.json'

/** `notification-methods.json`: every method of the generated `ServerNotification.ts`, sorted. */
function notificationMethods(generated) {
  const union = readFileSync(join(generated, 'ServerNotification.ts'), 'utf8')
  const methods = [...union.matchAll(/\{ "method": "([^"]+)", "params": /g)].map(([, method]) => method)
  if (methods.length === 0) throw new Error('ServerNotification.ts lists no methods: its shape changed')
  const note = `Generated by scripts/types-generate.mjs from \`codex app-server generate-ts\` of codex-cli ${version} (ServerNotification.ts); do not edit.`
  return JSON.stringify({ $comment: note, methods: [...new Set(methods)].sort() }, null, 2) + '\n'
}

const wanted = withGenerated(bin, 'generate-ts', (generated) => {
  for (const map of Object.keys(MAPS)) writeFileSync(join(generated, map), requestMap(generated, map))
  const out = new Map()
  for (const [rel, text] of closure(generated)) {
    // Declaration files: the generated sources are type-only, so they ship as .d.ts as they are.
    out.set(rel.replace(/\.ts$/, '.d.ts'), header(rel) + text)
  }
  out.set(NOTIFICATIONS, notificationMethods(generated))
  return out
})

// The JSON Schema of the response of every server request, by method: what an app's answer
// (`onServerRequest`) is checked against before it is sent (lib/server-requests.js).
const RESPONSES = 'server-request-responses.json'
wanted.set(
  RESPONSES,
  withGenerated(bin, 'generate-json-schema', (generated) => {
    const bundle = JSON.parse(readFileSync(join(generated, 'codex_app_server_protocol.schemas.json'), 'utf8'))
    const responses = {}
    for (const entry of bundle.definitions.ServerRequest.oneOf) {
      const method = entry.properties.method.enum[0]
      const name = entry.properties.params.$ref.split('/').pop().replace(/Params$/, 'Response')
      responses[method] = JSON.parse(readFileSync(join(generated, `${name}.json`), 'utf8'))
    }
    const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)))
    const note = `Generated by scripts/types-generate.mjs from \`codex app-server generate-json-schema\` of codex-cli ${version}; do not edit.`
    return JSON.stringify({ $comment: note, responses: sorted }, null, 2) + '\n'
  }),
)

function committed() {
  const found = new Map()
  if (!existsSync(OUT)) return found
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else found.set(relative(OUT, path).split('\\').join('/'), readFileSync(path, 'utf8'))
    }
  }
  walk(OUT)
  return found
}

if (check) {
  const have = committed()
  const problems = []
  for (const [rel, text] of wanted) {
    if (!have.has(rel)) problems.push(`missing: types/codex/${rel}`)
    else if (have.get(rel) !== text) problems.push(`differs: types/codex/${rel}`)
  }
  for (const rel of have.keys()) if (!wanted.has(rel)) problems.push(`not generated any more: types/codex/${rel}`)
  if (problems.length) {
    console.error(`types/codex/ does not match codex-cli ${version} (run pnpm types:generate):\n  ${problems.join('\n  ')}`)
    process.exit(1)
  }
  console.log(`types/codex/: ${wanted.size} files match codex-cli ${version}`)
} else {
  rmSync(OUT, { recursive: true, force: true })
  for (const [rel, text] of wanted) {
    mkdirSync(dirname(join(OUT, rel)), { recursive: true })
    writeFileSync(join(OUT, rel), text)
  }
  console.log(`types/codex/: wrote ${wanted.size} files from codex-cli ${version}`)
}
