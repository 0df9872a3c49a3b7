//! Why a turn or a call failed: its source, a stable code, the provider's message verbatim,
//! detail, whether trying again can succeed, and — where Codex said why a model request failed
//! — a reason a UI can tell apart ([`reason`]).

mod reason;

pub use reason::Reason;

use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

/// Where a failure comes from: the turn (Codex said it failed), the protocol (`jsonrpc`: a
/// request refused, late or answered oddly), the child's exit, its start (`spawn`), its output
/// (`parse`: stdout is not the protocol), or the package itself (`internal`).
#[derive(Serialize, TS, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum FailureSource {
    Turn,
    Jsonrpc,
    Exit,
    Spawn,
    Parse,
    /// A defect inside this package (a caught panic); never expected.
    Internal,
}

/// Every code a failure carries: stable, for a program to tell failures apart (each one is
/// described in docs/failures.md).
#[derive(Serialize, TS, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[ts(rename = "FailureCode")]
pub enum Code {
    // spawn: the child could not start
    CodexNotFound,
    CodexNotExecutable,
    CwdNotFound,
    SpawnFailed,
    /// Nothing was started: no host-death guard could watch it (Unix), and it was not switched off.
    HostGuardUnavailable,
    /// No native addon loaded for this platform: reported by the JavaScript loader (`native.js`),
    /// never by the core, which is that addon; declared here so that the codes are in one place.
    NativeAddonUnavailable,
    // spawn: an `mcp` policy that cannot be applied (nothing was started)
    McpNotLoopback,
    McpPolicyInvalid,
    McpInventoryFailed,
    McpInventoryInvalid,
    /// `codex mcp list --json` printed more than the inventory's bound (a wrong binary).
    McpInventoryTooLarge,
    McpNameCollision,
    // jsonrpc
    RequestFailed,
    RequestTimeout,
    UnexpectedResponse,
    IsolationNotConfirmed,
    /// `thread/start` refused the app's tools (`dynamicTools`): Codex's message verbatim. Nothing
    /// was asked of the model, and the turn is never retried without the tools.
    AppToolsRefused,
    /// `account/read` said no one is logged in, and the child has no API key to use instead.
    AuthRequired,
    // parse: stdout is not the protocol
    MalformedFrame,
    InvalidUtf8,
    FrameTooLarge,
    PreambleTooLong,
    StdoutReadFailed,
    // exit
    ProcessExited,
    // turn
    TurnFailed,
    StructuredOutputInvalid,
    /// The running Codex does not have the method (too old, or it was removed).
    MethodUnsupported,
    /// A login the app started did not succeed: the server's words verbatim (refused, or
    /// completed unsuccessfully).
    LoginFailed,
    /// A browser login of this app is still running: one callback port serves one at a time.
    LoginInProgress,
    // internal
    InternalError,
    /// Never in a terminal event: what a prepared turn's `ready` says when it was disposed or
    /// aborted before it was ready (and what a cancelled call or utility call rejects with).
    Cancelled,
    // Never in a terminal event: what the calls of a running turn or prepared turn reject with.
    /// `runUtility`: the structured output does not match the caller's schema (checked in JavaScript).
    StructuredOutputMismatch,
    /// A steer the server refused (its error verbatim).
    TurnNotSteerable,
    /// A steer after the turn ended, or while it was ending: nothing was sent.
    TurnEnded,
    /// A prepared turn's `start()` called a second time.
    AlreadyStarted,
    // Never in a terminal event: what a conversation's calls throw (checked in JavaScript).
    /// `send()` with `whileRunning: 'reject'` while a turn of the conversation runs.
    TurnRunning,
    /// `send()` or `fork()` after the conversation was closed; also the abort reason of what `close()` ended.
    ConversationClosed,
}

impl Code {
    pub const ALL: &[Code] = &[
        Code::CodexNotFound,
        Code::CodexNotExecutable,
        Code::CwdNotFound,
        Code::SpawnFailed,
        Code::HostGuardUnavailable,
        Code::NativeAddonUnavailable,
        Code::McpNotLoopback,
        Code::McpPolicyInvalid,
        Code::McpInventoryFailed,
        Code::McpInventoryInvalid,
        Code::McpInventoryTooLarge,
        Code::McpNameCollision,
        Code::RequestFailed,
        Code::RequestTimeout,
        Code::UnexpectedResponse,
        Code::IsolationNotConfirmed,
        Code::AppToolsRefused,
        Code::AuthRequired,
        Code::MalformedFrame,
        Code::InvalidUtf8,
        Code::FrameTooLarge,
        Code::PreambleTooLong,
        Code::StdoutReadFailed,
        Code::ProcessExited,
        Code::TurnFailed,
        Code::StructuredOutputInvalid,
        Code::MethodUnsupported,
        Code::LoginFailed,
        Code::LoginInProgress,
        Code::InternalError,
        Code::Cancelled,
        Code::StructuredOutputMismatch,
        Code::TurnNotSteerable,
        Code::TurnEnded,
        Code::AlreadyStarted,
        Code::TurnRunning,
        Code::ConversationClosed,
    ];

