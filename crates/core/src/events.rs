//! The harness events a turn produces, in the shape JavaScript receives them.
//!
//! Native payloads (items, notification params, foreign frames) are carried as raw JSON so
//! that they cross into JavaScript exactly as Codex sent them, without a parse-and-rewrite.

pub use crate::failure::{Code, Failure, FailureSource};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use ts_rs::TS;

/// Token counts of one turn or of a whole thread.
#[derive(Serialize, TS, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens, the cached ones included.
    pub input: i64,
    /// Input tokens read from the provider's cache.
    pub cache_read: i64,
    /// Output tokens, the reasoning ones included.
    pub output: i64,
    /// Output tokens spent on reasoning.
    pub reasoning: i64,
    /// All tokens of the turn (or thread), as Codex counts them.
    pub total: i64,
}

impl Usage {
    /// `self - earlier`, for the share of a thread total that belongs to one turn; never below
    /// zero (a total that went down, as a server may report after compacting, counts nothing).
    pub fn since(self, earlier: Usage) -> Usage {
        let less = |a: i64, b: i64| a.saturating_sub(b).max(0);
        Usage {
            input: less(self.input, earlier.input),
            cache_read: less(self.cache_read, earlier.cache_read),
            output: less(self.output, earlier.output),
            reasoning: less(self.reasoning, earlier.reasoning),
            total: less(self.total, earlier.total),
        }
    }

    /// `self + other`, saturating: the usage of a turn and its sub-agents together.
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            input: self.input.saturating_add(other.input),
            cache_read: self.cache_read.saturating_add(other.cache_read),
            output: self.output.saturating_add(other.output),
            reasoning: self.reasoning.saturating_add(other.reasoning),
            total: self.total.saturating_add(other.total),
        }
    }
}

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum ReasoningPart {
    Summary,
    Text,
}

/// How a server-to-client request was answered.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum ReplyKind {
    Accepted,
    GrantedEmpty,
    Declined,
    MethodError,
    /// The app's handler answered.
    App,
    /// The app's handler did not answer in time (or gave no fitting answer): the fixed policy's reply went.
    TimedOut,
    /// The turn was ending: the request was answered so that nothing waits for it.
    Cancelled,
}

/// A sub-agent of the turn: a thread Codex started for it.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AgentRef {
    pub thread_id: String,
    /// Where Codex gives one (its `agentNickname`).
    pub nickname: Option<String>,
    /// Where Codex gives one (`subAgentActivity.agentPath`).
    pub path: Option<String>,
    /// 1 for an agent the turn's own thread started, 2 for one of its agents', …
    pub depth: u32,
}

/// How a sub-agent's work ended, as far as the turn saw it.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum AgentStatus {
    Completed,
    Interrupted,
    Failed,
    /// Still running (or due to start) when the child ended.
    CutOff,
}

/// A sub-agent in the terminal event.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AgentOutcome {
    pub thread_id: String,
    pub nickname: Option<String>,
    pub status: AgentStatus,
    pub usage: Option<Usage>,
}

/// Work Codex was still doing, or would have done, when the run ended it.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum CutOff {
    Agent { thread_id: String, nickname: Option<String>, reason: CutReason },
    Goal { objective: String, status: String, reason: CutReason },
    BackgroundTerminal { item_id: String, process_id: Option<String>, command: String },
}

/// Why the run ended before a sub-agent's or a goal's work did (a `cutOff` entry's `reason`).
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
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

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum PassthroughReason {
    ForeignThread,
    ForeignTurn,
    UnknownResponse,
}

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum DiagnosticSource {
    Preamble,
    Stderr,
    /// The package's own word on something it did (an app's answer it could not send).
    Client,
}

