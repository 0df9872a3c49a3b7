// `@rennet/codex/testing` plays app tools (Codex's dynamic tools: `thread/start.dynamicTools`, the
// server request `item/tool/call`, `dynamicToolCall` items) through a plain JSON-RPC client of
// this file, the same way against the kit's fake and against the real pinned CLI with the mock
// model: one table of cases for both wherever Codex's behaviour is the fake's to play, so that the
// fake is held to what Codex does. Then the mock's helpers, the fake's script checks, and what
// only the fake plays.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'

import type { DynamicToolSpec, FakeStep, FakeToolCall, ToolOutput } from '../../testing/index.js'
import {
  byThread,
  createGitCwd,
  fakeCodexRuns,
  functionCallOutputs,
  messageResponse,
  offeredTool,
  offeredTools,
  spawnAgentResponse,
  spawnedAgents,
  startMockModel,
  threadOf,
  toolCallResponse,
  toolCallsResponse,
  toolOutput,
  waitAgentResponse,
  writeFakeCodex,
} from '../../testing/index.js'
import type { GitCwd, MockModel, RecordedRequest, ScriptedResponse, SseEvent } from '../../testing/index.js'
import { codexUnderTest } from '../../testing/codex-home.js'
import { fakesOfThisFile } from '../support/fakes-of-a-file.js'
import { plainClientsOfThisFile } from '../support/plain-client.js'
import type { Frame, PlainClient } from '../support/plain-client.js'

const fake = fakesOfThisFile('their client')
const opened: Array<MockModel | GitCwd> = []
afterEach(async () => {
  for (const item of opened.splice(0)) 'close' in item ? await item.close() : item.cleanup()
})
// Registered last, so that it runs first (after-hooks run in reverse): the clients end before
// their fakes are checked and their mock models and homes removed.
const spawnClient = plainClientsOfThisFile()
const scratch: string[] = []
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

const LOOKUP: DynamicToolSpec = {
  type: 'function',
  name: 'lookup',
  description: 'Looks a thing up',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
}
const CRM: DynamicToolSpec = {
  type: 'namespace',
  name: 'crm',
  description: 'CRM tools',
  tools: [{ type: 'function', name: 'find_contact', description: 'Finds a contact', inputSchema: { type: 'object', properties: { name: { type: 'string' } } } }],
}
const OTHER: DynamicToolSpec = { ...LOOKUP, name: 'other', description: 'Another tool' }
/** The app tools of these tests, as the model is offered them (a function's name, a namespace's). */
const APP_TOOLS = ['crm', 'lookup', 'other']

const GATE = 'thread/start.dynamicTools requires experimentalApi capability'
const CANCELLED = 'dynamic tool call was cancelled before receiving a response'
const FORK_THREAD = '019a0000-0000-7000-8000-0000000f0a4c'
const CHILD_THREAD = '019a0000-0000-7000-8000-00000000c41d'

// ---------------------------------------------------------------------------------------------
// the two sides

/** What the model does on every turn: calls these app tools in one response (then says `done`); with `agent`, a sub-agent does. */
interface Play {
  calls: FakeToolCall[]
  agent?: { forkContext: boolean }
}

interface Setup {
  /** Starts another app-server process of the setup (the same model, homes and cwd). */
  spawn(): PlainClient
  cwd: string
  /** Every output the model was given for call `callId`, in order. */
  outputs(callId: string): ToolOutput[]
  /** The app tools thread `threadId` offers its model (as the model was last offered them). */
  offered(threadId: string): string[]
}

interface Side {
  name: string
  setup(play: Play): Promise<Setup>
}

const fakeSide: Side = {
  name: 'the fake',
  async setup(play) {
    const calls: FakeStep[] = play.calls.length ? [{ type: 'toolCalls', calls: play.calls }] : []
    const steps: FakeStep[] = play.agent
      ? [{ type: 'agent', threadId: CHILD_THREAD, forkContext: play.agent.forkContext, steps: [...calls, { type: 'message', text: 'child done' }] }, { type: 'message', text: 'done' }]
      : [...calls, { type: 'message', text: 'done' }]
    // A fork is one of the calls around turns: the script answers it.
    const codexPath = fake({ steps, calls: { 'thread/fork': { result: { thread: { id: FORK_THREAD } } } } })
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-kit-tools-')))
    scratch.push(cwd)
    const runs = () => fakeCodexRuns(codexPath)
    return {
      spawn: () => spawnClient(codexPath, { cwd }),
      cwd,
      outputs: (callId) => runs().flatMap((run) => run.toolCalls.filter((call) => call.callId === callId).map((call) => call.output)),
      offered(threadId) {
        const kept = runs().flatMap((run) => run.events.filter((e) => e.event === 'thread-tools' && e.threadId === threadId))
        const tools: Array<{ namespace: string | null; name: string }> = kept.at(-1)?.tools ?? []
        return [...new Set(tools.map((t) => t.namespace ?? t.name))].sort()
      },
    }
  },
}

/** The model's answer to a request: the calls on a new turn, `done` once it has the calls' outputs. */
const answerer =
  (play: Play) =>
  (request: RecordedRequest): SseEvent[] => {
    const last = request.body?.input?.at(-1)
    if (last?.type === 'function_call_output') return messageResponse('done')
    return toolCallsResponse(play.calls.map((c) => ({ name: c.tool, namespace: c.namespace ?? undefined, args: c.arguments, callId: c.callId })))
  }