    /// The code as the contract spells it (`CODEX_NOT_FOUND`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::CodexNotFound => "CODEX_NOT_FOUND",
            Code::CodexNotExecutable => "CODEX_NOT_EXECUTABLE",
            Code::CwdNotFound => "CWD_NOT_FOUND",
            Code::SpawnFailed => "SPAWN_FAILED",
            Code::HostGuardUnavailable => "HOST_GUARD_UNAVAILABLE",
            Code::NativeAddonUnavailable => "NATIVE_ADDON_UNAVAILABLE",
            Code::McpNotLoopback => "MCP_NOT_LOOPBACK",
            Code::McpPolicyInvalid => "MCP_POLICY_INVALID",
            Code::McpInventoryFailed => "MCP_INVENTORY_FAILED",
            Code::McpInventoryInvalid => "MCP_INVENTORY_INVALID",
            Code::McpInventoryTooLarge => "MCP_INVENTORY_TOO_LARGE",
            Code::McpNameCollision => "MCP_NAME_COLLISION",
            Code::RequestFailed => "REQUEST_FAILED",
            Code::RequestTimeout => "REQUEST_TIMEOUT",
            Code::UnexpectedResponse => "UNEXPECTED_RESPONSE",
            Code::IsolationNotConfirmed => "ISOLATION_NOT_CONFIRMED",
            Code::AppToolsRefused => "APP_TOOLS_REFUSED",
            Code::AuthRequired => "AUTH_REQUIRED",
            Code::MalformedFrame => "MALFORMED_FRAME",
            Code::InvalidUtf8 => "INVALID_UTF8",
            Code::FrameTooLarge => "FRAME_TOO_LARGE",
            Code::PreambleTooLong => "PREAMBLE_TOO_LONG",
            Code::StdoutReadFailed => "STDOUT_READ_FAILED",
            Code::ProcessExited => "PROCESS_EXITED",
            Code::TurnFailed => "TURN_FAILED",
            Code::StructuredOutputInvalid => "STRUCTURED_OUTPUT_INVALID",
            Code::MethodUnsupported => "METHOD_UNSUPPORTED",
            Code::LoginFailed => "LOGIN_FAILED",
            Code::LoginInProgress => "LOGIN_IN_PROGRESS",
            Code::InternalError => "INTERNAL_ERROR",
            Code::Cancelled => "CANCELLED",
            Code::StructuredOutputMismatch => "STRUCTURED_OUTPUT_MISMATCH",
            Code::TurnNotSteerable => "TURN_NOT_STEERABLE",
            Code::TurnEnded => "TURN_ENDED",
            Code::AlreadyStarted => "ALREADY_STARTED",
            Code::TurnRunning => "TURN_RUNNING",
            Code::ConversationClosed => "CONVERSATION_CLOSED",
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a turn or a call failed. `code` is stable; `message` is the provider's text, verbatim.
#[derive(Serialize, TS, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// Where it comes from.
    pub source: FailureSource,
    /// The provider's message or the process detail, verbatim.
    pub message: String,
    /// Stable machine code.
    pub code: Code,
    /// What more there is to know, by code: the JSON-RPC `{method, code, data}`, the exit and
    /// the stderr tail, `codexErrorInfo`…; absent when there is nothing.
    #[serde(skip_serializing_if = "Value::is_null")]
    #[ts(optional, type = "unknown")]
    pub detail: Value,
    /// Trying the same again can succeed: a rate limit, an overloaded or failing server, a lost
    /// connection, a deadline that passed.
    pub retryable: bool,
    /// Why Codex's model request failed, from its `codexErrorInfo`; absent where Codex said nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<Reason>,
}

impl Failure {
    pub fn new(source: FailureSource, code: Code, message: impl Into<String>) -> Self {
        let retryable = code == Code::RequestTimeout;
        Failure { source, code, message: message.into(), detail: Value::Null, retryable, reason: None }
    }

    pub fn with_detail(mut self, detail: Value) -> Self {
        self.detail = detail;
        self
    }

    /// The reason `codex_error_info` gives (a failed turn's, as Codex sent it), and whether it
    /// is worth trying again.
    pub fn with_codex_error_info(mut self, codex_error_info: &Value) -> Self {
        let reason = Reason::of(codex_error_info);
        self.retryable = reason.is_some_and(Reason::retryable);
        self.reason = reason;
        self
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Failure {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_as_the_contract_spells_them() {
        for code in Code::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str(), "{code:?}");
        }
        let failure = Failure::new(FailureSource::Spawn, Code::CodexNotFound, "no codex");
        assert_eq!(
            serde_json::to_value(&failure).unwrap(),
            serde_json::json!({"source": "spawn", "message": "no codex", "code": "CODEX_NOT_FOUND", "retryable": false})
        );
        let timeout = Failure::new(FailureSource::Jsonrpc, Code::RequestTimeout, "late");
        assert!(timeout.retryable);
        let limited = Failure::new(FailureSource::Turn, Code::TurnFailed, "429")
            .with_codex_error_info(&serde_json::json!({"responseTooManyFailedAttempts": {"httpStatusCode": 429}}));
        assert_eq!(
            serde_json::to_value(&limited).unwrap(),
            serde_json::json!({"source": "turn", "message": "429", "code": "TURN_FAILED", "retryable": true, "reason": "rateLimited"})
        );
        assert_eq!(failure.to_string(), "CODEX_NOT_FOUND: no codex");
    }
}
