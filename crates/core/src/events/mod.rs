//! The harness events a turn produces, in the shape JavaScript receives them, and their
//! TypeScript (`types/surface.d.ts`, written by `surface/` from these declarations).
//!
//! Native payloads (items, notification params, foreign frames) are carried as raw JSON so
//! that they cross into JavaScript exactly as Codex sent them, without a parse-and-rewrite;
//! their TypeScript is the protocol's own type (`#[ts(type = …)]`, from `types/codex/`).
//!
//! Each event is a struct of its own with its doc comment (ts-rs writes a struct's doc, not an
//! enum variant's), and `HarnessEvent` tags it with its `type`: the JSON is the struct's fields
//! beside `type`, and its TypeScript `{ type: '…' } & TheEvent`.

mod terminal;

pub use crate::failure::{Code, Failure, FailureSource};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::sync::LazyLock;
pub use terminal::{AgentOutcome, AgentStatus, Cancellation, CutOff, CutReason, SetInJavaScript, Status, Terminal};
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

/// Which text of a reasoning item a `reasoningDelta` adds to: its `summary` or its raw `text`
/// (each at an `index`).
#[derive(Serialize, TS, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum ReasoningPart {
    Summary,
    Text,
}

/// How a server request was answered: by the fixed policy (`accepted`, `grantedEmpty`: a
/// permission request given an empty profile, `declined`, `methodError`), by the app (`app`), by
/// the fixed policy because the app's handler did not answer in time (`timedOut`), by a refusal
/// because the app's answer did not fit the method's response type (`unfit`: it was not sent,
/// and the event's `unfit` says why), or because the turn was ending (`cancelled`). A call of an
/// app tool (`tools`, `item/tool/call`): `app` (its `execute` answered), `invalidArguments`,
/// `timedOut` (past its `timeoutMs`), `cancelled` or `failed`, each with a text the model reads.
#[derive(Serialize, TS, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "ServerRequestReply")]
pub enum ReplyKind {
    Accepted,
    GrantedEmpty,
    Declined,
    MethodError,
    /// The app's handler answered (an app tool: its `execute`).
    App,
    /// The app's handler did not answer in time: the fixed policy's reply went (an app tool: a
    /// text saying it timed out, and its `execute`'s signal aborted).
    TimedOut,
    /// The app's answer did not fit the method's response type: it was not sent, the method's
    /// refusal went (whatever the access mode), and the event says why.
    Unfit,
    /// The turn was ending: the request was answered so that nothing waits for it (an app
    /// tool's call with a failure text, its `execute` aborted).
    Cancelled,
    /// An app tool's call whose arguments broke its `inputSchema`: `execute` was not run, the
    /// model was told which argument and rule.
    InvalidArguments,
    /// An app tool's call that failed: `execute` threw or returned what is not a tool result,
    /// or the tool is not among those the turn was given (a resumed thread's stored one).
    Failed,
}

/// A sub-agent of the turn: a thread Codex started for it (`multi_agent` tools).
#[derive(Serialize, TS, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AgentRef {
    /// The sub-agent's thread.
    pub thread_id: String,
    /// Where Codex gives one (its `agentNickname`).
    pub nickname: Option<String>,
    /// Where Codex gives one (`subAgentActivity.agentPath`).
    pub path: Option<String>,
    /// 1 for an agent of the turn's own thread, 2 for one of its agents', …
    pub depth: u32,
}

/// Why a frame is not the turn's: another thread's (`foreignThread`), another turn's of this
/// thread (`foreignTurn`), or an answer to a request this package never sent (`unknownResponse`).
#[derive(Serialize, TS, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum PassthroughReason {
    ForeignThread,
    ForeignTurn,
    UnknownResponse,
}

/// Where a `diagnostic` line comes from: before the protocol (`preamble`: a launcher's banner)
/// or Codex's stderr (`stderr`).
#[derive(Serialize, TS, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum DiagnosticSource {
    Preamble,
    Stderr,
}

