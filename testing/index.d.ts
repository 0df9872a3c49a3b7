// Types of @rennet/codex/testing (the CommonJS view; index.d.mts gives the same to ESM).

import type { RecordedRequest, ScriptedResponse } from './mock-responses.js'

export {
  sse,
  hang,
  closeEarly,
  httpError,
  usage,
  created,
  completed,
  reasoningItem,
  messageItem,
  execCommandItem,
  response,
  messageResponse,
  execCommandResponse,
  jsonMessageResponse,
  failedResponse,
  functionCallOutputs,
  start as startMockResponses,
} from './mock-responses.js'
export type {
  SseEvent,
  SseResponse,
  HttpErrorResponse,
  RecordedRequest,
  ScriptedResponse,
  MockServer,
  SseUsage,
  Deltas,
  ReasoningOptions,
} from './mock-responses.js'
export { codexBinaryPath, createCodexHome, createGitCwd, isolatedEnv } from './codex-home.js'
export type { CodexHome, GitCwd } from './codex-home.js'

// ---------------------------------------------------------------------------------------------
// the scripted fake app-server

/** Deltas of a text: one string is one delta. */
export type FakeText = string | string[]

/** Server requests Codex sends (any other method name is sent as given). */
export type FakeServerRequestMethod =
  | 'item/commandExecution/requestApproval'
  | 'item/fileChange/requestApproval'
  | 'item/permissions/requestApproval'
  | 'item/tool/requestUserInput'
  | 'item/tool/call'
  | 'mcpServer/elicitation/request'
  | (string & {})

/** One step of the fake's turn, played in order after `turn/start`. */
export type FakeStep =
  /** An agent message: `itemStarted`, a `messageDelta` per delta, `itemCompleted`. The last one is the final message. */
  | { type: 'message'; text: FakeText; id?: string; phase?: 'commentary' | 'final_answer' | null }
  /** A reasoning item: each entry of `summary` is a summary part, each of `text` a raw content part. */
  | { type: 'reasoning'; summary?: FakeText[]; text?: FakeText[]; id?: string }
  /** A command with its output (`commandOutput` per chunk); a non-zero `exitCode` marks it failed. */
  | { type: 'command'; command: string; output?: FakeText; exitCode?: number; cwd?: string; id?: string }
  /** Token usage of one model response; the thread total adds up over the steps. */
  | { type: 'usage'; input?: number; cached?: number; output?: number; reasoning?: number; total?: number; contextWindow?: number | null }
  /** Codex retrying (`retrying` event), not a failure. */
  | { type: 'retry'; message?: string; codexErrorInfo?: unknown; additionalDetails?: string | null }
  /** A server request (`serverRequest` event with the runner's reply); the turn waits for the reply. */
  | { type: 'serverRequest'; method: FakeServerRequestMethod; params?: Record<string, unknown> }
  /** Any notification; `threadId`/`turnId` of the turn are added unless `unscoped`. */
  | { type: 'notification'; method: string; params?: Record<string, unknown>; unscoped?: boolean }
  /** A line on stderr (a `diagnostic` event). */
  | { type: 'stderr'; text: string }
  | { type: 'delay'; ms: number }
  /** The turn stops here and never ends by itself: abort it (see `interrupt`). */
  | { type: 'hang' }
  /** Codex fails the turn: source `turn`, code `TURN_FAILED`, `message` verbatim. */
  | { type: 'fail'; message: string; codexErrorInfo?: unknown; additionalDetails?: string | null }
  /** The process exits (default code 1): source `exit`, code `PROCESS_EXITED`, `stderr` in the tail. */
  | { type: 'exit'; code?: number; stderr?: string }
  /** A line that is not JSON on stdout: source `parse`, code `MALFORMED_FRAME`. */
  | { type: 'garbage'; line?: string }

/** A request of the handshake the script can answer differently. */
export type FakeHandshakeRequest = 'initialize' | 'thread/start' | 'thread/resume' | 'turn/start'

/** A call around turns the fake can answer (`readAccount`, `listModels`, `listThreads`, `readThread`, `forkThread`). */
export type FakeCallRequest =
  | 'account/read'
  | 'account/rateLimits/read'
  | 'model/list'
  | 'thread/list'
  | 'thread/read'
  | 'thread/fork'

