// Real `codex app-server` (the pinned @openai/codex), loopback only, nobody logged in: a
// browser login's callback port as Codex chooses it, and a login started right after another
// was cancelled. The port facts are Codex's own (seen on 0.171.0): it listens on 1455 when it
// can, asks whatever holds 1455 to cancel (`GET /cancel`, which ends an earlier Codex login
// there), and otherwise listens on another port; `authUrl`'s `redirect_uri` names the one it
// listens on.
import { randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'

import { startLogin } from '../../index.js'
import { codexUnderTest, createLoggedOutHome } from '../../testing/codex-home.js'
import { describeProcess, eventually } from '../support/procs.js'
import { liveWithMarker } from './harness.js'

const MARK_VAR = 'RENNET_REAL_RUN'
const SLOW = 90_000

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A logged-out Codex home and the options of a login there, its processes marked. */
function loginOptions() {
  const home = createLoggedOutHome()
  const mark = randomUUID()
  cleanups.push(() => home.cleanup())
  return { mark, options: { codexPath: codexUnderTest().path, env: { ...home.env, [MARK_VAR]: mark }, requestTimeoutMs: 30_000 } }
}

/** The callback `authUrl` sends the browser back to. */
const redirectOf = (authUrl: string | null) => new URL(new URL(authUrl!).searchParams.get('redirect_uri')!)

/** Nothing carrying `mark` runs (bounded: a cancelled login's child is ending). */
async function nothingLeft(mark: string) {
  const left = () => liveWithMarker(mark)
  expect(await eventually(() => left().length === 0, 15_000), `left running:\n${left().map(describeProcess).join('\n')}`).toBe(true)
}

describe('real codex app-server: browser logins', () => {
  it('a login started right after cancel() waits for the cancelled child, then listens where it did', { timeout: SLOW }, async () => {
    const { mark, options } = loginOptions()
    const first = startLogin(options)
    const port = redirectOf((await first.started).authUrl).port
    first.cancel('closed')
    const second = startLogin(options)
    const started = await second.started
    // The first child was gone, its port free again: the second did not have to move.
    expect(redirectOf(started.authUrl).port).toBe(port)
    await expect(first.completed).rejects.toMatchObject({ code: 'CANCELLED', cause: 'closed' })
    second.cancel()
    await expect(second.completed).rejects.toMatchObject({ code: 'CANCELLED' })
    await nothingLeft(mark)
  })

  it('with 1455 taken by another program, Codex listens on another port and authUrl says which', { timeout: SLOW }, async () => {
    const asked: string[] = []
    const other: Server = createServer((socket) => {
      socket.once('data', (data) => asked.push(data.toString('latin1').split('\r\n')[0]))
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n')
    })
    await new Promise<void>((resolve, reject) => other.once('error', reject).listen(1455, '127.0.0.1', resolve))
    cleanups.push(() => new Promise((resolve) => other.close(resolve)))
    const { mark, options } = loginOptions()
    const login = startLogin(options)
    const redirect = redirectOf((await login.started).authUrl)
    expect(redirect.hostname).toMatch(/^(127\.0\.0\.1|localhost)$/)
    expect(redirect.port).not.toBe('1455')
    expect(redirect.pathname).toBe('/auth/callback')
    // What held the port was asked to let go first, as an earlier Codex login would be.
    expect(asked).toContain('GET /cancel HTTP/1.1')
    console.log(`with 1455 taken, Codex's callback: ${redirect.origin}`)
    login.cancel()
    await expect(login.completed).rejects.toMatchObject({ code: 'CANCELLED' })
    await nothingLeft(mark)
  })
})
