// Types of @rennet/codex/testing (the CommonJS view; index.d.mts gives the same to ESM).

import type { RecordedRequest, ScriptedResponse, ToolOutput } from './mock-responses.js'

export * from './mock-responses.js'
export { start as startMockResponses } from './mock-responses.js'
export { codexBinaryPath, createCodexHome, createLoggedOutHome, createGitCwd, isolatedEnv } from './codex-home.js'
export type { CodexHome, GitCwd, LoggedOutHome } from './codex-home.js'

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

/** A notification of a script (`threadId`/`turnId` of the turn are added unless `unscoped`). */
export interface FakeNotification {
  method: string
  params?: Record<string, unknown>
  unscoped?: boolean
}

/** One step of the fake's turn, played in order after `turn/start`. */
export type FakeStep =
  /**
   * An agent message: `itemStarted`, a `messageDelta` per delta, `itemCompleted`. The last one is the final message.
   * `open` leaves it open: a later step with its `id` streams more of it (`restart`: from the start, with a new `itemStarted`, as Codex does when it retries).
   */
  | { type: 'message'; text: FakeText; id?: string; phase?: 'commentary' | 'final_answer' | null; open?: boolean; restart?: boolean }
  /** A reasoning item: each entry of `summary` is a summary part, each of `text` a raw content part. */
  | { type: 'reasoning'; summary?: FakeText[]; text?: FakeText[]; id?: string }
  /**
   * A command with its output (an `item/commandExecution/outputDelta` per chunk); a non-zero
   * `exitCode` marks it failed. `aggregatedOutput`: what its completed item says it printed
   * (default: the chunks joined) — Codex 0.171.0 streams nothing of a fast command and nothing
   * of what a command printed before its `item/started`.
   */
  | { type: 'command'; command: string; output?: FakeText; aggregatedOutput?: string; exitCode?: number; cwd?: string; id?: string }
  /** Token usage of one model response; the thread total adds up over the steps. */
  | { type: 'usage'; input?: number; cached?: number; output?: number; reasoning?: number; total?: number; contextWindow?: number | null }
  /** Codex retrying (`retrying` event), not a failure. */
  | { type: 'retry'; message?: string; codexErrorInfo?: unknown; additionalDetails?: string | null }
  /**
   * A server request (`serverRequest` event with the runner's reply); the turn waits for the reply, unless `wait: false` (then a later `replies` step waits).
   * `count` sends it that many times in one write; `unscoped` leaves the turn's ids out of its params.
   */
  | { type: 'serverRequest'; method: FakeServerRequestMethod; params?: Record<string, unknown>; unscoped?: boolean; wait?: boolean; count?: number }
  /** Waits for the replies to the server requests sent with `wait: false` (a missing one is logged as `server-request-timeout` after `timeoutMs`). */
  | { type: 'replies'; timeoutMs?: number }
  /** Any notification; `threadId`/`turnId` of the turn are added unless `unscoped`. */
  | ({ type: 'notification' } & FakeNotification)
  /** Notifications written at once, in one write. */
  | { type: 'notifications'; notifications: FakeNotification[] }
  /**
   * `count` deltas of agent messages `<id>.0`, `<id>.1`, … (`id` default `msg`; `perMessage` deltas each, default all in one), their text the
   * sequence number or with `clock` the monotonic clock in ns; `count: 0` streams until the turn ends. Without `intervalMs` they are
   * pre-serialised and written as fast as the pipe takes them (the benchmarks' fast mode). turn/completed does not repeat them in its items.
   */
  | { type: 'stream'; count: number; id?: string; perMessage?: number; intervalMs?: number; clock?: boolean }
  /** A line on stderr (a `diagnostic` event). */
  | { type: 'stderr'; text: string }
  /** `megabytes` of 1 KiB lines on stderr, each 64 KiB waiting for the reader; an open message gets a delta every 2 MiB meanwhile. */
  | { type: 'stderrFlood'; megabytes: number }
  | { type: 'delay'; ms: number }
  /** The turn stops here and never ends by itself: abort it (see `interrupt`). */
  | { type: 'hang' }
  /** The fake stops reading its stdin: what the runner writes fills the pipe (and the fake answers nothing more). */
  | { type: 'deaf' }
  /** Codex fails the turn: source `turn`, code `TURN_FAILED`, `message` verbatim. */
  | { type: 'fail'; message: string; codexErrorInfo?: unknown; additionalDetails?: string | null }
  /** The process exits (default code 1): source `exit`, code `PROCESS_EXITED`, `stderr` in the tail. */
  | { type: 'exit'; code?: number; stderr?: string }
  /** A line that is not JSON on stdout, then nothing more: source `parse`, code `MALFORMED_FRAME`. */
  | { type: 'garbage'; line?: string }
  /** Bytes on stdout as given (`text`, or `base64` for bytes that are not UTF-8), then a newline unless `newline: false`; the turn goes on. */
  | { type: 'raw'; text?: string; base64?: string; newline?: boolean }
  /** Any JSON value as one line, as given (a response to an id never used, …); `newline: false` leaves the line unterminated. */
  | { type: 'send'; frame: unknown; newline?: boolean }
  /** The frames of `steps` as one JSON array on one line (a batch, which the stdio wire does not have). */
  | { type: 'batch'; steps: FakeStep[] }
  /** A delta notification line of `megabytes` MB (beyond any frame limit). */
  | { type: 'hugeLine'; megabytes: number }
  /** `turn/started` of another thread or turn (this turn's own is sent before the steps). */
  | { type: 'turnStarted'; threadId?: string; turnId?: string }
  /**
   * `turn/completed` now: of this turn (it ends; later steps still play, e.g. `exit`), or of another thread or turn (this one goes on);
   * `message` is an agent message in its items, `newline: false` leaves the line unterminated.
   */
  | {
      type: 'turnCompleted'
      threadId?: string
      turnId?: string
      status?: 'completed' | 'failed' | 'interrupted'
      message?: string
      error?: { message: string; codexErrorInfo?: unknown; additionalDetails?: string | null }
      newline?: boolean
    }
  | FakeAgentLoopStep
  | FakeAppToolStep

