//! The subset of the `codex app-server` wire protocol this package speaks.
//!
//! Messages are JSON-RPC 2.0 objects without the `jsonrpc` member. What this package sends is
//! typed ([`requests`]: each request's params beside its method and result); every method it speaks is one row of [`methods::TABLE`]; what it receives
//! is read tolerantly and in one pass ([`incoming`]), raw (`RawValue`) until a handler needs a
//! field ([`notifications`]), so routing reads only what it must.

mod incoming;
pub mod methods;
mod notifications;
mod requests;

pub use incoming::*;
pub use methods::method;
pub use notifications::*;
pub use requests::*;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// JSON-RPC "method not found": what a method nobody handles is answered with.
pub const METHOD_NOT_FOUND: i64 = -32601;

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