const realSide: Side = {
  name: 'the real CLI',
  async setup(play) {
    const answer = answerer(play)
    const scenario: ScriptedResponse[] = play.agent
      ? [
          byThread(
            [
              spawnAgentResponse('Look it up.', { args: { fork_context: play.agent.forkContext } }),
              (request) => waitAgentResponse(spawnedAgents(request.body).map((agent) => agent.agent_id)),
              messageResponse('done'),
            ],
            [answer, answer],
          ),
        ]
      : Array.from({ length: 24 }, () => answer)
    const model = await startMockModel(scenario)
    opened.push(model)
    const cwd = createGitCwd()
    opened.push(cwd)
    return {
      spawn: () => spawnClient(codexUnderTest().path, { cwd: cwd.path, env: model.env }),
      cwd: cwd.path,
      outputs(callId) {
        // A thread's history repeats in every later request: each output item once.
        const seen = new Map<string, ToolOutput>()
        for (const request of model.requests) {
          for (const output of functionCallOutputs(request.body) as Array<{ id?: string; call_id: string; output: ToolOutput }>) {
            if (output.call_id === callId) seen.set(output.id ?? JSON.stringify(output), output.output)
          }
        }
        return [...seen.values()]
      },
      offered(threadId) {
        const last = model.requests.filter((r) => threadOf(r) === threadId).at(-1)
        return offeredTools(last?.body).filter((name) => APP_TOOLS.includes(name)).sort()
      },
    }
  },
}

// ---------------------------------------------------------------------------------------------
// the client's side of a turn

async function open(setup: Setup, capabilities: boolean | object = true): Promise<PlainClient> {
  const client = setup.spawn()
  if (typeof capabilities === 'boolean') await client.initialize(capabilities)
  else {
    await client.request('initialize', { clientInfo: { name: 'plain-test-client', version: '1.0.0' }, capabilities })
    client.send({ method: 'initialized' })
  }
  return client
}

/** The full-access thread a sub-agent can be spawned in (the fake ignores it). */
const FULL_ACCESS = { sandbox: 'danger-full-access', approvalPolicy: 'never' }

async function startThread(client: PlainClient, setup: Setup, dynamicTools: unknown): Promise<string> {
  const response = await client.request('thread/start', { cwd: setup.cwd, dynamicTools, ...FULL_ACCESS })
  expect(response.error, 'thread/start is accepted').toBeUndefined()
  return response.result.thread.id
}

type Answer = { result?: unknown; error?: unknown }

interface TurnResult {
  turnId: string
  /** The `item/tool/call` requests, in order. */
  requests: Frame[]
  /** The frames of the turn, from `turn/start` on. */
  frames: Frame[]
  completed: Frame
}

/**
 * A turn on `threadId`: once `calls` `item/tool/call` requests came (each before any is answered),
 * answers each with `answer(params)`; resolves once the thread's turn completed.
 */
async function playTurn(client: PlainClient, threadId: string, calls: number, answer: (params: Frame) => Answer): Promise<TurnResult> {
  const from = client.frames.length
  const started = await client.request('turn/start', { threadId, input: [{ type: 'text', text: 'go' }] })
  expect(started.error, 'turn/start is accepted').toBeUndefined()
  const turnId: string = started.result.turn.id
  const requests: Frame[] = []
  for (let i = 0; i < calls; i++) {
    requests.push(await client.waitFor((f) => f.method === 'item/tool/call' && !requests.includes(f), `item/tool/call #${i + 1}`, from))
  }
  for (const request of requests) client.answer(request.id, answer(request.params))
  const completed = await client.waitFor((f) => f.method === 'turn/completed' && f.params.threadId === threadId && f.params.turn.id === turnId, 'turn/completed', from)
  return { turnId, requests, frames: client.frames.slice(from), completed }
}

const itemFrames = (frames: Frame[], method: 'item/started' | 'item/completed', id: string) =>
  frames.filter((f) => f.method === method && f.params.item.type === 'dynamicToolCall' && f.params.item.id === id)

// ---------------------------------------------------------------------------------------------
// the answers, and what the item and the model make of each

/** A 1×1 PNG. */
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC'

interface AnswerCase {
  callId: string
  tool?: string
  namespace?: string
  answer: Answer
  item: { status: 'completed' | 'failed'; contentItems: unknown[]; success: boolean }
  model: ToolOutput
}

const text = (t: string) => ({ type: 'inputText', text: t })
const ok = (...contentItems: unknown[]): Answer => ({ result: { contentItems, success: true } })
const failedWith = (t: string) => ({ status: 'failed' as const, contentItems: [text(t)], success: false })

