// Helpers for the hermetic suite: turns against the test kit's fake app-server
// (`writeFakeCodex` of testing/, the one fake of the package) playing one of the scenarios
// below, and readers of what it saw.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runTurn } from '../../index.js'
import type { HarnessEvent, RunTurnOptions, TerminalEvent, Turn } from '../../index.js'
import { fakeCodexRuns, writeFakeCodex } from '../../testing/index.js'
import type { FakeCodexRun, FakeCodexScript, FakeStep } from '../../testing/index.js'
import { BOUND_MS, eventually, killIfAlive, leftByFake as leftBy } from './procs.js'


// Ids the scenarios use.
export const THREAD_ID = '01a22f3f-395c-74e0-a930-8f8e7ca0b3f0'
export const TURN_ID = '01a22f3f-3972-7112-84af-6b666e22412b'
export const OTHER_THREAD_ID = '01a22f3f-aaaa-7000-8000-000000000001'
export const OTHER_TURN_ID = '01a22f3f-bbbb-7000-8000-000000000002'
export const SUB_THREAD_ID = '01a22f3f-cccc-7000-8000-000000000003'
export const SUB_TURN_ID = '01a22f3f-dddd-7000-8000-000000000004'

export const PROMPT = 'Say hello.'

// ---------------------------------------------------------------------------------------------
// scenarios

/**
 * What every scenario shares: the ids above; the environment the tests probe (the addon's
 * per-turn process-tree marker, and two variables to check that `env` is merged over the
 * inherited environment); MCP servers and features for the read-only isolation to handle,
 * listed a page at a time.
 */
const BASE: FakeCodexScript = {
  threadId: THREAD_ID,
  turnId: TURN_ID,
  logEnv: ['RENNET_CODEX_TREE', 'RENNET_FAKE_INHERITED', 'RENNET_FAKE_OVERRIDDEN'],
  mcpServers: { ambient_srv: { config: { command: 'true', enabled: true } }, 'proj.srv': { config: { url: 'http://127.0.0.1:1/mcp' } } },
  features: { shell_tool: true },
  pageSize: 2,
}

/** Most scenarios leave out the frames around the turn that only become `native` events, so that their event lists stay short. */
const LEAN_OMIT: FakeCodexScript['omit'] = ['threadStarted', 'status', 'userMessage']
const lean = (steps: FakeStep[], more: FakeCodexScript = {}): FakeCodexScript => ({ ...BASE, omit: LEAN_OMIT, steps, ...more })

type MessageStep = Extract<FakeStep, { type: 'message' }>
/** Agent message `msg_1`; a step with the id of an open one goes on with it. */
const message = (text: string | string[], more: Partial<MessageStep> = {}): MessageStep => ({ type: 'message', id: 'msg_1', text, ...more })
const halves = (text: string) => [text.slice(0, Math.ceil(text.length / 2)), text.slice(Math.ceil(text.length / 2))]
const TOO_LATE = message(['too ', 'late'])
const RETRY: FakeStep = {
  type: 'retry',
  message: 'Reconnecting... 1/2',
  additionalDetails: 'stream disconnected before completion: stream closed before response.completed',
}

export type FaultAction = NonNullable<FakeCodexScript['fault']>['action']
export type FaultPhase = NonNullable<FakeCodexScript['fault']>['phase']

/** The server requests of `server-requests`, in the order (and with the ids from 0) it sends them. */
const SERVER_REQUESTS: Array<[method: string, params: Record<string, unknown>, unscoped?: boolean]> = [
  ['item/commandExecution/requestApproval', { itemId: 'call_1', startedAtMs: 1, environmentId: 'local', command: "/bin/bash -lc 'touch x'", cwd: tmpdir(), commandActions: [{ type: 'unknown', command: 'touch x' }], availableDecisions: ['accept', 'cancel'] }],
  ['item/fileChange/requestApproval', { itemId: 'call_2', startedAtMs: 1, reason: null, grantRoot: null }],
  ['item/permissions/requestApproval', { itemId: 'call_3', environmentId: 'local', startedAtMs: 1, cwd: tmpdir(), reason: 'need write', permissions: { network: { enabled: true }, fileSystem: { read: null, write: ['/tmp'], entries: [] } } }],
  ['execCommandApproval', { conversationId: THREAD_ID, callId: 'call_4', command: ['touch', 'x'], cwd: tmpdir(), reason: null, parsedCmd: [] }, true],
  ['applyPatchApproval', { conversationId: THREAD_ID, callId: 'call_5', fileChanges: { '/tmp/x': { type: 'add', content: 'x\n' } }, reason: null, grantRoot: null }, true],
  ['mcpServer/elicitation/request', { serverName: 'stdio_srv', environmentId: null, mode: 'form', _meta: null, message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }],
  ['item/tool/call', { callId: 'call_7', namespace: null, tool: 'lookup_ticket', arguments: { id: 'ABC-123' } }],
  ['account/chatgptAuthTokens/refresh', { reason: 'unauthorized', previousAccountId: null }, true],
  ['attestation/generate', {}, true],
  ['item/tool/requestUserInput', { itemId: 'call_10', questions: [{ id: 'color', header: 'Color', question: 'Pick a color?', isOther: true, isSecret: false, options: [{ label: 'Red', description: 'warm' }] }], isBlocking: true, autoResolutionMs: null }],
  ['fake/futureRequest', { something: 1 }],
]

