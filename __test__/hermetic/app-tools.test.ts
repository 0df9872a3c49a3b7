// App tools (`tools`) through the addon against the test kit's fake, which plays Codex's dynamic
// tools as codex-cli 0.171.0 does (the experimentalApi gate, its definition checks, the calls,
// what the model is given): a call reaching `execute` with its context, arguments checked before
// it, a throw, `isError`, an abort mid-tool, the deadline, images, the result's bound, a forked
// sub-agent's call, a conversation's second send and fork, and a TypeError per bad definition.
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'

import { openConversation, prepareTurn, runTurn } from '../../index.js'
import type { AppTool, Conversation, HarnessEvent, RunTurnOptions, ToolContext } from '../../index.js'
import { fakeCodexRuns } from '../../testing/index.js'
import type { FakeCodexScript, FakeStep } from '../../testing/index.js'
import { SUB_THREAD_ID, SUB_TURN_ID, THREAD_ID, TURN_ID, cleanupFakes, collect, scenarios, tempDir, writeFake } from '../support/fake.js'

const opened: Conversation[] = []
afterEach(async () => {
  for (const conversation of opened.splice(0)) await conversation.close()
  await cleanupFakes()
})

const CITY = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }

/** A fake whose model calls `tool` with `args`, then says what it was given back. */
function script(steps: FakeStep[], more: FakeCodexScript = {}): FakeCodexScript {
  return { ...scenarios.minimal(), steps: [...steps, { type: 'message', text: 'done' }], ...more }
}

const call = (tool: string, args: unknown, callId = 'call_1'): FakeStep => ({ type: 'toolCall', tool, arguments: args, callId })

/** Runs a turn with `tools` against `fake`: its events and the fake's record of the calls. */
async function run(fake: FakeCodexScript, tools: Record<string, AppTool>, more: Partial<RunTurnOptions> = {}, onEvent?: (e: HarnessEvent) => void) {
  const cwd = tempDir()
  const { codexPath } = writeFake(fake, {}, cwd)
  const turn = runTurn({ prompt: 'Weather?', cwd, codexPath, tools, ...more })
  const events = await collect(turn, (e) => onEvent?.(e))
  const terminal = events[events.length - 1]
  return { turn, events, terminal, calls: fakeCodexRuns(codexPath)[0].toolCalls, runs: fakeCodexRuns(codexPath) }
}

const serverRequests = (events: HarnessEvent[]) => events.filter((e) => e.type === 'serverRequest') as Array<Extract<HarnessEvent, { type: 'serverRequest' }>>