/**
 * How the fake answers one call: with `result` as given; with `pages` (`model/list`, `thread/list`:
 * the request without a cursor gets the first page's entries as `data`, each `nextCursor` names
 * the next page, the last has none); with a JSON-RPC error (a `CallError` `REQUEST_FAILED`, its
 * message verbatim); never (`REQUEST_TIMEOUT` after `requestTimeoutMs`); or by exiting
 * (`PROCESS_EXITED`, `stderr` in the tail).
 */
export type FakeCallAnswer =
  | 'never'
  | { result: unknown }
  | { pages: unknown[][] }
  | { error: { code?: number; message: string; data?: unknown } }
  | { exit: { code?: number; stderr?: string } }

export interface FakeCodexScript {
  /**
   * Answers to the calls around turns. A call not named here is refused as a Codex without the
   * method refuses it: JSON-RPC error -32600 `Invalid request: unknown variant \`<method>\``.
   */
  calls?: { [M in FakeCallRequest]?: FakeCallAnswer }
  /** The turn, in order; after the last step the turn completes (unless a step ended it). */
  steps?: FakeStep[]
  /**
   * Answers to the handshake other than the result: a JSON-RPC error (source `jsonrpc`, code
   * `REQUEST_FAILED`, its message verbatim) or `'never'` (`REQUEST_TIMEOUT` after `requestTimeoutMs`).
   */
  answer?: { [M in FakeHandshakeRequest]?: 'never' | { error: { code?: number; message: string; data?: unknown } } }
  /** What `turn/interrupt` does: `'honour'` (default: the turn ends interrupted), `'ignore'` (answered, never honoured: the runner kills after `interruptGraceMs`), `'exit'`. */
  interrupt?: 'honour' | 'ignore' | 'exit'
  /** The codex-cli version it reports (default 0.171.0). */
  version?: string
  threadId?: string
  turnId?: string
}

export interface WriteFakeCodexOptions {
  /** The directory to create the fake in (default: the system temp directory; removed at exit). */
  dir?: string
  /** The Node executable that runs the fake (default: `process.execPath`). */
  node?: string
  /** The platform whose kind of executable to write (default: this one; `'win32'` writes a `.cmd`). */
  platform?: string
}

/**
 * Writes an executable that plays `script` as `codex app-server` and returns its path, to pass
 * as `codexPath`. Throws a TypeError naming the first field of the script that is wrong.
 */
export function writeFakeCodex(script?: FakeCodexScript, options?: WriteFakeCodexOptions): string

/** One process started from a fake. */
export interface FakeCodexRun {
  pid: number
  /** Its arguments, e.g. `['app-server']`, or `['--disable', 'plugins', 'mcp', 'list', '--json']`. */
  argv: string[]
  cwd: string
  /** Every message the runner wrote to it, in order (requests, notifications, replies). */
  received: Array<{ [key: string]: any }>
  exitCode: number | null
  /** The params of the requests with this method, e.g. `requests('turn/start')[0].input`. */
  requests(method: string): any[]
}

/** What the processes started from the fake at `codexPath` were given and received, oldest first. */
export function fakeCodexRuns(codexPath: string): FakeCodexRun[]

/** Removes the fakes this process wrote into the system temp directory (also done at exit). */
export function removeFakeCodexes(): void

// ---------------------------------------------------------------------------------------------
// the loopback mock model

export interface StartMockModelOptions {
  /** The model name in config.toml (default `mock-model`). */
  model?: string
  /** More config.toml text. */
  extraConfig?: string
  /** Receives a line per request the mock answers. */
  log?: (line: string) => void
}

export interface MockModel {
  /** Base URL of the provider, e.g. `http://127.0.0.1:PORT/v1`. */
  url: string
  port: number
  /** Every `POST …/responses` the model was sent, in order (`body.input`, `body.text`, headers …). */
  requests: RecordedRequest[]
  /** Every HTTP request, any path. */
  allRequests: RecordedRequest[]
  /** Appends responses to the script. */
  push(...responses: ScriptedResponse[]): void
  /** Pass to runTurn's `env`: a temporary `HOME` and `CODEX_HOME` whose config.toml selects this mock. */
  env: Record<string, string>
  home: string
  codexHome: string
  configPath: string
  /** Stops the server and removes the temporary homes. */
  close(): Promise<void>
}

/** Starts the loopback mock of the Responses API and a temporary Codex home that points at it. */
export function startMockModel(scenario?: ScriptedResponse[], options?: StartMockModelOptions): Promise<MockModel>
