//! The harness events a turn produces, in the shape JavaScript receives them.
//!
//! Native payloads (items, notification params, foreign frames) are carried as raw JSON so
//! that they cross into JavaScript exactly as Codex sent them, without a parse-and-rewrite.

pub use crate::failure::{Code, Failure, FailureSource};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// Token counts of one turn or of a whole thread.
#[derive(Serialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input: i64,
    pub cache_read: i64,
    pub output: i64,
    pub reasoning: i64,
    pub total: i64,
}

impl Usage {
    /// `self - earlier`, for the share of a thread total that belongs to one turn.
    pub fn since(self, earlier: Usage) -> Usage {
        Usage {
            input: self.input - earlier.input,
            cache_read: self.cache_read - earlier.cache_read,
            output: self.output - earlier.output,
            reasoning: self.reasoning - earlier.reasoning,
            total: self.total - earlier.total,
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
    },
    ReasoningDelta {
        item_id: String,
        delta: String,
        part: ReasoningPart,
        index: i64,
    },
    CommandOutput {
        item_id: String,
        delta: String,
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
        reply: ReplyKind,
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
    pub final_message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<Value>,
    pub usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancellation: Option<Cancellation>,
    pub failure: Option<Failure>,
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
            structured_output: None,
            usage: None,
            cancellation: None,
            failure: None,
        }
    }
}
