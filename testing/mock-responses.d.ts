// Types for mock-responses.js (the loopback mock of the OpenAI Responses API).

export type SseEvent = Record<string, unknown>

declare const KIND: unique symbol

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
}

export type ScriptedResponse =
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

export function hangingMessage(options?: { id?: string; itemId?: string; delta?: string }): SseResponse

export function failedResponse(options?: { id?: string; code?: string; message?: string }): SseEvent[]

export function functionCallOutputs(body: any): Array<{ type: 'function_call_output'; call_id: string; output: unknown }>

export function offeredTools(body: any): string[]
