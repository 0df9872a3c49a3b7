// Real `codex app-server` (the pinned 0.171.0, or RENNET_TEST_CODEX_BIN) against the loopback
// mock: app tools (`tools` on runTurn and openConversation) through the package's public API.
// The model calls the app's tool with the kit's `toolCallResponse`; what the app's `execute`
// answered is read back from the model's next request (`toolOutput`), since that is all the
// model ever sees (Codex passes the text on and never `success`). Also a suite of the compat
// matrix (scripts/compat.mjs): every test's title starts with `tools:`, the one column.
// What every scenario must keep (one terminal, last; nothing of the run left in its process
// group or carrying its marker; config.toml untouched) is checked by the harness.
import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'

import { openConversation, prepareTurn } from '../../index.js'
import type { Conversation, ConversationOptions, HarnessEvent, Turn } from '../../index.js'
import { codexBinaryPath, createGitCwd, startMockModel } from '../../testing/index.js'
// From the module the harness's mock is started with: a `byThread` entry is recognised by a
// symbol of that module instance.
import {
  byThread,
  checkpoint,
  messageResponse,
  offeredTool,
  spawnAgentResponse,
  spawnedAgents,
  sse,
  threadOf,
  toolCallResponse,
  toolCallsResponse,
  toolOutput,
  waitAgentResponse,
} from '../../testing/mock-responses.js'
import type { RecordedRequest, ScriptedResponse } from '../../testing/mock-responses.js'
import { describeProcess, eventually } from '../support/procs.js'
import { liveWithMarker, runRealTurn } from './harness.js'
import type { RealTurnContext, RealTurnResult } from './harness.js'

// The public types of the feature (AppTool, ToolContext) as the tests use them, written out so
// that this file says what it relies on.
interface Context {
  signal: AbortSignal
  threadId: string
  turnId: string
  callId: string
  agent: { threadId: string } | null
}
type Execute = (args: any, context: Context) => unknown

/** Every call an `execute` got: its arguments and context, in order. */
interface Calls {
  list: Array<{ args: unknown; context: Context }>
  execute(answer: Execute): Execute
}
function calls(): Calls {
  const list: Calls['list'] = []
  return {
    list,
    execute: (answer) => (args, context) => {
      list.push({ args, context })
      return answer(args, context)
    },
  }
}

const WEATHER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string', description: 'The city' } },
  required: ['city'],
  additionalProperties: false,
}

/** Whether codex-cli `version` is `least` or newer (`null`: the pinned newest). */
function atLeast(version: string | null, least: string): boolean {
  if (version === null) return true
  const [a, b] = [version, least].map((v) => v.split('.').map(Number))
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i]
  return true
}

/** A tool whose `execute` resolves only once its signal aborts (with the reason it aborted for). */
const untilAborted = (_args: unknown, { signal }: Context) =>
  new Promise<string>((resolve) => signal.addEventListener('abort', () => resolve('too late'), { once: true }))

/** A 1×1 PNG. */
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC'

type ServerRequestEvent = Extract<HarnessEvent, { type: 'serverRequest' }>
/** The `serverRequest` event of each app tool call, by call id. */
function toolRequests(events: HarnessEvent[]): Map<string, ServerRequestEvent & { params: { callId: string } }> {
  const out = new Map()
  for (const e of events) {
    if (e.type === 'serverRequest' && e.method === 'item/tool/call') out.set((e.params as { callId: string }).callId, e)
  }
  return out
}

/** The completed `dynamicToolCall` item of call `callId`, as Codex sent it. */
function toolItem(events: HarnessEvent[], callId: string): Record<string, any> | undefined {
  for (const e of events) {
    if (e.type === 'itemCompleted' && (e.item as { type: string }).type === 'dynamicToolCall' && (e.item as { id: string }).id === callId) return e.item as never
  }
  return undefined
}

/** The model's answer once it has the output of `callId`: it repeats it, so that the terminal shows it. */
const echo = (callId: string) => (request: RecordedRequest) => messageResponse(`The app said: ${JSON.stringify(toolOutput(request.body, callId))}`)

/** The text of a tool output as the model got it (the string, or its text parts joined). */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output
  if (Array.isArray(output)) return output.map((part) => (part?.type === 'input_text' ? part.text : '')).join('\n')
  return ''
}

