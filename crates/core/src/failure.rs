//! Why a turn failed: its source, a stable code, the provider's message verbatim, and detail.

use serde::Serialize;
use serde_json::Value;

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
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

/// Every failure code the native core reports, serialised in the words of the contract.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    // spawn: the child could not start
    CodexNotFound,
    CodexNotExecutable,
    CwdNotFound,
    SpawnFailed,
    /// Nothing was started: no host-death guard could watch it (Unix), and it was not switched off.
    HostGuardUnavailable,
    // spawn: an `mcp` policy that cannot be applied (nothing was started)
    McpNotLoopback,
    McpPolicyInvalid,
    McpInventoryFailed,
    McpInventoryInvalid,
    McpNameCollision,
    // jsonrpc
    RequestFailed,
    RequestTimeout,
    UnexpectedResponse,
    IsolationNotConfirmed,
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
    // internal
    InternalError,
    /// Never in a terminal event: what a prepared turn's `ready` says when it was disposed or
    /// aborted before it was ready (and what a cancelled call or utility call rejects with).
    Cancelled,
}

impl Code {
    pub const ALL: [Code; 25] = [
        Code::CodexNotFound,
        Code::CodexNotExecutable,
        Code::CwdNotFound,
        Code::SpawnFailed,
        Code::HostGuardUnavailable,
        Code::McpNotLoopback,
        Code::McpPolicyInvalid,
        Code::McpInventoryFailed,
        Code::McpInventoryInvalid,
        Code::McpNameCollision,
        Code::RequestFailed,
        Code::RequestTimeout,
        Code::UnexpectedResponse,
        Code::IsolationNotConfirmed,
        Code::AuthRequired,
        Code::MalformedFrame,
        Code::InvalidUtf8,
        Code::FrameTooLarge,
        Code::PreambleTooLong,
        Code::StdoutReadFailed,
        Code::ProcessExited,
        Code::TurnFailed,
        Code::StructuredOutputInvalid,
        Code::InternalError,
        Code::Cancelled,
    ];

    /// The code as the contract spells it (`CODEX_NOT_FOUND`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::CodexNotFound => "CODEX_NOT_FOUND",
            Code::CodexNotExecutable => "CODEX_NOT_EXECUTABLE",
            Code::CwdNotFound => "CWD_NOT_FOUND",
            Code::SpawnFailed => "SPAWN_FAILED",
            Code::HostGuardUnavailable => "HOST_GUARD_UNAVAILABLE",
            Code::McpNotLoopback => "MCP_NOT_LOOPBACK",
            Code::McpPolicyInvalid => "MCP_POLICY_INVALID",
            Code::McpInventoryFailed => "MCP_INVENTORY_FAILED",
            Code::McpInventoryInvalid => "MCP_INVENTORY_INVALID",
            Code::McpNameCollision => "MCP_NAME_COLLISION",
            Code::RequestFailed => "REQUEST_FAILED",
            Code::RequestTimeout => "REQUEST_TIMEOUT",
            Code::UnexpectedResponse => "UNEXPECTED_RESPONSE",
            Code::IsolationNotConfirmed => "ISOLATION_NOT_CONFIRMED",
            Code::AuthRequired => "AUTH_REQUIRED",
            Code::MalformedFrame => "MALFORMED_FRAME",
            Code::InvalidUtf8 => "INVALID_UTF8",
            Code::FrameTooLarge => "FRAME_TOO_LARGE",
            Code::PreambleTooLong => "PREAMBLE_TOO_LONG",
            Code::StdoutReadFailed => "STDOUT_READ_FAILED",
            Code::ProcessExited => "PROCESS_EXITED",
            Code::TurnFailed => "TURN_FAILED",
            Code::StructuredOutputInvalid => "STRUCTURED_OUTPUT_INVALID",
            Code::InternalError => "INTERNAL_ERROR",
            Code::Cancelled => "CANCELLED",
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a turn failed. `code` is stable; `message` is the provider's text, verbatim.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Failure {
    pub source: FailureSource,
    pub message: String,
    pub code: Code,
    /// `null` (and absent on the wire) when there is none.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub detail: Value,
}

impl Failure {
    pub fn new(source: FailureSource, code: Code, message: impl Into<String>) -> Self {
        Failure { source, code, message: message.into(), detail: Value::Null }
    }

    pub fn with_detail(mut self, detail: Value) -> Self {
        self.detail = detail;
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
            serde_json::json!({"source": "spawn", "message": "no codex", "code": "CODEX_NOT_FOUND"})
        );
        assert_eq!(failure.to_string(), "CODEX_NOT_FOUND: no codex");
    }

    /// Codes that only the JavaScript layer reports: no native addon to report anything
    /// (`native.js`), and `runUtility`'s own (`index.js`, beside `FailureCode` in `index.d.ts`).
    const JS_ONLY: [&str; 1] = ["NATIVE_ADDON_UNAVAILABLE"];

    #[test]
    fn the_public_types_list_exactly_these_codes() {
        let types = include_str!("../../../index.d.ts");
        let start = types.find("export type FailureCode =").expect("index.d.ts declares FailureCode");
        let union = &types[start..];
        let union = &union[..union.find("\n\n").unwrap_or(union.len())];
        // `  | 'CODE'` lines; comments between them may hold quotes of their own.
        let mut declared: Vec<&str> =
            union.lines().filter_map(|l| l.trim().strip_prefix("| '")).filter_map(|l| l.split('\'').next()).collect();
        declared.sort_unstable();
        let mut expected: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).chain(JS_ONLY).collect();
        expected.sort_unstable();
        assert_eq!(declared, expected, "FailureCode in index.d.ts against failure::Code and the JavaScript-only codes");
    }
}