/// Every event of a turn, a union on `type`: one `started` first, one `terminal` last, and
/// between them what Codex did (docs/events.md lists them).
#[derive(Serialize, TS, Debug)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum HarnessEvent {
    Started(StartedEvent),
    ThreadStarted(ThreadStartedEvent),
    TurnStarted(TurnStartedEvent),
    ItemStarted(ItemEvent),
    ItemCompleted(ItemEvent),
    MessageDelta(DeltaEvent),
    ReasoningDelta(ReasoningDeltaEvent),
    CommandOutput(DeltaEvent),
    Usage(UsageEvent),
    Retrying(RetryingEvent),
    Plan(PlanEvent),
    Diff(DiffEvent),
    RateLimits(RateLimitsEvent),
    ServerRequest(#[ts(type = "ProtocolServerRequest & ServerRequestEvent")] ServerRequestEvent),
    Agent(AgentEvent),
    Goal(GoalEvent),
    PlanDelta(DeltaEvent),
    ItemDropped(ItemDroppedEvent),
    Native(NativeEvent),
    UnknownNotification(UnknownNotificationEvent),
    Passthrough(PassthroughEvent),
    Diagnostic(DiagnosticEvent),
    TurnCompleted(Terminal),
    Terminal(Terminal),
}

/// The first event of every turn: its child started.
#[derive(Serialize, TS, Debug)]
#[serde(rename_all = "camelCase")]
pub struct StartedEvent {
    /// A short id of this turn, unique in the process; every log record of the turn has it.
    pub turn_key: String,
    /// The process id of the `codex app-server` child.
    pub pid: u32,
    /// The Codex executable that runs.
    pub codex_path: String,
    /// Its version, where it was found (`--version`); `null` otherwise.
    pub codex_version: Option<String>,
    /// What the server said it is (`initialize`'s `userAgent`).
    pub user_agent: String,
}

/// The turn's thread is open: started, or resumed (`threadId` given).
#[derive(Serialize, TS, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStartedEvent {
    /// The thread's id (pass it as `threadId` to go on with it).
    pub thread_id: String,
    /// Whether it was resumed rather than started.
    pub resumed: bool,
}

/// A turn of the thread started (the user's, or a goal continuation's).
#[derive(Serialize, TS, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartedEvent {
    /// The thread.
    pub thread_id: String,
    /// The turn's id.
    pub turn_id: String,
}

/// An item of the turn, exactly as Codex sent it: `itemStarted` when it started (`item/started`;
/// a repeated one for the same id restarts it), `itemCompleted` when it completed
/// (`item/completed`), whole: its text is what its deltas added up to.
#[derive(Serialize, TS, Debug)]
pub struct ItemEvent {
    /// The item (the protocol's `ThreadItem`).
    #[ts(type = "ThreadItem")]
    pub item: Box<RawValue>,
}

/// Text of an item as it streams: `messageDelta` (an agent message), `commandOutput` (a
/// command's output, stdout and stderr interleaved: the deltas add up to the completed item's
/// `aggregatedOutput`), `planDelta` (plan mode's proposed plan, `item/plan/delta`). The deltas of
/// an item add up to the text its `itemCompleted` carries: what Codex sent only whole goes out
/// as one more delta before it.
#[derive(Serialize, TS, Debug)]
#[serde(rename_all = "camelCase")]
pub struct DeltaEvent {
    /// The item.
    pub item_id: String,
    /// The text to add.
    pub delta: String,
    /// `true` (never `false`, else absent): this delta is the item's whole text, as its
    /// completion carries it, and replaces what its deltas streamed, which was not its beginning
    /// (Codex did not stream all of it, or kept only part of it). Only ever the item's last delta.
    #[serde(skip_serializing_if = "is_false")]
    #[ts(optional, type = "true")]
    pub replace: bool,
}