/** A delta notification whose text is not UTF-8. */
const INVALID_UTF8 = Buffer.concat([
  Buffer.from(`{"method":"item/agentMessage/delta","params":{"threadId":"${THREAD_ID}","turnId":"${TURN_ID}","itemId":"msg_1","delta":"`),
  Buffer.from([0xff, 0xfe, 0xc3]),
  Buffer.from('"},"emittedAtMs":1}'),
]).toString('base64')

/** Named turns of the fake; those with parameters take them (defaults as in the name). */
export const scenarios = {
  /** turn/start acknowledged, turn/started, one agent message of two deltas, turn/completed. */
  minimal: (text = 'Hello world') => lean([message(halves(text))]),
  /** `minimal` (as "Hello world") with `action` at `phase`. */
  fault: (action: FaultAction, phase: FaultPhase) => lean([message(['Hello ', 'world'])], { fault: { phase, action } }),
  /** Every step `ms` apart (thread/start and turn/start answered late too), so that a test can act between two of them. */
  paced: (ms = 200) =>
    lean(
      [message([], { open: true }), ...['one ', 'two ', 'three'].flatMap((d): FakeStep[] => [{ type: 'delay', ms }, message(d, { open: true })]), { type: 'delay', ms }, message([])],
      { answer: { 'thread/start': { delayMs: ms }, 'turn/start': { delayMs: ms } } },
    ),
  /** A 100 MB line mid-stream (beyond any frame limit). */
  'huge-line': () => lean([{ type: 'hugeLine', megabytes: 100 }, TOO_LATE]),
  /** turn/completed as the last bytes, without a newline, then exit. */
  'unterminated-last-line': () => lean([message(['no ', 'newline']), { type: 'turnCompleted', newline: false }, { type: 'exit', code: 0 }]),
  /** Half of a frame, no newline, then exit. */
  'cut-last-line': () =>
    lean([message(['cut ', 'short']), { type: 'raw', text: `{"method":"turn/completed","params":{"threadId":"${THREAD_ID}","tu`, newline: false }, { type: 'exit', code: 0 }]),
  /** JSON that is not an object mid-stream. */
  'non-object': (json = '"just a string"') => lean([{ type: 'raw', text: json }, TOO_LATE]),
  /** A JSON-RPC batch (the stdio wire has none) holding the rest of the turn. */
  batch: () => lean([{ type: 'batch', steps: [message('batched'), { type: 'turnCompleted' }] }]),
  /** Every response to the client sent twice. */
  'duplicate-responses': () => lean([message(['said ', 'twice'])], { answer: { initialize: 'twice', 'thread/start': 'twice', 'turn/start': 'twice' } }),
  'turn-start-error': () =>
    lean([], { answer: { 'turn/start': { error: { code: -32603, message: 'turn/start failed: model "gpt-nope" does not exist', data: { model: 'gpt-nope' } } } } }),
  /** `count` approval requests in one write; the turn completes once every one is answered (`deaf`: it stops reading its stdin first). */
  'request-burst': (count = 10_000, { deaf = false } = {}) =>
    lean([
      ...(deaf ? [{ type: 'deaf' } as const] : []),
      { type: 'serverRequest', method: 'item/commandExecution/requestApproval', count, params: { itemId: 'call_burst', startedAtMs: 1, environmentId: 'local', command: 'true', cwd: tmpdir(), commandActions: [], availableDecisions: ['accept', 'cancel'] } },
      message(`${count} answered`),
    ]),
  /** The full shape of a plain turn as 0.171.0 sends it, with the handshake's noise. */
  happy: (): FakeCodexScript => ({
    ...BASE,
    handshakeNotifications: {
      initialize: [{ method: 'remoteControl/status/changed', params: { status: 'disabled', serverName: 'fakehost', installationId: '5a83c0de-0000-4000-8000-000000000000', environmentId: null } }],
    },
    steps: [
      { type: 'reasoning', summary: [['Thinking ', 'hard'], 'Second part'], text: ['raw thought'] },
      // first model response: 150 tokens
      { type: 'usage', input: 100, cached: 20, output: 50, reasoning: 10 },
      message(['Hello ', 'world']),
      // second model response: 375 more tokens; the thread total is 525
      { type: 'usage', input: 300, cached: 100, output: 75, reasoning: 20 },
      {
        type: 'notification',
        method: 'account/rateLimits/updated',
        unscoped: true,
        params: {
          rateLimits: { limitId: 'codex', limitName: null, normalModelSlug: null, primary: null, secondary: null, credits: null, individualLimit: null, spendControlReached: null, planType: null, rateLimitReachedType: null },
        },
      },
    ],
  }),
  /** A resumed thread: the running total starts at 1000 tokens from earlier turns. */
  resume: () =>
    lean(
      [{ type: 'usage', input: 100, cached: 20, output: 50, reasoning: 10 }, message(['resumed ', 'answer']), { type: 'usage', input: 300, cached: 100, output: 75, reasoning: 20 }],
      { threadUsage: { input: 1000, cached: 180, total: 1000 } },
    ),
  /** A shell command with output deltas that fails, then the answer. */
  command: () =>
    lean([{ type: 'command', id: 'call_1', command: "/bin/bash -lc 'echo out-line; echo err-line 1>&2; exit 3'", output: ['out-line\n', 'err-line\n'], exitCode: 3 }, message('Done.')]),
  'early-turn-started': () => lean([message(['early ', 'bird'])], { earlyTurnStarted: true }),
  /** No turn/started and no item events: the final message only exists in turn/completed's items. */
  'no-turn-started': () => lean([{ type: 'turnCompleted', message: 'fallback text' }], { omit: [...LEAN_OMIT!, 'turnStarted'] }),
  /** Every kind of server request at once, as a busy server sends them; the turn goes on once all are answered. */
  'server-requests': () =>
    lean([
      ...SERVER_REQUESTS.map(([method, params, unscoped]): FakeStep => ({ type: 'serverRequest', method, params, unscoped, wait: false })),
      // A bound for the replies (a test fails on a logged `server-request-timeout`), not a pace.
      { type: 'replies', timeoutMs: BOUND_MS },
      message(['all ', 'answered']),
    ]),
  /** Frames of other threads and turns, a sub-agent's turn, an unknown response and method, amid our message. */
  foreign: () =>
    lean([
      message('mine ', { open: true }),
      { type: 'notification', method: 'item/agentMessage/delta', unscoped: true, params: { threadId: OTHER_THREAD_ID, turnId: OTHER_TURN_ID, itemId: 'msg_x', delta: 'NOT MINE (thread)' } },
      { type: 'notification', method: 'item/agentMessage/delta', params: { turnId: OTHER_TURN_ID, itemId: 'msg_1', delta: 'NOT MINE (turn)' } },
      { type: 'turnStarted', threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID },
      { type: 'turnCompleted', threadId: SUB_THREAD_ID, turnId: SUB_TURN_ID, message: 'sub answer' },
      { type: 'turnCompleted', turnId: OTHER_TURN_ID, status: 'failed', error: { message: 'not ours' } },
      { type: 'send', frame: { id: 9999, result: {} } },
      { type: 'notification', method: 'fake/unknownThing', params: { foo: 1 } },
      message('only'),
    ]),
  retry: () => lean([message(['Hel', 'lo wor'], { open: true }), RETRY, message(['Hello ', 'again'], { restart: true })]),
  /** The same, but the final text only exists as streamed deltas of the last attempt. */
  'retry-no-completed': () => lean([message(['Hel', 'lo wor'], { open: true }), RETRY, message(['Hello ', 'again'], { restart: true, open: true })]),
  'turn-failed': () =>
    lean([
      {
        type: 'fail',
        message: 'unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:18610/v1/responses',
        codexErrorInfo: { httpConnectionFailed: { httpStatusCode: 401 } },
        additionalDetails: 'more detail from the provider',
      },
    ]),
  'thread-start-error': () =>
    lean([], { answer: { 'thread/start': { error: { code: -32600, message: 'failed to load configuration: url is not supported for stdio\nin `mcp_servers.stdio_srv`\n', data: { hint: 'fake' } } } } }),
  'no-init-response': () => lean([], { answer: { initialize: 'never' } }),
  'no-turn-start-response': () => lean([], { answer: { 'turn/start': 'never' } }),
  'slow-thread-start': () => lean([], { answer: { 'thread/start': 'never' } }),
  /** The turn starts and never ends by itself. */
  hang: () => lean([{ type: 'hang' }]),
  'malformed-mid-stream': () => lean([{ type: 'raw', text: '{"method":"item/agentMessage/delta","params":' }, TOO_LATE]),
  'text-mid-stream': () => lean([{ type: 'raw', text: 'this is not json' }, TOO_LATE]),
  'invalid-utf8': () => lean([{ type: 'raw', base64: INVALID_UTF8 }, TOO_LATE]),
  /** A delta, a panic on stderr, exit code 3. */
  crash: () => lean([message('partial', { open: true }), { type: 'exit', code: 3, stderr: 'thread panicked: fake crash for the test' }]),
  /** `megabytes` of stderr while a message streams. */
  'stderr-flood': (megabytes = 20) => lean([message([], { open: true }), { type: 'stderrFlood', megabytes }, message([])]),
  /** `count` deltas ("0", "1", …) in one message, written as fast as the pipe takes them. */
  burst: (count = 20_000) => lean([{ type: 'stream', count }]),
  /** These delta notifications ([method, itemId, delta, index]) in one write, then a completed turn. */
  deltas: (list: Array<[method: string, itemId: string, delta: string, index: number]>) =>
    lean([
      {
        type: 'notifications',
        notifications: list.map(([method, itemId, delta, index]) => ({
          method,
          params: {
            itemId,
            delta,
            ...(method === 'item/reasoning/summaryTextDelta' ? { summaryIndex: index } : {}),
            ...(method === 'item/reasoning/textDelta' ? { contentIndex: index } : {}),
          },
        })),
      },
    ]),
} satisfies Record<string, (...args: any[]) => FakeCodexScript> // eslint-disable-line @typescript-eslint/no-explicit-any

