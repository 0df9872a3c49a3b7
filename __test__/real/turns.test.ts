// Real `codex app-server` (pinned @openai/codex 0.171.0) against the loopback mock Responses
// API: successful turns. Invariants common to every scenario (started event, process group
// empty, config.toml untouched, originator header) are checked in harness.ts.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'

import {
  execCommandResponse,
  functionCallOutputs,
  jsonMessageResponse,
  messageResponse,
  usage,
} from '../../testing/mock-responses.js'
import { codexUnderTest } from '../../testing/codex-home.js'
import { BOUND_MS, eventually, isAlive } from '../support/procs.js'
import { runRealTurn, usageOf } from './harness.js'
import type { NativeItem } from '../../index.js'

/** The item when it is a command execution (narrowed to that kind of ThreadItem). */
const asCommand = (item: NativeItem | undefined) => (item?.type === 'commandExecution' ? item : undefined)

describe('real codex app-server: successful turns', () => {
  it('streams a plain answer: deltas add up to finalMessage, usage matches the SSE usage', async () => {
    const prompt = 'Say hello to the world, please.'
    const r = await runRealTurn({
      prompt,
      scenario: [
        messageResponse(['Hello ', 'world'], {
          id: 'resp_1',
          itemId: 'msg_1',
          usage: usage({ input: 100, cached: 20, output: 50, reasoning: 10, total: 150 }),
        }),
      ],
    })
    const t = r.terminal
    expect(t.status).toBe('completed')
    expect(t.failure).toBeNull()
    expect(t.cancellation ?? undefined).toBeUndefined()

    expect(r.started, 'a started event').toBeDefined()
    const [thread] = r.of('threadStarted')
    expect(thread).toMatchObject({ resumed: false })
    expect(t.threadId).toBe(thread.threadId)
    const [turnStarted] = r.of('turnStarted')
    expect(turnStarted).toEqual({ type: 'turnStarted', threadId: thread.threadId, turnId: t.turnId })

    const deltas = r.of('messageDelta')
    expect(deltas.map((d) => d.delta)).toEqual(['Hello ', 'world'])
    expect(deltas.every((d) => d.itemId === 'msg_1')).toBe(true)
    expect(deltas.map((d) => d.delta).join('')).toBe(t.finalMessage)
    expect(t.finalMessage).toBe('Hello world')

    const messageItems = r.of('itemCompleted').filter((e) => e.item.type === 'agentMessage')
    expect(messageItems.map((e) => e.item)).toMatchObject([{ id: 'msg_1', text: 'Hello world' }])
    expect(r.of('itemStarted').some((e) => e.item.type === 'agentMessage' && e.item.id === 'msg_1')).toBe(true)
    // The user's prompt went out as the userMessage item and in the model request.
    expect(r.of('itemCompleted').some((e) => e.item.type === 'userMessage')).toBe(true)
    expect(r.mock.requests).toHaveLength(1)
    expect(JSON.stringify(r.mock.requests[0].body.input)).toContain(prompt)

    const expected = usageOf({ input: 100, cacheRead: 20, output: 50, reasoning: 10, total: 150 })
    expect(t.usage).toEqual(expected)
    const usageEvents = r.of('usage')
    expect(usageEvents).toHaveLength(1)
    expect(usageEvents[0].turn).toEqual(expected)
    expect(usageEvents[0].thread).toEqual(expected)
    expect(usageEvents[0].contextWindow).toBe(258400)

    expect(r.of('retrying')).toEqual([])
    expect(t.structuredOutput ?? undefined).toBeUndefined()
  })

  it('without codexPath, runs the Codex that discovery finds on PATH', async () => {
    const codex = codexUnderTest().path
    const r = await runRealTurn({
      scenario: [messageResponse(['Found ', 'you'], { id: 'resp_1', itemId: 'msg_1' })],
      extra: { codexPath: undefined },
      // No login shell, no explicit binary: the CLI under test is found on the process PATH.
      env: { PATH: `${dirname(codex)}:/usr/bin:/bin`, SHELL: '', RENNET_CODEX_BIN: '' },
    })
    expect(r.terminal).toMatchObject({ status: 'completed', finalMessage: 'Found you' })
    expect(r.started?.codexPath).toBe(codex)
  })

  it('abort() after the terminal event changes nothing', async () => {
    let turnRef: { abort(): void; outcome: Promise<unknown> } | undefined
    const r = await runRealTurn({
      scenario: [messageResponse('done', { usage: usage({ input: 3, output: 1 }) })],
      afterRunTurn: (ctx) => {
        turnRef = ctx.turn
      },
    })
    expect(r.terminal.status).toBe('completed')
    turnRef!.abort()
    turnRef!.abort()
    expect(await turnRef!.outcome).toEqual(r.terminal)
  })

  it('maps reasoning summary and raw reasoning deltas to reasoningDelta with parts and indexes', async () => {
    const r = await runRealTurn({
      scenario: [
        messageResponse('Answer.', {
          id: 'resp_r',
          reasoning: { summary: [['Thinking ', 'hard'], 'Second part'], raw: ['raw thought', ['second ', 'raw']] },
          usage: usage({ input: 10, output: 8, reasoning: 6 }),
        }),
      ],
    })
    expect(r.terminal.status).toBe('completed')
    const reasoning = r.of('reasoningDelta')
    expect(reasoning.map(({ itemId, part, index, delta }) => ({ itemId, part, index, delta }))).toEqual([
      { itemId: 'rs_resp_r', part: 'summary', index: 0, delta: 'Thinking ' },
      { itemId: 'rs_resp_r', part: 'summary', index: 0, delta: 'hard' },
      { itemId: 'rs_resp_r', part: 'summary', index: 1, delta: 'Second part' },
      { itemId: 'rs_resp_r', part: 'text', index: 0, delta: 'raw thought' },
      { itemId: 'rs_resp_r', part: 'text', index: 1, delta: 'second ' },
      { itemId: 'rs_resp_r', part: 'text', index: 1, delta: 'raw' },
    ])
    const item = r.of('itemCompleted').find((e) => e.item.type === 'reasoning')?.item
    expect(item).toMatchObject({
      id: 'rs_resp_r',
      summary: ['Thinking hard', 'Second part'],
      content: ['raw thought', 'second raw'],
    })
    // Summary part boundaries have no dedicated event: they come out as native, not dropped.
    const parts = r
      .of('native')
      .filter((e) => e.method === 'item/reasoning/summaryPartAdded')
      .map((e) => (e.params as { summaryIndex: number }).summaryIndex)
    expect(parts).toEqual([0, 1])
    // Reasoning streamed before the message.
    const firstReasoning = r.events.findIndex((e) => e.type === 'reasoningDelta')
    const firstMessage = r.events.findIndex((e) => e.type === 'messageDelta')
    expect(firstReasoning).toBeGreaterThanOrEqual(0)
    expect(firstReasoning).toBeLessThan(firstMessage)
    expect(r.terminal.finalMessage).toBe('Answer.')
    expect(r.terminal.usage).toEqual(usageOf({ input: 10, output: 8, reasoning: 6, total: 18 }))
  })

  it('runs exec_command: output deltas carry stdout and stderr, exit code, function_call_output, summed usage', async () => {
    const cmd = 'sleep 0.2; echo out-line; echo err-line >&2; exit 3'
    const r = await runRealTurn({
      prompt: 'Run the command.',
      scenario: [
        execCommandResponse(cmd, { callId: 'call_1', usage: usage({ input: 200, output: 20 }) }),
        messageResponse(['Done', '.'], { usage: usage({ input: 300, cached: 100, output: 5 }) }),
      ],
    })
    const t = r.terminal
    expect(t.status).toBe('completed')
    expect(t.finalMessage).toBe('Done.')

    const startedCmd = asCommand(r.of('itemStarted').find((e) => e.item.type === 'commandExecution')?.item)
    expect(startedCmd).toMatchObject({ id: 'call_1', status: 'inProgress' })
    expect(String(startedCmd?.command)).toContain('echo out-line')
    expect(startedCmd?.cwd).toBe(r.cwd.path)

    const output = r.of('commandOutput')
    expect(output.length, 'commandOutput deltas were emitted').toBeGreaterThan(0)
    expect(output.every((o) => o.itemId === 'call_1')).toBe(true)
    const streamed = output.map((o) => o.delta).join('')
    expect(streamed).toContain('out-line\n')
    expect(streamed).toContain('err-line\n')

    const doneCmd = asCommand(r.of('itemCompleted').find((e) => e.item.type === 'commandExecution')?.item)
    expect(doneCmd).toMatchObject({ id: 'call_1', exitCode: 3, status: 'failed' })
    expect(String(doneCmd?.aggregatedOutput)).toContain('out-line')
    expect(String(doneCmd?.aggregatedOutput)).toContain('err-line')
    // Output deltas precede the item's completion.
    const lastDelta = r.events.lastIndexOf(output.at(-1)!)
    const completedIdx = r.events.findIndex((e) => e.type === 'itemCompleted' && e.item.id === 'call_1')
    expect(lastDelta).toBeLessThan(completedIdx)

    expect(r.mock.requests).toHaveLength(2)
    expect(functionCallOutputs(r.mock.requests[0].body)).toEqual([])
    const [fco] = functionCallOutputs(r.mock.requests[1].body)
    expect(fco).toMatchObject({ type: 'function_call_output', call_id: 'call_1' })
    expect(String(fco.output)).toContain('Process exited with code 3')
    expect(String(fco.output)).toContain('out-line')
    expect(String(fco.output)).toContain('err-line')

    const sum = usageOf({ input: 500, cacheRead: 100, output: 25, reasoning: 0, total: 525 })
    expect(t.usage).toEqual(sum)
    const usageEvents = r.of('usage')
    expect(usageEvents).toHaveLength(2)
    expect(usageEvents[0].turn).toEqual(usageOf({ input: 200, output: 20, total: 220 }))
    expect(usageEvents[1].turn).toEqual(sum)
    expect(usageEvents[1].thread).toEqual(sum)
  })

  it('a background process a command leaves behind does not outlive the turn', async () => {
    // `sleep 30 &` runs in the command's own session (not the app-server's process group) and
    // holds the command's stdout open; 0.171.0 then sends no item/completed for that command.
    // The harness also checks that nothing carrying this run's environment marker survives.
    const r = await runRealTurn({
      scenario: [
        execCommandResponse('sleep 30 & echo "bg=$!"; sleep 0.2', { callId: 'call_bg' }),
        messageResponse('Started a background sleep.'),
      ],
    })
    expect(r.terminal.status).toBe('completed')
    expect(r.of('itemStarted').some((e) => e.item.type === 'commandExecution' && e.item.id === 'call_bg')).toBe(true)
    const output = String(functionCallOutputs(r.mock.requests[1]?.body)[0]?.output)
    const bgPid = Number(/bg=(\d+)/.exec(output)?.[1])
    expect(bgPid, `background pid in the tool output: ${output}`).toBeGreaterThan(0)
    expect(await eventually(() => !isAlive(bgPid), BOUND_MS), `background sleep ${bgPid} still alive`).toBe(true)
  })

  it('apply_patch heredoc via exec_command creates the file and a completed fileChange item', async () => {
    const patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+hello from patch\n*** End Patch\nEOF\n"
    let fileText: string | null = null
    const r = await runRealTurn({
      scenario: [execCommandResponse(patch, { callId: 'call_patch' }), messageResponse('Patched.')],
      inspect: (res) => {
        const file = join(res.cwd.path, 'hello.txt')
        fileText = existsSync(file) ? readFileSync(file, 'utf8') : null
      },
    })
    expect(r.terminal.status).toBe('completed')
    expect(fileText).toBe('hello from patch\n')
    const started = r.of('itemStarted').find((e) => e.item.type === 'fileChange')?.item
    expect(started).toMatchObject({ id: 'call_patch', status: 'inProgress' })
    const done = r.of('itemCompleted').find((e) => e.item.type === 'fileChange')?.item
    expect(done).toMatchObject({
      id: 'call_patch',
      status: 'completed',
      changes: [{ path: join(r.cwd.path, 'hello.txt'), kind: { type: 'add' } }],
    })
    // The turn's whole diff so far, as its own event (and not as native).
    const diffs = r.of('diff')
    expect(diffs.length).toBeGreaterThan(0)
    expect(diffs.at(-1)!.diff).toContain('+hello from patch')
    expect(r.of('native').filter((e) => e.method === 'turn/diff/updated')).toEqual([])
    const [, second] = r.mock.requests
    expect(String(functionCallOutputs(second.body)[0]?.output)).toContain('A hello.txt')
    expect(r.terminal.finalMessage).toBe('Patched.')
  })
})