/// Text of a reasoning item as it streams: of its `summary` or raw `text`, at `index`.
#[derive(Serialize, TS, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningDeltaEvent {
    /// The `reasoning` item.
    pub item_id: String,
    /// The text to add.
    pub delta: String,
    /// Which of the item's texts it adds to.
    pub part: ReasoningPart,
    /// Which summary part, or which content part.
    pub index: i64,
    /// As a `messageDelta`'s, of this `part` and `index` only.
    #[serde(skip_serializing_if = "is_false")]
    #[ts(optional, type = "true")]
    pub replace: bool,
}

/// Token usage, as Codex reports it during the turn.
#[derive(Serialize, TS, Debug)]
#[serde(rename_all = "camelCase")]
pub struct UsageEvent {
    /// This turn's.
    pub turn: Usage,
    /// The thread's running total.
    pub thread: Usage,
    /// The model's context window, where Codex gives it.
    pub context_window: Option<i64>,
}

/// Codex retries the model request (an `error` notification with `willRetry`): progress, not a failure.
#[derive(Serialize, TS, Debug)]
#[serde(rename_all = "camelCase")]
pub struct RetryingEvent {
    /// Codex's message, verbatim.
    pub message: String,
    /// Why the request failed, as Codex sent it; `null` where it said nothing.
    #[ts(type = "CodexErrorInfo | null")]
    pub codex_error_info: Value,
}

/// `turn/plan/updated`: the turn's plan, as Codex sent it, each update whole.
#[derive(Serialize, TS, Debug)]
pub struct PlanEvent {
    /// Why the plan is what it is, where Codex says.
    pub explanation: Option<String>,
    /// The steps (`status`: `pending`, `inProgress`, `completed`).
    #[ts(type = "TurnPlanStep[]")]
    pub plan: Box<RawValue>,
}

/// `turn/diff/updated`: the turn's whole unified diff so far (each one replaces the last).
#[derive(Serialize, TS, Debug)]
pub struct DiffEvent {
    /// The unified diff.
    pub diff: String,
}

/// `account/rateLimits/updated`: a rolling update; merge it over `readAccount()`'s `rateLimits.rateLimits`.
#[derive(Serialize, TS, Debug)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitsEvent {
    /// The snapshot as Codex sent it.
    #[ts(type = "RateLimitSnapshot")]
    pub rate_limits: Box<RawValue>,
}

/// A server request and how it was answered: `method`, `id` and `params` as Codex sent them (the
/// protocol's `ServerRequest`, typed by method), with the fields below.
#[derive(Serialize, TS, Debug)]
pub struct ServerRequestEvent {
    /// The request's method (its TypeScript is the protocol's `ServerRequest`'s).
    #[ts(skip)]
    pub method: String,
    /// The request's JSON-RPC id, as Codex sent it.
    #[ts(skip)]
    pub id: Value,
    /// The request's params as Codex sent them.
    #[ts(skip)]
    pub params: Box<RawValue>,
    /// The sub-agent that asks, when it is one of the turn's; `null` for the turn's own thread.
    pub agent: Option<AgentRef>,
    /// How it was answered.
    pub reply: ReplyKind,
    /// With `reply: 'unfit'`: why the app's answer did not fit the method's response type (it
    /// was not sent; the method's refusal was). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unfit: Option<String>,
}

/// One event of a sub-agent the turn started (its items, deltas, usage, turnStarted,
/// turnCompleted, …), nested.
#[derive(Serialize, TS, Debug)]
pub struct AgentEvent {
    /// The sub-agent.
    pub agent: AgentRef,
    /// Its event.
    pub event: Box<HarnessEvent>,
}

/// `thread/goal/updated` of the turn's thread.
#[derive(Serialize, TS, Debug)]
pub struct GoalEvent {
    /// The goal as Codex sent it.
    #[ts(type = "ThreadGoal")]
    pub goal: Box<RawValue>,
}

