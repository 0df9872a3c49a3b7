// Types for mock-responses.js (the loopback mock of the OpenAI Responses API).

export type SseEvent = Record<string, unknown>

// Not exported: `export {}` makes the file's `export`s its only exports (without it, every
// top-level declaration of a declaration file is exported, and `KIND` would compile in an app
// and be undefined at run time).
declare const KIND: unique symbol
export {}

/** A point in an SSE body where the mock calls `fn` and goes on when its promise settles. */
export interface Checkpoint {
  readonly [KIND]: 'checkpoint'
  fn: () => unknown
}

/** A fixed pause before each event, or one computed per event (`index`: events written so far). */
export type Pace = number | ((event: SseEvent, index: number) => number)

export interface SseResponse {
  readonly [KIND]: 'sse'
  events: Array<SseEvent | Checkpoint>
  delayMs: Pace
  end: 'end' | 'hang' | 'destroy'
}

export interface HttpErrorResponse {
  readonly [KIND]: 'http'
  status: number
  body: unknown
}

export interface RecordedRequest {
  /** Position among the `POST …/responses` requests (0-based); -1 for other paths. */
  index: number
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  /** Parsed JSON body (null when it did not parse). */
  body: any
  rawBody: string
  receivedAt: number
  /** The client went away before the mock finished the response (e.g. an interrupted hang). */
  clientClosed: boolean
  /** The mock finished writing the body. */
  finished: boolean
  /** Monotonic time (`monotonicMs()`) at which the request's head arrived. */
  arrivedAtMs: number
  /** Monotonic time at which the request's connection closed (null while it is open). */
  connectionClosedAtMs: number | null
  /** Every SSE event written, with the monotonic time of its write. */
  sent: Array<{ type: unknown; atMs: number }>
  /** Set when a `byThread` entry answered it: its `thread-id`, that thread's place in `threads` and the request's place among that thread's. */
  thread?: { id: string; index: number; request: number }
}

/**
 * A script entry that answers its request and every later one from per-thread queues (`byThread`):
 * the first thread to ask takes the first queue, the next new thread the second, …
 */
export interface ThreadChooser {
  readonly [KIND]: 'byThread'
  /** The thread ids (`thread-id` headers) in the order they first asked: `threads[0]` is the user's thread, `threads[1]` its first sub-agent, … */
  readonly threads: string[]
  choose(request: RecordedRequest): ScriptedResponse | undefined
}

export type ScriptedResponse =
  | ThreadChooser
  | SseEvent[]
  | SseResponse
  | HttpErrorResponse
  | { status: number; body?: unknown }
  | ((request: RecordedRequest) => SseEvent[] | SseResponse | HttpErrorResponse | { status: number; body?: unknown })

export interface MockServer {
  /** Base URL for `model_providers.<id>.base_url`, e.g. `http://127.0.0.1:PORT/v1`. */
  url: string
  port: number
  /** Every `POST …/responses`, in arrival order. */
  requests: RecordedRequest[]
  /** Every HTTP request, any path. */
  allRequests: RecordedRequest[]
  close(): Promise<void>
  push(...responses: ScriptedResponse[]): void
}

export function start(scenario?: ScriptedResponse[], options?: { log?: (line: string) => void }): Promise<MockServer>

/** Milliseconds on the monotonic clock (process.hrtime), comparable between processes. */
export function monotonicMs(): number
export function checkpoint(fn: () => unknown): Checkpoint

export function sse(events: Array<SseEvent | Checkpoint>, options?: { delayMs?: Pace }): SseResponse
export function hang(events?: Array<SseEvent | Checkpoint>, options?: { delayMs?: Pace }): SseResponse
export function closeEarly(events?: Array<SseEvent | Checkpoint>, options?: { delayMs?: Pace; destroy?: boolean }): SseResponse
export function httpError(status: number, body?: unknown): HttpErrorResponse

export interface SseUsage {
  input_tokens: number
  input_tokens_details: { cached_tokens: number }
  output_tokens: number
  output_tokens_details: { reasoning_tokens: number }
  total_tokens: number
}

export function usage(u?: { input?: number; cached?: number; output?: number; reasoning?: number; total?: number }): SseUsage
export function created(id: string): SseEvent
export function completed(id: string, usage?: SseUsage): SseEvent