const ANSWERS: AnswerCase[] = [
  { callId: 'text', answer: ok(text('Sunny, 21C')), item: { status: 'completed', contentItems: [text('Sunny, 21C')], success: true }, model: 'Sunny, 21C' },
  {
    callId: 'texts',
    answer: ok(text('one'), text('two')),
    item: { status: 'completed', contentItems: [text('one'), text('two')], success: true },
    model: [
      { type: 'input_text', text: 'one' },
      { type: 'input_text', text: 'two' },
    ],
  },
  {
    callId: 'image',
    answer: ok(text('look'), { type: 'inputImage', imageUrl: PNG }),
    item: { status: 'completed', contentItems: [text('look'), { type: 'inputImage', imageUrl: PNG }], success: true },
    model: [
      { type: 'input_text', text: 'look' },
      { type: 'input_image', image_url: PNG, detail: 'high' },
    ],
  },
  {
    callId: 'unreadable_image',
    answer: ok({ type: 'inputImage', imageUrl: 'data:image/png;base64,iVBORw0KGgo=' }),
    item: { status: 'completed', contentItems: [{ type: 'inputImage', imageUrl: 'data:image/png;base64,iVBORw0KGgo=' }], success: true },
    model: [{ type: 'input_text', text: 'image content omitted because it could not be processed' }],
  },
  {
    callId: 'remote_image',
    answer: ok({ type: 'inputImage', imageUrl: 'https://example.com/a.png' }),
    item: failedWith('remote image URLs are not supported; use an inline data URL instead'),
    model: 'remote image URLs are not supported; use an inline data URL instead',
  },
  {
    callId: 'audio',
    answer: ok({ type: 'inputAudio', audioUrl: 'data:audio/wav;base64,UklGRg==' }),
    item: { status: 'completed', contentItems: [{ type: 'inputAudio', audioUrl: 'data:audio/wav;base64,UklGRg==' }], success: true },
    model: [{ type: 'input_text', text: 'audio content omitted because you do not support audio input' }],
  },
  {
    callId: 'remote_audio',
    answer: ok({ type: 'inputAudio', audioUrl: 'https://example.com/a.wav' }),
    item: failedWith('audio URLs must use an inline data URL'),
    model: 'audio URLs must use an inline data URL',
  },
  // `success` marks the item only: the model gets the text alone.
  { callId: 'refused', answer: { result: { contentItems: [text('no such contact')], success: false } }, item: failedWith('no such contact'), model: 'no such contact' },
  { callId: 'empty', answer: ok(), item: { status: 'completed', contentItems: [], success: true }, model: [] },
  // The app's own words of an error never reach the model.
  { callId: 'error', answer: { error: { code: -32000, message: 'app exploded: kaboom' } }, item: failedWith('dynamic tool request failed'), model: 'dynamic tool request failed' },
  { callId: 'no_success', answer: { result: { contentItems: [text('x')] } }, item: failedWith('dynamic tool response was invalid'), model: 'dynamic tool response was invalid' },
  { callId: 'null_result', answer: { result: null }, item: failedWith('dynamic tool response was invalid'), model: 'dynamic tool response was invalid' },
  {
    callId: 'unknown_item',
    answer: ok({ type: 'inputFile', fileUrl: 'data:text/plain;base64,eA==' }),
    item: failedWith('dynamic tool response was invalid'),
    model: 'dynamic tool response was invalid',
  },
  // Fields Codex does not know are dropped.
  {
    callId: 'extra_fields',
    answer: { result: { contentItems: [{ type: 'inputText', text: 'x', note: 1 }], success: true, more: 2 } },
    item: { status: 'completed', contentItems: [text('x')], success: true },
    model: 'x',
  },
  {
    callId: 'namespaced',
    tool: 'find_contact',
    namespace: 'crm',
    answer: ok(text('Ada Lovelace')),
    item: { status: 'completed', contentItems: [text('Ada Lovelace')], success: true },
    model: 'Ada Lovelace',
  },
]

/** Definitions and how Codex takes them (`null`: accepted; else its `-32600` message). */
const f = (name: unknown, more: object = {}) => ({ type: 'function', name, description: 'd', inputSchema: { type: 'object' }, ...more })
const ns = (name: string, tools: unknown[], more: object = {}) => ({ type: 'namespace', name, description: 'n', tools, ...more })
const legacy = (name: string, more: object = {}) => ({ name, description: 'd', inputSchema: { type: 'object' }, ...more })
const pattern = (what: string, name: string) => `dynamic tool ${what} must match ^[a-zA-Z0-9_-]+$ to match Responses API: ${name}`