const threadIdOf = (r: RealTurnResult) => r.of('threadStarted')[0]?.threadId
const turnIdOf = (r: RealTurnResult) => r.of('turnStarted').find((e) => e.threadId === threadIdOf(r))?.turnId

// Real children on a loaded 2-core machine: generous ceilings, no timing asserted.
describe('real codex app-server: app tools', { timeout: 120_000 }, () => {
  it("tools: a call reaches execute with its context; the model is offered the tool as defined and gets execute's text", async () => {
    const weather = calls()
    const r = await runRealTurn({
      prompt: 'Weather in Oslo?',
      scenario: [toolCallResponse('get_weather', { city: 'Oslo' }, { callId: 'call_w' }), echo('call_w')],
      extra: {
        tools: {
          get_weather: { description: 'Weather for a city', inputSchema: WEATHER_SCHEMA, execute: weather.execute(({ city }) => `Sunny in ${city}, 21C`) },
        },
      } as never,
    })
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    expect(r.terminal.finalMessage).toBe('The app said: "Sunny in Oslo, 21C"')

    // Offered as a top-level function, its schema verbatim.
    expect(offeredTool(r.mock.requests[0].body, 'get_weather')).toMatchObject({
      type: 'function',
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: WEATHER_SCHEMA,
    })
    expect(toolOutput(r.mock.requests[1].body, 'call_w')).toBe('Sunny in Oslo, 21C')

    expect(weather.list).toHaveLength(1)
    const [{ args, context }] = weather.list
    expect(args).toEqual({ city: 'Oslo' })
    expect(context).toMatchObject({ threadId: threadIdOf(r), turnId: turnIdOf(r), callId: 'call_w', agent: null })
    expect(context.signal).toBeInstanceOf(AbortSignal)
    expect(context.signal.aborted).toBe(false)

    // The events: Codex's item, and the request answered by the app.
    expect(toolItem(r.events, 'call_w')).toMatchObject({ status: 'completed', success: true, contentItems: [{ type: 'inputText', text: 'Sunny in Oslo, 21C' }] })
    const request = toolRequests(r.events).get('call_w')
    expect(request).toMatchObject({ reply: 'app', agent: null, params: { tool: 'get_weather', arguments: { city: 'Oslo' } } })
  })

  it('tools: arguments that break the schema never reach execute; the model is told which argument and the turn goes on', async () => {
    const weather = calls()
    const forecast = calls()
    const r = await runRealTurn({
      prompt: 'Weather?',
      scenario: [
        toolCallsResponse([
          { name: 'get_weather', args: {}, callId: 'missing' },
          { name: 'get_weather', args: { city: 42 }, callId: 'wrong_type' },
          { name: 'forecast', args: { city: 7 }, callId: 'zod_wrong' },
          { name: 'forecast', args: { city: 'Oslo' }, callId: 'zod_ok' },
        ]),
        messageResponse('Understood.'),
      ],
      extra: {
        tools: {
          get_weather: { description: 'Weather for a city', inputSchema: WEATHER_SCHEMA, execute: weather.execute(() => 'never') },
          // A Standard Schema: its parsed output (the default filled in) is what execute gets.
          forecast: {
            description: 'Forecast for a city',
            inputSchema: z.object({ city: z.string(), units: z.enum(['C', 'F']).default('C') }),
            execute: forecast.execute(({ city, units }) => `Rain in ${city} (${units})`),
          },
        },
      } as never,
    })
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    expect(r.terminal.finalMessage).toBe('Understood.')
    expect(weather.list, 'execute never saw bad arguments').toEqual([])
    expect(forecast.list.map((c) => c.args)).toEqual([{ city: 'Oslo', units: 'C' }])

    // The zod schema reached the model as JSON Schema.
    expect(offeredTool(r.mock.requests[0].body, 'forecast')?.parameters).toMatchObject({ type: 'object', properties: { city: { type: 'string' } } })

    const next = r.mock.requests[1].body
    for (const callId of ['missing', 'wrong_type', 'zod_wrong']) {
      const text = outputText(toolOutput(next, callId))
      expect(text, `${callId}: the model's text names the argument`).toContain('city')
      // The app's words, not Codex's generic failure.
      expect(text).not.toBe('dynamic tool request failed')
      expect(toolItem(r.events, callId), callId).toMatchObject({ success: false })
      expect(toolRequests(r.events).get(callId)?.reply, callId).toBe('invalidArguments')
    }
    expect(toolOutput(next, 'zod_ok')).toBe('Rain in Oslo (C)')
    expect(toolRequests(r.events).get('zod_ok')?.reply).toBe('app')
  })

  it("tools: a throw reaches the model as the error's message (no stack), the call failed, the turn goes on", async () => {
    const r = await runRealTurn({
      prompt: 'Weather in Atlantis?',
      scenario: [toolCallResponse('get_weather', { city: 'Atlantis' }, { callId: 'call_t' }), echo('call_t')],
      extra: {
        tools: {
          get_weather: {
            description: 'Weather for a city',
            inputSchema: WEATHER_SCHEMA,
            execute: ({ city }: { city: string }) => {
              throw new Error(`no forecast for ${city}`)
            },
          },
        },
      } as never,
    })
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    const text = outputText(toolOutput(r.mock.requests[1].body, 'call_t'))
    expect(text).toContain('no forecast for Atlantis')
    expect(text, 'no stack trace').not.toMatch(/\n\s+at /)
    expect(toolItem(r.events, 'call_t')).toMatchObject({ status: 'failed', success: false })
    expect(toolRequests(r.events).get('call_t')?.reply).toBe('failed')
  })

  it('tools: an image result reaches the model as input_image; a remote image URL is refused with a text, never sent to Codex', async () => {
    const r = await runRealTurn({
      prompt: 'Show me the charts.',
      scenario: [
        toolCallsResponse([
          { name: 'chart', args: { which: 'inline' }, callId: 'inline' },
          { name: 'chart', args: { which: 'remote' }, callId: 'remote' },
        ]),
        messageResponse('Seen.'),
      ],
      extra: {
        tools: {
          chart: {
            description: 'Draws a chart',
            inputSchema: { type: 'object', properties: { which: { type: 'string' } }, required: ['which'] },
            execute: ({ which }: { which: string }) => ({
              content: [
                { type: 'text', text: `the ${which} chart` },
                { type: 'image', url: which === 'inline' ? PNG : 'https://example.com/chart.png' },
              ],
            }),
          },
        },
      } as never,
    })
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    const next = r.mock.requests[1].body
    expect(toolOutput(next, 'inline')).toEqual([
      { type: 'input_text', text: 'the inline chart' },
      { type: 'input_image', image_url: PNG, detail: 'high' },
    ])
    const remote = toolOutput(next, 'remote')
    expect(JSON.stringify(remote)).not.toContain('input_image')
    expect(outputText(remote)).toContain('the remote chart')
    // Refused by the package, with a text of its own in place of the image: Codex got no remote URL.
    const item = toolItem(r.events, 'remote')
    expect(item?.contentItems?.filter((c: { type: string }) => c.type === 'inputImage')).toEqual([])
    expect(outputText(remote).replace('the remote chart', '').trim(), 'a text says why the image is missing').not.toBe('')
  })

  it('tools: a long result reaches the model cut, with words saying so', async () => {
    // 70,000 bytes: past the package's 64 KiB bound, and far past what Codex 0.171.0 passes on
    // with the mock model's fallback metadata (it keeps about 12,000 characters, cutting the
    // middle out with "…N tokens truncated…", and omits later text parts).
    const long = `BEGIN ${'abcdefghij'.repeat(7000)} END`
    const r = await runRealTurn({
      prompt: 'Read the log.',
      scenario: [toolCallResponse('read_log', {}, { callId: 'call_log' }), messageResponse('Read.')],
      extra: { tools: { read_log: { description: 'Reads the log', inputSchema: { type: 'object', properties: {} }, execute: () => long } } } as never,
    })
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    const text = outputText(toolOutput(r.mock.requests[1].body, 'call_log'))
    // The package's note heads the text, so that Codex's own cut (which keeps a text's
    // beginning and end) leaves it to the model.
    expect(text.startsWith("[4474 bytes of the tool's text were cut: a result carries at most 65536 bytes of text]\nBEGIN ")).toBe(true)
    expect(text.length).toBeLessThan(long.length)
  })

  it('tools: past its deadline the signal aborts with a TimeoutError and the model is told the tool timed out', async () => {
    const slow = calls()
    const r = await runRealTurn({
      prompt: 'Wait for CI.',
      scenario: [toolCallResponse('wait_for_ci', {}, { callId: 'call_ci' }), echo('call_ci')],
      extra: {
        tools: {
          wait_for_ci: { description: 'Waits for the CI run', inputSchema: { type: 'object', properties: {} }, timeoutMs: 500, execute: slow.execute(untilAborted) },
        },
      } as never,
    })
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    expect(slow.list).toHaveLength(1)
    const { signal } = slow.list[0].context
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBeInstanceOf(DOMException)
    expect((signal.reason as DOMException).name).toBe('TimeoutError')
    const text = outputText(toolOutput(r.mock.requests[1].body, 'call_ci'))
    expect(text).toMatch(/timed out/i)
    // The late 'too late' of the aborted execute was dropped.
    expect(text).not.toContain('too late')
    expect(toolItem(r.events, 'call_ci')).toMatchObject({ success: false })
    expect(toolRequests(r.events).get('call_ci')?.reply).toBe('timedOut')
  })

  it("tools: an abort mid-tool aborts every running tool's signal, answers them cancelled, the turn ends cancelled and nothing is left", async () => {
    const polite = calls()
    const deaf = calls()
    let context: RealTurnContext | undefined
    let abortedAtTerminal: boolean | undefined
    // Codex runs a response's calls together from 0.166.0 on; before, one after the other (seen
    // on 0.150.0 … 0.162.0: the second call comes once the first is answered).
    let together = true
    const started = () => {
      // Every call that runs at once is running: abort the turn.
      const running = polite.list.length + deaf.list.length
      if (running === (together ? 2 : 1)) setImmediate(() => context!.abort())
    }
    const r = await runRealTurn({
      prompt: 'Ask the user.',
      scenario: [
        toolCallsResponse([
          { name: 'ask_user', args: {}, callId: 'polite' },
          { name: 'never_answers', args: {}, callId: 'deaf' },
        ]),
        messageResponse('never asked for'),
      ],
      interruptGraceMs: 10_000,
      keep: true,
      afterRunTurn: (ctx) => {
        context = ctx
      },
      onEvent: (e) => {
        if (e.type === 'started') together = atLeast(e.codexVersion, '0.166.0')
        if (e.type === 'terminal') abortedAtTerminal = polite.list[0]?.context.signal.aborted
      },
      extra: {
        tools: {
          ask_user: {
            description: 'Asks the user in the app',
            inputSchema: { type: 'object', properties: {} },
            execute: polite.execute((args, ctx) => {
              const answer = untilAborted(args, ctx)
              started()
              return answer
            }),
          },
          // Ignores its signal: it must not hold up the abort.
          never_answers: {
            description: 'Never answers',
            inputSchema: { type: 'object', properties: {} },
            execute: deaf.execute(() => {
              started()
              return new Promise(() => {})
            }),
          },
        },
      } as never,
    })
    try {
      expect(r.abortedAt, 'the turn was aborted mid-tool').not.toBeNull()
      expect(r.terminal.status).toBe('cancelled')
      expect(abortedAtTerminal, "the tool's signal aborted before the terminal").toBe(true)
      // The calls that ran: both, or the first where Codex runs them one after the other (the
      // second then never comes).
      const ran = together ? [polite, deaf] : [polite]
      const ranIds = together ? ['polite', 'deaf'] : ['polite']
      if (!together) expect(deaf.list, 'the second call never ran').toEqual([])
      for (const tool of ran) {
        const { signal } = tool.list[0].context
        expect(signal.aborted).toBe(true)
        expect((signal.reason as DOMException | undefined)?.name).not.toBe('TimeoutError')
      }
      const requests = toolRequests(r.events)
      for (const callId of ranIds) expect(requests.get(callId)?.reply, callId).toBe('cancelled')
      // Codex fails the item (0.150.0, 0.166.0 on), or leaves it open after the interrupt (0.155.0 …
      // 0.162.0): then the package closes it with itemDropped before the terminal.
      for (const callId of ranIds) {
        const dropped = r.events.some((e) => e.type === 'itemDropped' && e.itemId === callId)
        if (!dropped) expect(toolItem(r.events, callId), callId).toMatchObject({ status: 'failed', success: false })
      }
      // The model was not asked again with a late answer.
      expect(r.mock.requests).toHaveLength(1)

      // The thread's next turn: the model reads that both calls were cancelled. The package answers
      // them before it interrupts, but Codex 0.171.0 often takes the interrupt first (seen with a
      // plain client writing both answers and the interrupt at once) and then gives the model its
      // own "dynamic tool call was cancelled before receiving a response": either way, a cancel.
      const next = await runRealTurn({
        within: r,
        prompt: 'Go on.',
        scenario: [messageResponse('Going on.')],
        extra: { threadId: r.terminal.threadId!, tools: { ask_user: { description: 'Asks the user in the app', inputSchema: { type: 'object', properties: {} }, execute: () => 'x' } } } as never,
      })
      expect(next.terminal.status, JSON.stringify(next.terminal.failure)).toBe('completed')
      const body = r.mock.requests.at(-1)!.body
      // (0.155.0 … 0.162.0 give it their own "aborted by user after Ns".)
      for (const callId of ranIds) expect(outputText(toolOutput(body, callId)), callId).toMatch(/cancel|aborted by user/i)
    } finally {
      await r.dispose()
    }
  })

  it("tools: a sub-agent spawned with the thread's context calls the app's tool; execute's context names the agent", async () => {
    const lookup = calls()
    const chooser = byThread(
      [
        spawnAgentResponse('Look it up.', { callId: 'call_spawn', args: { fork_context: true } }),
        (request) => waitAgentResponse(spawnedAgents(request.body).map((agent) => agent.agent_id), { callId: 'call_wait' }),
        messageResponse('The helper found it.'),
      ],
      [toolCallResponse('lookup', { q: 'child' }, { callId: 'child_call' }), echo('child_call')],
    )
    const r = await runRealTurn({
      prompt: 'Use a helper.',
      scenario: [chooser],
      extra: {
        tools: { lookup: { description: 'Looks a thing up', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, execute: lookup.execute(({ q }) => `found ${q}`) } },
      } as never,
    })
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    expect(r.terminal.finalMessage).toBe('The helper found it.')
    expect(chooser.threads).toHaveLength(2)
    const child = chooser.threads[1]
    expect(child).not.toBe(threadIdOf(r))
    // The child was offered the tool, and got execute's text.
    const childRequests = r.mock.requests.filter((q) => threadOf(q) === child)
    expect(offeredTool(childRequests[0].body, 'lookup')).toBeDefined()
    expect(toolOutput(childRequests[1].body, 'child_call')).toBe('found child')

    expect(lookup.list).toHaveLength(1)
    const { args, context } = lookup.list[0]
    expect(args).toEqual({ q: 'child' })
    expect(context).toMatchObject({ threadId: child, callId: 'child_call', agent: { threadId: child } })
    expect(context.turnId).not.toBe(turnIdOf(r))
    expect(toolRequests(r.events).get('child_call')).toMatchObject({ reply: 'app', agent: { threadId: child } })
  })

  it("tools: with until 'idle', a forked sub-agent still at work after the turn's own end calls the app's tool", async () => {
    const lookup = calls()
    const chooser = byThread(
      [spawnAgentResponse('Look it up.', { callId: 'call_spawn', args: { fork_context: true } }), messageResponse('I asked a helper.')],
      [toolCallResponse('lookup', { q: 'late' }, { callId: 'late_call' }), echo('late_call')],
    )
    const r = await runRealTurn({
      prompt: 'Use a helper.',
      scenario: [chooser],
      extra: {
        until: 'idle',
        tools: { lookup: { description: 'Looks a thing up', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, execute: lookup.execute(({ q }) => `found ${q}`) } },
      } as never,
    })
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    expect(r.terminal.finalMessage).toBe('I asked a helper.')
    const child = chooser.threads[1]
    expect(lookup.list.map((c) => [c.args, c.context.threadId, c.context.agent?.threadId])).toEqual([[{ q: 'late' }, child, child]])
    expect(toolOutput(r.mock.requests.filter((q) => threadOf(q) === child)[1].body, 'late_call')).toBe('found late')
    expect(r.terminal.agents.map((a) => [a.threadId, a.status])).toEqual([[child, 'completed']])
    expect(r.terminal.cutOff).toEqual([])
  })

  it("tools: a forked sub-agent's call still running when the turn ends (cut off) has its signal aborted", async () => {
    const lookup = calls()
    let running!: () => void
    const executeRunning = new Promise<void>((resolve) => (running = resolve))
    let abortedAtTerminal: boolean | undefined
    const chooser = byThread(
      // The parent answers only once the child's call runs in the app.
      [spawnAgentResponse('Look it up.', { callId: 'call_spawn', args: { fork_context: true } }), sse([checkpoint(() => executeRunning), ...messageResponse('I asked a helper.')])],
      [toolCallResponse('lookup', { q: 'slow' }, { callId: 'cut_call' })],
    )
    const r = await runRealTurn({
      prompt: 'Use a helper.',
      scenario: [chooser],
      onEvent: (e) => {
        if (e.type === 'terminal') abortedAtTerminal = lookup.list[0]?.context.signal.aborted
      },
      extra: {
        tools: {
          lookup: {
            description: 'Looks a thing up',
            inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
            execute: lookup.execute((args, context) => {
              const answer = untilAborted(args, context)
              running()
              return answer
            }),
          },
        },
      } as never,
    })
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    const child = chooser.threads[1]
    expect(r.terminal.cutOff).toEqual([expect.objectContaining({ kind: 'agent', threadId: child })])
    expect(lookup.list).toHaveLength(1)
    // Nothing of the app's tool outlives the turn: its signal aborted by the terminal.
    expect(abortedAtTerminal, "the cut-off call's signal aborted by the terminal").toBe(true)
  })

  it('tools: a sub-agent spawned without the context has no app tools: its call is unsupported and execute never runs', async () => {
    const lookup = calls()
    const chooser = byThread(
      [
        spawnAgentResponse('Look it up.', { callId: 'call_spawn', args: { fork_context: false } }),
        (request) => waitAgentResponse(spawnedAgents(request.body).map((agent) => agent.agent_id), { callId: 'call_wait' }),
        messageResponse('The helper could not.'),
      ],
      [toolCallResponse('lookup', { q: 'child' }, { callId: 'child_call' }), echo('child_call')],
    )
    const r = await runRealTurn({
      prompt: 'Use a helper.',
      scenario: [chooser],
      extra: {
        tools: { lookup: { description: 'Looks a thing up', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, execute: lookup.execute(() => 'never') } },
      } as never,
    })
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    const child = chooser.threads[1]
    const childRequests = r.mock.requests.filter((q) => threadOf(q) === child)
    expect(offeredTool(childRequests[0].body, 'lookup')).toBeUndefined()
    expect(toolOutput(childRequests[1].body, 'child_call')).toBe('unsupported call: lookup')
    expect(lookup.list).toEqual([])
    expect(toolRequests(r.events).size).toBe(0)
  })

  it("tools: a prepared turn's tools answer its call", async () => {
    const weather = calls()
    const r = await runRealTurn({
      prompt: 'Weather in Oslo?',
      scenario: [toolCallResponse('get_weather', { city: 'Oslo' }, { callId: 'call_p' }), echo('call_p')],
      runner: ({ prompt, ...options }) => prepareTurn(options as never).start(prompt!),
      extra: {
        tools: { get_weather: { description: 'Weather for a city', inputSchema: WEATHER_SCHEMA, execute: weather.execute(({ city }) => `Sunny in ${city}`) } },
      } as never,
    })
    expect(r.terminal.status, JSON.stringify(r.terminal.failure)).toBe('completed')
    expect(toolOutput(r.mock.requests[1].body, 'call_p')).toBe('Sunny in Oslo')
    expect(weather.list.map((c) => [c.args, c.context.threadId, c.context.callId])).toEqual([[{ city: 'Oslo' }, threadIdOf(r), 'call_p']])
  })

  it("tools: a resumed thread keeps the tools it was started with; a stored tool the app no longer passes gets a failure text", async () => {
    const first = calls()
    const other = calls()
    const lookupTool = (execute: Execute) => ({ description: 'Looks a thing up', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, execute })
    const one = await runRealTurn({
      prompt: 'Look it up.',
      scenario: [toolCallResponse('lookup', { q: 'one' }, { callId: 'first' }), echo('first')],
      extra: { tools: { lookup: lookupTool(first.execute(({ q }) => `found ${q}`)) } } as never,
      keep: true,
    })
    try {
      expect(one.terminal.status, JSON.stringify(one.terminal.failure)).toBe('completed')
      const threadId = one.terminal.threadId!
      const from = one.mock.requests.length
      const two = await runRealTurn({
        within: one,
        prompt: 'Again.',
        scenario: [
          toolCallsResponse([
            { name: 'lookup', args: { q: 'two' }, callId: 'stored' },
            { name: 'other', args: { q: 'two' }, callId: 'new' },
          ]),
          messageResponse('Done.'),
        ],
        extra: { threadId, tools: { other: lookupTool(other.execute(() => 'never')) } } as never,
      })
      expect(two.terminal.status, JSON.stringify(two.terminal.failure)).toBe('completed')
      expect(two.of('threadStarted')[0]).toMatchObject({ threadId, resumed: true })
      const [resumed, after] = one.mock.requests.slice(from)
      // Codex keeps the thread's own tools: the stored one offered, the one given on resume not.
      expect(offeredTool(resumed.body, 'lookup')).toBeDefined()
      expect(offeredTool(resumed.body, 'other')).toBeUndefined()
      expect(toolOutput(after.body, 'new')).toBe('unsupported call: other')
      // The stored tool's call: answered with the package's failure text, not Codex's generic one.
      const text = outputText(toolOutput(after.body, 'stored'))
      expect(text).not.toBe('dynamic tool request failed')
      expect(text).toContain('lookup')
      expect(toolRequests(two.events).get('stored')?.reply).toBe('failed')
      expect(first.list).toHaveLength(1)
      expect(other.list).toEqual([])
    } finally {
      await one.dispose()
    }
  })
})

