//! The subset of the `codex app-server` wire protocol this package speaks.
//!
//! Messages are JSON-RPC 2.0 objects without the `jsonrpc` member. What this package sends is
//! typed ([`requests`]: each request's params beside its method and result); what it receives
//! is read tolerantly and in one pass ([`incoming`]), raw (`RawValue`) until a handler needs a
//! field ([`notifications`]), so routing reads only what it must.

mod incoming;
mod notifications;
mod requests;

pub use incoming::*;
pub use notifications::*;
pub use requests::*;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Method names, in the protocol's own spelling.
pub mod method {
    pub const INITIALIZE: &str = "initialize";
    pub const INITIALIZED: &str = "initialized";
    pub const THREAD_START: &str = "thread/start";
    pub const THREAD_RESUME: &str = "thread/resume";
    pub const TURN_START: &str = "turn/start";
    pub const TURN_INTERRUPT: &str = "turn/interrupt";
    pub const CONFIG_READ: &str = "config/read";
    pub const EXPERIMENTAL_FEATURE_LIST: &str = "experimentalFeature/list";
    pub const MCP_SERVER_STATUS_LIST: &str = "mcpServerStatus/list";

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

    /// The notifications a turn handles, so that their names need no copy per frame.
    const HANDLED: [&str; 11] = [
        AGENT_MESSAGE_DELTA,
        REASONING_SUMMARY_DELTA,
        REASONING_TEXT_DELTA,
        COMMAND_OUTPUT_DELTA,
        ITEM_STARTED,
        ITEM_COMPLETED,
        TURN_STARTED,
        TURN_COMPLETED,
        TOKEN_USAGE_UPDATED,
        ERROR,
        THREAD_STARTED,
    ];

    pub(crate) fn known(name: std::borrow::Cow<'_, str>) -> std::borrow::Cow<'static, str> {
        match HANDLED.iter().find(|known| **known == name) {
            Some(known) => std::borrow::Cow::Borrowed(known),
            None => std::borrow::Cow::Owned(name.into_owned()),
        }
    }
}

/// JSON-RPC error object, as sent by the server or by us.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
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
    fn reads_version_from_user_agent() {
        assert_eq!(
            version_from_user_agent("rennet/0.171.0 (Debian 12.0.0; x86_64) xterm (rennet; 0.1.0)"),
            Some("0.171.0".into())
        );
        assert_eq!(version_from_user_agent("garbage"), None);
    }
}
