// scripts/schema-check.mjs: the pinned CLI's schema against scripts/protocol-surface.json, and
// proof that each kind of drift is reported.
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
// @ts-expect-error plain ESM scripts without declarations
import { check, methodsInSource } from '../../scripts/schema-check.mjs'
// @ts-expect-error plain ESM scripts without declarations
import { codexCli, withGenerated } from '../../scripts/codex-cli.mjs'

const ROOT = resolve(__dirname, '../..')
type Json = any // eslint-disable-line @typescript-eslint/no-explicit-any

const surface = (): Json => JSON.parse(readFileSync(join(ROOT, 'scripts/protocol-surface.json'), 'utf8'))
const read = (dir: string) => JSON.parse(readFileSync(join(dir, 'codex_app_server_protocol.schemas.json'), 'utf8'))
const bundle: Json = withGenerated(codexCli(), 'generate-json-schema', read)
// What the package sends of the experimental surface (plan mode's collaborationMode) is checked against this one.
const experimental: Json = withGenerated(codexCli(), 'generate-json-schema', read, ['--experimental'])
const problems = (s: Json, methods = methodsInSource()) =>
  check(bundle, s, methods, experimental).report.flatMap((r: Json) => r.problems.map((p: string) => `${r.method}: ${p}`))

describe('schema:check', () => {
  it('finds no drift against the pinned CLI, and the list covers the source', () => {
    const result = check(bundle, surface(), methodsInSource(), experimental)
    expect(result.report.flatMap((r: Json) => r.problems)).toEqual([])
    expect(result.unlisted).toEqual([])
    expect(result.report.length).toBeGreaterThan(20)
  })

  it('reads every method the Rust source names', () => {
    const methods = [...methodsInSource().keys()]
    for (const m of ['initialize', 'turn/interrupt', 'thread/tokenUsage/updated', 'config/read', 'mcpServerStatus/list', 'applyPatchApproval']) {
      expect(methods).toContain(m)
    }
    const fewer = surface()
    delete fewer.serverNotifications['item/reasoning/textDelta']
    expect(check(bundle, fewer, methodsInSource()).unlisted.map(([m]: [string]) => m)).toEqual(['item/reasoning/textDelta'])
  })

  it('reports a method the schema does not have', () => {
    const s = surface()
    s.clientRequests['turn/begin'] = s.clientRequests['turn/start']
    expect(problems(s)).toContain('turn/begin: no client request turn/begin in the schema')
  })

  it('reports a value or type the schema does not accept in what we send', () => {
    const s = surface()
    s.clientRequests['thread/start'].sends.sandbox = '"all-access"'
    s.clientRequests['turn/interrupt'].sends.turnId = 'integer'
    const found = problems(s)
    expect(found.some((p: string) => p.startsWith('thread/start: params sandbox: sent as "all-access"'))).toBe(true)
    expect(found.some((p: string) => p.startsWith('turn/interrupt: params turnId: sent as integer'))).toBe(true)
  })

  it('reports a required parameter that is not sent and a field that does not exist', () => {
    const s = surface()
    delete s.clientRequests['turn/start'].sends['input[].type']
    delete s.clientRequests['turn/start'].sends['input[].text']
    delete s.clientRequests['turn/start'].sends['input[].text_elements']
    s.clientRequests['turn/interrupt'].sends.reason = 'string'
    const found = problems(s)
    expect(found).toContain('turn/start: params params: the schema requires input, which is not sent')
    expect(found).toContain('turn/interrupt: params reason: sent, but the schema has no such field')
  })

  it('reports reads the schema does not guarantee', () => {
    const s = surface()
    s.serverNotifications['turn/completed'].reads['turn.id'] = 'integer'
    s.serverNotifications['turn/completed'].reads['turn.status'] = 'string|"cancelled"'
    s.serverNotifications.error.reads['error.codexErrorInfo'] = 'string'
    const found = problems(s)
    expect(found).toContain('turn/completed: params turn.id: read as integer, the schema allows string')
    expect(found.some((p: string) => p.startsWith('turn/completed: params turn.status: compared with "cancelled"'))).toBe(true)
    expect(found).toContain('error: params error.codexErrorInfo: read as always present, the schema makes it optional')
  })

  it('a field read only where present is drift where the CLI lacks it, unless the CLI is older than the pinned one', () => {
    const s = surface()
    s.serverNotifications['turn/started'].reads['turn.notYetThere?'] = 'string|null'
    s.serverNotifications['turn/started'].reads['turn.neverOptional'] = 'string'
    expect(problems(s)).toContain('turn/started: params turn.notYetThere: read, but the schema has no such field')
    const older = check(bundle, s, methodsInSource(), experimental, { olderCli: true }).report.find((r: Json) => r.method === 'turn/started')
    expect(older.problems).toEqual(['params turn.neverOptional: read, but the schema has no such field'])
    expect(older.absent).toEqual(['params turn.notYetThere: read where present, and this CLI does not have it'])
  })
})