describe('a call of an app tool', () => {
  it('reaches execute with its arguments and context; the model gets the text; the events carry the item and the reply', async () => {
    const seen: Array<{ args: unknown; context: ToolContext }> = []
    const weather: AppTool<{ city: string }> = {
      description: 'Weather for a city',
      inputSchema: CITY,
      execute(args, context) {
        seen.push({ args, context })
        return `Sunny in ${args.city}, 21C`
      },
    }
    const { events, terminal, calls, runs } = await run(script([call('get_weather', { city: 'Oslo' }, 'call_w')]), { get_weather: weather })
    expect(terminal).toMatchObject({ type: 'terminal', status: 'completed', finalMessage: 'done' })
    expect(seen).toHaveLength(1)
    expect(seen[0].args).toEqual({ city: 'Oslo' })
    const { signal, ...context } = seen[0].context
    expect(context).toEqual({ threadId: THREAD_ID, turnId: TURN_ID, callId: 'call_w', agent: null })
    expect(signal.aborted).toBe(false)
    expect(calls).toMatchObject([{ tool: 'get_weather', status: 'completed', success: true, output: 'Sunny in Oslo, 21C' }])
    // The thread was started with the tool, after asking for the experimental API.
    expect(runs[0].requests('initialize')[0].capabilities).toEqual({ experimentalApi: true })
    expect(runs[0].requests('thread/start')[0].dynamicTools).toEqual([
      { type: 'function', name: 'get_weather', description: 'Weather for a city', inputSchema: CITY },
    ])
    const started = events.find((e) => e.type === 'itemStarted' && e.item.type === 'dynamicToolCall')
    const completed = events.find((e) => e.type === 'itemCompleted' && e.item.type === 'dynamicToolCall')
    expect(started).toBeDefined()
    expect(completed).toMatchObject({ item: { status: 'completed', success: true, contentItems: [{ type: 'inputText', text: 'Sunny in Oslo, 21C' }] } })
    expect(serverRequests(events).map((e) => [e.method, e.reply, e.agent])).toEqual([['item/tool/call', 'app', null]])
  })

  it('a turn without tools asks for no experimental API and gives the thread none', async () => {
    const cwd = tempDir()
    const { codexPath } = writeFake(script([]), {}, cwd)
    await runTurn({ prompt: 'x', cwd, codexPath }).outcome
    const [first] = fakeCodexRuns(codexPath)
    expect(first.requests('initialize')[0]).not.toHaveProperty('capabilities')
    expect(first.requests('thread/start')[0]).not.toHaveProperty('dynamicTools')
  })

  it('a JSON Schema changed between turns is the one the next turn offers and checks (never served stale)', async () => {
    const schema = { type: 'object', properties: { file: { type: 'string', enum: ['a.ts'] } }, required: ['file'] }
    const opened: string[] = []
    const tools = { open_file: { description: 'Opens one of the open files', inputSchema: schema, execute: ({ file }: { file: string }) => (opened.push(file), `opened ${file}`) } }
    for (const files of [['a.ts'], ['a.ts', 'b.ts']]) {
      schema.properties.file.enum = files
      const { calls, runs } = await run(script([call('open_file', { file: files.at(-1) })]), tools)
      expect(runs[0].requests('thread/start')[0].dynamicTools[0].inputSchema.properties.file.enum).toEqual(files)
      expect(calls[0]).toMatchObject({ success: true, output: `opened ${files.at(-1)}` })
    }
    expect(opened).toEqual(['a.ts', 'b.ts'])
  })

  it('tools: {} is no tools: nothing new is sent', async () => {
    const { runs, terminal } = await run(script([]), {})
    expect(terminal).toMatchObject({ status: 'completed' })
    expect(runs[0].requests('initialize')[0]).not.toHaveProperty('capabilities')
    expect(runs[0].requests('thread/start')[0].dynamicTools ?? null).toBeNull()
  })

  it('arguments that break the schema never reach execute; the model is told the argument and the rule', async () => {
    let ran = 0
    const { calls, events, terminal } = await run(script([call('get_weather', { city: 7, extra: true })]), {
      get_weather: { description: 'Weather', inputSchema: CITY, execute: () => (ran++, 'no') },
    })
    expect(ran).toBe(0)
    expect(terminal).toMatchObject({ status: 'completed' })
    expect(calls[0]).toMatchObject({ status: 'failed', success: false })
    expect(calls[0].output).toContain('invalid arguments for the tool get_weather')
    expect(calls[0].output).toContain('arguments.city must be string')
    expect(calls[0].output).toContain('arguments.extra is not allowed')
    expect(serverRequests(events)[0].reply).toBe('invalidArguments')
  })

  it("a Standard Schema's parsed output is what execute gets, and its issues name the argument", async () => {
    const schema = z.object({ city: z.string().transform((s) => s.toUpperCase()) })
    const got: unknown[] = []
    const tools = { shout: { description: 'Shout a city', inputSchema: schema, execute: (args: { city: string }) => (got.push(args), args.city) } }
    const { calls } = await run(script([call('shout', { city: 'oslo' }, 'a'), call('shout', { town: 'x' }, 'b')]), tools)
    expect(got).toEqual([{ city: 'OSLO' }])
    expect(calls[0]).toMatchObject({ success: true, output: 'OSLO' })
    expect(calls[1]).toMatchObject({ success: false })
    expect(calls[1].output).toMatch(/^invalid arguments for the tool shout: arguments\.city: /)
  })

  it('a throw is a failure carrying the message (no stack); isError is success false; a non-result says so', async () => {
    const { calls, events } = await run(
      script([call('boom', {}, 'a'), call('soft', {}, 'b'), call('odd', {}, 'c'), call('shapeless', {}, 'd')]),
      {
        boom: { description: 'Throws', inputSchema: { type: 'object' }, execute: async () => { throw new Error('ticket 42 not found') } },
        soft: { description: 'Errs', inputSchema: { type: 'object' }, execute: () => ({ content: [{ type: 'text', text: 'no access' }], isError: true }) },
        odd: { description: 'Odd', inputSchema: { type: 'object' }, execute: () => 42 as never },
        shapeless: { description: 'Shapeless', inputSchema: { type: 'object' }, execute: () => ({ content: 'text' }) as never },
      },
    )
    expect(calls.map((c) => [c.success, c.output])).toEqual([
      [false, 'ticket 42 not found'],
      [false, 'no access'],
      [false, expect.stringContaining('the tool odd returned a number, not a tool result')],
      [false, expect.stringContaining('the tool shapeless returned an object without a content array, not a tool result')],
    ])
    expect(serverRequests(events).map((e) => e.reply)).toEqual(['failed', 'app', 'failed', 'failed'])
  })

  it('execute is called on its tool, as a method', async () => {
    class Greeter {
      description = 'Greets'
      inputSchema = { type: 'object' }
      execute() {
        return this.greeting()
      }
      greeting() {
        return 'hello from the tool'
      }
    }
    const { calls } = await run(script([call('greet', {})]), { greet: new Greeter() })
    expect(calls[0]).toMatchObject({ success: true, output: 'hello from the tool' })
  })

  it('images: a data: URL goes as it is; a remote URL is not read, and a text says so', async () => {
    const png = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
    const { calls } = await run(script([call('pic', {})]), {
      pic: {
        description: 'Pictures',
        inputSchema: { type: 'object' },
        execute: () => ({
          content: [
            { type: 'text', text: 'two' },
            { type: 'image', url: png },
            { type: 'image', url: 'https://example.com/a.png' },
            { type: 'image', url: 'data:text/plain;base64,SGVsbG8=' },
          ],
        }),
      },
    })
    expect(calls[0]).toMatchObject({ status: 'completed', success: true })
    expect(calls[0].contentItems).toEqual([
      { type: 'inputText', text: 'two' },
      { type: 'inputImage', imageUrl: png },
      { type: 'inputText', text: expect.stringContaining('only data: URLs reach the model') },
      { type: 'inputText', text: '[an image of the tool was not sent: its data: URL is not of an image type (data:image/…)]' },
    ])
  })

  it("the result's text is bounded to 64 KiB of UTF-8, cut at a character boundary, with a note at its head", async () => {
    const long = 'é'.repeat(40_000) // 80,000 bytes
    const { calls } = await run(script([call('big', {})]), { big: { description: 'Big', inputSchema: { type: 'object' }, execute: () => long } })
    const items = calls[0].contentItems as Array<{ type: string; text: string }>
    // At the head of the first text: Codex keeps a text's beginning and drops later parts.
    const note = "[14464 bytes of the tool's text were cut: a result carries at most 65536 bytes of text]\n"
    expect(items).toHaveLength(1)
    expect(items[0].text).toBe(note + 'é'.repeat(32_768))
    // Several texts: the bound is over all of them, the note on the first.
    const parts = await run(script([call('big', {})]), {
      big: { description: 'Big', inputSchema: { type: 'object' }, execute: () => ({ content: [{ type: 'text', text: 'head' }, { type: 'text', text: 'x'.repeat(70_000) }] }) },
    })
    const [first, second] = parts.calls[0].contentItems as Array<{ type: string; text: string }>
    expect(first.text).toBe("[4468 bytes of the tool's text were cut: a result carries at most 65536 bytes of text]\nhead")
    expect(second.text).toBe('x'.repeat(65_532))
  })
})