export type Deltas = string | string[]

export function reasoningItem(options?: {
  id?: string
  outputIndex?: number
  /** One entry per summary part; a string is one delta. */
  summary?: Deltas[]
  /** One entry per raw content index; a string is one delta. */
  raw?: Deltas[]
}): SseEvent[]

export function messageItem(options?: { id?: string; outputIndex?: number; deltas?: Deltas }): SseEvent[]

export function execCommandItem(options: {
  cmd: string
  callId?: string
  outputIndex?: number
  yieldTimeMs?: number
  args?: Record<string, unknown>
}): SseEvent[]

export function mcpToolCallItem(options: {
  /** `mcp__<server>` */
  namespace: string
  name: string
  args?: unknown
  callId?: string
  outputIndex?: number
}): SseEvent[]

export function response(options?: { id?: string; items?: SseEvent[][]; usage?: SseUsage }): SseEvent[]

export interface ReasoningOptions {
  summary?: Deltas[]
  raw?: Deltas[]
}

/** Without `id`/`itemId`, ids of its own (`resp_msg_<n>`, `msg_resp_msg_<n>`): two turns of a thread never share an item id. */
export function messageResponse(
  deltas: Deltas,
  options?: { id?: string; itemId?: string; usage?: SseUsage; reasoning?: ReasoningOptions },
): SseEvent[]

export function execCommandResponse(
  cmd: string,
  options?: {
    id?: string
    callId?: string
    usage?: SseUsage
    yieldTimeMs?: number
    reasoning?: ReasoningOptions
    /** More `exec_command` arguments, e.g. `{ shell: 'cmd.exe' }` (Codex's own default is the platform's shell). */
    args?: Record<string, unknown>
  },
): SseEvent[]

export function jsonMessageResponse(
  value: unknown,
  options?: { id?: string; itemId?: string; usage?: SseUsage; reasoning?: ReasoningOptions },
): SseEvent[]

/** Without `id`/`itemId`, ids of its own (`resp_hang_<n>`, `msg_resp_hang_<n>`). */
export function hangingMessage(options?: { id?: string; itemId?: string; delta?: string }): SseResponse

export function failedResponse(options?: { id?: string; code?: string; message?: string }): SseEvent[]

/**
 * What the model is given back for a call (`function_call_output.output`): one text alone is the
 * plain string; anything else an array of parts (an app tool's image as `input_image` with
 * `detail: 'high'`; what Codex could not pass on, such as an image that does not decode, as an
 * `input_text` saying so). An app tool's `success` never reaches the model.
 */
export type ToolOutput = string | Array<{ type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail?: string }>

/** The `function_call_output` input items of a recorded request body. */
export function functionCallOutputs(body: any): Array<{ type: 'function_call_output'; call_id: string; output: ToolOutput }>

/** The names of the tools a recorded request offered the model (functions and namespaces). */
export function offeredTools(body: any): string[]

/** A function the model was offered: an app tool's `inputSchema` is its `parameters`, verbatim (`strict: false`). */
export interface OfferedFunction {
  type: 'function'
  name: string
  description: string
  strict: boolean
  parameters: unknown
  [key: string]: unknown
}

/**
 * The function a recorded request offered the model as `name` (inside `namespace` when given), or
 * undefined when it was not offered: `expect(offeredTool(body, 'get_weather')).toBeUndefined()`.
 */
export function offeredTool(body: any, name: string, options?: { namespace?: string }): OfferedFunction | undefined

/**
 * What the model was given back for call `callId` in a recorded request body (`function_call_output.output`),
 * or undefined when the request carries no output of that call.
 */
export function toolOutput(body: any, callId: string): ToolOutput | undefined

/** One call of an app tool by the model (`toolCallsResponse`). */
export interface ToolCall {
  name: string
  /** Its arguments (default `{}`); a string is sent as the arguments' JSON text, as given. */
  args?: unknown
  /** The namespace of a tool defined in one. */
  namespace?: string
  /** Without it, one of its own (`call_<n>`). */
  callId?: string
}

