// Generated from the declarations of crates/core (crates/core/src/surface/): `pnpm surface:generate` writes it, `pnpm surface:check` holds it to them. Do not edit.
import type { ThreadItem } from './codex/v2/ThreadItem.js'
import type { TurnPlanStep } from './codex/v2/TurnPlanStep.js'
import type { RateLimitSnapshot } from './codex/v2/RateLimitSnapshot.js'
import type { ThreadGoal } from './codex/v2/ThreadGoal.js'
import type { CodexErrorInfo } from './codex/v2/CodexErrorInfo.js'
import type { ServerNotification } from './codex/ServerNotification.js'
import type { ServerRequest as ProtocolServerRequest } from './codex/ServerRequest.js'
import type { ThreadSortKey } from './codex/v2/ThreadSortKey.js'
import type { ThreadSourceKind } from './codex/v2/ThreadSourceKind.js'
import type { ThreadGoalStatus } from './codex/v2/ThreadGoalStatus.js'
import type { OnServerRequest, Turn, AppTool } from '../index.js'

/**
 * Every event of a turn, a union on `type`: one `started` first, one `terminal` last, and
 * between them what Codex did (docs/events.md lists them).
 */
export type HarnessEvent =
  | ({ type: 'started' } & StartedEvent)
  | ({ type: 'threadStarted' } & ThreadStartedEvent)
  | ({ type: 'turnStarted' } & TurnStartedEvent)
  | ({ type: 'itemStarted' } & ItemEvent)
  | ({ type: 'itemCompleted' } & ItemEvent)
  | ({ type: 'messageDelta' } & DeltaEvent)
  | ({ type: 'reasoningDelta' } & ReasoningDeltaEvent)
  | ({ type: 'commandOutput' } & DeltaEvent)
  | ({ type: 'usage' } & UsageEvent)
  | ({ type: 'retrying' } & RetryingEvent)
  | ({ type: 'plan' } & PlanEvent)
  | ({ type: 'diff' } & DiffEvent)
  | ({ type: 'rateLimits' } & RateLimitsEvent)
  | ({ type: 'serverRequest' } & ProtocolServerRequest & ServerRequestEvent)
  | ({ type: 'agent' } & AgentEvent)
  | ({ type: 'goal' } & GoalEvent)
  | ({ type: 'planDelta' } & DeltaEvent)
  | ({ type: 'itemDropped' } & ItemDroppedEvent)
  | ({ type: 'native' } & NativeEvent)
  | ({ type: 'unknownNotification' } & UnknownNotificationEvent)
  | ({ type: 'passthrough' } & PassthroughEvent)
  | ({ type: 'diagnostic' } & DiagnosticEvent)
  | ({ type: 'turnCompleted' } & Terminal)
  | ({ type: 'terminal' } & Terminal)

/** The one event that ends every turn: last, once the child and everything it started are gone. */
export type TerminalEvent = { type: 'terminal' } & Terminal

/**
 * The server completed the turn: what the terminal event will say, sent as soon as Codex
 * reports it. The `terminal` event follows once the child and everything it started are gone
 * (tens of milliseconds later: Codex's own shutdown). Only a turn the server completed has one
 * (not a failure of the process, a kill or a failure before the turn). When the run goes on
 * after the user's turn (`until: 'idle'`, or an abort waiting for the sub-agents it
 * interrupted), it carries that turn's outcome as it was then: `agents` lists the sub-agents
 * whose work had ended, `cutOff` is empty, and the terminal says how the rest ended.
 */
export type TurnCompletedEvent = { type: 'turnCompleted' } & Terminal

/** The first event of every turn: its child started. */
export type StartedEvent = {
  /** A short id of this turn, unique in the process; every log record of the turn has it. */
  turnKey: string
  /** The process id of the `codex app-server` child. */
  pid: number
  /** The Codex executable that runs. */
  codexPath: string
  /** Its version, where it was found (`--version`); `null` otherwise. */
  codexVersion: string | null
  /** What the server said it is (`initialize`'s `userAgent`). */
  userAgent: string
}

/** The turn's thread is open: started, or resumed (`threadId` given). */
export type ThreadStartedEvent = {
  /** The thread's id (pass it as `threadId` to go on with it). */
  threadId: string
  /** Whether it was resumed rather than started. */
  resumed: boolean
}

/** A turn of the thread started (the user's, or a goal continuation's). */
export type TurnStartedEvent = {
  /** The thread. */
  threadId: string
  /** The turn's id. */
  turnId: string
}

/**
 * An item of the turn, exactly as Codex sent it: `itemStarted` when it started (`item/started`;
 * a repeated one for the same id restarts it), `itemCompleted` when it completed
 * (`item/completed`), whole: its text is what its deltas added up to.
 */
export type ItemEvent = {
  /** The item (the protocol's `ThreadItem`). */
  item: ThreadItem
}

/**
 * Text of an item as it streams: `messageDelta` (an agent message), `commandOutput` (a
 * command's output, stdout and stderr interleaved: the deltas add up to the completed item's
 * `aggregatedOutput`), `planDelta` (plan mode's proposed plan, `item/plan/delta`). The deltas of
 * an item add up to the text its `itemCompleted` carries: what Codex sent only whole goes out
 * as one more delta before it.
 */
export type DeltaEvent = {
  /** The item. */
  itemId: string
  /** The text to add. */
  delta: string
  /**
   * `true` (never `false`, else absent): this delta is the item's whole text, as its
   * completion carries it, and replaces what its deltas streamed, which was not its beginning
   * (Codex did not stream all of it, or kept only part of it). Only ever the item's last delta.
   */
  replace?: true
}

/** Text of a reasoning item as it streams: of its `summary` or raw `text`, at `index`. */
export type ReasoningDeltaEvent = {
  /** The `reasoning` item. */
  itemId: string
  /** The text to add. */
  delta: string
  /** Which of the item's texts it adds to. */
  part: ReasoningPart
  /** Which summary part, or which content part. */
  index: number
  /** As a `messageDelta`'s, of this `part` and `index` only. */
  replace?: true
}

/**
 * Which text of a reasoning item a `reasoningDelta` adds to: its `summary` or its raw `text`
 * (each at an `index`).
 */
export type ReasoningPart = 'summary' | 'text'

/** Token usage, as Codex reports it during the turn. */
export type UsageEvent = {
  /** This turn's. */
  turn: Usage
  /** The thread's running total. */
  thread: Usage
  /** The model's context window, where Codex gives it. */
  contextWindow: number | null
}

/** Codex retries the model request (an `error` notification with `willRetry`): progress, not a failure. */
export type RetryingEvent = {
  /** Codex's message, verbatim. */
  message: string
  /** Why the request failed, as Codex sent it; `null` where it said nothing. */
  codexErrorInfo: CodexErrorInfo | null
}

