//! The subset of the `codex app-server` wire protocol this package speaks.
//!
//! Messages are JSON-RPC 2.0 objects without the `jsonrpc` member. Incoming payloads stay raw
//! (`RawValue`) until a handler needs a field, so routing reads only what it must.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

/// Method names, in the protocol's own spelling.
pub mod method {
    pub const INITIALIZE: &str = "initialize";
    pub const INITIALIZED: &str = "initialized";
    pub const THREAD_START: &str = "thread/start";
    pub const THREAD_RESUME: &str = "thread/resume";
    pub const TURN_START: &str = "turn/start";
    pub const TURN_INTERRUPT: &str = "turn/interrupt";

    pub const TURN_STARTED: &str = "turn/started";
    pub const TURN_COMPLETED: &str = "turn/completed";
    pub const ITEM_STARTED: &str = "item/started";
    pub const ITEM_COMPLETED: &str = "item/completed";
    pub const AGENT_MESSAGE_DELTA: &str = "item/agentMessage/delta";
    pub const REASONING_SUMMARY_DELTA: &str = "item/reasoning/summaryTextDelta";
    pub const REASONING_TEXT_DELTA: &str = "item/reasoning/textDelta";
    pub const COMMAND_OUTPUT_DELTA: &str = "item/commandExecution/outputDelta";
    pub const TOKEN_USAGE_UPDATED: &str = "thread/tokenUsage/updated";
    pub const ERROR: &str = "error";
    pub const THREAD_STARTED: &str = "thread/started";
}

/// JSON-RPC error object, as sent by the server or by us.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// One message from the server.
#[derive(Debug)]
pub enum Incoming {
    Response { id: Value, outcome: Result<Box<RawValue>, RpcError> },
    Request { id: Value, method: String, params: Option<Box<RawValue>> },
    Notification { method: String, params: Option<Box<RawValue>> },
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<Box<RawValue>>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<RpcError>,
}

impl Incoming {
    /// Classifies one line. Anything that is not a JSON object carrying a method, a result or
    /// an error is rejected with a reason.
    pub fn parse(line: &str) -> Result<Incoming, String> {
        if !line.trim_start().starts_with('{') {
            return Err("not a JSON object".into());
        }
        let envelope: Envelope = serde_json::from_str(line).map_err(|e| e.to_string())?;
        match (envelope.method, envelope.id) {
            (Some(method), Some(id)) => Ok(Incoming::Request { id, method, params: envelope.params }),
            (Some(method), None) => Ok(Incoming::Notification { method, params: envelope.params }),
            (None, Some(id)) => match (envelope.result, envelope.error) {
                (_, Some(error)) => Ok(Incoming::Response { id, outcome: Err(error) }),
                (Some(result), None) => Ok(Incoming::Response { id, outcome: Ok(result) }),
                (None, None) => Err("a message with an id but no method, result or error".into()),
            },
            (None, None) => Err("a message with neither method nor id".into()),
        }
    }
}

/// A request or notification we send. `params` is always present on requests.
#[derive(Serialize)]
pub struct Outgoing<'a, P: Serialize> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    pub method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

/// Our answer to a server request.
#[derive(Serialize)]
pub struct Reply<'a> {
    pub id: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a RpcError>,
}

/// Reads one field of a raw params object without parsing the rest into a tree.
pub fn field<'de, T: Deserialize<'de>>(params: Option<&'de RawValue>) -> Option<T> {
    params.and_then(|p| serde_json::from_str(p.get()).ok())
}

/// The fields of a notification's params that routing needs, read in one pass together with
/// the fields of the delta notifications (the bulk of a stream), so that a delta is parsed
/// once. Strings borrow from the frame unless they carry escapes.
///
/// The delta fields stay raw here: a malformed delta must not change where it is routed,
/// only whether it becomes a dedicated event (see [`Delta::of`]).
#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Scope<'a> {
    #[serde(default, borrow)]
    pub thread_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub turn_id: Option<Cow<'a, str>>,
    /// `turn/started` and `turn/completed` carry the turn object instead of `turnId`.
    #[serde(default, borrow)]
    pub turn: Option<IdRef<'a>>,
    /// `thread/started` carries the thread object instead of `threadId`.
    #[serde(default, borrow)]
    pub thread: Option<IdRef<'a>>,
    #[serde(default, borrow)]
    item_id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    delta: Option<&'a RawValue>,
    #[serde(default, borrow)]
    summary_index: Option<&'a RawValue>,
    #[serde(default, borrow)]
    content_index: Option<&'a RawValue>,
}

#[derive(Deserialize, Default, Debug)]
pub struct IdRef<'a> {
    #[serde(default, borrow)]
    pub id: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default, Debug)]
pub struct TurnRef {
    #[serde(default)]
    pub id: Option<String>,
}