/// An item Codex started and never completed (a response dropped for a steer, a session still
/// open), closed for the app no later than the turn's end.
#[derive(Serialize, TS, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ItemDroppedEvent {
    /// The item.
    pub item_id: String,
}

/// A notification of the turn without an event of its own, whose method the pinned CLI's schema
/// lists: the protocol's `ServerNotification`, so narrowing on `method` types `params`.
#[derive(Serialize, TS, Debug)]
#[ts(type = "ServerNotification")]
pub struct NativeEvent {
    /// The notification's method.
    pub method: String,
    /// Its params as Codex sent them.
    pub params: Box<RawValue>,
}

/// A notification of the turn whose method the pinned CLI's schema does not list (a newer
/// Codex's): kept, not dropped, under a `type` of its own so that `native` narrows by method.
#[derive(Serialize, TS, Debug)]
pub struct UnknownNotificationEvent {
    /// The notification's method.
    pub method: String,
    /// Its params as Codex sent them.
    #[ts(type = "unknown")]
    pub params: Box<RawValue>,
}

/// A frame that is not the turn's: it changes nothing.
#[derive(Serialize, TS, Debug)]
pub struct PassthroughEvent {
    /// Why it is not the turn's.
    pub reason: PassthroughReason,
    /// The frame as Codex sent it.
    #[ts(type = "unknown")]
    pub message: Box<RawValue>,
}

/// A line Codex wrote that is not the protocol (its stderr, a launcher's banner), without
/// terminal escapes.
#[derive(Serialize, TS, Debug)]
pub struct DiagnosticEvent {
    /// Where it comes from.
    pub source: DiagnosticSource,
    /// The line.
    pub line: String,
}

impl HarnessEvent {
    /// The event of a notification that has none of its own: `native` when the pinned schema
    /// lists its method (so its TypeScript is typed by method), `unknownNotification` when not.
    pub fn notification(method: &str, params: Box<RawValue>) -> HarnessEvent {
        let method = method.to_string();
        if schema_lists(&method) {
            HarnessEvent::Native(NativeEvent { method, params })
        } else {
            HarnessEvent::UnknownNotification(UnknownNotificationEvent { method, params })
        }
    }
}

/// The `ServerNotification` methods of the pinned CLI's schema (`pnpm types:generate` writes
/// them; `pnpm types:check` holds them to the CLI).
static NOTIFICATION_METHODS: LazyLock<Vec<String>> = LazyLock::new(|| {
    #[derive(serde::Deserialize)]
    struct Methods {
        methods: Vec<String>,
    }
    let listed: Methods = serde_json::from_str(include_str!("../../../../types/codex/notification-methods.json"))
        .expect("types/codex/notification-methods.json is the generator's JSON");
    let mut methods = listed.methods;
    methods.sort_unstable();
    methods
});

/// Whether the pinned schema lists `method` as a server notification.
fn schema_lists(method: &str) -> bool {
    NOTIFICATION_METHODS.binary_search_by(|listed| listed.as_str().cmp(method)).is_ok()
}

fn is_false(b: &bool) -> bool {
    !b
}

#[cfg(test)]
mod tests {
    use super::{HarnessEvent, Usage};
    use crate::protocol::TokenBreakdown;
    use serde_json::value::RawValue;

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

    #[test]
    fn a_notification_is_native_only_when_the_pinned_schema_lists_its_method() {
        let kind = |method| {
            serde_json::to_value(HarnessEvent::notification(method, RawValue::from_string("{}".into()).unwrap()))
                .unwrap()["type"]
                .clone()
        };
        assert_eq!(kind("thread/status/changed"), "native");
        assert_eq!(kind("item/reasoning/summaryPartAdded"), "native");
        assert_eq!(kind("fake/unknownThing"), "unknownNotification");
        assert_eq!(kind(""), "unknownNotification");
    }
}
