// Real `codex app-server` (pinned @openai/codex, or RENNET_TEST_CODEX_BIN: `pnpm compat` runs this
// file per version) against the loopback mock Responses API: what a turn is given besides a
// prompt — images, a steer while it runs — and a turn nobody can authenticate. The column of a
// test in the compat table is its title up to the colon.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { runTurn, SteerError } from '../../index.js'
import type { HarnessEvent, Turn } from '../../index.js'
import { codexUnderTest, createGitCwd, isolatedEnv } from '../../testing/codex-home.js'
import { checkpoint, messageResponse, sse } from '../../testing/mock-responses.js'
import { runRealTurn } from './harness.js'

// A 1×1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
)

/** The content parts of the user messages a model request carried, in order. */
function userParts(body: any): Array<{ type: string; text?: string; image_url?: string }> {
  return (body.input as any[])
    .filter((item) => item.type === 'message' && item.role === 'user')
    .flatMap((item) => item.content)
}

describe('real codex app-server: input items, steering, login', () => {
  it('image: a localImage reaches the model as an input_image of the file, after the text', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-image-')))
    try {
      const path = join(dir, 'dot.png')
      writeFileSync(path, PNG)
      const r = await runRealTurn({
        scenario: [messageResponse(['A ', 'dot'], { id: 'resp_1', itemId: 'msg_1' })],
        extra: { prompt: undefined, input: [{ type: 'text', text: 'What is in this picture?' }, { type: 'localImage', path }] },
      })
      expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
      expect(r.terminal.finalMessage).toBe('A dot')
      const parts = userParts(r.mock.requests[0].body)
      const text = parts.findIndex((p) => p.type === 'input_text' && p.text === 'What is in this picture?')
      const image = parts.findIndex((p) => p.type === 'input_image')
      expect(text, JSON.stringify(parts)).toBeGreaterThanOrEqual(0)
      expect(image, JSON.stringify(parts)).toBeGreaterThan(text)
      expect(parts[image].image_url).toBe(`data:image/png;base64,${PNG.toString('base64')}`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('steer: the steered text reaches the next model request and the turn completes', async () => {
    let steered: Promise<unknown> | null = null
    let running: Turn | null = null
    let settled!: () => void
    const steerSettled = new Promise<void>((resolve) => (settled = resolve))
    // The first response is still streaming when the steer arrives, and waits for Codex's
    // answer to it: 0.171.0 then drops it and asks the model again with the steered text;
    // older versions finish it first and then ask again.
    const first = messageResponse(['Hello', ' there'], { id: 'resp_1', itemId: 'msg_1' })
    const cut = first.findIndex((e: any) => e.type === 'response.output_text.delta') + 1
    const r = await runRealTurn({
      prompt: 'Write a greeting.',
      scenario: [
        sse([...first.slice(0, cut), checkpoint(() => steerSettled), ...first.slice(cut)]),
        messageResponse(['Good ', 'day'], { id: 'resp_2', itemId: 'msg_2' }),
      ],
      onEvent(ev: HarnessEvent, ctx) {
        if (ev.type === 'messageDelta' && steered === null) {
          running = ctx.turn
          steered = ctx.turn.steer('Make it formal, please.').then(
            () => 'accepted',
            (e) => e,
          )
          steered.finally(settled)
        }
      },
    })
    expect(await steered).toBe('accepted')
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    expect(r.terminal.finalMessage).toBe('Good day')
    expect(r.mock.requests).toHaveLength(2)
    const texts = userParts(r.mock.requests[1].body).map((p) => p.text)
    const prompt = texts.findIndex((t) => t?.includes('Write a greeting.'))
    const steer = texts.findIndex((t) => t === 'Make it formal, please.')
    expect(prompt, JSON.stringify(texts)).toBeGreaterThanOrEqual(0)
    expect(steer, JSON.stringify(texts)).toBeGreaterThan(prompt)
    // After the end nothing is sent.
    const late = await running!.steer('Too late').catch((e) => e)
    expect(late).toBeInstanceOf(SteerError)
    expect(late.code).toBe('TURN_ENDED')
  })

  it('login: a turn nobody can authenticate ends AUTH_REQUIRED before its thread, instead of retrying', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-nologin-')))
    const cwd = createGitCwd()
    try {
      const home = join(root, 'home')
      const codexHome = join(root, 'codex-home')
      for (const dir of [home, codexHome]) mkdirSync(dir, { recursive: true })
      // The default OpenAI provider, no login, no API key.
      writeFileSync(join(codexHome, 'config.toml'), '')
      const startedAt = Date.now()
      const turn = runTurn({ prompt: 'Hello?', cwd: cwd.path, codexPath: codexUnderTest().path, env: isolatedEnv(home, codexHome) })
      const events: HarnessEvent[] = []
      const watchdog = setTimeout(() => turn.abort(new Error('watchdog: the turn kept retrying')), 30_000)
      for await (const ev of turn) events.push(ev)
      clearTimeout(watchdog)
      const terminal = await turn.outcome
      expect(terminal.status).toBe('failed')
      expect(terminal.failure).toMatchObject({ source: 'jsonrpc', code: 'AUTH_REQUIRED' })
      expect(terminal.failure?.message).toContain('codex login')
      expect(terminal.failure?.detail).toMatchObject({ report: { account: null, requiresOpenaiAuth: true } })
      // Nothing of a thread: only what Codex printed on stderr between the two.
      // Nothing of a thread (only what Codex says of itself before one: stderr, warnings).
      const types = events.map((e) => e.type).filter((t) => t !== 'diagnostic')
      expect(types[0]).toBe('started')
      expect(types.at(-1)).toBe('terminal')
      expect(types.filter((t) => !['started', 'terminal', 'native'].includes(t))).toEqual([])
      console.log(`AUTH_REQUIRED after ${Date.now() - startedAt} ms`)
    } finally {
      cwd.cleanup()
      rmSync(root, { recursive: true, force: true })
    }
  })
})
