// Issue 6 against the real binary: runUtility, resuming a persisted thread, and read-only turns.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

import { runTurn, runUtility, UtilityError } from '../../index.js'
import type { HarnessEvent, TerminalEvent } from '../../index.js'
import { createCodexHome, createGitCwd } from '../../testing/codex-home.js'
import type { CodexHome, GitCwd } from '../../testing/codex-home.js'
import {
  execCommandResponse,
  hang,
  jsonMessageResponse,
  messageResponse,
  start,
  usage,
} from '../../testing/mock-responses.js'
import type { MockServer, ScriptedResponse } from '../../testing/mock-responses.js'
import { BOUND_MS, eventually, liveInGroup } from '../support/procs.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function setup(scenario: ScriptedResponse[]): Promise<{ mock: MockServer; home: CodexHome; cwd: GitCwd }> {
  const mock = await start(scenario)
  const home = createCodexHome({ baseUrl: mock.url })
  const cwd = createGitCwd({ files: { 'README.md': 'hello\n' } })
  cleanups.push(() => mock.close(), () => home.cleanup(), () => cwd.cleanup())
  return { mock, home, cwd }
}

async function drain(turn: AsyncIterable<HarnessEvent>): Promise<HarnessEvent[]> {
  const events: HarnessEvent[] = []
  for await (const e of turn) events.push(e)
  return events
}

const schema = {
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
  additionalProperties: false,
}

describe('runUtility with the real binary', () => {
  it('resolves with the validated output and sends the effort to the model', async () => {
    const { mock, home, cwd } = await setup([jsonMessageResponse({ answer: '42' }, { usage: usage({ input: 30, output: 5 }) })])
    const result = await runUtility({
      prompt: 'What is the answer?',
      cwd: cwd.path,
      outputSchema: schema,
      effort: 'low',
      codexPath: home.codexPath,
      env: home.env,
    })
    expect(result.output).toEqual({ answer: '42' })
    expect(result.text).toBe('{"answer":"42"}')
    expect(result.usage).toMatchObject({ input: 30, output: 5 })
    expect(result.threadId).toMatch(/\S/)
    expect(result.turnId).toMatch(/\S/)
    expect(mock.requests[0].body.reasoning.effort).toBe('low')
    expect(mock.requests[0].body.text.format.schema).toEqual(schema)
    expect(home.configHash()).toBe(home.initialHash)
  })

  it('rejects a reply that does not match the schema with STRUCTURED_OUTPUT_MISMATCH', async () => {
    const { home, cwd } = await setup([jsonMessageResponse({ answer: 42, extra: true })])
    const error = await runUtility({ prompt: 'x', cwd: cwd.path, outputSchema: schema, codexPath: home.codexPath, env: home.env }).catch((e) => e)
    expect(error).toBeInstanceOf(UtilityError)
    expect(error.code).toBe('STRUCTURED_OUTPUT_MISMATCH')
    expect(error.source).toBe('turn')
    expect(error.detail.text).toBe('{"answer":42,"extra":true}')
    expect(error.detail.errors.length).toBeGreaterThan(0)
  })

  it('rejects a reply that is not JSON with STRUCTURED_OUTPUT_INVALID', async () => {
    const { home, cwd } = await setup([messageResponse('just prose')])
    const error = await runUtility({ prompt: 'x', cwd: cwd.path, outputSchema: schema, codexPath: home.codexPath, env: home.env }).catch((e) => e)
    expect(error).toBeInstanceOf(UtilityError)
    expect(error.code).toBe('STRUCTURED_OUTPUT_INVALID')
    expect(error.detail.text).toBe('just prose')
    expect(error.terminal.status).toBe('failed')
  })

  it('rejects with CANCELLED when aborted while the model hangs', async () => {
    const { mock, home, cwd } = await setup([hang()])
    const controller = new AbortController()
    const pending = runUtility({
      prompt: 'x',
      cwd: cwd.path,
      outputSchema: schema,
      codexPath: home.codexPath,
      env: home.env,
      signal: controller.signal,
    }).catch((e) => e)
    expect(await eventually(() => mock.requests.length > 0, 10_000)).toBe(true)
    controller.abort()
    const error = await pending
    expect(error).toBeInstanceOf(UtilityError)
    expect(error.code).toBe('CANCELLED')
    expect(error.terminal.cancellation).toBe('interrupted')
    // The signal's reason (here its default AbortError) is the cause, as in Node's own APIs.
    expect(error.cause).toBe(controller.signal.reason)
    expect(error.terminal.abortReason).toBe(controller.signal.reason)
  })

  it('rejects options without a schema as a TypeError', async () => {
    await expect(runUtility({ prompt: 'x', cwd: '/tmp' } as never)).rejects.toThrow(TypeError)
  })
})

