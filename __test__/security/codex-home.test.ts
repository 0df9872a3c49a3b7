// The real binary (pinned @openai/codex) against the loopback mock: after full-access,
// read-only and MCP-policy turns, the Codex home is unchanged outside what Codex itself keeps
// there (session transcripts, its sqlite state, caches), credentials included, and no canary
// from the credentials, the child's environment, a bearer token, a header or an API key reaches
// an event or any process's command line (read again and again while the turn runs; and while
// loginWithApiKey runs, its key in no command line or environment either).
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

import { loginWithApiKey } from '../../index.js'
import type { RunTurnOptions } from '../../index.js'
import { startHttpMcpServer } from '../../scripts/mcp-fixture/mcp-servers.mjs'
import { codexUnderTest, createLoggedOutHome } from '../../testing/codex-home.js'
import type { CodexHome } from '../../testing/codex-home.js'
import { checkpoint, messageResponse, sse } from '../../testing/mock-responses.js'
import { runRealTurn } from '../real/harness.js'
import { eventually, watchForSecrets } from '../support/procs.js'

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
    it(`${c.name}: home unchanged outside Codex's own state; no canary in any event or command line`, async () => {
      const secrets = { home: canary('home'), env: canary('env'), token: canary('token'), header: canary('header'), apiKey: `sk-${canary('openai')}` }
      const mcp = await startHttpMcpServer({ name: 'probe', bearerToken: secrets.token, requiredHeaders: { 'X-Canary': secrets.header } })
      let before = new Map<string, string>()
      let after = new Map<string, string>()
      // Every process's command line, readable by any local user: read again and again while
      // the turn runs (the model answers once the watch has seen the child many times).
      const mark = { name: 'RENNET_CANARY_RUN', value: randomUUID() }
      const watch = watchForSecrets({ argv: secrets, mark: `${mark.name}=${mark.value}` })
      let seen
      try {
        const r = await runRealTurn({
          scenario: [sse([checkpoint(() => eventually(() => watch.marked() >= 20, 30_000)), ...messageResponse(['All ', 'done.'])])],
          beforeTurn: ({ home }) => {
            furnish(home, secrets.home)
            before = snapshot(home.codexHome)
          },
          // Before the harness removes the temp home.
          inspect: ({ home }) => {
            after = snapshot(home.codexHome)
          },
          extra: c.options({ token: secrets.token, header: secrets.header, mcpUrl: mcp.url }),
          env: { RENNET_CANARY_ENV: secrets.env, RENNET_CANARY_TOKEN: secrets.token, OPENAI_API_KEY: secrets.apiKey, [mark.name]: mark.value },
        })
        seen = await watch.stop()
        expect(r.terminal.status, JSON.stringify(r.terminal)).toBe('completed')
        expect(r.terminal.finalMessage).toBe('All done.')
        expect(changes(before, after)).toEqual([])
        // The furnished files were there to be protected (not vacuous).
        expect(before.has('auth.json') && before.has('config.toml') && before.has('prompts/mine.md')).toBe(true)
        expect(seen.marked, "the watch saw the turn's processes").toBeGreaterThanOrEqual(20)
        expect(seen.hits).toEqual([])
        const text = JSON.stringify(r.events)
        for (const [what, value] of Object.entries(secrets)) expect(text.includes(value), `${what} canary in events`).toBe(false)
        if (c.name === 'MCP policy') {
          // The policy reached Codex: it connected with the token and header (so they did flow
          // to where they belong, and nowhere else).
          expect(mcp.requests.length).toBeGreaterThan(0)
          expect(mcp.rejected).toBe(0)
        }
      } finally {
        await watch.stop()
        await mcp.close()
      }
    }, 60_000)
  }

  it('loginWithApiKey: the key reaches auth.json, and no command line or environment', async () => {
    const home = createLoggedOutHome()
    const key = `sk-${canary('login')}`
    const mark = { name: 'RENNET_CANARY_RUN', value: randomUUID() }
    const watch = watchForSecrets({ argv: { key }, environ: { key }, mark: `${mark.name}=${mark.value}` })
    let seen
    try {
      const codexPath = codexUnderTest().path
      // A call's child lives for a moment: calls until the watch has seen some of them.
      for (let calls = 0; calls < 20 && watch.marked() < 5; calls++) {
        await loginWithApiKey(key, { codexPath, env: { ...home.env, [mark.name]: mark.value }, requestTimeoutMs: 15_000 })
      }
      seen = await watch.stop()
      expect(readFileSync(join(home.codexHome, 'auth.json'), 'utf8')).toContain(key)
      expect(seen.marked, "the watch saw the calls' processes").toBeGreaterThanOrEqual(5)
      expect(seen.hits).toEqual([])
    } finally {
      await watch.stop()
      home.cleanup()
    }
  }, 120_000)
})