const DEFINITIONS: Array<[what: string, dynamicTools: unknown, refused: string | null]> = [
  ['a function and a namespace', [LOOKUP, CRM], null],
  ['no tools', [], null],
  ['a dot in the name', [f('a.b')], pattern('name', 'a.b')],
  ['a space in the name', [f('has space')], pattern('name', 'has space')],
  ['a name that is not ASCII, as Rust escapes it', [f('wetter_\u00fc')], pattern('name', 'wetter_\\u{fc}')],
  ['quotes and a backslash, escaped', [f('a"b\'c\\d')], pattern('name', 'a\\"b\\\'c\\\\d')],
  ['a name of 128 characters', [f('y'.repeat(128))], null],
  ['a name of 129 characters', [f('y'.repeat(129))], `dynamic tool name must be at most 128 characters to match Responses API: ${'y'.repeat(129)}`],
  ['a long name with a dot: the pattern first', [f('.'.repeat(129))], pattern('name', '.'.repeat(129))],
  ['an empty name', [f('')], 'dynamic tool name must not be empty'],
  ['a blank name', [f('   ')], 'dynamic tool name must not be empty'],
  ['a leading space', [f(' lead')], 'dynamic tool name has leading/trailing whitespace:  lead'],
  ['a trailing tab, escaped', [f('trail\t')], 'dynamic tool name has leading/trailing whitespace: trail\\t'],
  ['whitespace before the pattern', [f(' a.b')], 'dynamic tool name has leading/trailing whitespace:  a.b'],
  ['a duplicate', [f('d1'), f('d1')], 'duplicate dynamic tool name: d1'],
  ['the first problem, in order', [f('d1'), f('d1'), f('a.b')], 'duplicate dynamic tool name: d1'],
  ['a duplicate before its schema', [f('d1'), f('d1', { inputSchema: null })], 'duplicate dynamic tool name: d1'],
  ['a schema before a later duplicate', [f('d1', { inputSchema: null }), f('d1')], 'dynamic tool input schema is not supported for d1: invalid type: null, expected struct JsonSchema'],
  ['a function and a namespace of the same name', [f('same'), ns('same', [f('t')])], null],
  ['a tool name in two namespaces and at the top', [f('t'), ns('n1', [f('t')]), ns('n2', [f('t')])], null],
  ['a namespace with a dot', [ns('a.b', [f('t')])], pattern('namespace', 'a.b')],
  ['an empty namespace name', [ns('', [f('t')])], 'dynamic tool namespace must not be empty'],
  ['a namespace name with a leading space', [ns(' lead', [f('t')])], 'dynamic tool namespace has leading/trailing whitespace:  lead'],
  ['a namespace of 64 characters', [ns('z'.repeat(64), [f('t')])], null],
  ['a namespace of 65 characters', [ns('z'.repeat(65), [f('t')])], `dynamic tool namespace must be at most 64 characters to match Responses API: ${'z'.repeat(65)}`],
  ['the namespace mcp', [ns('mcp', [f('t')])], 'dynamic tool namespace is reserved: mcp'],
  ['a namespace mcp__…', [ns('mcp__srv', [f('t')])], 'dynamic tool namespace is reserved: mcp__srv'],
  ['a function mcp', [f('mcp')], 'dynamic tool name is reserved: mcp'],
  ['a function mcp__…', [f('mcp__srv__x')], 'dynamic tool name is reserved: mcp__srv__x'],
  ['a namespace mcpx', [ns('mcpx', [f('t')])], null],
  ...['functions', 'multi_tool_use', 'web', 'file_search', 'browser', 'python', 'container', 'image_gen', 'computer', 'api_tool'].map(
    (name): [string, unknown, string] => [`the Responses API's namespace ${name}`, [ns(name, [f('t')])], `dynamic tool namespace collides with a reserved Responses API namespace: ${name}`],
  ),
  ['a namespace named like a Codex tool', [ns('multi_agent_v1', [f('t')])], null],
  ['a namespace without tools', [ns('nse', [])], 'dynamic tool namespace must contain at least one tool: nse'],
  ['a reserved namespace without tools: reserved first', [ns('mcp', [])], 'dynamic tool namespace is reserved: mcp'],
  ['a namespace description of 1024 characters', [ns('nsd', [f('t')], { description: 'x'.repeat(1024) })], null],
  ['a namespace description of 1025 characters', [ns('nsd', [f('t')], { description: 'x'.repeat(1025) })], 'dynamic tool namespace description must be at most 1024 characters'],
  ['a namespace description counted in characters', [ns('nsd', [f('t')], { description: '\u00fc'.repeat(600) })], null],
  ['a namespace twice', [ns('n1', [f('t')]), ns('n1', [f('u')])], 'duplicate dynamic tool namespace: n1'],
  ['a duplicate in a namespace', [ns('okns', [f('t'), f('t')])], 'duplicate dynamic tool name in namespace okns: t'],
  ["a namespace's tool with a dot", [ns('okns', [f('a.b')])], pattern('name', 'a.b')],
  ['a null schema', [f('snull', { inputSchema: null })], 'dynamic tool input schema is not supported for snull: invalid type: null, expected struct JsonSchema'],
  ['a string schema', [f('sstr', { inputSchema: 'x' })], 'dynamic tool input schema is not supported for sstr: invalid type: string "x", expected struct JsonSchema'],
  ['a number schema', [f('snum', { inputSchema: 3 })], 'dynamic tool input schema is not supported for snum: invalid type: number, expected struct JsonSchema'],
  ['an empty array schema', [f('sarr', { inputSchema: [] })], 'dynamic tool input schema is not supported for sarr: invalid length 0, expected struct JsonSchema with 15 elements'],
  ['a null property schema', [f('pi', { inputSchema: { properties: { a: null } } })], 'dynamic tool input schema is not supported for pi: invalid type: null, expected struct JsonSchema'],
  ['properties that are not a map', [f('sp', { inputSchema: { properties: [] } })], 'dynamic tool input schema is not supported for sp: invalid type: sequence, expected a map'],
  ['required that is not a list', [f('sr', { inputSchema: { required: 'x' } })], 'dynamic tool input schema is not supported for sr: invalid type: string "x", expected a sequence'],
  ['a true schema, and false', [f('strue', { inputSchema: true }), f('sfalse', { inputSchema: false })], null],
  ['an empty object schema', [f('se', { inputSchema: {} })], null],
  ["a null schema in a namespace's tool", [ns('okns', [f('tn', { inputSchema: null })])], 'dynamic tool input schema is not supported for tn: invalid type: null, expected struct JsonSchema'],
  ['a deferred top-level function', [f('lazy_tool', { deferLoading: true })], 'deferred dynamic tool must include a namespace: lazy_tool'],
  ['a deferred function in a namespace', [ns('okns', [f('lazy', { deferLoading: true })])], null],
  ['the legacy form', [legacy('leg'), legacy('leg', { namespace: 'lns' })], null],
  ['the legacy form with a bad name', [legacy('a.b')], pattern('name', 'a.b')],
  ['the legacy form with a reserved namespace', [legacy('l', { namespace: 'mcp' })], 'dynamic tool namespace is reserved: mcp'],
  ['the legacy form twice in a namespace', [legacy('l', { namespace: 'q' }), legacy('l', { namespace: 'q' })], 'duplicate dynamic tool name in namespace q: l'],
  ['the legacy form deferred without a namespace', [legacy('l', { deferLoading: true })], 'deferred dynamic tool must include a namespace: l'],
  ['both forms', [f('c1'), legacy('l1')], 'Invalid request: dynamic tools must use either canonical or legacy format consistently'],
  ['both forms, whatever else is wrong', [{ type: 'function', name: 'x' }, legacy('l1')], 'Invalid request: dynamic tools must use either canonical or legacy format consistently'],
  ['no description', [{ type: 'function', name: 'nd', inputSchema: {} }], 'Invalid request: missing field `description`'],
  ['no inputSchema', [{ type: 'function', name: 'ns1', description: 'd' }], 'Invalid request: missing field `inputSchema`'],
  ['no name', [{ type: 'function', description: 'd', inputSchema: {} }], 'Invalid request: missing field `name`'],
  ['a name that is a number', [f(5)], 'Invalid request: invalid type: integer `5`, expected a string'],
  ['a legacy entry without a description', [legacy('l1'), { name: 'x' }], 'Invalid request: missing field `description`'],
  ['a namespace without tools field', [{ type: 'namespace', name: 'nt', description: 'd' }], 'Invalid request: missing field `tools`'],
  ['a type Codex does not know', [{ type: 'other', name: 'x', description: 'd', inputSchema: {} }], 'Invalid request: unknown variant `other`, expected `function` or `namespace`'],
  ['a null type', [{ type: null, name: 'q', description: 'd', inputSchema: {} }], 'Invalid request: invalid type: null, expected variant identifier'],
  ['a namespace in a namespace', [ns('n', [ns('m', [f('t')])])], 'Invalid request: unknown variant `namespace`, expected `function`'],
  ['an entry that is not an object', [null], 'Invalid request: invalid type: null, expected struct LegacyDynamicToolSpec'],
  ['not a list', { a: 1 }, 'Invalid request: invalid type: map, expected a sequence'],
  ["a tool named like one of Codex's own (Codex drops it later, in silence)", [f('exec_command')], null],
]