/** `turn/plan/updated`: the turn's plan, as Codex sent it, each update whole. */
export type PlanEvent = {
  /** Why the plan is what it is, where Codex says. */
  explanation: string | null
  /** The steps (`status`: `pending`, `inProgress`, `completed`). */
  plan: TurnPlanStep[]
}

/** `turn/diff/updated`: the turn's whole unified diff so far (each one replaces the last). */
export type DiffEvent = {
  /** The unified diff. */
  diff: string
}

/** `account/rateLimits/updated`: a rolling update; merge it over `readAccount()`'s `rateLimits.rateLimits`. */
export type RateLimitsEvent = {
  /** The snapshot as Codex sent it. */
  rateLimits: RateLimitSnapshot
}

/**
 * A server request and how it was answered: `method`, `id` and `params` as Codex sent them (the
 * protocol's `ServerRequest`, typed by method), with the fields below.
 */
export type ServerRequestEvent = {
  /** The sub-agent that asks, when it is one of the turn's; `null` for the turn's own thread. */
  agent: AgentRef | null
  /** How it was answered. */
  reply: ServerRequestReply
  /**
   * With `reply: 'unfit'`: why the app's answer did not fit the method's response type (it
   * was not sent; the method's refusal was). Absent otherwise.
   */
  unfit?: string
}

/**
 * How a server request was answered: by the fixed policy (`accepted`, `grantedEmpty`: a
 * permission request given an empty profile, `declined`, `methodError`), by the app (`app`), by
 * the fixed policy because the app's handler did not answer in time (`timedOut`), by a refusal
 * because the app's answer did not fit the method's response type (`unfit`: it was not sent,
 * and the event's `unfit` says why), or because the turn was ending (`cancelled`). A call of an
 * app tool (`tools`, `item/tool/call`): `app` (its `execute` answered), `invalidArguments`,
 * `timedOut` (past its `timeoutMs`), `cancelled` or `failed`, each with a text the model reads.
 */
export type ServerRequestReply =
  | 'accepted'
  | 'grantedEmpty'
  | 'declined'
  | 'methodError'
  | 'app'
  | 'timedOut'
  | 'unfit'
  | 'cancelled'
  | 'invalidArguments'
  | 'failed'

/**
 * One event of a sub-agent the turn started (its items, deltas, usage, turnStarted,
 * turnCompleted, …), nested.
 */
export type AgentEvent = {
  /** The sub-agent. */
  agent: AgentRef
  /** Its event. */
  event: HarnessEvent
}

/** A sub-agent of the turn: a thread Codex started for it (`multi_agent` tools). */
export type AgentRef = {
  /** The sub-agent's thread. */
  threadId: string
  /** Where Codex gives one (its `agentNickname`). */
  nickname: string | null
  /** Where Codex gives one (`subAgentActivity.agentPath`). */
  path: string | null
  /** 1 for an agent of the turn's own thread, 2 for one of its agents', … */
  depth: number
}

/** `thread/goal/updated` of the turn's thread. */
export type GoalEvent = {
  /** The goal as Codex sent it. */
  goal: ThreadGoal
}

/**
 * An item Codex started and never completed (a response dropped for a steer, a session still
 * open), closed for the app no later than the turn's end.
 */
export type ItemDroppedEvent = {
  /** The item. */
  itemId: string
}

/**
 * A notification of the turn without an event of its own, whose method the pinned CLI's schema
 * lists: the protocol's `ServerNotification`, so narrowing on `method` types `params`.
 */
export type NativeEvent = ServerNotification

/**
 * A notification of the turn whose method the pinned CLI's schema does not list (a newer
 * Codex's): kept, not dropped, under a `type` of its own so that `native` narrows by method.
 */
export type UnknownNotificationEvent = {
  /** The notification's method. */
  method: string
  /** Its params as Codex sent them. */
  params: unknown
}

/** A frame that is not the turn's: it changes nothing. */
export type PassthroughEvent = {
  /** Why it is not the turn's. */
  reason: PassthroughReason
  /** The frame as Codex sent it. */
  message: unknown
}

/**
 * Why a frame is not the turn's: another thread's (`foreignThread`), another turn's of this
 * thread (`foreignTurn`), or an answer to a request this package never sent (`unknownResponse`).
 */
export type PassthroughReason = 'foreignThread' | 'foreignTurn' | 'unknownResponse'

/**
 * A line Codex wrote that is not the protocol (its stderr, a launcher's banner), without
 * terminal escapes.
 */
export type DiagnosticEvent = {
  /** Where it comes from. */
  source: DiagnosticSource
  /** The line. */
  line: string
}

/**
 * Where a `diagnostic` line comes from: before the protocol (`preamble`: a launcher's banner)
 * or Codex's stderr (`stderr`).
 */
export type DiagnosticSource = 'preamble' | 'stderr'

/** The outcome of a turn: what the `terminal` event (and `turnCompleted`) carries. */
export type Terminal = {
  /** How the turn ended. */
  status: TerminalStatus
  /** The turn's thread; `null` where the turn ended before it existed. */
  threadId: string | null
  /** The turn; `null` where it ended before the turn existed. */
  turnId: string | null
  /** The turn's thread's last completed agent message, whatever the outcome; `null` when none completed. */
  finalMessage: string | null
  /**
   * Plan mode's proposed plan: the text of the thread's last completed `plan` item, whatever
   * the outcome; `null` when none (a plan is never read out of a message).
   */
  proposedPlan: string | null
  /** With `outputSchema`: the final message parsed (not validated: `runUtility` validates). */
  structuredOutput?: unknown
  /** This turn's usage (not the thread's running total); `null` where Codex reported none. */
  usage: Usage | null
  /** A cancelled turn: whether Codex honoured the interrupt or the child was killed. */
  cancellation?: Cancellation
  /**
   * Set on a cancelled turn: the reason of the abort that ended it, as it was given (the
   * signal's `reason`, e.g. the `TimeoutError` of `AbortSignal.timeout()`, or
   * `abort(reason)`'s); `undefined` after `abort()` without a reason or a `break` out of the loop.
   */
  abortReason?: unknown
  /** Why it failed; `null` unless `status` is `failed`. */
  failure: Failure | null
  /** Every sub-agent the turn started, and how each ended (`cutOff`: still running when the child ended). */
  agents: Array<AgentOutcome>
  /** `usage` and every agent's usage together (`usage` stays the turn's own). */
  totalUsage: Usage | null
  /** What Codex was still doing, or would have done, when the child ended: never cut off in silence. */
  cutOff: Array<CutOff>
}

/** How the turn ended: `completed`, `failed` or `cancelled`. */
export type TerminalStatus = 'completed' | 'failed' | 'cancelled'