describe('the deadline and the abort', () => {
  it("past timeoutMs the signal aborts with a TimeoutError and the model is told; the turn goes on", async () => {
    let reason: unknown
    const { calls, events, terminal } = await run(script([call('slow', {})]), {
      slow: {
        description: 'Slow',
        inputSchema: { type: 'object' },
        timeoutMs: 300,
        execute: (_args, { signal }) =>
          new Promise((resolve) => signal.addEventListener('abort', () => ((reason = signal.reason), resolve('too late')))),
      },
    })
    expect(reason).toBeInstanceOf(DOMException)
    expect((reason as DOMException).name).toBe('TimeoutError')
    expect(calls[0]).toMatchObject({ success: false, output: "the app's tool slow timed out after 300 ms and was stopped" })
    expect(serverRequests(events)[0].reply).toBe('timedOut')
    expect(terminal).toMatchObject({ status: 'completed', finalMessage: 'done' })
  })

  it('an abort mid-tool aborts its signal with the turn\'s reason and ends the turn cancelled, though execute never returns', async () => {
    let signal: AbortSignal | undefined
    let turn: ReturnType<typeof runTurn> | undefined
    const cwd = tempDir()
    // After the call the model is still at work when the interrupt comes, as Codex's next model
    // request would be: the fake's answer to a cancelled call must not complete the turn first.
    const { codexPath } = writeFake({ ...scenarios.minimal(), steps: [call('hold', {}), { type: 'hang' }] }, {}, cwd)
    const entered = new Promise<void>((resolve) => {
      turn = runTurn({
        prompt: 'x',
        cwd,
        codexPath,
        tools: { hold: { description: 'Waits', inputSchema: { type: 'object' }, execute: (_a, context) => ((signal = context.signal), resolve(), new Promise(() => {})) } },
      })
    })
    const events = collect(turn!)
    await entered
    const why = new Error('user closed the pane')
    turn!.abort(why)
    const all = await events
    const terminal = all[all.length - 1]
    expect(terminal).toMatchObject({ type: 'terminal', status: 'cancelled' })
    expect(signal!.aborted).toBe(true)
    expect(signal!.reason).toBe(why)
    expect(serverRequests(all).map((e) => e.reply)).toEqual(['cancelled'])
    const [record] = fakeCodexRuns(codexPath)[0].toolCalls
    // Answered before the interrupt: the item failed with the cancellation's text.
    expect(record.reply?.result).toMatchObject({ success: false })
  })
})

