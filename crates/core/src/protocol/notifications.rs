//! The params of the notifications the turn reads, as far as it reads them.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// `turn/completed` params: the parts the terminal frame needs.
#[derive(Deserialize, Debug)]
pub struct TurnCompletedParams {
    pub turn: CompletedTurn,
}

#[derive(Deserialize, Debug, Clone)]
pub struct CompletedTurn {
    pub id: String,
    pub status: String,
    #[serde(default)]
    pub error: Option<TurnError>,
    #[serde(default)]
    pub items: Vec<Box<RawValue>>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct TurnError {
    pub message: String,
    #[serde(default)]
    pub codex_error_info: Value,
    #[serde(default)]
    pub additional_details: Value,
}

/// `error` notification params.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ErrorParams {
    pub error: TurnError,
    #[serde(default)]
    pub will_retry: bool,
}

/// `turn/plan/updated` params: the plan's steps verbatim.
#[derive(Deserialize, Debug)]
pub struct PlanUpdatedParams {
    #[serde(default)]
    pub explanation: Option<String>,
    pub plan: Box<RawValue>,
}

/// `turn/diff/updated` params: the turn's whole unified diff so far.
#[derive(Deserialize, Debug)]
pub struct DiffUpdatedParams {
    pub diff: String,
}

/// `account/rateLimits/updated` params, verbatim.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitsUpdatedParams {
    pub rate_limits: Box<RawValue>,
}

/// The fields of a thread item that the turn state needs (final message selection).
#[derive(Deserialize, Debug)]
pub struct ItemHead {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub phase: Option<String>,
    /// A command's process (`commandExecution`): a session that outlives its command has one.
    #[serde(default, rename = "processId")]
    pub process_id: Option<String>,
    /// A command's command line (`commandExecution`).
    #[serde(default)]
    pub command: Option<String>,
    /// A completed command's output (`commandExecution`): stdout and stderr as Codex kept them.
    #[serde(default, rename = "aggregatedOutput")]
    pub aggregated_output: Option<String>,
}

/// The texts of a completed `reasoning` item: each summary part and each raw part whole.
#[derive(Deserialize, Debug)]
pub struct ReasoningTexts {
    #[serde(default)]
    pub summary: Vec<String>,
    #[serde(default)]
    pub content: Vec<String>,
}

/// `thread/tokenUsage/updated` params.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsageParams {
    pub token_usage: TokenUsage,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    pub total: TokenBreakdown,
    /// The latest model response alone.
    #[serde(default)]
    pub last: Option<TokenBreakdown>,
    #[serde(default)]
    pub model_context_window: Option<i64>,
}

#[derive(Deserialize, Debug, Default, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub struct TokenBreakdown {
    #[serde(default)]
    pub total_tokens: i64,
    #[serde(default)]
    pub input_tokens: i64,
    #[serde(default)]
    pub cached_input_tokens: i64,
    #[serde(default)]
    pub output_tokens: i64,
    #[serde(default)]
    pub reasoning_output_tokens: i64,
}

impl From<TokenBreakdown> for crate::events::Usage {
    /// A count below zero is no count: it reads as 0 rather than taking from a total.
    fn from(b: TokenBreakdown) -> Self {
        crate::events::Usage {
            input: b.input_tokens.max(0),
            cache_read: b.cached_input_tokens.max(0),
            output: b.output_tokens.max(0),
            reasoning: b.reasoning_output_tokens.max(0),
            total: b.total_tokens.max(0),
        }
    }
}