/** How a cancelled turn ended: `interrupted` (Codex honoured `turn/interrupt`) or `killed`. */
export type Cancellation = 'interrupted' | 'killed'

/** A sub-agent in the terminal event: how its work ended. */
export type AgentOutcome = {
  /** The sub-agent's thread. */
  threadId: string
  /** Where Codex gives one. */
  nickname: string | null
  /** How its work ended (`cutOff`: still running when the child ended). */
  status: AgentStatus
  /** Its own usage; `null` where Codex reported none. */
  usage: Usage | null
}

/**
 * How a sub-agent's work ended, as far as the turn saw it: `completed`, `interrupted`,
 * `failed`, or `cutOff` (still running, or due to start, when the child ended).
 */
export type AgentStatus = 'completed' | 'interrupted' | 'failed' | 'cutOff'

/**
 * Work Codex was still doing, or would have done, when the run ended it, by `kind`: `agent`, a
 * sub-agent still running (or due) when the child ended, or one a bound of `until: 'idle'`
 * interrupted; `goal`, an active goal Codex would have gone on working on in turns of its own;
 * `backgroundTerminal`, a terminal session (`exec_command` with a tty) still open, which dies
 * with the child.
 */
export type CutOff =
  | {
      kind: 'agent'
      /** The sub-agent's thread. */
      threadId: string
      /** Where Codex gives one. */
      nickname: string | null
      /** Why the run ended before the sub-agent's work did. */
      reason: CutReason
    }
  | {
      kind: 'goal'
      /** The goal's objective, as Codex holds it. */
      objective: string
      /** The goal's status when the run ended (`active`, …). */
      status: string
      /** Why the run ended before the goal's work did. */
      reason: CutReason
    }
  | {
      kind: 'backgroundTerminal'
      /** The `commandExecution` item that opened the session. */
      itemId: string
      /** The session's process id as Codex gives it; `null` where it gave none. */
      processId: string | null
      /** The command the session runs. */
      command: string
    }

/**
 * Why the run ended before that work did: `turnCompleted` (the run ended with the user's turn,
 * `until: 'turnCompleted'`; or with a last turn after which Codex starts no continuation),
 * `noContinuation` (`until: 'idle'`: the goal's continuation did not come within 5 s),
 * `maxContinuations` and `idleWaitMs` (the bounds of `until: 'idle'`), `abort` (the run was
 * aborted), `failed` (the run failed).
 */
export type CutReason =
  'turnCompleted' | 'noContinuation' | 'maxContinuations' | 'idleWaitMs' | 'abort' | 'failed'

/** Token counts of one turn or of a whole thread. */
export type Usage = {
  /** Input tokens, the cached ones included. */
  input: number
  /** Input tokens read from the provider's cache. */
  cacheRead: number
  /** Output tokens, the reasoning ones included. */
  output: number
  /** Output tokens spent on reasoning. */
  reasoning: number
  /** All tokens of the turn (or thread), as Codex counts them. */
  total: number
}

/**
 * Where a failure comes from: the turn (Codex said it failed), the protocol (`jsonrpc`: a
 * request refused, late or answered oddly), the child's exit, its start (`spawn`), its output
 * (`parse`: stdout is not the protocol), or the package itself (`internal`).
 */
export type FailureSource = 'turn' | 'jsonrpc' | 'exit' | 'spawn' | 'parse' | 'internal'

/**
 * Every code a failure carries: stable, for a program to tell failures apart (each one is
 * described in docs/failures.md).
 */
export type FailureCode =
  | 'CODEX_NOT_FOUND'
  | 'CODEX_NOT_EXECUTABLE'
  | 'CWD_NOT_FOUND'
  | 'SPAWN_FAILED'
  | 'HOST_GUARD_UNAVAILABLE'
  | 'NATIVE_ADDON_UNAVAILABLE'
  | 'MCP_NOT_LOOPBACK'
  | 'MCP_POLICY_INVALID'
  | 'MCP_INVENTORY_FAILED'
  | 'MCP_INVENTORY_INVALID'
  | 'MCP_INVENTORY_TOO_LARGE'
  | 'MCP_NAME_COLLISION'
  | 'REQUEST_FAILED'
  | 'REQUEST_TIMEOUT'
  | 'UNEXPECTED_RESPONSE'
  | 'ISOLATION_NOT_CONFIRMED'
  | 'APP_TOOLS_REFUSED'
  | 'AUTH_REQUIRED'
  | 'MALFORMED_FRAME'
  | 'INVALID_UTF8'
  | 'FRAME_TOO_LARGE'
  | 'PREAMBLE_TOO_LONG'
  | 'STDOUT_READ_FAILED'
  | 'PROCESS_EXITED'
  | 'TURN_FAILED'
  | 'STRUCTURED_OUTPUT_INVALID'
  | 'METHOD_UNSUPPORTED'
  | 'LOGIN_FAILED'
  | 'LOGIN_IN_PROGRESS'
  | 'INTERNAL_ERROR'
  | 'CANCELLED'
  | 'STRUCTURED_OUTPUT_MISMATCH'
  | 'TURN_NOT_STEERABLE'
  | 'TURN_ENDED'
  | 'ALREADY_STARTED'
  | 'TURN_RUNNING'
  | 'CONVERSATION_CLOSED'

/**
 * Why Codex's model request failed, from the `codexErrorInfo` Codex sent (a UI tells these
 * apart: "log in again", "usage limit reached", "try again later", …).
 */
export type FailureReason =
  | 'unauthorized'
  | 'usageLimit'
  | 'rateLimited'
  | 'overloaded'
  | 'serverError'
  | 'contextWindowExceeded'
  | 'connection'
  | 'badRequest'
  | 'other'

/** Why a turn or a call failed. `code` is stable; `message` is the provider's text, verbatim. */
export type Failure = {
  /** Where it comes from. */
  source: FailureSource
  /** The provider's message or the process detail, verbatim. */
  message: string
  /** Stable machine code. */
  code: FailureCode
  /**
   * What more there is to know, by code: the JSON-RPC `{method, code, data}`, the exit and
   * the stderr tail, `codexErrorInfo`…; absent when there is nothing.
   */
  detail?: unknown
  /**
   * Trying the same again can succeed: a rate limit, an overloaded or failing server, a lost
   * connection, a deadline that passed.
   */
  retryable: boolean
  /** Why Codex's model request failed, from its `codexErrorInfo`; absent where Codex said nothing. */
  reason?: FailureReason
}

/**
 * Where discovery and the child run: `{ wsl: { distro } }`, inside that WSL distribution
 * (reached from Windows through `wsl.exe`).
 */
export type Locus = {
  /** The WSL distribution. */
  wsl: {
    /** Its name, as `wsl.exe -l` lists it (`Ubuntu`, `Debian`, …). */
    distro: string
  }
}