const sides = [fakeSide, realSide]

describe.each(sides)('app tools: $name', (side) => {
  describe('thread/start.dynamicTools', () => {
    it('needs the experimentalApi capability, for an empty list too; null, or none, needs nothing', async () => {
      const setup = await side.setup({ calls: [] })
      for (const capabilities of [false, {}, { experimentalApi: false }]) {
        const client = await open(setup, capabilities)
        for (const dynamicTools of [[], [LOOKUP]]) {
          expect(await client.request('thread/start', { cwd: setup.cwd, dynamicTools })).toMatchObject({ error: { code: -32600, message: GATE } })
        }
        // What does not read as a list at all is refused before the capability is asked for.
        expect((await client.request('thread/start', { cwd: setup.cwd, dynamicTools: { a: 1 } })).error.message).toBe('Invalid request: invalid type: map, expected a sequence')
        expect((await client.request('thread/start', { cwd: setup.cwd, dynamicTools: null })).error).toBeUndefined()
        expect((await client.request('thread/start', { cwd: setup.cwd })).error).toBeUndefined()
        await client.close()
      }
    })

    it('checks each definition as Codex does, with its messages', async () => {
      const setup = await side.setup({ calls: [] })
      const client = await open(setup)
      const seen: Array<[string, string | null]> = []
      for (const [what, dynamicTools] of DEFINITIONS) {
        const response = await client.request('thread/start', { cwd: setup.cwd, dynamicTools })
        if (response.error) expect(response.error.code, what).toBe(-32600)
        seen.push([what, response.error?.message ?? null])
      }
      expect(seen).toEqual(DEFINITIONS.map(([what, , refused]) => [what, refused]))
    })
  })

  it('calls in one response: each item starts, every request goes out before any answer, and each answer completes its item as Codex reads it', async () => {
    const calls: FakeToolCall[] = ANSWERS.map((c) => ({ tool: c.tool ?? 'lookup', namespace: c.namespace, arguments: { q: c.callId }, callId: c.callId }))
    const setup = await side.setup({ calls })
    const client = await open(setup)
    const threadId = await startThread(client, setup, [LOOKUP, CRM])
    const byCall = new Map(ANSWERS.map((c) => [c.callId, c]))
    const turn = await playTurn(client, threadId, ANSWERS.length, (params) => byCall.get(params.callId)!.answer)
    expect(turn.completed.params.turn.status).toBe('completed')
    // Codex sends parallel calls in no fixed order.
    expect(turn.requests.map((r) => r.params.callId).sort()).toEqual(ANSWERS.map((c) => c.callId).sort())
    for (const c of ANSWERS) {
      const request = turn.requests.find((r) => r.params.callId === c.callId)
      const called = { namespace: c.namespace ?? null, tool: c.tool ?? 'lookup', arguments: { q: c.callId } }
      expect(request.params).toEqual({ threadId, turnId: turn.turnId, callId: c.callId, ...called })
      const [started] = itemFrames(turn.frames, 'item/started', c.callId)
      expect(started.params).toMatchObject({ threadId, turnId: turn.turnId })
      expect(started.params.item).toEqual({
        type: 'dynamicToolCall',
        id: c.callId,
        ...called,
        status: 'inProgress',
        contentItems: null,
        success: null,
        durationMs: null,
        startedAtMs: expect.any(Number),
        completedAtMs: null,
      })
      expect(turn.frames.indexOf(started), `${c.callId}: its item starts before its request`).toBeLessThan(turn.frames.indexOf(request))
      const completed = itemFrames(turn.frames, 'item/completed', c.callId)
      expect(completed, c.callId).toHaveLength(1)
      expect(completed[0].params.item, c.callId).toEqual({ ...started.params.item, ...c.item, durationMs: expect.any(Number), completedAtMs: expect.any(Number) })
      expect(setup.outputs(c.callId), `what the model got for ${c.callId}`).toEqual([c.model])
    }
    // Codex does not tell the client that a dynamic tool's request was resolved.
    expect(client.methods('serverRequest/resolved')).toEqual([])
  })

  it('a call of a tool the thread does not have: no item, no request; the model is told the call is unsupported', async () => {
    const calls: FakeToolCall[] = [
      { tool: 'nope', callId: 'u_nope' },
      { tool: 'lookup', namespace: 'crm', callId: 'u_wrong_namespace' },
      { tool: 'find_contact', callId: 'u_no_namespace' },
    ]
    const setup = await side.setup({ calls })
    const client = await open(setup)
    const threadId = await startThread(client, setup, [LOOKUP, CRM])
    const turn = await playTurn(client, threadId, 0, () => ({}))
    expect(turn.completed.params.turn.status).toBe('completed')
    expect(turn.frames.filter((f) => f.method === 'item/tool/call' || f.params?.item?.type === 'dynamicToolCall')).toEqual([])
    expect(setup.outputs('u_nope')).toEqual(['unsupported call: nope'])
    // Codex names a namespace's tool with the namespace glued on.
    expect(setup.outputs('u_wrong_namespace')).toEqual(['unsupported call: crmlookup'])
    expect(setup.outputs('u_no_namespace')).toEqual(['unsupported call: find_contact'])
  })

  it('turn/interrupt while a call waits: its item fails, then the interrupt is answered, then the turn ends interrupted; a late answer is ignored', async () => {
    const setup = await side.setup({ calls: [{ tool: 'lookup', arguments: { q: 'slow' }, callId: 'slow' }] })
    const client = await open(setup)
    const threadId = await startThread(client, setup, [LOOKUP])
    const from = client.frames.length
    const started = await client.request('turn/start', { threadId, input: [{ type: 'text', text: 'go' }] })
    const turnId = started.result.turn.id
    const request = await client.waitFor((f) => f.method === 'item/tool/call', 'item/tool/call', from)
    const interrupt = await client.request('turn/interrupt', { threadId, turnId })
    expect(interrupt.result).toEqual({})
    const ended = await client.waitFor((f) => f.method === 'turn/completed' && f.params.turn.id === turnId, 'turn/completed', from)
    expect(ended.params.turn.status).toBe('interrupted')
    const [failed] = itemFrames(client.frames, 'item/completed', 'slow')
    expect(failed.params.item).toMatchObject({ status: 'failed', contentItems: [], success: false, durationMs: expect.any(Number) })
    const order = [failed, interrupt, ended].map((frame) => client.frames.indexOf(frame))
    expect(order).toEqual([...order].sort((a, b) => a - b))

    // The late answer, and a request behind it: by its response, the answer was read.
    client.answer(request.id, ok(text('late')))
    await client.request('turn/interrupt', { threadId, turnId })
    expect(itemFrames(client.frames, 'item/completed', 'slow')).toHaveLength(1)

    // The thread goes on (here in another process); the model is told the call was cancelled.
    await client.close()
    const again = await open(setup)
    expect((await again.request('thread/resume', { threadId, cwd: setup.cwd })).error).toBeUndefined()
    const next = await playTurn(again, threadId, 1, () => ok(text('second')))
    expect(next.completed.params.turn.status).toBe('completed')
    expect(setup.outputs('slow')).toEqual([CANCELLED, 'second'])
  })

  it('the tools belong to the thread: a resume (without the capability) and a fork keep them, whatever they send', async () => {
    const setup = await side.setup({ calls: [{ tool: 'lookup', arguments: { q: 'x' }, callId: 'w1' }, { tool: 'other', callId: 'o1' }] })
    const first = await open(setup)
    const threadId = await startThread(first, setup, [LOOKUP])
    await playTurn(first, threadId, 1, () => ok(text('first')))
    expect(setup.offered(threadId)).toEqual(['lookup'])
    await first.close()

    const second = await open(setup, false)
    const resumed = await second.request('thread/resume', { threadId, cwd: setup.cwd, dynamicTools: [OTHER] })
    expect(resumed.error).toBeUndefined()
    const again = await playTurn(second, threadId, 1, () => ok(text('second')))
    expect(again.requests[0].params).toMatchObject({ threadId, callId: 'w1', tool: 'lookup' })
    expect(setup.offered(threadId)).toEqual(['lookup'])
    const fork = await second.request('thread/fork', { threadId, dynamicTools: [OTHER] })
    const forkId: string = fork.result.thread.id
    expect(forkId).not.toBe(threadId)
    await second.close()

    const third = await open(setup, false)
    expect((await third.request('thread/resume', { threadId: forkId, cwd: setup.cwd })).error).toBeUndefined()
    const forked = await playTurn(third, forkId, 1, () => ok(text('third')))
    expect(forked.requests[0].params).toMatchObject({ threadId: forkId, turnId: forked.turnId, callId: 'w1', tool: 'lookup' })
    expect(setup.offered(forkId)).toEqual(['lookup'])
    expect(setup.outputs('w1')).toEqual(expect.arrayContaining(['first', 'second', 'third']))
    expect(setup.outputs('o1')).toEqual(expect.arrayContaining(['unsupported call: other']))
  })

  it("a sub-agent given the thread's context calls the app's tool on its own thread and turn", async () => {
    const setup = await side.setup({ calls: [{ tool: 'lookup', arguments: { q: 'child' }, callId: 'child_call' }], agent: { forkContext: true } })
    const client = await open(setup)
    const threadId = await startThread(client, setup, [LOOKUP])
    const turn = await playTurn(client, threadId, 1, () => ok(text('child answer')))
    expect(turn.completed.params.turn.status).toBe('completed')
    const [request] = turn.requests
    const child: string = request.params.threadId
    expect(child).not.toBe(threadId)
    const childTurn = turn.frames.find((f) => f.method === 'turn/started' && f.params.threadId === child)
    expect(request.params).toEqual({ threadId: child, turnId: childTurn.params.turn.id, callId: 'child_call', namespace: null, tool: 'lookup', arguments: { q: 'child' } })
    for (const method of ['item/started', 'item/completed'] as const) {
      expect(itemFrames(turn.frames, method, 'child_call').map((f) => [f.params.threadId, f.params.turnId])).toEqual([[child, request.params.turnId]])
    }
    expect(setup.offered(child)).toEqual(['lookup'])
    expect(setup.outputs('child_call')).toEqual(['child answer'])
  })

  it('a sub-agent without that context has no app tools: its call is unsupported and the app is asked nothing', async () => {
    const setup = await side.setup({ calls: [{ tool: 'lookup', arguments: { q: 'child' }, callId: 'child_call' }], agent: { forkContext: false } })
    const client = await open(setup)
    const threadId = await startThread(client, setup, [LOOKUP])
    const turn = await playTurn(client, threadId, 0, () => ({}))
    expect(turn.completed.params.turn.status).toBe('completed')
    expect(client.methods('item/tool/call')).toEqual([])
    expect(setup.outputs('child_call')).toEqual(['unsupported call: lookup'])
  })
})

