// options.mcp through runTurn: policy failures end the turn before anything is spawned.
import { describe, expect, it } from 'vitest'
import { tmpdir } from 'node:os'
import { runTurn } from '../../index.js'
import { writeFakeCodex } from '../../testing/index.js'

describe('runTurn with an MCP policy', () => {
  it('rejects a server that is not on loopback before spawning', async () => {
    const turn = runTurn({
      prompt: 'x',
      cwd: tmpdir(),
      codexPath: writeFakeCodex(),
      mcp: { servers: { remote: { url: 'http://localhost.example.com/mcp', httpHeaders: { 'X-Secret': 'canary-value' } } } },
    })
    const events = []
    for await (const e of turn) events.push(e)
    expect(events.map((e) => e.type)).toEqual(['terminal'])
    const outcome = await turn.outcome
    expect(outcome.status).toBe('failed')
    expect(outcome.failure).toMatchObject({ source: 'spawn', code: 'MCP_NOT_LOOPBACK' })
    expect(JSON.stringify(outcome)).not.toContain('canary-value')
  })
})
