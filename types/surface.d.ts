// Generated from the declarations of crates/core (crates/core/src/surface/): `pnpm surface:generate` writes it, `pnpm surface:check` holds it to them. Do not edit.
import type { ThreadItem } from './codex/v2/ThreadItem.js'
import type { TurnPlanStep } from './codex/v2/TurnPlanStep.js'
import type { RateLimitSnapshot } from './codex/v2/RateLimitSnapshot.js'
import type { ThreadGoal } from './codex/v2/ThreadGoal.js'
import type { CodexErrorInfo } from './codex/v2/CodexErrorInfo.js'
import type { ServerNotification } from './codex/ServerNotification.js'
import type { ServerRequest as ProtocolServerRequest } from './codex/ServerRequest.js'

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
 * and the event's `unfit` says why), or because the turn was ending (`cancelled`).
 */
export type ServerRequestReply =
  'accepted' | 'grantedEmpty' | 'declined' | 'methodError' | 'app' | 'timedOut' | 'unfit' | 'cancelled'

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