/**
 * Steps of the agent loop, as codex-cli 0.171.0 plays it (testing/fake-codex-agent-loop.js). A
 * step inside an `agent`'s `steps` plays on the sub-agent's thread and turn.
 */
export type FakeAgentLoopStep =
  /**
   * A sub-agent. The parent's spawn (`spawn`): `'collab'` (default) — a `collabAgentToolCall`
   * `spawnAgent` item, started with no `receiverThreadIds` and completed naming the child;
   * `'activity'` — a `subAgentActivity` item (`agentPath`: `path`, default `/root/helper`);
   * `'rootTurnId'` — nothing in the parent: the child's `turn/started` names the parent's turn as
   * its `rootTurnId`. Then the child's frames on its own `threadId` (no `thread/started`, as
   * Codex): its status (and with `early` a `warning`, sent before the spawn item names the
   * thread: `true` or the warning's text), `turn/started` (`turnId`, default `<threadId>:turn`;
   * `rootTurnId` default the parent's turn), `steps`, its idle status and `turn/completed`.
   * The parent's steps go on once the child's turn ended — with `spawn: 'collab'` inside a
   * `collabAgentToolCall` `wait` item (its `agentsStates` saying how the child ended) unless
   * `wait: false`; with `detach: true` the parent goes on at once and the child plays beside it
   * (and past the parent's `turn/completed`).
   * `turn/interrupt` of the child's turn ends it `interrupted`; the parent's does not stop it.
   */
  | {
      type: 'agent'
      threadId: string
      steps: FakeStep[]
      turnId?: string
      spawn?: 'collab' | 'activity' | 'rootTurnId'
      early?: boolean | string
      detach?: boolean
      wait?: boolean
      rootTurnId?: string
      callId?: string
      prompt?: string
      model?: string
      path?: string
      /**
       * Whether the child has the parent thread's app tools, as a `spawn_agent` with
       * `fork_context: true` gives them (default); `false`: none, so its calls of them are
       * unsupported (`toolCall`).
       */
      forkContext?: boolean
    }
  /**
   * `thread/goal/updated` of the turn's thread: the goal so far with these fields (the first one
   * `active` unless `status` says otherwise). While the goal is `active` when the user's turn
   * completes, the fake plays the script's `continuations` (see `FakeCodexScript`). `unscoped`:
   * `turnId: null`, as on a resumed thread.
   */
  | {
      type: 'goal'
      objective?: string
      status?: 'active' | 'paused' | 'blocked' | 'usageLimited' | 'budgetLimited' | 'complete'
      tokenBudget?: number | null
      tokensUsed?: number
      timeUsedSeconds?: number
      unscoped?: boolean
    }
  /** A `plan` item (plan mode's proposed plan): an `item/plan/delta` per delta (`planDelta` events), completed with the whole text. */
  | { type: 'plan'; text: FakeText; id?: string }
  /**
   * The model's `request_user_input`. In plan mode (`turn/start.collaborationMode.mode` `'plan'`,
   * i.e. runTurn's `mode: 'plan'`): the thread's status flags `waitingOnUserInput`, the server
   * request `item/tool/requestUserInput` (`questions` completed with Codex's defaults: `header`
   * the id, `isOther: true`, `isSecret: false`; an option given as a string is its label), and the
   * turn goes on once it is answered; the reply is noted as `question-answered` (`reply`: the
   * client's response as it came). In default mode Codex asks nothing (the model is told the tool
   * is unavailable): noted as `question-unavailable`.
   */
  | {
      type: 'question'
      questions: Array<{ id: string; question: string; header?: string; options?: Array<string | { label: string; description: string }>; isOther?: boolean; isSecret?: boolean }>
      itemId?: string
    }
  /**
   * The model's `exec_command` with `sandbox_permissions: "require_escalated"`. Unless the turn's
   * `approvalPolicy` is `never`: the server request `item/commandExecution/requestApproval`
   * (`reason`: `justification`); `accept`/`acceptForSession` runs it (its item completes with
   * `output` and `exitCode`), `decline` and `cancel` leave its item `declined` (`cancel` also
   * ends the turn `interrupted`), an error reply or a result that is not a decision `failed`,
   * all as Codex does. Noted as `approval` (`asked`, `decision`).
   */
  | { type: 'approval'; command: string; id?: string; justification?: string; output?: FakeText; exitCode?: number }
  /**
   * `exec_command` with `tty: true`: a terminal session left running — its `commandExecution`
   * item started (with `processId`) and never completed, its `output`, an
   * `item/commandExecution/terminalInteraction` per `stdin` write. A turn that ends with it names
   * it in `cutOff` (`backgroundTerminal`).
   */
  | { type: 'terminal'; command: string; id?: string; processId?: string; output?: FakeText; stdin?: string[] }

