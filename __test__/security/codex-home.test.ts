// The real binary (pinned @openai/codex) against the loopback mock: after full-access,
// read-only and MCP-policy turns, the Codex home is unchanged outside what Codex itself keeps
// there (session transcripts, its sqlite state, caches), credentials included, and no canary
// from the credentials, the child's environment, a bearer token or a header reaches an event.
import { createHash, randomBytes } from 'node:crypto'
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

import type { RunTurnOptions } from '../../index.js'
import { startHttpMcpServer } from '../../scripts/mcp-fixture/mcp-servers.mjs'
import type { CodexHome } from '../../testing/codex-home.js'
import { messageResponse } from '../../testing/mock-responses.js'
import { runRealTurn } from '../real/harness.js'

/**
 * What Codex itself writes in its home during a turn: transcripts (`sessions/`), its sqlite
 * state (`*.sqlite` and their journals), caches, logs and scratch space, and the first-run
 * state 0.171.0 creates (`installation_id`, `.sandbox_migration`, the bundled skills it
 * unpacks into `skills/.system/`, `thread-writer-locks/`). Every other file must be
 * byte-identical afterwards, and none may appear or disappear.
 */
const CODEX_OWN = [
  /^sessions(\/|$)/,
  /\.sqlite(-wal|-shm|-journal)?$/,
  /(^|\/)(cache|\.cache)(\/|$)/,
  /_cache\.json$/,
  /^(log|logs)(\/|$)/,
  /^\.?tmp(\/|$)/,
  /^shell_snapshots(\/|$)/,
  /^version\.json$/,
  /^installation_id$/,
  /^\.sandbox_migration$/,
  /^skills\/\.system(\/|$)/,
  /^thread-writer-locks(\/|$)/,
]

/** Path → sha256 of every file under `root` that Codex does not own. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      const rel = relative(root, path)
      if (CODEX_OWN.some((re) => re.test(rel))) continue
      const stat = lstatSync(path)
      if (stat.isDirectory()) {
        walk(path)
      } else {
        out.set(rel, createHash('sha256').update(readFileSync(path)).digest('hex'))
      }
    }
  }
  walk(root)
  return out
}

function changes(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed: string[] = []
  for (const [path, value] of after) if (before.get(path) !== value) changed.push(`${before.has(path) ? 'changed' : 'added'} ${path}`)
  for (const path of before.keys()) if (!after.has(path)) changed.push(`removed ${path}`)
  return changed
}

const canary = (what: string) => `canary-${what}-${randomBytes(6).toString('hex')}`

/** Credentials and user files in the home, each holding a canary. */
function furnish(home: CodexHome, secret: string) {
  writeFileSync(join(home.codexHome, 'auth.json'), JSON.stringify({ OPENAI_API_KEY: `sk-${secret}`, tokens: null }))
  writeFileSync(join(home.codexHome, 'AGENTS.md'), `Personal notes ${secret}\n`)
  mkdirSync(join(home.codexHome, 'prompts'), { recursive: true })
  writeFileSync(join(home.codexHome, 'prompts', 'mine.md'), `A prompt ${secret}\n`)
}

interface Case {
  name: string
  options: (c: { token: string; header: string; mcpUrl: string }) => Partial<RunTurnOptions>
}

const CASES: Case[] = [
  { name: 'full access', options: () => ({ access: 'full' }) },
  { name: 'read-only', options: () => ({ access: 'readOnly' }) },
  {
    name: 'MCP policy',
    options: ({ header, mcpUrl }) => ({
      mcp: { servers: { probe: { url: mcpUrl, bearerTokenEnvVar: 'RENNET_CANARY_TOKEN', httpHeaders: { 'X-Canary': header } } } },
    }),
  },
]

describe('the Codex home and secrets, with the real binary', () => {
  for (const c of CASES) {
    it(`${c.name}: home unchanged outside Codex's own state; no canary in any event`, async () => {
      const secrets = { home: canary('home'), env: canary('env'), token: canary('token'), header: canary('header') }
      const mcp = await startHttpMcpServer({ name: 'probe', bearerToken: secrets.token, requiredHeaders: { 'X-Canary': secrets.header } })
      let before = new Map<string, string>()
      let after = new Map<string, string>()
      // The child's command line, readable by any local user: read while it runs.
      let cmdline: string | null = null
      try {
        const r = await runRealTurn({
          scenario: [messageResponse(['All ', 'done.'])],
          beforeTurn: ({ home }) => {
            furnish(home, secrets.home)
            before = snapshot(home.codexHome)
          },
          // Before the harness removes the temp home.
          inspect: ({ home }) => {
            after = snapshot(home.codexHome)
          },
          onEvent: (ev) => {
            if (ev.type === 'started') cmdline = readFileSync(`/proc/${ev.pid}/cmdline`, 'utf8')
          },
          extra: c.options({ token: secrets.token, header: secrets.header, mcpUrl: mcp.url }),
          env: { RENNET_CANARY_ENV: secrets.env, RENNET_CANARY_TOKEN: secrets.token },
        })
        expect(r.terminal.status, JSON.stringify(r.terminal)).toBe('completed')
        expect(r.terminal.finalMessage).toBe('All done.')
        expect(changes(before, after)).toEqual([])
        // The furnished files were there to be protected (not vacuous).
        expect(before.has('auth.json') && before.has('config.toml') && before.has('prompts/mine.md')).toBe(true)
        expect(cmdline).not.toBeNull()
        for (const [what, value] of Object.entries(secrets)) expect(cmdline!.includes(value), `${what} canary in argv`).toBe(false)
        const text = JSON.stringify(r.events)
        for (const [what, value] of Object.entries(secrets)) expect(text.includes(value), `${what} canary in events`).toBe(false)
        if (c.name === 'MCP policy') {
          // The policy reached Codex: it connected with the token and header (so they did flow
          // to where they belong, and nowhere else).
          expect(mcp.requests.length).toBeGreaterThan(0)
          expect(mcp.rejected).toBe(0)
        }
      } finally {
        await mcp.close()
      }
    }, 60_000)
  }
})