describe('real codex app-server: structured output', () => {
  const schema = {
    type: 'object',
    properties: { answer: { type: 'string' } },
    required: ['answer'],
    additionalProperties: false,
  }

  it('sends outputSchema as text.format and returns the parsed JSON as structuredOutput', async () => {
    const r = await runRealTurn({
      outputSchema: schema,
      scenario: [jsonMessageResponse({ answer: '42' }, { usage: usage({ input: 30, output: 5 }) })],
    })
    expect(r.mock.requests).toHaveLength(1)
    expect(r.mock.requests[0].body.text).toEqual({
      format: { type: 'json_schema', strict: true, schema, name: 'codex_output_schema' },
    })
    const t = r.terminal
    expect(t.status).toBe('completed')
    expect(t.failure).toBeNull()
    expect(t.finalMessage).toBe('{"answer":"42"}')
    expect(t.structuredOutput).toEqual({ answer: '42' })
    expect(t.usage).toEqual(usageOf({ input: 30, output: 5, total: 35 }))
  })

  it('a reply that is not JSON fails the turn with STRUCTURED_OUTPUT_INVALID', async () => {
    const r = await runRealTurn({
      outputSchema: schema,
      scenario: [messageResponse('The answer is 42.')],
    })
    expect(r.mock.requests[0].body.text?.format?.name).toBe('codex_output_schema')
    const t = r.terminal
    expect(t.status).toBe('failed')
    expect(t.failure?.code).toBe('STRUCTURED_OUTPUT_INVALID')
    expect(t.finalMessage).toBe('The answer is 42.')
    expect(t.structuredOutput ?? undefined).toBeUndefined()
    expect(t.threadId).not.toBeNull()
    expect(t.turnId).not.toBeNull()
  })
})
