//! The one shape of every asynchronous result that crosses to JavaScript — a call's outcome,
//! a prepared turn's readiness, a steer's answer: `{"ok": …}` or `{"failure": …}`, the
//! failure being a terminal event's (source, code, verbatim message, detail, retryable), a
//! cancellation included (`CANCELLED`). JavaScript turns a failure into a `CodexError`.

use crate::failure::Failure;
use serde::Serialize;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum Envelope<'a, T: Serialize> {
    Ok(&'a T),
    Failure(&'a Failure),
}

/// The JSON text of `result`.
pub fn to_json<T: Serialize>(result: &Result<T, Failure>) -> String {
    let envelope = match result {
        Ok(value) => Envelope::Ok(value),
        Err(failure) => Envelope::Failure(failure),
    };
    serde_json::to_string(&envelope).expect("an envelope serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::{Code, FailureSource};
    use serde_json::json;

    #[test]
    fn ok_or_failure() {
        assert_eq!(to_json::<serde_json::Value>(&Ok(json!({"threadId": "t"}))), r#"{"ok":{"threadId":"t"}}"#);
        assert_eq!(to_json::<()>(&Ok(())), r#"{"ok":null}"#);
        let failure = Failure::new(FailureSource::Jsonrpc, Code::Cancelled, "readAccount was cancelled");
        let text = to_json::<()>(&Err(failure));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["failure"]["code"], "CANCELLED");
        assert_eq!(value["failure"]["message"], "readAccount was cancelled");
    }
}