impl<'a> Scope<'a> {
    /// The scope of `params`; an unreadable one has no scope (the notification is ours).
    pub fn of(params: Option<&'a RawValue>) -> Scope<'a> {
        params.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_default()
    }

    pub fn thread_id(&self) -> Option<&str> {
        self.thread_id.as_deref().or_else(|| self.thread.as_ref().and_then(|t| t.id.as_deref()))
    }

    pub fn turn_id(&self) -> Option<&str> {
        self.turn_id.as_deref().or_else(|| self.turn.as_ref().and_then(|t| t.id.as_deref()))
    }
}

/// `{threadId, turnId, itemId, delta, summaryIndex?, contentIndex?}` of the delta notifications.
#[derive(Debug, PartialEq)]
pub struct Delta {
    pub item_id: String,
    pub delta: String,
    pub summary_index: Option<i64>,
    pub content_index: Option<i64>,
}

impl Delta {
    /// The delta fields read with the scope, or `None` when one is missing or of the wrong type.
    pub fn of(scope: &Scope) -> Option<Delta> {
        fn parse<'de, T: Deserialize<'de>>(raw: Option<&'de RawValue>) -> Option<T> {
            serde_json::from_str(raw?.get()).ok()
        }
        fn optional<'de, T: Deserialize<'de>>(raw: Option<&'de RawValue>) -> Option<Option<T>> {
            match raw {
                None => Some(None),
                Some(raw) => serde_json::from_str(raw.get()).ok(),
            }
        }
        Some(Delta {
            item_id: parse(scope.item_id)?,
            delta: parse(scope.delta)?,
            summary_index: optional(scope.summary_index)?,
            content_index: optional(scope.content_index)?,
        })
    }
}

/// `turn/completed` params: the parts the terminal frame needs.
#[derive(Deserialize, Debug)]
pub struct TurnCompletedParams {
    pub turn: CompletedTurn,
}

#[derive(Deserialize, Debug)]
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
}

#[derive(Deserialize, Debug)]
pub struct ItemParams {
    pub item: Box<RawValue>,
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
    fn from(b: TokenBreakdown) -> Self {
        crate::events::Usage {
            input: b.input_tokens,
            cache_read: b.cached_input_tokens,
            output: b.output_tokens,
            reasoning: b.reasoning_output_tokens,
            total: b.total_tokens,
        }
    }
}

/// `initialize` result.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub user_agent: String,
}

/// `thread/start` and `thread/resume` results: the thread id.
#[derive(Deserialize, Debug)]
pub struct ThreadResult {
    pub thread: ThreadRef,
}

#[derive(Deserialize, Debug)]
pub struct ThreadRef {
    pub id: String,
}

/// `turn/start` result (an acknowledgement).
#[derive(Deserialize, Debug)]
pub struct TurnStartResult {
    pub turn: TurnRef,
}

/// The CLI version inside a user agent such as `rennet/0.171.0 (Debian 12; x86_64) …`.
pub fn version_from_user_agent(user_agent: &str) -> Option<String> {
    let first = user_agent.split_whitespace().next()?;
    let version = first.split_once('/')?.1;
    (!version.is_empty()).then(|| version.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        assert!(matches!(
            Incoming::parse(r#"{"id":1,"result":{}}"#),
            Ok(Incoming::Response { outcome: Ok(_), .. })
        ));
        assert!(matches!(
            Incoming::parse(r#"{"id":1,"error":{"code":-32600,"message":"x"}}"#),
            Ok(Incoming::Response { outcome: Err(_), .. })
        ));
        assert!(matches!(
            Incoming::parse(r#"{"id":0,"method":"item/tool/call","params":{}}"#),
            Ok(Incoming::Request { .. })
        ));
        assert!(matches!(
            Incoming::parse(r#"{"method":"x","params":{},"emittedAtMs":1}"#),
            Ok(Incoming::Notification { .. })
        ));
        assert!(Incoming::parse(r#"[{"id":1,"result":{}}]"#).is_err());
        assert!(Incoming::parse(r#"{"id":101}"#).is_err());
        assert!(Incoming::parse("42").is_err());
        assert!(Incoming::parse("{nope").is_err());
    }

    fn delta(params: &str) -> Option<Delta> {
        let raw = RawValue::from_string(params.to_string()).unwrap();
        Delta::of(&Scope::of(Some(&raw)))
    }

    #[test]
    fn reads_scope_and_delta_in_one_pass() {
        let raw = RawValue::from_string(
            r#"{"threadId":"th","turnId":"t\u0031","itemId":"m","delta":"a\"b","summaryIndex":2,"extra":[1]}"#.into(),
        )
        .unwrap();
        let scope = Scope::of(Some(&raw));
        assert_eq!((scope.thread_id(), scope.turn_id()), (Some("th"), Some("t1")));
        let d = Delta::of(&scope).unwrap();
        assert_eq!((d.item_id.as_str(), d.delta.as_str(), d.summary_index, d.content_index), ("m", "a\"b", Some(2), None));

        let raw = RawValue::from_string(r#"{"thread":{"id":"th"},"turn":{"id":"tu","items":[]}}"#.into()).unwrap();
        let scope = Scope::of(Some(&raw));
        assert_eq!((scope.thread_id(), scope.turn_id()), (Some("th"), Some("tu")));
    }

    #[test]
    fn malformed_delta_fields_keep_the_scope() {
        let raw = RawValue::from_string(r#"{"threadId":"th","turnId":"tu","itemId":"m","delta":5}"#.into()).unwrap();
        let scope = Scope::of(Some(&raw));
        assert_eq!(scope.thread_id(), Some("th"));
        assert_eq!(Delta::of(&scope), None);
        assert_eq!(delta(r#"{"itemId":"m"}"#), None);
        assert_eq!(delta(r#"{"itemId":"m","delta":"x","contentIndex":"0"}"#), None);
        assert_eq!(delta(r#"{"itemId":"m","delta":"x","contentIndex":null}"#).unwrap().content_index, None);
    }

    #[test]
    fn reads_version_from_user_agent() {
        assert_eq!(
            version_from_user_agent("rennet/0.171.0 (Debian 12.0.0; x86_64) xterm (rennet; 0.1.0)"),
            Some("0.171.0".into())
        );
        assert_eq!(version_from_user_agent("garbage"), None);
    }
}