// ---------------------------------------------------------------------------------------------

describe('the mock model: app tool helpers', () => {
  it('toolCallResponse and toolCallsResponse: the function calls of one response, namespaced where asked', () => {
    const one = toolCallResponse('find_contact', { name: 'Ada' }, { namespace: 'crm', callId: 'c1' })
    const done = (events: Frame[]) => events.filter((e) => e.type === 'response.output_item.done').map((e) => [e.output_index, e.item])
    expect(done(one)).toEqual([[0, { type: 'function_call', id: 'fc_c1', call_id: 'c1', name: 'find_contact', namespace: 'crm', arguments: '{"name":"Ada"}', status: 'completed' }]])
    const two = toolCallsResponse([{ name: 'lookup', args: { q: 'a' }, callId: 'c1' }, { name: 'lookup', callId: 'c2' }])
    expect(done(two)).toEqual([
      [0, { type: 'function_call', id: 'fc_c1', call_id: 'c1', name: 'lookup', arguments: '{"q":"a"}', status: 'completed' }],
      [1, { type: 'function_call', id: 'fc_c2', call_id: 'c2', name: 'lookup', arguments: '{}', status: 'completed' }],
    ])
    expect([two[0].type, two.at(-1)!.type]).toEqual(['response.created', 'response.completed'])
    expect(() => toolCallsResponse([])).toThrow(TypeError)
  })

  it('toolOutput and offeredTool read a recorded request', () => {
    const body = {
      tools: [
        { type: 'function', name: 'exec_command', parameters: {} },
        { type: 'function', name: 'lookup', description: 'Looks', strict: false, parameters: { type: 'object' } },
        { type: 'namespace', name: 'crm', description: 'CRM', tools: [{ type: 'function', name: 'find_contact', description: 'Finds', strict: false, parameters: {} }] },
      ],
      input: [
        { type: 'function_call_output', call_id: 'a', output: 'Sunny' },
        { type: 'function_call_output', call_id: 'b', output: [{ type: 'input_text', text: 'look' }] },
      ],
    }
    expect(toolOutput(body, 'a')).toBe('Sunny')
    expect(toolOutput(body, 'b')).toEqual([{ type: 'input_text', text: 'look' }])
    expect(toolOutput(body, 'c')).toBeUndefined()
    expect(offeredTool(body, 'lookup')).toMatchObject({ description: 'Looks', parameters: { type: 'object' } })
    expect(offeredTool(body, 'find_contact')).toBeUndefined()
    expect(offeredTool(body, 'find_contact', { namespace: 'crm' })).toMatchObject({ name: 'find_contact' })
    expect(offeredTool(body, 'lookup', { namespace: 'crm' })).toBeUndefined()
    expect(offeredTool({}, 'lookup')).toBeUndefined()
  })
})