describe('resuming a thread with the real binary', () => {
  it('carries the first turn into the second request and counts only each turn in its usage', async () => {
    const { mock, home, cwd } = await setup([
      messageResponse('First answer.', { usage: usage({ input: 100, output: 10 }) }),
      messageResponse('Second answer.', { usage: usage({ input: 250, output: 20 }) }),
    ])
    const base = { cwd: cwd.path, codexPath: home.codexPath, env: home.env }
    const first = runTurn({ ...base, prompt: 'first question' })
    await drain(first)
    const one: TerminalEvent = await first.outcome
    expect(one.status).toBe('completed')
    expect(one.usage).toMatchObject({ input: 100, output: 10, total: 110 })

    const second = runTurn({ ...base, prompt: 'second question', threadId: one.threadId! })
    const events = await drain(second)
    const two = await second.outcome
    expect(events.find((e) => e.type === 'threadStarted')).toEqual({ type: 'threadStarted', threadId: one.threadId, resumed: true })
    expect(two.status).toBe('completed')
    expect(two.threadId).toBe(one.threadId)
    expect(two.finalMessage).toBe('Second answer.')
    expect(two.usage).toMatchObject({ input: 250, output: 20, total: 270 })
    const history = JSON.stringify(mock.requests[1].body.input)
    expect(history).toContain('first question')
    expect(history).toContain('First answer.')
    expect(history).toContain('second question')
    expect(home.configHash()).toBe(home.initialHash)
  })

  it('fails with the server message for an unknown thread id', async () => {
    const { home, cwd } = await setup([])
    const turn = runTurn({ prompt: 'x', cwd: cwd.path, codexPath: home.codexPath, env: home.env, threadId: '01a22f3f-0000-7000-8000-000000000000' })
    const outcome = await turn.outcome
    expect(outcome.status).toBe('failed')
    expect(outcome.failure).toMatchObject({ source: 'jsonrpc', code: 'REQUEST_FAILED' })
    expect(outcome.failure!.message).toContain('01a22f3f-0000-7000-8000-000000000000')
  })
})

describe('read-only isolated turns with the real binary', () => {
  it('confirms the isolation, and a write attempt is refused by the sandbox', async () => {
    const { mock, home, cwd } = await setup([
      execCommandResponse('echo data > written.txt', { callId: 'call_w' }),
      messageResponse('Could not write.'),
    ])
    const turn = runTurn({ prompt: 'write a file', cwd: cwd.path, codexPath: home.codexPath, env: home.env, access: 'readOnly' })
    const events = await drain(turn)
    const outcome = await turn.outcome
    expect(outcome.status).toBe('completed')
    expect(existsSync(join(cwd.path, 'written.txt'))).toBe(false)
    // The command ran inside the read-only sandbox and failed; codex-cli 0.171.0 reports it to
    // the model (it emitted no commandExecution item for this instant command; if one comes,
    // it must carry the failure).
    const output = JSON.stringify(mock.requests[1].body.input.filter((i: { type: string }) => i.type === 'function_call_output'))
    expect(output).toMatch(/Process exited with code [1-9]/)
    expect(output).toMatch(/Read-only file system|Permission denied/)
    for (const e of events) {
      if (e.type === 'itemCompleted' && e.item.type === 'commandExecution') expect(e.item.exitCode).not.toBe(0)
    }
    // Nothing else was granted or asked.
    expect(events.filter((e) => e.type === 'serverRequest').every((e) => (e as { reply: string }).reply === 'methodError')).toBe(true)
    const started = events.find((e) => e.type === 'started') as Extract<HarnessEvent, { type: 'started' }>
    expect(await eventually(() => liveInGroup(started.pid).length === 0, BOUND_MS)).toBe(true)
    expect(home.configHash()).toBe(home.initialHash)
  })
})