/**
 * An app tool as `thread/start.dynamicTools` defines it (experimental in codex-cli 0.171.0): a
 * function, a namespace of functions, or the legacy form (no `type`, an optional `namespace`).
 */
export type DynamicToolSpec =
  | { type: 'function'; name: string; description: string; inputSchema: unknown; deferLoading?: boolean }
  | { type: 'namespace'; name: string; description: string; tools: Array<{ type: 'function'; name: string; description: string; inputSchema: unknown; deferLoading?: boolean }> }
  | { name: string; description: string; inputSchema: unknown; namespace?: string | null; deferLoading?: boolean }

/** One call of an app tool by the model: the tool's `namespace` (a namespace's tool), its JSON `arguments` (default `{}`), its call id (default `call_<n>`). */
export interface FakeToolCall {
  tool: string
  namespace?: string | null
  arguments?: unknown
  callId?: string
}

/**
 * The model calls app tools, as codex-cli 0.171.0 plays it (testing/fake-codex-tools.js). A call
 * of a tool the thread has: its `dynamicToolCall` item starts (`inProgress`, the item id is the
 * call id), then the server request `item/tool/call { threadId, turnId, callId, namespace, tool,
 * arguments }`; the item completes when the client answers: `{ contentItems, success }` as
 * answered (`failed` when `success` is false); a JSON-RPC error fails it with `dynamic tool
 * request failed`, a result that does not parse with `dynamic tool response was invalid`, an
 * `inputImage` whose URL is not a `data:` URL with `remote image URLs are not supported; use an
 * inline data URL instead` (audio: `audio URLs must use an inline data URL`). `turn/interrupt`
 * while a call waits fails its item (`contentItems: []`) before the interrupt is answered, and a
 * later answer is ignored. A call of a tool the thread does not have is Codex's unsupported
 * call: no item, no request. Every call is noted with what the model is given for it
 * (`FakeCodexRun.toolCalls`). The thread's tools are those of its `thread/start` (a resumed or
 * forked thread keeps them, see `threadTools`); inside an `agent`'s `steps`, the child's.
 */