#[derive(Serialize, Debug)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum HarnessEvent {
    Started {
        turn_key: String,
        pid: u32,
        codex_path: String,
        codex_version: Option<String>,
        user_agent: String,
    },
    ThreadStarted {
        thread_id: String,
        resumed: bool,
    },
    TurnStarted {
        thread_id: String,
        turn_id: String,
    },
    ItemStarted {
        item: Box<RawValue>,
    },
    ItemCompleted {
        item: Box<RawValue>,
    },
    MessageDelta {
        item_id: String,
        delta: String,
        /// See [`HarnessEvent::CommandOutput`].
        #[serde(skip_serializing_if = "is_false")]
        replace: bool,
    },
    ReasoningDelta {
        item_id: String,
        delta: String,
        part: ReasoningPart,
        index: i64,
        /// See [`HarnessEvent::CommandOutput`]; of this `part` and `index` only.
        #[serde(skip_serializing_if = "is_false")]
        replace: bool,
    },
    CommandOutput {
        item_id: String,
        delta: String,
        /// The delta is the item's whole text, as its completion carries it, and replaces what
        /// the deltas before it streamed: that was not its beginning (Codex did not stream all
        /// of it, or kept only part of it). Sent only when true, as the item's last delta.
        #[serde(skip_serializing_if = "is_false")]
        replace: bool,
    },
    Usage {
        turn: Usage,
        thread: Usage,
        context_window: Option<i64>,
    },
    Retrying {
        message: String,
        codex_error_info: Value,
    },
    /// `turn/plan/updated`.
    Plan {
        explanation: Option<String>,
        plan: Box<RawValue>,
    },
    /// `turn/diff/updated`: the turn's whole unified diff so far.
    Diff {
        diff: String,
    },
    /// `account/rateLimits/updated`.
    RateLimits {
        rate_limits: Box<RawValue>,
    },
    ServerRequest {
        method: String,
        id: Value,
        /// The request's params as Codex sent them.
        params: Box<RawValue>,
        /// The sub-agent that asks, when it is one of the turn's.
        agent: Option<AgentRef>,
        reply: ReplyKind,
    },
    /// One event of a sub-agent the turn started, nested.
    Agent {
        agent: AgentRef,
        event: Box<HarnessEvent>,
    },
    /// `thread/goal/updated` of the turn's thread (the protocol's `ThreadGoal`).
    Goal {
        goal: Box<RawValue>,
    },
    /// `item/plan/delta`: plan mode's proposed plan, as it streams.
    PlanDelta {
        item_id: String,
        delta: String,
        /// See [`HarnessEvent::CommandOutput`].
        #[serde(skip_serializing_if = "is_false")]
        replace: bool,
    },
    /// An item Codex started and never completed (a response dropped for a steer, a session
    /// still open): closed for the app, no later than the turn's end.
    ItemDropped {
        item_id: String,
    },
    Native {
        method: String,
        params: Box<RawValue>,
    },
    Passthrough {
        reason: PassthroughReason,
        message: Box<RawValue>,
    },
    Diagnostic {
        source: DiagnosticSource,
        line: String,
    },
    /// The server completed the turn: what the terminal event will say. The terminal follows
    /// once the child and everything it started are gone.
    TurnCompleted(Terminal),
    Terminal(Terminal),
}

fn is_false(b: &bool) -> bool {
    !b
}

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Status {
    Completed,
    Failed,
    Cancelled,
}

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Cancellation {
    Interrupted,
    Killed,
}

/// The one event that ends every turn.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Terminal {
    pub status: Status,
    pub thread_id: Option<String>,
    pub turn_id: Option<String>,
    /// The thread's last completed agent message, whatever the outcome.
    pub final_message: Option<String>,
    /// The thread's last completed `plan` item (plan mode's proposed plan), whatever the outcome.
    pub proposed_plan: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<Value>,
    pub usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancellation: Option<Cancellation>,
    pub failure: Option<Failure>,
    /// Every sub-agent the turn started, and how each ended.
    pub agents: Vec<AgentOutcome>,
    /// `usage` and every agent's usage together.
    pub total_usage: Option<Usage>,
    /// What Codex was still doing, or would have done, when the child ended.
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
            failure: None,
            agents: Vec::new(),
            total_usage: None,
            cut_off: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Usage;
    use crate::protocol::TokenBreakdown;

    #[test]
    fn usage_is_never_negative() {
        let u = |n: i64| Usage { input: n, cache_read: n, output: n, reasoning: n, total: n };
        assert_eq!(u(5).since(u(7)), u(0));
        assert_eq!(u(i64::MAX).since(u(i64::MIN)), u(i64::MAX));
        assert_eq!(u(i64::MAX).plus(u(1)), u(i64::MAX));
        let reported: TokenBreakdown = serde_json::from_value(serde_json::json!({
            "inputTokens": i64::MIN, "cachedInputTokens": -1, "outputTokens": 3, "reasoningOutputTokens": 0, "totalTokens": -2
        }))
        .unwrap();
        assert_eq!(Usage::from(reported), Usage { input: 0, cache_read: 0, output: 3, reasoning: 0, total: 0 });
    }
}