/** One MCP server a turn may use: Streamable HTTP on loopback. */
export type McpServer = {
  /**
   * An `http(s)` URL on loopback. It reaches Codex on its command line, which every local
   * user can read: one with userinfo, a query string or a fragment is a `TypeError`. Secrets
   * go in `bearerTokenEnvVar` or `httpHeaders`, which never reach a command line.
   */
  url: string
  /**
   * The variable of the child's environment that holds the bearer token (its name, not the
   * token).
   */
  bearerTokenEnvVar?: string
  /**
   * Headers sent with every request to the server; their values reach Codex through its
   * environment, never its command line.
   */
  httpHeaders?: Record<string, string>
}

/** The explicit MCP policy of a turn: these servers, by name, and no other. */
export type McpPolicy = {
  /** The servers the turn may use, by the name Codex gives their tools. */
  servers: Record<string, McpServer>
}

/**
 * How closely the model looks at an image (the protocol's `ImageDetail`; the model's default
 * when absent).
 */
export type ImageDetail = 'auto' | 'low' | 'high' | 'original'

/** One item of a turn's input, in the protocol's own words (`UserInput`), sent in order. */
export type InputItem =
  | {
      type: 'text'
      /** What the user says (non-empty). */
      text: string
    }
  | {
      type: 'localImage'
      /**
       * A file read by Codex: an absolute path (a Windows path with a WSL `locus`); it must
       * exist.
       */
      path: string
      /** How closely the model looks at the image (the model's default when absent). */
      detail?: ImageDetail
    }
  | {
      type: 'image'
      /** An `http(s):` or `data:` URL. */
      url: string
      /** How closely the model looks at the image (the model's default when absent). */
      detail?: ImageDetail
    }
  | {
      type: 'skill'
      /** The skill's name, as `listSkills` gives it. */
      name: string
      /** Its `SKILL.md`: the file must exist (Codex would leave a missing one out silently). */
      path: string
    }
  | {
      type: 'mention'
      /** What the mention shows. */
      name: string
      /** The path Codex knows it by (a file, or an `app://`/`plugin://` path). */
      path: string
    }

/**
 * What `runTurn` takes: the turn's input (exactly one of `prompt` and `input`) and how it
 * runs.
 */
export type RunTurnOptions = {
  /** Absolute path of the working directory (a Windows path with a WSL `locus`). */
  cwd: string
  /** The model (Codex's default without it; an empty one is none). */
  model?: string
  /**
   * `full` (default): full access; command and file-change approvals are granted, a
   * permission request gets an empty profile, an elicitation is declined, a question or
   * any other request a method error (docs/agent-loop.md). `readOnly`: nothing is
   * granted, every MCP server is off, confirmed by the server. `ask`: the user's own
   * workspace-write sandbox for `cwd` (`sandbox_workspace_write` as `config/read`
   * reports it), where Codex asks before it escalates; `onServerRequest` is required and
   * answers.
   */
  access?: 'full' | 'readOnly' | 'ask'
  /** Resume this stored thread (`thread/resume`); without it a new thread starts. */
  threadId?: string
  /** Only these MCP servers, each on loopback (docs/mcp-and-isolation.md). */
  mcp?: McpPolicy
  /**
   * Use this Codex executable as given instead of discovering one (inside the
   * distribution with `locus`).
   */
  codexPath?: string
  /** Run discovery and the child inside a WSL distribution; `cwd` may be a Windows path. */
  locus?: Locus
  /** Merged over the inherited environment for the child. */
  env?: Record<string, string>
  /**
   * How long an interrupted turn has to end before its child is killed: 0 … 2^31 − 1
   * ms; default 2000.
   */
  interruptGraceMs?: number
  /**
   * Per request (initialize, thread/*, turn/start…) and for the `mcp` inventory, 1 …
   * 2^31 − 1 ms; default 30000.
   */
  requestTimeoutMs?: number
  /**
   * `turnCompleted` (default): the run ends with the turn's `turn/completed`; whatever
   * Codex was still doing for it is named in `terminal.cutOff`. `idle`: the run also
   * waits for every sub-agent the turn started and every goal continuation Codex runs
   * on its own.
   */
  until?: 'turnCompleted' | 'idle'
  /**
   * With `until: 'idle'` only: the goal continuation turns the run waits for at most
   * (0 … 2^32 − 1; default 20). Reached, the run ends `completed` and `cutOff` names
   * the goal (`maxContinuations`).
   */
  maxContinuations?: number
  /**
   * With `until: 'idle'` only: how long the run waits at most after the user's turn
   * completed (1 … 2^31 − 1 ms; default 1800000, half an hour). Reached, what still
   * runs is interrupted (killed after `interruptGraceMs`), the run ends `completed`, and
   * `cutOff` names it (`idleWaitMs`).
   */
  idleWaitMs?: number
  /**
   * The app answers server requests (approvals, plan mode's questions, permissions, MCP
   * elicitations, dynamic tool calls) with the method's response type. `undefined` or a
   * throw: the fixed policy's reply. An answer that does not fit the method's response
   * type is not sent: the method's refusal goes (under `full` too), and the event says
   * `unfit` and why. Not with `readOnly`.
   */
  onServerRequest?: OnServerRequest
  /**
   * How long `onServerRequest` has for an answer before the fixed policy's reply goes
   * (`timedOut`): 1 … 2^31 − 1 ms; default 600000.
   */
  serverRequestTimeoutMs?: number
  /** The prompt; exactly one of `prompt` and `input`. */
  prompt?: string
  /** Text and images, in order; exactly one of `prompt` and `input`. */
  input?: Array<InputItem>
  /** The reasoning effort (`low`, `medium`, `high`, … as the model offers them). */
  effort?: string
  /**
   * Structured output: a JSON Schema (draft-07, 2019-09 or 2020-12 by its `$schema`,
   * 2020-12 without one) or a Standard Schema that can write itself as JSON Schema (zod 4,
   * arktype, valibot through `toStandardJsonSchema`). Codex sends it with strict mode on,
   * so a schema strict mode would refuse is a TypeError naming its path.
   * `terminal.structuredOutput` is the parsed final message; `runUtility` also validates
   * it.
   */
  outputSchema?: object
  /**
   * Codex's collaboration mode for this turn (`plan`: it plans and may ask questions);
   * `default` switches a thread left in plan mode back.
   */
  mode?: 'default' | 'plan'
  /**
   * The app's own functions, offered to the model on this thread (Codex's dynamic tools;
   * docs/app-tools.md): by name (`^[a-zA-Z0-9_-]+$`, at most 128 characters, not one of
   * Codex's own tools), each `{ description, inputSchema, execute, timeoutMs? }`. The
   * arguments are checked against `inputSchema` before `execute` runs; each call has a
   * deadline (`timeoutMs`, 1 … 2^31 − 1 ms; default 120000) and the turn's abort. A thread
   * keeps the tools it was started with: given with `threadId`, they answer its calls, and a
   * call of a stored tool not given here gets a failure text. Not with `readOnly`.
   */
  tools?: Record<string, AppTool>
  /**
   * Aborts it: before a prepared turn's `start()` it is disposed; a running turn is
   * interrupted (killed after `interruptGraceMs`), its terminal's `abortReason` the
   * signal's reason.
   */
  signal?: AbortSignal
  /**
   * The thread is not stored: not listed, not resumable (`thread/start`'s
   * `ephemeral`). `runUtility` defaults to true.
   */
  ephemeral?: boolean
}

