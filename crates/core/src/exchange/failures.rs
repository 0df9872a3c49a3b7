//! How a request's failures read, for every run alike: the server's error verbatim, a
//! deadline that passed, a result in a shape the protocol does not promise, a list without end,
//! and a method this Codex does not have.

use crate::failure::{Code, Failure, FailureSource};
use crate::protocol::RpcError;
use serde_json::json;
use serde_json::value::RawValue;
use std::time::Duration;

/// JSON-RPC "invalid request": what Codex answers a method it does not know, with the message
/// "Invalid request: unknown variant `<method>`, expected one of …".
const INVALID_REQUEST: i64 = -32600;

/// The server answered a request with an error: its message verbatim. A method the server
/// does not have is `METHOD_UNSUPPORTED`, with the server's version where the handshake told it.
pub fn rpc_failure(method: &str, error: RpcError, codex_version: Option<&str>) -> Failure {
    if is_unknown_method(method, &error) {
        return Failure::new(FailureSource::Jsonrpc, Code::MethodUnsupported, error.message).with_detail(json!({
            "method": method,
            "codexVersion": codex_version,
            "code": error.code,
        }));
    }
    Failure::new(FailureSource::Jsonrpc, Code::RequestFailed, error.message).with_detail(json!({
        "method": method,
        "code": error.code,
        "data": error.data,
    }))
}

/// `-32601`, or `-32600` naming the method as an unknown variant (how Codex refuses a method
/// it does not deserialize).
pub fn is_unknown_method(method: &str, error: &RpcError) -> bool {
    error.code == crate::protocol::METHOD_NOT_FOUND
        || (error.code == INVALID_REQUEST && error.message.contains(&format!("unknown variant `{method}`")))
}

pub fn request_timeout(method: &str, timeout: Duration) -> Failure {
    let timeout = timeout.as_millis();
    Failure::new(FailureSource::Jsonrpc, Code::RequestTimeout, format!("{method} got no response within {timeout} ms"))
        .with_detail(json!({"method": method, "timeoutMs": timeout}))
}

/// A result in the shape the protocol promises, or `UNEXPECTED_RESPONSE`.
pub fn parse_result<T: serde::de::DeserializeOwned>(method: &'static str, raw: &RawValue) -> Result<T, Failure> {
    serde_json::from_str(raw.get()).map_err(|e| unexpected_result(method, e, raw.get()))
}

/// `UNEXPECTED_RESPONSE`: the result `text` of `method` is not what the protocol promises.
pub fn unexpected_result(method: &str, why: impl std::fmt::Display, text: &str) -> Failure {
    Failure::new(FailureSource::Jsonrpc, Code::UnexpectedResponse, format!("unexpected {method} result: {why}"))
        .with_detail(json!({"method": method, "result": crate::transport::excerpt(text)}))
}

/// A paginated list that did not end after [`super::MAX_PAGES`] pages.
pub fn endless(method: &str) -> Failure {
    let message = format!("{method} did not end after {} pages", super::MAX_PAGES);
    Failure::new(FailureSource::Jsonrpc, Code::UnexpectedResponse, message).with_detail(json!({"method": method}))
}