describe('sub-agents and conversations', () => {
  it("a forked sub-agent's call reaches execute with context.agent", async () => {
    const contexts: ToolContext[] = []
    const steps: FakeStep[] = [{ type: 'agent', threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID, steps: [call('look', { q: 'x' }, 'child_call')] }]
    const { calls } = await run(script(steps), {
      look: { description: 'Look', inputSchema: { type: 'object' }, execute: (_a, context) => (contexts.push(context), 'seen') },
    })
    expect(contexts).toHaveLength(1)
    expect(contexts[0]).toMatchObject({ threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID, callId: 'child_call', agent: { threadId: SUB_THREAD_ID, depth: 1 } })
    expect(calls[0]).toMatchObject({ threadId: SUB_THREAD_ID, output: 'seen' })
  })

  it("a conversation's second send and its fork keep the tools", async () => {
    const FORK_ID = '01a22f3f-eeee-7000-8000-000000000005'
    const cwd = tempDir()
    const { codexPath } = writeFake(script([call('note', { n: 1 })], { calls: { 'thread/fork': { result: { thread: { id: FORK_ID } } } } }), {}, cwd)
    const threads: string[] = []
    const conversation = openConversation({
      cwd,
      codexPath,
      tools: { note: { description: 'Note', inputSchema: { type: 'object' }, execute: (_a, { threadId }) => (threads.push(threadId), 'noted') } },
    })
    opened.push(conversation)
    expect(await conversation.send('one').outcome).toMatchObject({ status: 'completed' })
    expect(await conversation.send('two').outcome).toMatchObject({ status: 'completed' })
    const fork = await conversation.fork()
    opened.push(fork)
    expect(await fork.send('three').outcome).toMatchObject({ status: 'completed', threadId: FORK_ID })
    expect(threads).toEqual([THREAD_ID, THREAD_ID, FORK_ID])
    const outputs = fakeCodexRuns(codexPath).flatMap((r) => r.toolCalls.map((c) => c.output))
    expect(outputs).toEqual(['noted', 'noted', 'noted'])
  })
})

describe('definitions are checked up front', () => {
  const good = { description: 'd', inputSchema: { type: 'object' }, execute: () => 'x' }
  const cases: Array<[string, Record<string, unknown>, Partial<RunTurnOptions>, RegExp]> = [
    ['a name Codex refuses', { 'a.b': good }, {}, /^options\.tools\["a\.b"\]: a tool's name must match/],
    ['a name too long', { ['y'.repeat(129)]: good }, {}, /must be at most 128 characters/],
    ["one of Codex's own tools", { exec_command: good }, {}, /^options\.tools\.exec_command: exec_command is the name of one of Codex's own tools/],
    ['no execute', { t: { description: 'd', inputSchema: { type: 'object' } } }, {}, /^options\.tools\.t\.execute must be a function$/],
    ['no description', { t: { inputSchema: { type: 'object' }, execute: () => '' } }, {}, /^options\.tools\.t\.description must be a non-empty string/],
    ['a schema that is not an object schema', { t: { ...good, inputSchema: { type: 'string' } } }, {}, /^options\.tools\.t\.inputSchema must describe an object/],
    ['a deadline out of range', { t: { ...good, timeoutMs: 0 } }, {}, /^options\.tools\.t\.timeoutMs must be an integer number of milliseconds from 1 to 2147483647$/],
    ['tools with readOnly', { t: good }, { access: 'readOnly' }, /^options\.tools cannot be used with access 'readOnly'/],
    ['tools that are not an object', [] as unknown as Record<string, unknown>, {}, /^options\.tools must be an object of tools by name/],
  ]
  for (const [what, tools, more, message] of cases) {
    it(`${what}: a TypeError naming the tool, from runTurn, prepareTurn and openConversation`, () => {
      const cwd = tempDir()
      const options = { cwd, codexPath: '/nonexistent/codex', tools: tools as Record<string, AppTool>, ...more }
      for (const start of [() => runTurn({ prompt: 'x', ...options }), () => prepareTurn(options), () => openConversation(options)]) {
        let thrown: unknown
        try {
          start()
        } catch (error) {
          thrown = error
        }
        expect(thrown).toBeInstanceOf(TypeError)
        expect((thrown as TypeError).message).toMatch(message)
      }
    })
  }

  it('runReview takes no tools', async () => {
    const { runReview } = await import('../../index.js')
    expect(() => runReview({ cwd: tempDir(), target: { type: 'uncommittedChanges' }, tools: { t: good } } as never)).toThrow(/options\.tools is not an option of runReview/)
  })
})