/**
 * What `prepareTurn` takes: `runTurn`'s options without the turn's own input
 * (`PreparedTurn.start` gives it), and how long the prepared turn waits for it.
 */
export type PrepareTurnOptions = {
  /** Absolute path of the working directory (a Windows path with a WSL `locus`). */
  cwd: string
  /** The model (Codex's default without it; an empty one is none). */
  model?: string
  /**
   * `full` (default): full access; command and file-change approvals are granted, a
   * permission request gets an empty profile, an elicitation is declined, a question or
   * any other request a method error (docs/agent-loop.md). `readOnly`: nothing is
   * granted, every MCP server is off, confirmed by the server. `ask`: the user's own
   * workspace-write sandbox for `cwd` (`sandbox_workspace_write` as `config/read`
   * reports it), where Codex asks before it escalates; `onServerRequest` is required and
   * answers.
   */
  access?: 'full' | 'readOnly' | 'ask'
  /** Resume this stored thread (`thread/resume`); without it a new thread starts. */
  threadId?: string
  /** Only these MCP servers, each on loopback (docs/mcp-and-isolation.md). */
  mcp?: McpPolicy
  /**
   * Use this Codex executable as given instead of discovering one (inside the
   * distribution with `locus`).
   */
  codexPath?: string
  /** Run discovery and the child inside a WSL distribution; `cwd` may be a Windows path. */
  locus?: Locus
  /** Merged over the inherited environment for the child. */
  env?: Record<string, string>
  /**
   * How long an interrupted turn has to end before its child is killed: 0 … 2^31 − 1
   * ms; default 2000.
   */
  interruptGraceMs?: number
  /**
   * Per request (initialize, thread/*, turn/start…) and for the `mcp` inventory, 1 …
   * 2^31 − 1 ms; default 30000.
   */
  requestTimeoutMs?: number
  /**
   * `turnCompleted` (default): the run ends with the turn's `turn/completed`; whatever
   * Codex was still doing for it is named in `terminal.cutOff`. `idle`: the run also
   * waits for every sub-agent the turn started and every goal continuation Codex runs
   * on its own.
   */
  until?: 'turnCompleted' | 'idle'
  /**
   * With `until: 'idle'` only: the goal continuation turns the run waits for at most
   * (0 … 2^32 − 1; default 20). Reached, the run ends `completed` and `cutOff` names
   * the goal (`maxContinuations`).
   */
  maxContinuations?: number
  /**
   * With `until: 'idle'` only: how long the run waits at most after the user's turn
   * completed (1 … 2^31 − 1 ms; default 1800000, half an hour). Reached, what still
   * runs is interrupted (killed after `interruptGraceMs`), the run ends `completed`, and
   * `cutOff` names it (`idleWaitMs`).
   */
  idleWaitMs?: number
  /**
   * The app answers server requests (approvals, plan mode's questions, permissions, MCP
   * elicitations, dynamic tool calls) with the method's response type. `undefined` or a
   * throw: the fixed policy's reply. An answer that does not fit the method's response
   * type is not sent: the method's refusal goes (under `full` too), and the event says
   * `unfit` and why. Not with `readOnly`.
   */
  onServerRequest?: OnServerRequest
  /**
   * How long `onServerRequest` has for an answer before the fixed policy's reply goes
   * (`timedOut`): 1 … 2^31 − 1 ms; default 600000.
   */
  serverRequestTimeoutMs?: number
  /** Codex's collaboration mode for the turn (`plan`: it plans and may ask questions). */
  mode?: 'default' | 'plan'
  /**
   * A prepared turn not started within this ends its child (its Turn is then cancelled):
   * 1 … 2^31 − 1 ms; default 300000.
   */
  idleTimeoutMs?: number
  /**
   * The app's own functions, offered to the model on this thread (Codex's dynamic tools;
   * docs/app-tools.md): by name (`^[a-zA-Z0-9_-]+$`, at most 128 characters, not one of
   * Codex's own tools), each `{ description, inputSchema, execute, timeoutMs? }`. The
   * arguments are checked against `inputSchema` before `execute` runs; each call has a
   * deadline (`timeoutMs`, 1 … 2^31 − 1 ms; default 120000) and the turn's abort. A thread
   * keeps the tools it was started with: given with `threadId`, they answer its calls, and a
   * call of a stored tool not given here gets a failure text. Not with `readOnly`.
   */
  tools?: Record<string, AppTool>
  /**
   * Aborts it: before a prepared turn's `start()` it is disposed; a running turn is
   * interrupted (killed after `interruptGraceMs`), its terminal's `abortReason` the
   * signal's reason.
   */
  signal?: AbortSignal
  /**
   * The thread is not stored: not listed, not resumable (`thread/start`'s
   * `ephemeral`). `runUtility` defaults to true.
   */
  ephemeral?: boolean
}

/**
 * What `PreparedTurn.start` takes besides a bare prompt or item list: the turn's input
 * (exactly one of `prompt` and `input`) and how the answer is to come back.
 */
export type TurnStartFields = {
  /** The prompt; exactly one of `prompt` and `input`. */
  prompt?: string
  /** Text and images, in order; exactly one of `prompt` and `input`. */
  input?: Array<InputItem>
  /** Structured output, as `runTurn`'s `outputSchema`. */
  outputSchema?: object
  /** The reasoning effort for this turn. */
  effort?: string
  /** The model for this turn (`turn/start` carries it); else the prepared turn's. */
  model?: string
}

/** What a review looks at: the protocol's `ReviewTarget`. */
export type ReviewTarget =
  | { type: 'uncommittedChanges' }
  | {
      type: 'baseBranch'
      /** The branch the changes are compared with. */
      branch: string
    }
  | {
      type: 'commit'
      /** The commit to review. */
      sha: string
      /** Its title, where the app shows one (non-empty). */
      title?: string
    }
  | {
      type: 'custom'
      /** What to review, in the user's words. */
      instructions: string
    }