export type FakeAppToolStep =
  /** One call. */
  | ({ type: 'toolCall' } & FakeToolCall)
  /** Calls in one model response: every request goes out before any answer, and the step waits for all of them. */
  | { type: 'toolCalls'; calls: FakeToolCall[] }

/** A call of an app tool the fake played, and what the model was given for it. */
export interface FakeToolCallRecord {
  callId: string
  threadId: string
  turnId: string
  namespace: string | null
  tool: string
  arguments: unknown
  /** The id of its `item/tool/call` request (null for an unsupported call, which sends none). */
  requestId: number | null
  /** The client's response as it came (null: none, the call was unsupported or interrupted). */
  reply: { id: number; result?: unknown; error?: unknown } | null
  /** How its item completed; `unsupported`: no item, the thread has no such tool. */
  status: 'completed' | 'failed' | 'unsupported'
  /** The completed item's fields (null for an unsupported call). */
  contentItems: Array<{ type: 'inputText'; text: string } | { type: 'inputImage'; imageUrl: string } | { type: 'inputAudio'; audioUrl: string }> | null
  success: boolean | null
  /**
   * What Codex gives the model for it (`function_call_output.output`, as `toolOutput` reads it from
   * the mock model's requests): one text alone is the plain string, `success` is left out, an
   * interrupted call is `dynamic tool call was cancelled before receiving a response`, an
   * unsupported one `unsupported call: <namespace><tool>`. Images are passed on when their bytes
   * start as a PNG, JPEG, GIF or WebP does (Codex decodes them), else replaced by a text saying so;
   * audio is replaced by a text (the mock model has no audio input).
   */
  output: ToolOutput
}

/** A request of the handshake (and `turn/steer`) the script can answer differently. */
export type FakeHandshakeRequest = 'initialize' | 'account/read' | 'thread/start' | 'thread/resume' | 'turn/start' | 'turn/steer'

/** Where in the turn a `fault` happens: before or after the handshake's answers, after the first delta of the first message, after `turn/completed`. */
export type FakeFaultPhase = 'before-init' | 'after-init' | 'after-thread' | 'after-ack' | 'mid-stream' | 'after-completed'

/** Grandchildren a fake can start (sleepers, logged with their pid): in its process group (stdio ignored or inherited), in a group or session of their own, double-forked (`setsid -f`, with or without an environment), a detached Node. */
export type FakeGrandchild = 'ignore' | 'inherit' | 'pgroup' | 'session' | 'daemon' | 'daemon-noenv' | 'detached-node'

/**
 * A request of the calls around turns the fake can answer: any method (`readAccount`'s
 * `account/rateLimits/read`, `model/list`, `thread/archive`, `account/login/start`, whatever
 * `request()` sends) but the ones it plays itself: `initialize`, `account/read` (see `account`),
 * `thread/start`, `thread/resume`, `turn/start`, `turn/steer`, `turn/interrupt`. Named here,
 * `config/read` and `mcpServerStatus/list` are answered as given rather than from `mcpServers`.
 */
export type FakeCallRequest = string

/**
 * How the fake answers one call: with `result` as given; with `pages` (`model/list`, `thread/list`:
 * the request without a cursor gets the first page's entries as `data`, each `nextCursor` names
 * the next page, the last has none); with a JSON-RPC error (a `CallError` `REQUEST_FAILED`, its
 * message verbatim); never (`REQUEST_TIMEOUT` after `requestTimeoutMs`); or by exiting
 * (`PROCESS_EXITED`, `stderr` in the tail).
 */
export type FakeCallAnswer =
  | 'never'
  | (FakeCallAfter &
      (
        | { result: unknown }
        | { pages: unknown[][] }
        | { error: { code?: number; message: string; data?: unknown } }
        | { exit: { code?: number; stderr?: string } }
      ))