export type ScenarioName = keyof typeof scenarios

/** What the isolation queries of a read-only turn report instead of a confirmed isolation. */
export const ISOLATION_NOT_CONFIRMED: Record<'serverConnected' | 'hooksOn' | 'writableSandbox', FakeCodexScript> = {
  // An ambient MCP server still runs.
  serverConnected: { mcpServers: { ...BASE.mcpServers, ambient_srv: { ...BASE.mcpServers!.ambient_srv, status: 'connected' } } },
  // A feature the client switched off is still on.
  hooksOn: { features: { ...BASE.features, hooks: true } },
  // The thread did not get the read-only sandbox.
  writableSandbox: { sandbox: 'danger-full-access' },
}

/** `count` banner lines, as a launcher might print before the server's first frame. */
export const banner = (count: number) => Array.from({ length: count }, (_, i) => `fake banner line ${i + 1} of ${count}`)

// ---------------------------------------------------------------------------------------------
// temp dirs and clean-up

const dirs: string[] = []

/** A fresh directory under the system temp dir, removed by `cleanupFakes()`. */
export function tempDir(): string {
  // realpath: the addon may canonicalise cwd, and /tmp can be a symlink on some machines.
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-fake-')))
  dirs.push(dir)
  return dir
}

const written: Array<{ scenario: string; log: FakeLog }> = []