/** What `runReview` takes: a turn's options with a `target` instead of the turn's input. */
export type ReviewOptions = {
  /** Absolute path of the working directory (a Windows path with a WSL `locus`). */
  cwd: string
  /** The model (Codex's default without it; an empty one is none). */
  model?: string
  /**
   * `full` (default): full access; command and file-change approvals are granted, a
   * permission request gets an empty profile, an elicitation is declined, a question or
   * any other request a method error (docs/agent-loop.md). `readOnly`: nothing is
   * granted, every MCP server is off, confirmed by the server. `ask`: the user's own
   * workspace-write sandbox for `cwd` (`sandbox_workspace_write` as `config/read`
   * reports it), where Codex asks before it escalates; `onServerRequest` is required and
   * answers.
   */
  access?: 'full' | 'readOnly' | 'ask'
  /** Resume this stored thread (`thread/resume`); without it a new thread starts. */
  threadId?: string
  /** Only these MCP servers, each on loopback (docs/mcp-and-isolation.md). */
  mcp?: McpPolicy
  /**
   * Use this Codex executable as given instead of discovering one (inside the
   * distribution with `locus`).
   */
  codexPath?: string
  /** Run discovery and the child inside a WSL distribution; `cwd` may be a Windows path. */
  locus?: Locus
  /** Merged over the inherited environment for the child. */
  env?: Record<string, string>
  /**
   * How long an interrupted turn has to end before its child is killed: 0 … 2^31 − 1
   * ms; default 2000.
   */
  interruptGraceMs?: number
  /**
   * Per request (initialize, thread/*, turn/start…) and for the `mcp` inventory, 1 …
   * 2^31 − 1 ms; default 30000.
   */
  requestTimeoutMs?: number
  /**
   * `turnCompleted` (default): the run ends with the turn's `turn/completed`; whatever
   * Codex was still doing for it is named in `terminal.cutOff`. `idle`: the run also
   * waits for every sub-agent the turn started and every goal continuation Codex runs
   * on its own.
   */
  until?: 'turnCompleted' | 'idle'
  /**
   * With `until: 'idle'` only: the goal continuation turns the run waits for at most
   * (0 … 2^32 − 1; default 20). Reached, the run ends `completed` and `cutOff` names
   * the goal (`maxContinuations`).
   */
  maxContinuations?: number
  /**
   * With `until: 'idle'` only: how long the run waits at most after the user's turn
   * completed (1 … 2^31 − 1 ms; default 1800000, half an hour). Reached, what still
   * runs is interrupted (killed after `interruptGraceMs`), the run ends `completed`, and
   * `cutOff` names it (`idleWaitMs`).
   */
  idleWaitMs?: number
  /**
   * The app answers server requests (approvals, plan mode's questions, permissions, MCP
   * elicitations, dynamic tool calls) with the method's response type. `undefined` or a
   * throw: the fixed policy's reply. An answer that does not fit the method's response
   * type is not sent: the method's refusal goes (under `full` too), and the event says
   * `unfit` and why. Not with `readOnly`.
   */
  onServerRequest?: OnServerRequest
  /**
   * How long `onServerRequest` has for an answer before the fixed policy's reply goes
   * (`timedOut`): 1 … 2^31 − 1 ms; default 600000.
   */
  serverRequestTimeoutMs?: number
  /**
   * What to review: the uncommitted changes, a branch's, a commit's, or what the user
   * says.
   */
  target: ReviewTarget
  /**
   * Taken as a turn's options take it, and not sent: `review/start` has no effort (the
   * review runs at the thread's).
   */
  effort?: string
  /**
   * Aborts it: before a prepared turn's `start()` it is disposed; a running turn is
   * interrupted (killed after `interruptGraceMs`), its terminal's `abortReason` the
   * signal's reason.
   */
  signal?: AbortSignal
  /**
   * The thread is not stored: not listed, not resumable (`thread/start`'s
   * `ephemeral`). `runUtility` defaults to true.
   */
  ephemeral?: boolean
}

/**
 * What `openConversation` takes: the options of every turn of the conversation (`runTurn`'s
 * without the turn's own input, and without `signal`: `close()` ends what it runs), and the
 * conversation's own.
 */
export type ConversationOptions = {
  /** Absolute path of the working directory (a Windows path with a WSL `locus`). */
  cwd: string
  /** The model (Codex's default without it; an empty one is none). */
  model?: string
  /**
   * `full` (default): full access; command and file-change approvals are granted, a
   * permission request gets an empty profile, an elicitation is declined, a question or
   * any other request a method error (docs/agent-loop.md). `readOnly`: nothing is
   * granted, every MCP server is off, confirmed by the server. `ask`: the user's own
   * workspace-write sandbox for `cwd` (`sandbox_workspace_write` as `config/read`
   * reports it), where Codex asks before it escalates; `onServerRequest` is required and
   * answers.
   */
  access?: 'full' | 'readOnly' | 'ask'
  /** Resume this stored thread (`thread/resume`); without it a new thread starts. */
  threadId?: string
  /** Only these MCP servers, each on loopback (docs/mcp-and-isolation.md). */
  mcp?: McpPolicy
  /**
   * Use this Codex executable as given instead of discovering one (inside the
   * distribution with `locus`).
   */
  codexPath?: string
  /** Run discovery and the child inside a WSL distribution; `cwd` may be a Windows path. */
  locus?: Locus
  /** Merged over the inherited environment for the child. */
  env?: Record<string, string>
  /**
   * How long an interrupted turn has to end before its child is killed: 0 … 2^31 − 1
   * ms; default 2000.
   */
  interruptGraceMs?: number
  /**
   * Per request (initialize, thread/*, turn/start…) and for the `mcp` inventory, 1 …
   * 2^31 − 1 ms; default 30000.
   */
  requestTimeoutMs?: number
  /**
   * `turnCompleted` (default): the run ends with the turn's `turn/completed`; whatever
   * Codex was still doing for it is named in `terminal.cutOff`. `idle`: the run also
   * waits for every sub-agent the turn started and every goal continuation Codex runs
   * on its own.
   */
  until?: 'turnCompleted' | 'idle'
  /**
   * With `until: 'idle'` only: the goal continuation turns the run waits for at most
   * (0 … 2^32 − 1; default 20). Reached, the run ends `completed` and `cutOff` names
   * the goal (`maxContinuations`).
   */
  maxContinuations?: number
  /**
   * With `until: 'idle'` only: how long the run waits at most after the user's turn
   * completed (1 … 2^31 − 1 ms; default 1800000, half an hour). Reached, what still
   * runs is interrupted (killed after `interruptGraceMs`), the run ends `completed`, and
   * `cutOff` names it (`idleWaitMs`).
   */
  idleWaitMs?: number
  /**
   * The app answers server requests (approvals, plan mode's questions, permissions, MCP
   * elicitations, dynamic tool calls) with the method's response type. `undefined` or a
   * throw: the fixed policy's reply. An answer that does not fit the method's response
   * type is not sent: the method's refusal goes (under `full` too), and the event says
   * `unfit` and why. Not with `readOnly`.
   */
  onServerRequest?: OnServerRequest
  /**
   * How long `onServerRequest` has for an answer before the fixed policy's reply goes
   * (`timedOut`): 1 … 2^31 − 1 ms; default 600000.
   */
  serverRequestTimeoutMs?: number
  /** The reasoning effort of the turns (a send may change it for the turns after it). */
  effort?: string
  /** Codex's collaboration mode of the turns (`plan`: they plan and may ask questions). */
  mode?: 'default' | 'plan'
  /**
   * Default true: the next turn's child is started (up to `thread/resume`) as soon as the
   * previous turn ended, and waits for the next send, as `prepareTurn` does.
   */
  prepareNext?: boolean
  /**
   * How long a prepared child waits for the next send before it is ended, counted from
   * when it is prepared (`prepareTurn`'s `idleTimeoutMs`: 1 … 2^31 − 1 ms; default 300000,
   * 5 minutes). A send after that starts a child of its own on the thread, as a send with
   * `prepareNext: false` does.
   */
  idleTimeoutMs?: number
  /**
   * Called with every Turn the conversation starts for the app's input, as soon as it
   * exists: the one a send returns, a queued one, and the one an input becomes when it was
   * too late to steer it into the running turn (that turn had ended, or Codex refused the
   * steer).
   */
  onTurn?: (turn: Turn) => void
  /**
   * Not an option of a conversation: one child per turn, and an ephemeral thread ends with
   * its child (a TypeError).
   */
  ephemeral?: false
  /**
   * The app's own functions, offered to the model on the conversation's thread (every send and fork passes them on) (Codex's dynamic tools;
   * docs/app-tools.md): by name (`^[a-zA-Z0-9_-]+$`, at most 128 characters, not one of
   * Codex's own tools), each `{ description, inputSchema, execute, timeoutMs? }`. The
   * arguments are checked against `inputSchema` before `execute` runs; each call has a
   * deadline (`timeoutMs`, 1 … 2^31 − 1 ms; default 120000) and the turn's abort. A thread
   * keeps the tools it was started with: given with `threadId`, they answer its calls, and a
   * call of a stored tool not given here gets a failure text. Not with `readOnly`.
   */
  tools?: Record<string, AppTool>
}