/**
 * What else happens around an answer: it comes after `delayMs`; then each of `notifications` is
 * sent in order, after its own `delayMs` — a login's `account/login/completed`, a compaction's
 * `turn/started` … `turn/completed`, an `account/updated`.
 */
export interface FakeCallAfter {
  delayMs?: number
  notifications?: Array<{ method: string; params?: unknown; delayMs?: number }>
}

export interface FakeCodexScript {
  /**
   * Answers to the calls around turns. A call not named here is refused as a Codex without the
   * method refuses it: JSON-RPC error -32600 `Invalid request: unknown variant \`<method>\``.
   */
  calls?: Record<FakeCallRequest, FakeCallAnswer>
  /** The turn, in order; after the last step the turn completes (unless a step ended it). */
  steps?: FakeStep[]
  /**
   * Answers to the handshake other than the result: a JSON-RPC error (source `jsonrpc`, code
   * `REQUEST_FAILED`, its message verbatim) or `'never'` (`REQUEST_TIMEOUT` after `requestTimeoutMs`);
   * `'twice'` (the result sent twice) or `{ delayMs }` (the result, late).
   */
  answer?: { [M in FakeHandshakeRequest]?: 'never' | 'twice' | { delayMs: number } | { error: { code?: number; message: string; data?: unknown } } }
  /** What `turn/interrupt` does: `'honour'` (default: the turn ends interrupted), `'ignore'` (answered, never honoured: the runner kills after `interruptGraceMs`), `'exit'`. */
  interrupt?: 'honour' | 'ignore' | 'exit'
  /**
   * What `account/read` answers (default `{ account: null, requiresOpenaiAuth: false }`, as with
   * a custom model provider); `{ account: null, requiresOpenaiAuth: true }` is a Codex nobody
   * is logged in to (`AUTH_REQUIRED`); `answer['account/read']` an older Codex without it.
   */
  account?: { account: unknown; requiresOpenaiAuth: boolean }
  /** The codex-cli version it reports (default 0.171.0). */
  version?: string
  threadId?: string
  turnId?: string
  /** Frames real Codex sends around the steps to leave out: `thread/started`, the active/idle status, the user message item, `turn/started`. */
  omit?: Array<'threadStarted' | 'status' | 'userMessage' | 'turnStarted'>
  /** `turn/started` before the `turn/start` response, as a busy server may send it. */
  earlyTurnStarted?: boolean
  /** Notifications sent right after answering a handshake request (e.g. `remoteControl/status/changed` after `initialize`). */
  handshakeNotifications?: { [M in FakeHandshakeRequest]?: FakeNotification[] }
  /** The thread's token usage before this turn (a resumed thread's earlier turns); `usage` steps add to it. */
  threadUsage?: { input?: number; cached?: number; output?: number; reasoning?: number; total?: number }
  /** MCP servers of the effective configuration (`config/read`) and their runtime status (default: `disabled` when the thread's config disabled them, else `connected`). */
  mcpServers?: Record<string, { config?: Record<string, unknown>; status?: string }>
  /** Features `experimentalFeature/list` reports with their state, over those switched off on the command line (reported off). */
  features?: Record<string, boolean>
  /** Entries per page of the list queries (default: all on one page). */
  pageSize?: number
  /** The sandbox `thread/start` reports, whatever was asked (a server that did not apply it). */
  sandbox?: 'read-only' | 'workspace-write' | 'danger-full-access'
  /** Non-JSON lines on stdout before the first frame (a launcher's banner). */
  preamble?: string[]
  /** Prints `config: NAME=value` on stderr at start for each of these variables (a Codex that logs its configuration). */
  echoEnv?: string[]
  /** Variables whose values each run records (`FakeCodexRun.env`). */
  logEnv?: string[]
  /**
   * Grandchildren started at once (each run lists them with their pids). The fake reads nothing
   * before every one is recorded and settled (a double fork's first process gone), so that no
   * fault, kill or end of the run can come before a grandchild is in its log.
   */
  grandchildren?: FakeGrandchild[]
  /** Stays when its stdin closes (Codex leaves). */
  linger?: boolean
  /** Notes SIGTERM and keeps running (default: ends by it). */
  ignoreSigterm?: boolean
  /**
   * At `phase` the process exits (with `code`, default 1), hangs (answers nothing more, stays on stdin EOF), writes a non-JSON `line`
   * and goes on (`garbage`), closes its stdout and keeps running, or kills itself (with `signal`, default SIGKILL). A `line` is written first for any action.
   */
  fault?: { phase: FakeFaultPhase; action: 'exit' | 'hang' | 'garbage' | 'close-stdout' | 'kill'; code?: number; signal?: string; line?: string }
  /**
   * Goal continuations: while the goal (`goal` steps) is `active` when a turn of the thread
   * completes, Codex starts another turn by itself ~20 ms later — turn id `<turnId>:goal-<n>`,
   * `rootTurnId` the user's turn, its status active then idle — which plays the next entry of
   * this list. None is left (or the goal is no longer active): nothing more starts.
   */
  continuations?: FakeStep[][]
  /**
   * `review/start` (runReview): answered `{ turn, reviewThreadId }` (inline: the thread's id), then
   * the review as codex-cli 0.171.0 plays it — a `turn/started` of an inner turn (`<turnId>:inner`)
   * whose `rootTurnId` is the review's turn while every item and `turn/completed` carry the
   * review's id; `enteredReviewMode` (the target's label, e.g. `current changes`); the request as
   * a user message; the reviewer's `raw` JSON as an agent message started and never completed;
   * `steps`; `exitedReviewMode` with `review` (the formatted review, default `No issues found.`);
   * `review` as the final agent message; `turn/completed`.
   */
  review?: { review?: string; raw?: string; steps?: FakeStep[] }
  /**
   * Threads started in an earlier session with app tools (`threadId` → its `thread/start.dynamicTools`, checked as
   * Codex checks them): a `thread/resume` of one keeps them, as Codex keeps a thread's tools. A thread this fake
   * started in an earlier process keeps its own without this; so does a `thread/fork` the script answers (`calls`).
   */
  threadTools?: Record<string, DynamicToolSpec[]>
  /** Plays nothing itself: runs the Codex at `codexPath` and passes every line through, without `thread/start`/`thread/resume`'s `config` with `dropThreadConfig` (a Codex that ignores it). */
  relay?: { codexPath: string; dropThreadConfig?: boolean }
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
  /** The fake's own process. */
  pid: number
  /**
   * The process the runner started, as a `started` event names it: the fake itself on Unix,
   * `cmd.exe` running the fake's `.cmd` on Windows.
   */
  launcherPid: number
  /** Its arguments, e.g. `['app-server']`, or `['--disable', 'plugins', 'mcp', 'list', '--json']`. */
  argv: string[]
  cwd: string
  /** Its process group (null on Windows). */
  pgid: number | null
  /** The variables of the script's `logEnv` as it saw them (null: unset). */
  env: Record<string, string | null>
  /** Every message the runner wrote to it, in order (requests, notifications, replies). */
  received: Array<{ [key: string]: any }>
  /** Lines the runner wrote that were not JSON. */
  unparsed: string[]
  /** Every frame it wrote as one (raw lines, streams and bursts are only noted in `events`). */
  sent: Array<{ [key: string]: any }>
  /**
   * What else it noted, in order: `stdin-closed`, `sigterm`, `grandchild` (`pid`, `mode`), `fault`, `exit` (`code`), `wrote` …;
   * of the agent loop: `continuation` (`turnId`), `question-answered` (`itemId`, `reply`), `question-unavailable`, `approval` (`command`, `asked`, `decision`);
   * of app tools: `thread-tools` (`threadId`, `from`: `start`, `stored`, `fork` or `agent`, `tools`: `{ namespace, name }` each), `tool-call` (see `toolCalls`).
   */
  events: Array<{ event: string; [key: string]: any }>
  /** The app tool calls it played, in the order they ended, with what the model was given for each. */
  toolCalls: FakeToolCallRecord[]
  stdinClosed: boolean
  grandchildren: Array<{ pid: number; mode: FakeGrandchild }>
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
  /**
   * More config.toml, merged into the kit's own tables: `'[features]\nmulti_agent_v2 = true'` adds
   * to the kit's `[features]` (a second `[features]` table would make Codex fall back to its
   * defaults). Text that is not TOML is a TypeError.
   */
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