describe('the fake: app tool steps', () => {
  it('refuses a tool step or field it cannot play, naming it', () => {
    const wrong: Array<[unknown, RegExp]> = [
      [{ steps: [{ type: 'toolCall' }] }, /script\.steps\[0\]\.tool must be a string/],
      [{ steps: [{ type: 'toolCall', tool: '' }] }, /script\.steps\[0\]\.tool must be a non-empty string/],
      [{ steps: [{ type: 'toolCall', tool: 'a', namespace: 3 }] }, /script\.steps\[0\]\.namespace must be a string or null/],
      [{ steps: [{ type: 'toolCall', tool: 'a', callId: '' }] }, /script\.steps\[0\]\.callId must be a non-empty string/],
      [{ steps: [{ type: 'toolCalls', calls: [] }] }, /script\.steps\[0\]\.calls must name at least one call/],
      [{ steps: [{ type: 'toolCalls', calls: [{ tool: 'a' }, 'b'] }] }, /script\.steps\[0\]\.calls\[1\] must be an object/],
      [{ steps: [{ type: 'agent', threadId: 't', steps: [], forkContext: 'yes' }] }, /script\.steps\[0\]\.forkContext must be a boolean/],
      [{ threadTools: [] }, /script\.threadTools must be an object/],
      [{ threadTools: { t: [f('a.b')] } }, /script\.threadTools\["t"\] is not a list Codex takes: dynamic tool name must match/],
    ]
    for (const [script, message] of wrong) expect(() => writeFakeCodex(script as never)).toThrow(message)
  })

  it("threadTools: a thread started in an earlier session keeps its tools on resume; a thread this fake started, its own", async () => {
    const codexPath = fake({
      threadTools: { 'earlier-thread': [CRM] },
      steps: [{ type: 'toolCalls', calls: [{ tool: 'find_contact', namespace: 'crm', callId: 'c' }, { tool: 'lookup', callId: 'l' }] }],
    })
    const client = spawnClient(codexPath)
    await client.initialize(false)
    expect((await client.request('thread/resume', { threadId: 'earlier-thread' })).error).toBeUndefined()
    const turn = await playTurn(client, 'earlier-thread', 1, () => ok(text('found')))
    expect(turn.requests[0].params).toMatchObject({ namespace: 'crm', tool: 'find_contact' })
    const [run] = fakeCodexRuns(codexPath)
    expect(run.toolCalls.map((c) => [c.callId, c.status, c.output])).toEqual([
      ['l', 'unsupported', 'unsupported call: lookup'],
      ['c', 'completed', 'found'],
    ])
    expect(run.toolCalls[1]).toMatchObject({ threadId: 'earlier-thread', turnId: turn.turnId, requestId: turn.requests[0].id, reply: { id: turn.requests[0].id, result: { contentItems: [text('found')], success: true } } })
    expect(run.events.filter((e) => e.event === 'thread-tools')).toEqual([
      expect.objectContaining({ threadId: 'earlier-thread', from: 'stored', tools: [{ namespace: 'crm', name: 'find_contact' }] }),
    ])
  })

  it("a detached sub-agent's call still waits for its answer after the parent's turn completed", async () => {
    const codexPath = fake({
      steps: [
        { type: 'agent', threadId: CHILD_THREAD, detach: true, steps: [{ type: 'toolCall', tool: 'lookup', callId: 'late_child' }, { type: 'message', text: 'child done' }] },
        { type: 'message', text: 'parent done' },
      ],
    })
    const client = spawnClient(codexPath)
    await client.initialize(true)
    const threadId = (await client.request('thread/start', { dynamicTools: [LOOKUP] })).result.thread.id
    await client.request('turn/start', { threadId, input: [] })
    const request = await client.waitFor((f) => f.method === 'item/tool/call', 'the child’s call')
    await client.waitFor((f) => f.method === 'turn/completed' && f.params.threadId === threadId, "the parent's turn/completed")
    client.answer(request.id, ok(text('answered late')))
    const childEnd = await client.waitFor((f) => f.method === 'turn/completed' && f.params.threadId === CHILD_THREAD, "the child's turn/completed")
    expect(childEnd.params.turn.status).toBe('completed')
    expect(itemFrames(client.frames, 'item/completed', 'late_child')[0].params.item).toMatchObject({ status: 'completed', contentItems: [text('answered late')] })
  })
})