/** What `Conversation.send` takes besides the input. */
export type SendOptions = {
  /**
   * While a turn runs: `steer` (default) adds the input to it (`turn/steer`) and returns that
   * Turn; `queue` returns a Turn that starts when the running one (and those queued before it)
   * ended; `reject` throws a CodexError `TURN_RUNNING`.
   */
  whileRunning?: 'steer' | 'queue' | 'reject'
  /**
   * The model for this turn and the ones after it (`turn/start` carries it; Codex keeps it for
   * the thread).
   */
  model?: string
  /** The reasoning effort for this turn and the ones after it. */
  effort?: string
}

/** What `Conversation.fork` takes. */
export type ConversationForkOptions = {
  /** The last turn the fork keeps (inclusive); without it, the whole history. */
  lastTurnId?: string
  /** The new conversation's `onTurn` (default: this one's). */
  onTurn?: (turn: Turn) => void
}

/**
 * What every call around turns takes. Each call is one short-lived `codex app-server` child,
 * found and started as a turn's is and ended (with everything it started) before the promise
 * settles.
 */
export type CallOptions = {
  /**
   * Absolute; where the child runs (default: a neutral directory such as the temp dir).
   * `listThreads` also filters by it, `listSkills` and `listMcpServers` look there.
   */
  cwd?: string
  /**
   * Use this Codex executable as given instead of discovering one (inside the
   * distribution with `locus`).
   */
  codexPath?: string
  /** Run discovery and the child inside a WSL distribution. */
  locus?: Locus
  /** Merged over the inherited environment for the child (e.g. `CODEX_HOME`). */
  env?: Record<string, string>
  /**
   * Ends the child at once; the call rejects with `CANCELLED` and the signal's reason
   * as `cause`.
   */
  signal?: AbortSignal
  /** Per request (`initialize` and the call's own), 1 … 2^31 − 1 ms; default 30000. */
  requestTimeoutMs?: number
}

/** What `listModels` takes. */
export type ListModelsOptions = {
  /**
   * Absolute; where the child runs (default: a neutral directory such as the temp dir).
   * `listThreads` also filters by it, `listSkills` and `listMcpServers` look there.
   */
  cwd?: string
  /**
   * Use this Codex executable as given instead of discovering one (inside the
   * distribution with `locus`).
   */
  codexPath?: string
  /** Run discovery and the child inside a WSL distribution. */
  locus?: Locus
  /** Merged over the inherited environment for the child (e.g. `CODEX_HOME`). */
  env?: Record<string, string>
  /**
   * Ends the child at once; the call rejects with `CANCELLED` and the signal's reason
   * as `cause`.
   */
  signal?: AbortSignal
  /** Per request (`initialize` and the call's own), 1 … 2^31 − 1 ms; default 30000. */
  requestTimeoutMs?: number
  /** Hidden models too (left out by default, even where Codex lists them). */
  includeHidden?: boolean
}

/** What `listThreads` takes: which page of which threads. */
export type ListThreadsOptions = {
  /**
   * Absolute; where the child runs (default: a neutral directory such as the temp dir).
   * `listThreads` also filters by it, `listSkills` and `listMcpServers` look there.
   */
  cwd?: string
  /**
   * Use this Codex executable as given instead of discovering one (inside the
   * distribution with `locus`).
   */
  codexPath?: string
  /** Run discovery and the child inside a WSL distribution. */
  locus?: Locus
  /** Merged over the inherited environment for the child (e.g. `CODEX_HOME`). */
  env?: Record<string, string>
  /**
   * Ends the child at once; the call rejects with `CANCELLED` and the signal's reason
   * as `cause`.
   */
  signal?: AbortSignal
  /** Per request (`initialize` and the call's own), 1 … 2^31 − 1 ms; default 30000. */
  requestTimeoutMs?: number
  /** At most this many threads (1 or more; Codex's default without it). */
  limit?: number
  /** `nextCursor` of the page before (non-empty); `null` or none: the first page. */
  cursor?: string | null
  /** `true`: only archived threads; otherwise only threads not archived. */
  archived?: boolean
  /** Only threads whose title contains this. */
  searchTerm?: string
  /**
   * `created_at` (Codex's default), `updated_at`, `recency_at`, `section_position`; newest
   * first.
   */
  sortKey?: ThreadSortKey
  /**
   * Only threads of these sources. Codex's default is the interactive ones (app-server and
   * CLI sessions): threads of sub-agents (`subAgent`, `subAgentThreadSpawn`, …) and of
   * `codex exec` (`exec`) are listed only when asked for here.
   */
  sourceKinds?: ThreadSourceKind[]
}

