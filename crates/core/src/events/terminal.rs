//! The outcome of a turn as the `terminal` event (and `turnCompleted`) carries it: its status,
//! its thread and turn, what the agent said, its usage, its sub-agents and what was cut off.

use super::Usage;
use crate::failure::Failure;
use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

/// How the turn ended: `completed`, `failed` or `cancelled`.
#[derive(Serialize, TS, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "TerminalStatus")]
pub enum Status {
    Completed,
    Failed,
    Cancelled,
}

/// How a cancelled turn ended: `interrupted` (Codex honoured `turn/interrupt`) or `killed`.
#[derive(Serialize, TS, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Cancellation {
    Interrupted,
    Killed,
}

/// A field JavaScript sets itself (the core never writes it), declared with the rest so that
/// its type is said once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetInJavaScript;

/// The outcome of a turn: what the `terminal` event (and `turnCompleted`) carries.
#[derive(Serialize, TS, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Terminal {
    /// How the turn ended.
    pub status: Status,
    /// The turn's thread; `null` where the turn ended before it existed.
    pub thread_id: Option<String>,
    /// The turn; `null` where it ended before the turn existed.
    pub turn_id: Option<String>,
    /// The turn's thread's last completed agent message, whatever the outcome; `null` when none completed.
    pub final_message: Option<String>,
    /// Plan mode's proposed plan: the text of the thread's last completed `plan` item, whatever
    /// the outcome; `null` when none (a plan is never read out of a message).
    pub proposed_plan: Option<String>,
    /// With `outputSchema`: the final message parsed (not validated: `runUtility` validates).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub structured_output: Option<Value>,
    /// This turn's usage (not the thread's running total); `null` where Codex reported none.
    pub usage: Option<Usage>,
    /// A cancelled turn: whether Codex honoured the interrupt or the child was killed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cancellation: Option<Cancellation>,
    /// Set on a cancelled turn: the reason of the abort that ended it, as it was given (the
    /// signal's `reason`, e.g. the `TimeoutError` of `AbortSignal.timeout()`, or
    /// `abort(reason)`'s); `undefined` after `abort()` without a reason or a `break` out of the loop.
    #[serde(skip_serializing)]
    #[ts(optional, type = "unknown")]
    pub abort_reason: SetInJavaScript,
    /// Why it failed; `null` unless `status` is `failed`.
    pub failure: Option<Failure>,
    /// Every sub-agent the turn started, and how each ended (`cutOff`: still running when the child ended).
    pub agents: Vec<AgentOutcome>,
    /// `usage` and every agent's usage together (`usage` stays the turn's own).
    pub total_usage: Option<Usage>,
    /// What Codex was still doing, or would have done, when the child ended: never cut off in silence.
    pub cut_off: Vec<CutOff>,
}

impl Terminal {
    /// A failure before any thread or turn existed (spawn, options, panics).
    pub fn failed(failure: Failure) -> Self {
        Terminal { failure: Some(failure), ..Self::empty() }
    }

    /// Aborted before anything was started.
    pub fn killed_before_start() -> Self {
        Terminal { status: Status::Cancelled, cancellation: Some(Cancellation::Killed), failure: None, ..Self::empty() }
    }

    /// A failed terminal that names nothing: the base the others are built on.
    pub fn empty() -> Self {
        Terminal {
            status: Status::Failed,
            thread_id: None,
            turn_id: None,
            final_message: None,
            proposed_plan: None,
            structured_output: None,
            usage: None,
            cancellation: None,
            abort_reason: SetInJavaScript,
            failure: None,
            agents: Vec::new(),
            total_usage: None,
            cut_off: Vec::new(),
        }
    }
}

/// How a sub-agent's work ended, as far as the turn saw it: `completed`, `interrupted`,
/// `failed`, or `cutOff` (still running, or due to start, when the child ended).
#[derive(Serialize, TS, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum AgentStatus {
    Completed,
    Interrupted,
    Failed,
    /// Still running (or due to start) when the child ended.
    CutOff,
}

/// A sub-agent in the terminal event: how its work ended.
#[derive(Serialize, TS, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AgentOutcome {
    /// The sub-agent's thread.
    pub thread_id: String,
    /// Where Codex gives one.
    pub nickname: Option<String>,
    /// How its work ended (`cutOff`: still running when the child ended).
    pub status: AgentStatus,
    /// Its own usage; `null` where Codex reported none.
    pub usage: Option<Usage>,
}

/// Work Codex was still doing, or would have done, when the run ended it, by `kind`: `agent`, a
/// sub-agent still running (or due) when the child ended, or one a bound of `until: 'idle'`
/// interrupted; `goal`, an active goal Codex would have gone on working on in turns of its own;
/// `backgroundTerminal`, a terminal session (`exec_command` with a tty) still open, which dies
/// with the child.
#[derive(Serialize, TS, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum CutOff {
    Agent {
        /// The sub-agent's thread.
        thread_id: String,
        /// Where Codex gives one.
        nickname: Option<String>,
        /// Why the run ended before the sub-agent's work did.
        reason: CutReason,
    },
    Goal {
        /// The goal's objective, as Codex holds it.
        objective: String,
        /// The goal's status when the run ended (`active`, …).
        status: String,
        /// Why the run ended before the goal's work did.
        reason: CutReason,
    },
    BackgroundTerminal {
        /// The `commandExecution` item that opened the session.
        item_id: String,
        /// The session's process id as Codex gives it; `null` where it gave none.
        process_id: Option<String>,
        /// The command the session runs.
        command: String,
    },
}

/// Why the run ended before that work did: `turnCompleted` (the run ended with the user's turn,
/// `until: 'turnCompleted'`; or with a last turn after which Codex starts no continuation),
/// `noContinuation` (`until: 'idle'`: the goal's continuation did not come within 5 s),
/// `maxContinuations` and `idleWaitMs` (the bounds of `until: 'idle'`), `abort` (the run was
/// aborted), `failed` (the run failed).
#[derive(Serialize, TS, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum CutReason {
    /// The run ended with a turn of the thread: the user's (`until: 'turnCompleted'`), or, with
    /// `until: 'idle'`, a last turn after which Codex starts no continuation.
    TurnCompleted,
    /// `until: 'idle'`: the continuation an active goal calls for did not come in time.
    NoContinuation,
    /// `until: 'idle'`: the goal's continuation turns reached `maxContinuations`.
    MaxContinuations,
    /// `until: 'idle'`: the wait reached `idleWaitMs` after the user's turn completed.
    IdleWaitMs,
    /// The run was aborted (or killed).
    Abort,
    /// The run failed (its process, its wire or a request).
    Failed,
}