/**
 * Waits until no process of any fake written since the last call is left, then removes the temp
 * dirs. Use as `afterEach(cleanupFakes)`: a leaked child or grandchild fails the test that made it.
 */
export async function cleanupFakes(): Promise<void> {
  const leaked: string[] = []
  const starts = written.splice(0).flatMap(({ scenario, log }) => log.starts().map((start) => ({ scenario, pid: start.pid })))
  // One bound for all of them, so that a leak is named before the hook's own timeout.
  await eventually(() => starts.every((start) => leftBy(start.pid).length === 0), BOUND_MS)
  for (const { scenario, pid: start } of starts) {
    const left = leftBy(start)
    if (left.length === 0) continue
    leaked.push(`${scenario}: group ${start} still has ${left.join(',')}`)
    for (const pid of left) killIfAlive(pid)
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
  if (leaked.length) throw new Error(`processes outlived their turn:\n${leaked.join('\n')}`)
}

/**
 * Writes the fake playing `scenario` (a name, or a script of its own) with `fake` over its
 * script, into `dir` (default: a fresh temp dir); `cleanupFakes()` checks what it started.
 */
export function writeFake(scenario: ScenarioName | FakeCodexScript = 'minimal', fake: FakeCodexScript = {}, dir = tempDir()): { codexPath: string; log: FakeLog } {
  const script = typeof scenario === 'string' ? (scenarios[scenario] as () => FakeCodexScript)() : scenario
  const codexPath = writeFakeCodex({ ...script, ...fake }, { dir })
  const log = new FakeLog(codexPath)
  written.push({ scenario: typeof scenario === 'string' ? scenario : 'a script', log })
  return { codexPath, log }
}

/** A `minimal` fake in `dir`, for a turn whose fake's log is not read. */
export const fakeCodexPath = (dir: string): string => writeFake('minimal', {}, dir).codexPath

// ---------------------------------------------------------------------------------------------
// the fake's log

export interface StartEntry {
  pid: number
  /** What a `started` event names (see FakeCodexRun). */
  launcherPid: number
  pgid: number | null
  argv: string[]
  cwd: string
  /** Two environment variables as the fake saw them (see BASE). */
  probe: { inherited: string | null; overridden: string | null }
  /** The addon's per-turn process-tree marker in the fake's environment (see process.rs). */
  marker: string | null
}

// Loose JSON shapes of wire messages.
export type Json = any // eslint-disable-line @typescript-eslint/no-explicit-any

/** What the processes of one fake were given, received and did (`fakeCodexRuns`), all runs together. */
export class FakeLog {
  constructor(readonly codexPath: string) {}

  /** Every process started from the fake; none once `cleanupFakes()` removed it. */
  runs(): FakeCodexRun[] {
    try {
      return fakeCodexRuns(this.codexPath)
    } catch {
      return []
    }
  }

  /** App-server processes (a `mcp list` inventory would not count). */
  starts(): StartEntry[] {
    return this.runs()
      .filter((r) => r.argv[0] === 'app-server')
      .map((r) => ({
        pid: r.pid,
        launcherPid: r.launcherPid,
        pgid: r.pgid,
        argv: r.argv,
        cwd: r.cwd,
        marker: r.env.RENNET_CODEX_TREE ?? null,
        probe: { inherited: r.env.RENNET_FAKE_INHERITED ?? null, overridden: r.env.RENNET_FAKE_OVERRIDDEN ?? null },
      }))
  }

  /** The one app-server start; fails if there was not exactly one. */
  start(): StartEntry {
    const s = this.starts()
    if (s.length !== 1) throw new Error(`expected one app-server start in the fake log, got ${s.length}`)
    return s[0]
  }

  /** Every parsed message the client wrote, in order. */
  received(): Json[] {
    return this.runs().flatMap((r) => r.received)
  }

  /** Lines the client wrote that were not JSON. */
  receivedBad(): string[] {
    return this.runs().flatMap((r) => r.unparsed)
  }

  /** Client requests and notifications (method names), in order. */
  methods(): string[] {
    return this.received()
      .filter((m) => typeof m.method === 'string')
      .map((m) => m.method)
  }

  /** Client requests or notifications with this method. */
  requests(method: string): Json[] {
    return this.received().filter((m) => m.method === method)
  }

  /** The single client request with this method. */
  request(method: string): Json {
    const r = this.requests(method)
    if (r.length !== 1) throw new Error(`expected one ${method} from the client, got ${r.length}`)
    return r[0]
  }

  /** Client responses to server requests (messages without a method). */
  replies(): Json[] {
    return this.received().filter((m) => !('method' in m))
  }

  /** Every frame the fake wrote as a frame (raw lines and bursts are only noted). */
  sent(): Json[] {
    return this.runs().flatMap((r) => r.sent)
  }

  /** Frames the fake sent with this method (notifications or server requests). */
  sentMethod(method: string): Json[] {
    return this.sent().filter((f) => f.method === method)
  }

  /** The response the fake sent to the client's request with this id. */
  sentResponse(id: number | string): Json {
    return this.sent().find((f) => f.id === id && !('method' in f))
  }

  /** What the fake noted besides messages: `stdin-closed`, `sigterm`, `grandchild` {pid, mode}, `fault`, `exit` … */
  events(name: string): Json[] {
    return this.runs()
      .flatMap((r) => r.events)
      .filter((e) => e.event === name)
  }
}

// ---------------------------------------------------------------------------------------------
// running turns

export interface FakeOptions extends Partial<RunTurnOptions> {
  /** Script fields over the scenario's (process tricks, interrupt, preamble, isolation reports …). */
  fake?: FakeCodexScript
}

export interface FakeRun {
  scenario: string
  turn: Turn
  log: FakeLog
  cwd: string
  options: RunTurnOptions
}

/** Starts a turn against the fake playing `scenario` (a name, or a scenario's script). */
export function fakeTurn(scenario: ScenarioName | FakeCodexScript, extra: FakeOptions = {}): FakeRun {
  const { fake = {}, ...rest } = extra
  const dir = tempDir()
  const { codexPath, log } = writeFake(scenario, fake, dir)
  const options: RunTurnOptions = { prompt: PROMPT, cwd: dir, codexPath, ...rest }
  const turn = runTurn(options)
  return { scenario: typeof scenario === 'string' ? scenario : 'a script', turn, log, cwd: options.cwd, options }
}

/** Every event of the turn, in order; `onEvent` may act on the turn (abort, break…). */
export async function collect(
  turn: Turn,
  onEvent?: (event: HarnessEvent, index: number) => void | 'break',
): Promise<HarnessEvent[]> {
  const events: HarnessEvent[] = []
  for await (const event of turn) {
    events.push(event)
    if (onEvent?.(event, events.length - 1) === 'break') break
  }
  return events
}

/** Runs a whole turn: events, terminal, and the fake's log. */
export async function fakeRun(scenario: ScenarioName | FakeCodexScript, extra: FakeOptions = {}) {
  const run = fakeTurn(scenario, extra)
  const events = await collect(run.turn)
  const terminal = events[events.length - 1] as TerminalEvent
  return { ...run, events, terminal }
}

/**
 * The last two events of a turn the server completed: `turnCompleted` (the outcome as soon as
 * Codex reports it), then the same outcome as the `terminal`, once the child is gone.
 */
export const completedThen = (terminal: object) => [{ ...terminal, type: 'turnCompleted' }, terminal]

/** A terminal event: completed, in the scenarios' thread and turn, with nothing more to report, but for `fields`. */
export const terminalOf = (fields: Record<string, unknown> = {}) => ({
  type: 'terminal',
  status: 'completed',
  threadId: THREAD_ID,
  turnId: TURN_ID,
  finalMessage: null,
  proposedPlan: null,
  usage: null,
  failure: null,
  agents: [],
  // The turn's usage and its agents' together: with no agents, the turn's.
  totalUsage: fields.usage ?? null,
  cutOff: [],
  ...fields,
})

/** Types of the events, for order assertions. */
export const types = (events: HarnessEvent[]) => events.map((e) => e.type)

/** The types of the events of the fake's answer, to the end: its message in two deltas, the turn's completion, the terminal. */
export const ANSWER_TYPES = ['itemStarted', 'messageDelta', 'messageDelta', 'itemCompleted', 'turnCompleted', 'terminal']

/** Events without stderr diagnostics (their timing against stdout is not defined). */
export const withoutStderr = (events: HarnessEvent[]) =>
  events.filter((e) => !(e.type === 'diagnostic' && e.source === 'stderr'))

/** Checks the rules every turn obeys: exactly one terminal event, and it is the last one. */
export function assertOneTerminalLast(events: HarnessEvent[]): TerminalEvent {
  const terminals = events.filter((e) => e.type === 'terminal')
  if (terminals.length !== 1) throw new Error(`expected exactly one terminal event, got ${terminals.length}`)
  const last = events[events.length - 1]
  if (last.type !== 'terminal') throw new Error(`the last event is ${last.type}, not terminal`)
  return last
}

/** Resolves with `p`, or rejects after `ms` (so a hanging outcome fails fast, with a reason). */
export function within<T>(p: Promise<T>, ms: number, what = 'promise'): Promise<T> {
  return new Promise<T>((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms)
    p.then(
      (v) => {
        clearTimeout(timer)
        resolvePromise(v)
      },
      (e) => {
        clearTimeout(timer)
        reject(e)
      },
    )
  })
}

/** The `native` event the addon should make of a notification the fake sent. */
export const nativeOf = (frame: Json) => ({ type: 'native', method: frame.method, params: frame.params })

/** Usage as the addon reports it, from a wire token-usage breakdown. */
export const usageOf = (b: Json) => ({
  input: b.inputTokens,
  cacheRead: b.cachedInputTokens,
  output: b.outputTokens,
  reasoning: b.reasoningOutputTokens,
  total: b.totalTokens,
})