/** What `readThread` takes. */
export type ReadThreadOptions = {
  /**
   * Absolute; where the child runs (default: a neutral directory such as the temp dir).
   * `listThreads` also filters by it, `listSkills` and `listMcpServers` look there.
   */
  cwd?: string
  /**
   * Use this Codex executable as given instead of discovering one (inside the
   * distribution with `locus`).
   */
  codexPath?: string
  /** Run discovery and the child inside a WSL distribution. */
  locus?: Locus
  /** Merged over the inherited environment for the child (e.g. `CODEX_HOME`). */
  env?: Record<string, string>
  /**
   * Ends the child at once; the call rejects with `CANCELLED` and the signal's reason
   * as `cause`.
   */
  signal?: AbortSignal
  /** Per request (`initialize` and the call's own), 1 … 2^31 − 1 ms; default 30000. */
  requestTimeoutMs?: number
  /** The thread's turns and their items too. */
  includeTurns?: boolean
}

/** What `forkThread` takes. */
export type ForkThreadOptions = {
  /**
   * Absolute; where the child runs (default: a neutral directory such as the temp dir).
   * `listThreads` also filters by it, `listSkills` and `listMcpServers` look there.
   */
  cwd?: string
  /**
   * Use this Codex executable as given instead of discovering one (inside the
   * distribution with `locus`).
   */
  codexPath?: string
  /** Run discovery and the child inside a WSL distribution. */
  locus?: Locus
  /** Merged over the inherited environment for the child (e.g. `CODEX_HOME`). */
  env?: Record<string, string>
  /**
   * Ends the child at once; the call rejects with `CANCELLED` and the signal's reason
   * as `cause`.
   */
  signal?: AbortSignal
  /** Per request (`initialize` and the call's own), 1 … 2^31 − 1 ms; default 30000. */
  requestTimeoutMs?: number
  /** The last turn the fork keeps (inclusive); without it, the whole history. */
  lastTurnId?: string
}

/** What `revertThread` takes: the turn from which on the history goes. */
export type RevertThreadOptions = {
  /**
   * Absolute; where the child runs (default: a neutral directory such as the temp dir).
   * `listThreads` also filters by it, `listSkills` and `listMcpServers` look there.
   */
  cwd?: string
  /**
   * Use this Codex executable as given instead of discovering one (inside the
   * distribution with `locus`).
   */
  codexPath?: string
  /** Run discovery and the child inside a WSL distribution. */
  locus?: Locus
  /** Merged over the inherited environment for the child (e.g. `CODEX_HOME`). */
  env?: Record<string, string>
  /**
   * Ends the child at once; the call rejects with `CANCELLED` and the signal's reason
   * as `cause`.
   */
  signal?: AbortSignal
  /** Per request (`initialize` and the call's own), 1 … 2^31 − 1 ms; default 30000. */
  requestTimeoutMs?: number
  /** The first turn to remove: it and every later turn leave the thread's history. */
  beforeTurnId: string
}

/** What `listMcpServers` takes. */
export type ListMcpServersOptions = {
  /**
   * Absolute; where the child runs (default: a neutral directory such as the temp dir).
   * `listThreads` also filters by it, `listSkills` and `listMcpServers` look there.
   */
  cwd?: string
  /**
   * Use this Codex executable as given instead of discovering one (inside the
   * distribution with `locus`).
   */
  codexPath?: string
  /** Run discovery and the child inside a WSL distribution. */
  locus?: Locus
  /** Merged over the inherited environment for the child (e.g. `CODEX_HOME`). */
  env?: Record<string, string>
  /**
   * Ends the child at once; the call rejects with `CANCELLED` and the signal's reason
   * as `cause`.
   */
  signal?: AbortSignal
  /** Per request (`initialize` and the call's own), 1 … 2^31 − 1 ms; default 30000. */
  requestTimeoutMs?: number
  /**
   * Let Codex start every enabled server to ask it (stdio commands run, remote servers are
   * contacted); without it, none is started.
   */
  connect?: boolean
}

/** What `startLogin` takes: which ChatGPT login, and how long it may wait for the user. */
export type StartLoginOptions = {
  /**
   * Absolute; where the child runs (default: a neutral directory such as the temp dir).
   * `listThreads` also filters by it, `listSkills` and `listMcpServers` look there.
   */
  cwd?: string
  /**
   * Use this Codex executable as given instead of discovering one (inside the
   * distribution with `locus`).
   */
  codexPath?: string
  /** Run discovery and the child inside a WSL distribution. */
  locus?: Locus
  /** Merged over the inherited environment for the child (e.g. `CODEX_HOME`). */
  env?: Record<string, string>
  /**
   * Ends the child at once; the call rejects with `CANCELLED` and the signal's reason
   * as `cause`.
   */
  signal?: AbortSignal
  /** Per request (`initialize` and the call's own), 1 … 2^31 − 1 ms; default 30000. */
  requestTimeoutMs?: number
  /**
   * `'chatgpt'` (default): in the browser; `'chatgptDeviceCode'`: a code entered on another
   * device.
   */
  type?: 'chatgpt' | 'chatgptDeviceCode'
  /**
   * How long the login may wait for the user, from when `started` resolves, before it is
   * cancelled (`REQUEST_TIMEOUT`); 1 … 2^31 − 1 ms, default 600000.
   */
  timeoutMs?: number
}

/** What `setGoal` changes; what is absent stays as it is. */
export type GoalChange = {
  /** What the thread works toward (non-empty). */
  objective?: string
  /** `active`, `paused`, …: the protocol's `ThreadGoalStatus`. */
  status?: ThreadGoalStatus
  /** The tokens the goal may spend (a positive integer); `null`: no budget. */
  tokenBudget?: number | null
}

/** What `discoverCodex` takes: where to look, with which environment, and whether to look again. */
export type DiscoverOptions = {
  /** Discover inside this WSL distribution (through `wsl.exe`). */
  locus?: Locus
  /** Merged over the process environment (`PATH`, `HOME`, `SHELL`, `RENNET_CODEX_BIN`, …). */
  env?: Record<string, string>
  /** Probe again instead of answering from the per-process cache. */
  refresh?: boolean
}

/** What `setLogger` takes besides the logger. */
export type LoggerOptions = {
  /**
   * `RENNET_LOG` syntax, e.g. `rennet_codex=debug`; default: `RENNET_LOG`, else
   * `rennet_codex=info`.
   */
  filter?: string
}