// ---------------------------------------------------------------------------------------------
// a conversation

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Every event of the turn (a watchdog aborts one that hangs, and the test then fails). */
async function drain(turn: Turn): Promise<HarnessEvent[]> {
  const events: HarnessEvent[] = []
  const watchdog = setTimeout(() => turn.abort(new Error('watchdog')), 60_000)
  try {
    for await (const event of turn) events.push(event)
  } finally {
    clearTimeout(watchdog)
  }
  expect(events.at(-1)?.type).toBe('terminal')
  return events
}

describe('real codex app-server: app tools in a conversation', { timeout: 180_000 }, () => {
  it("tools: a conversation's tools answer on every send and on a fork", async () => {
    const model = await startMockModel([
      toolCallResponse('lookup', { q: 'one' }, { callId: 'c1' }),
      echo('c1'),
      toolCallResponse('lookup', { q: 'two' }, { callId: 'c2' }),
      echo('c2'),
      toolCallResponse('lookup', { q: 'fork' }, { callId: 'c3' }),
      echo('c3'),
    ] satisfies ScriptedResponse[])
    const cwd = createGitCwd()
    const mark = randomUUID()
    cleanups.push(
      () => model.close(),
      () => cwd.cleanup(),
      async () => {
        const gone = await eventually(() => liveWithMarker(mark).length === 0, 20_000)
        expect(gone, `processes left:\n${liveWithMarker(mark).map(describeProcess).join('\n')}`).toBe(true)
      },
    )
    const lookup = calls()
    const options = {
      cwd: cwd.path,
      codexPath: codexBinaryPath(),
      env: { ...model.env, RENNET_REAL_RUN: mark },
      requestTimeoutMs: 60_000,
      tools: { lookup: { description: 'Looks a thing up', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, execute: lookup.execute(({ q }) => `found ${q}`) } },
    } as unknown as ConversationOptions
    const conversation: Conversation = openConversation(options)
    cleanups.push(() => conversation.close())

    const one = await drain(conversation.send('Look up one.'))
    expect(one.at(-1)).toMatchObject({ status: 'completed', finalMessage: 'The app said: "found one"' })
    const threadId = conversation.threadId!
    const two = await drain(conversation.send('Look up two.'))
    expect(two.at(-1)).toMatchObject({ status: 'completed', finalMessage: 'The app said: "found two"', threadId })
    expect(two.find((e) => e.type === 'threadStarted')).toMatchObject({ threadId, resumed: true })

    const fork = await conversation.fork()
    cleanups.push(() => fork.close())
    const three = await drain(fork.send('Look up on the fork.'))
    expect(three.at(-1)).toMatchObject({ status: 'completed', finalMessage: 'The app said: "found fork"', threadId: fork.threadId })

    expect(lookup.list.map((c) => [c.args, c.context.threadId, c.context.callId])).toEqual([
      [{ q: 'one' }, threadId, 'c1'],
      [{ q: 'two' }, threadId, 'c2'],
      [{ q: 'fork' }, fork.threadId, 'c3'],
    ])
    for (const c of lookup.list) expect(c.context.agent).toBeNull()
  })
})