/**
 * The model calls an app's tool (one the app gave `thread/start.dynamicTools`; for a tool in a
 * namespace, `namespace` names it). Codex sends the app `item/tool/call`, and gives the model the
 * app's answer in its next request (`toolOutput`). A tool the thread does not have is Codex's
 * `unsupported call: <namespace><name>`, and the app is asked nothing.
 */
export function toolCallResponse(name: string, args?: unknown, options?: { namespace?: string; callId?: string; id?: string; usage?: SseUsage }): SseEvent[]

/** The model calls several app tools in one response: Codex sends every `item/tool/call` at once, and asks the model again once all are answered. */
export function toolCallsResponse(calls: ToolCall[], options?: { id?: string; usage?: SseUsage }): SseEvent[]

/**
 * Answers every model request from here on from per-thread queues, told apart by the request's
 * `thread-id` header (a sub-agent's requests carry its own thread's id): the first thread to ask
 * (the user's) takes `queues[0]`, the next new thread `queues[1]`, and so on, each queue in order
 * (functions of the request included). Put it in the scenario where it takes over (usually as the
 * only entry). Beyond its queue a request gets HTTP 400 naming the thread and the request. With
 * several sub-agents the order in which they first ask is Codex's; give them the same queue
 * contents where that order is not fixed.
 */
export function byThread(...queues: ScriptedResponse[][]): ThreadChooser

/** A function call of any of Codex's tools; tools in a namespace (`multi_agent_v1`) name it. Without `callId`, one of its own. */
export function functionCallItem(options: { name: string; namespace?: string; args?: unknown; callId?: string; outputIndex?: number }): SseEvent[]

/** One response whose only output is a call of tool `name` with `args`. */
export function functionCallResponse(
  name: string,
  args?: unknown,
  options?: { namespace?: string; callId?: string; id?: string; usage?: SseUsage },
): SseEvent[]

/**
 * The model starts a sub-agent with `message` (`multi_agent_v1.spawn_agent`, offered in every
 * full-access turn of codex-cli 0.171.0). Codex answers the model `{ agent_id, nickname }`
 * (`spawnedAgents` reads it from the next request) and the child asks the model on its own thread.
 */
export function spawnAgentResponse(message: string, options?: { callId?: string; id?: string; usage?: SseUsage; args?: Record<string, unknown> }): SseEvent[]

/** The model waits for sub-agents (`multi_agent_v1.wait_agent`): `targets` are their ids, e.g. `spawnedAgents(request.body).map((a) => a.agent_id)`. */
export function waitAgentResponse(targets: string[], options?: { timeoutMs?: number; callId?: string; id?: string; usage?: SseUsage }): SseEvent[]

/** The model sets a goal (`create_goal`): while it is `active` at the end of a turn, Codex starts a continuation turn by itself. */
export function createGoalResponse(objective: string, options?: { tokenBudget?: number; callId?: string; id?: string; usage?: SseUsage }): SseEvent[]

/** The model updates the goal (`update_goal`): `complete` ends the continuations. */
export function updateGoalResponse(status: 'complete' | 'blocked' | 'paused', options?: { callId?: string; id?: string; usage?: SseUsage }): SseEvent[]

/**
 * The model asks the user (`request_user_input`). In plan mode (`mode: 'plan'`) Codex sends the
 * app `item/tool/requestUserInput` and gives the model the app's answer, verbatim, as the call's
 * output; in default mode it tells the model the tool is unavailable. An option as a string is
 * its label (and description).
 */
export function requestUserInputResponse(
  questions: Array<{ id: string; question: string; header?: string; options?: Array<string | { label: string; description: string }> }>,
  options?: { callId?: string; id?: string; usage?: SseUsage },
): SseEvent[]

/**
 * The `exec_command` text that edits files through Codex's `apply_patch` (a heredoc): `add`
 * creates files (paths relative to the command's working directory) with their text, `remove`
 * deletes files. Run it with `execCommandResponse(applyPatchCommand({ … }))`.
 */
export function applyPatchCommand(patch: { add?: Record<string, string>; remove?: string[] }): string

/** The sub-agents a request's input says the model spawned (each `spawn_agent` call's output). */
export function spawnedAgents(body: any): Array<{ agent_id: string; nickname: string | null }>

/** The thread a recorded request was made for (its `thread-id` header), or null. */
export function threadOf(request: RecordedRequest): string | null
