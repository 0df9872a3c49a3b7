//! Why Codex's model request failed, in the few words a UI tells apart: read from the
//! `codexErrorInfo` Codex puts on a failed turn (and on `error` notifications). Codex 0.171.0
//! sends, against a Responses server: HTTP 401 → `{httpConnectionFailed: {httpStatusCode: 401}}`;
//! a 429 rate limit → `{responseTooManyFailedAttempts: {httpStatusCode: 429}}`; a usage-limit
//! 429 → `"usageLimitExceeded"`; 500 → `"internalServerError"`; connection refused →
//! `{httpConnectionFailed: {httpStatusCode: null}}`; a 400 or a stream closed early → `"other"`.
//! Where a variant carries an HTTP status, the status decides.

use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

/// Why Codex's model request failed, from the `codexErrorInfo` Codex sent (a UI tells these
/// apart: "log in again", "usage limit reached", "try again later", …).
#[derive(Serialize, TS, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "FailureReason")]
pub enum Reason {
    /// The provider refused the credentials (log in again, or fix the key).
    Unauthorized,
    /// The plan's usage limit is reached (waiting for its reset, or another plan, helps).
    UsageLimit,
    /// Too many requests for now.
    RateLimited,
    /// The service has no capacity now.
    Overloaded,
    /// The service failed (5xx).
    ServerError,
    /// The conversation no longer fits the model's context window (compact it, or start anew).
    ContextWindowExceeded,
    /// The service could not be reached, or the connection broke.
    Connection,
    /// The request was refused as it was (a model that does not exist, a bad parameter).
    BadRequest,
    /// Anything else Codex reports (policy refusals, a stream closed early, …).
    Other,
}

impl Reason {
    /// The reason of a `codexErrorInfo`, or `None` where it is absent.
    pub fn of(info: &Value) -> Option<Reason> {
        match info {
            Value::Null => None,
            Value::String(name) => Some(Reason::named(name)),
            Value::Object(variant) => {
                let (name, fields) = variant.iter().next()?;
                let status = fields.get("httpStatusCode").and_then(Value::as_u64);
                let with_status = matches!(
                    name.as_str(),
                    "httpConnectionFailed"
                        | "responseStreamConnectionFailed"
                        | "responseStreamDisconnected"
                        | "responseTooManyFailedAttempts"
                );
                Some(match (with_status, status) {
                    (true, Some(status)) => Reason::of_status(status),
                    (true, None) if name == "responseTooManyFailedAttempts" => Reason::Other,
                    (true, None) => Reason::Connection,
                    (false, _) => Reason::Other,
                })
            }
            _ => Some(Reason::Other),
        }
    }

    fn named(name: &str) -> Reason {
        match name {
            "unauthorized" => Reason::Unauthorized,
            "usageLimitExceeded" | "sessionBudgetExceeded" => Reason::UsageLimit,
            "rateLimitExceeded" => Reason::RateLimited,
            "serverOverloaded" | "flexUnavailable" | "policyCapacityUnavailable" => Reason::Overloaded,
            "internalServerError" => Reason::ServerError,
            "contextWindowExceeded" => Reason::ContextWindowExceeded,
            "badRequest" | "modelNotFound" => Reason::BadRequest,
            _ => Reason::Other,
        }
    }

    fn of_status(status: u64) -> Reason {
        match status {
            401 | 403 => Reason::Unauthorized,
            429 => Reason::RateLimited,
            503 => Reason::Overloaded,
            500..=599 => Reason::ServerError,
            400..=499 => Reason::BadRequest,
            _ => Reason::Connection,
        }
    }

    /// Trying the same again can succeed (later, or at once).
    pub fn retryable(self) -> bool {
        matches!(self, Reason::RateLimited | Reason::Overloaded | Reason::ServerError | Reason::Connection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_codex_sends_reads_as_a_reason() {
        let cases = [
            (json!({"httpConnectionFailed": {"httpStatusCode": 401}}), Reason::Unauthorized, false),
            (json!({"responseTooManyFailedAttempts": {"httpStatusCode": 429}}), Reason::RateLimited, true),
            (json!("usageLimitExceeded"), Reason::UsageLimit, false),
            (json!("internalServerError"), Reason::ServerError, true),
            (json!("contextWindowExceeded"), Reason::ContextWindowExceeded, false),
            (json!("serverOverloaded"), Reason::Overloaded, true),
            (json!({"httpConnectionFailed": {"httpStatusCode": null}}), Reason::Connection, true),
            (json!({"httpConnectionFailed": {"httpStatusCode": 503}}), Reason::Overloaded, true),
            (json!({"responseStreamDisconnected": {"httpStatusCode": 502}}), Reason::ServerError, true),
            (json!({"httpConnectionFailed": {"httpStatusCode": 400}}), Reason::BadRequest, false),
            (json!("unauthorized"), Reason::Unauthorized, false),
            (json!("other"), Reason::Other, false),
            (json!("somethingNew"), Reason::Other, false),
            (json!({"activeTurnNotSteerable": {"turnKind": "review"}}), Reason::Other, false),
        ];
        for (info, reason, retryable) in cases {
            assert_eq!(Reason::of(&info), Some(reason), "{info}");
            assert_eq!(reason.retryable(), retryable, "{info}");
        }
        assert_eq!(Reason::of(&Value::Null), None);
    }
}
