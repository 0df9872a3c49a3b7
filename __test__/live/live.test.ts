// Opt-in: spends real model turns with the user's own Codex installation and login.
// RENNET_LIVE_CODEX=1 pnpm test:js __test__/live   (RENNET_CODEX_BIN picks the binary; else `codex` on PATH)
import { execFileSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

import { runTurn, runUtility } from '../../index.js'

const live = process.env.RENNET_LIVE_CODEX === '1'
if (!live) console.log('live Codex tests skipped: set RENNET_LIVE_CODEX=1 to run them with your own Codex login')

const codexPath = process.env.RENNET_CODEX_BIN || undefined
const repo = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-live-')))
afterAll(() => rmSync(repo, { recursive: true, force: true }))

describe.skipIf(!live)('live Codex', () => {
  it('reads a file in a git repository and answers', { timeout: 180_000 }, async () => {
    execFileSync('git', ['init', '-q'], { cwd: repo })
    writeFileSync(join(repo, 'secret.txt'), 'The code word is PELICAN.\n')
    const turn = runTurn({ prompt: 'Read secret.txt and reply with the code word only.', cwd: repo, codexPath })
    const outcome = await turn.outcome
    expect(outcome.status).toBe('completed')
    expect(outcome.finalMessage?.toUpperCase()).toContain('PELICAN')
    expect(outcome.usage?.total).toBeGreaterThan(0)
  })

  it('makes a structured utility call', { timeout: 180_000 }, async () => {
    const result = await runUtility({
      prompt: 'Return the sum of 2 and 3.',
      cwd: repo,
      codexPath,
      effort: 'low',
      outputSchema: {
        type: 'object',
        properties: { sum: { type: 'integer' } },
        required: ['sum'],
        additionalProperties: false,
      },
    })
    expect(result.output).toEqual({ sum: 5 })
  })

  it('aborts mid-turn', { timeout: 180_000 }, async () => {
    const turn = runTurn({ prompt: 'Count slowly from 1 to 500, one number per line.', cwd: repo, codexPath })
    for await (const event of turn) {
      if (event.type === 'messageDelta' || event.type === 'reasoningDelta') turn.abort()
    }
    const outcome = await turn.outcome
    expect(outcome.status).toBe('cancelled')
  })
})
