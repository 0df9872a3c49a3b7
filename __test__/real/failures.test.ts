// Real `codex app-server` against the loopback mock: model-side failures end the turn with
// status 'failed', source 'turn', code TURN_FAILED, the message exactly as Codex reported it
// and its codexErrorInfo (messages of codex-cli 0.171.0, reference §10–11).
import { describe, expect, it } from 'vitest'

import type { TerminalEvent } from '../../index.js'
import { closeEarly, created, failedResponse, httpError, messageItem } from '../../testing/mock-responses.js'
import type { ScriptedResponse } from '../../testing/mock-responses.js'
import { runRealTurn } from './harness.js'

interface Expected {
  message: string | ((mockUrl: string) => string)
  codexErrorInfo: unknown
  /** Codex reported no token usage for the failed request (false: it did, see the case). */
  noUsage?: boolean
}

async function expectTurnFailure(scenario: ScriptedResponse[], expected: Expected) {
  const r = await runRealTurn({ scenario })
  const t: TerminalEvent = r.terminal
  const message = typeof expected.message === 'function' ? expected.message(r.mock.url) : expected.message
  expect(t.status).toBe('failed')
  expect(t.cancellation ?? undefined).toBeUndefined()
  expect(t.failure).not.toBeNull()
  expect(t.failure?.source).toBe('turn')
  expect(t.failure?.code).toBe('TURN_FAILED')
  expect(t.failure?.message).toBe(message)
  const detail = t.failure?.detail as { codexErrorInfo?: unknown; additionalDetails?: unknown } | undefined
  expect(detail?.codexErrorInfo).toEqual(expected.codexErrorInfo)
  expect(detail?.additionalDetails).toBeNull()
  // The turn existed; it just failed.
  expect(t.threadId).toBe(r.of('threadStarted')[0]?.threadId)
  expect(t.turnId).toBe(r.of('turnStarted')[0]?.turnId)
  expect(t.finalMessage).toBeNull()
  if (expected.noUsage !== false) expect(t.usage).toBeNull()
  // Retries are off in the test provider: no retrying events, exactly one model request.
  expect(r.of('retrying')).toEqual([])
  expect(r.mock.requests).toHaveLength(1)
  return r
}

describe('real codex app-server: failed turns', () => {
  it('response.failed → TURN_FAILED with the provider message', async () => {
    await expectTurnFailure([failedResponse({ code: 'server_error', message: 'The model failed to generate a response (mock).' })], {
      message: 'stream disconnected before completion: The model failed to generate a response (mock).',
      codexErrorInfo: 'other',
    })
  })

  it('response.failed with context_length_exceeded → contextWindowExceeded', async () => {
    await expectTurnFailure([failedResponse({ code: 'context_length_exceeded', message: 'too long (mock)' })], {
      message:
        "Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.",
      codexErrorInfo: 'contextWindowExceeded',
      // 0.171.0 sends thread/tokenUsage/updated with totalTokens = the context window (258400)
      // and zeros elsewhere before this failure; the usage the addon reports is not pinned here.
      noUsage: false,
    })
  })

  it('HTTP 500 → internalServerError (Codex does not surface the body)', async () => {
    await expectTurnFailure(
      [httpError(500, { error: { message: 'mock internal failure', type: 'server_error', code: null } })],
      {
        message: 'We’re currently experiencing high demand, which may cause temporary errors.',
        codexErrorInfo: 'internalServerError',
      },
    )
  })

  it('HTTP 401 → httpConnectionFailed 401 with the body message and url', async () => {
    await expectTurnFailure(
      [httpError(401, { error: { message: 'bad key', type: 'invalid_request_error', code: null } })],
      {
        message: (url) => `unexpected status 401 Unauthorized: bad key, url: ${url}/responses`,
        codexErrorInfo: { httpConnectionFailed: { httpStatusCode: 401 } },
      },
    )
  })

  it('a stream that closes before response.completed → TURN_FAILED, partial text streamed', async () => {
    const partial = messageItem({ id: 'msg_partial', deltas: ['partial '] }).slice(0, 2) // added + one delta, no done
    const r = await expectTurnFailure([closeEarly([created('resp_early'), ...partial])], {
      message: 'stream disconnected before completion: stream closed before response.completed',
      codexErrorInfo: 'other',
    })
    expect(r.of('messageDelta').map((d) => d.delta)).toEqual(['partial '])
    // No item/completed for an item in flight when the turn failed.
    expect(r.of('itemCompleted').some((e) => e.item.id === 'msg_partial')).toBe(false)
  })
})
