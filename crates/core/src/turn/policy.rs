//! How server-to-client requests are answered when the app does not answer them: at once, by
//! table. Full access grants what Codex asks; read-only refuses everything; `ask` (where the app
//! answers through its handler) declines whatever the handler left unanswered. An app's answer
//! that does not fit gets the method's refusal (the `ask` row) under every access mode. When a
//! turn is ending, a waiting request is answered by its "cancel" row, so that nothing waits for it.

use crate::events::ReplyKind;
use crate::exchange::refusal;
use crate::options::Access;
use crate::protocol::{method, RpcError};
use serde_json::{json, Value};

pub struct Answer {
    pub kind: ReplyKind,
    pub result: Option<Value>,
    pub error: Option<RpcError>,
}

impl Answer {
    fn result(kind: ReplyKind, result: Value) -> Answer {
        Answer { kind, result: Some(result), error: None }
    }

    /// The reply as the wire has it.
    pub fn reply(&self) -> Result<&Value, &RpcError> {
        match (&self.result, &self.error) {
            (Some(result), None) => Ok(result),
            (_, Some(error)) => Err(error),
            (None, None) => unreachable!("an answer has a result or an error"),
        }
    }
}

/// One row: a method and its answer under full access, under `ask` when the app said nothing
/// (the method's refusal), and when the turn is ending. `None`: a JSON-RPC method error.
struct Row {
    method: &'static str,
    full: Option<(ReplyKind, fn() -> Value)>,
    ask: Option<(ReplyKind, fn() -> Value)>,
    cancel: Option<fn() -> Value>,
}

const TABLE: &[Row] = &[
    Row {
        method: method::COMMAND_EXECUTION_APPROVAL,
        full: Some((ReplyKind::Accepted, || json!({"decision": "accept"}))),
        ask: Some((ReplyKind::Declined, || json!({"decision": "decline"}))),
        cancel: Some(|| json!({"decision": "cancel"})),
    },
    Row {
        method: method::FILE_CHANGE_APPROVAL,
        full: Some((ReplyKind::Accepted, || json!({"decision": "accept"}))),
        ask: Some((ReplyKind::Declined, || json!({"decision": "decline"}))),
        cancel: Some(|| json!({"decision": "cancel"})),
    },
    // An empty profile grants nothing beyond what the turn has.
    Row {
        method: method::PERMISSIONS_APPROVAL,
        full: Some((ReplyKind::GrantedEmpty, || json!({"permissions": {}}))),
        ask: Some((ReplyKind::GrantedEmpty, || json!({"permissions": {}}))),
        cancel: Some(|| json!({"permissions": {}})),
    },
    // The legacy (v1) approvals answer with a ReviewDecision.
    Row {
        method: method::EXEC_COMMAND_APPROVAL,
        full: Some((ReplyKind::Accepted, || json!({"decision": "approved"}))),
        ask: Some((ReplyKind::Declined, || json!({"decision": {"denied": {"rejection": "declined by the app"}}}))),
        cancel: Some(|| json!({"decision": "abort"})),
    },
    Row {
        method: method::APPLY_PATCH_APPROVAL,
        full: Some((ReplyKind::Accepted, || json!({"decision": "approved"}))),
        ask: Some((ReplyKind::Declined, || json!({"decision": {"denied": {"rejection": "declined by the app"}}}))),
        cancel: Some(|| json!({"decision": "abort"})),
    },
    // Codex auto-declines server elicitations under approval `never`; one that still arrives
    // is declined rather than left to hang the MCP server.
    Row {
        method: method::MCP_ELICITATION,
        full: Some((ReplyKind::Declined, || json!({"action": "decline", "content": null, "_meta": null}))),
        ask: Some((ReplyKind::Declined, || json!({"action": "decline", "content": null, "_meta": null}))),
        cancel: Some(|| json!({"action": "cancel", "content": null, "_meta": null})),
    },
];

/// The fixed policy's answer to `method` under `access`.
pub fn answer(method: &str, access: Access) -> Answer {
    let row = TABLE.iter().find(|row| row.method == method);
    let granted = match access {
        Access::Full => row.and_then(|row| row.full),
        Access::Ask => row.and_then(|row| row.ask),
        Access::ReadOnly => None,
    };
    match granted {
        Some((kind, result)) => Answer::result(kind, result()),
        None => {
            let message = match access {
                Access::ReadOnly => format!("{method} refused: this turn is read-only and grants nothing"),
                _ => format!("{method} is not supported by this client"),
            };
            Answer { kind: ReplyKind::MethodError, result: None, error: Some(refusal(message)) }
        }
    }
}

/// The method's refusal, whatever the access mode: what an app's answer that does not fit the
/// method's response becomes (the app meant something, so full access's grant would be wrong).
pub fn refused(method: &str) -> Answer {
    answer(method, Access::Ask)
}

/// The answer to `method` while the turn is ending: cancelled where the method can say so.
pub fn cancelled(method: &str) -> Answer {
    match TABLE.iter().find(|row| row.method == method).and_then(|row| row.cancel) {
        Some(result) => Answer::result(ReplyKind::Cancelled, result()),
        None => Answer {
            kind: ReplyKind::Cancelled,
            result: None,
            error: Some(refusal(format!("{method} cancelled: the turn is ending"))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::METHOD_NOT_FOUND;

    #[test]
    fn full_access_table() {
        let cases = [
            ("item/commandExecution/requestApproval", ReplyKind::Accepted, Some(json!({"decision":"accept"}))),
            ("item/fileChange/requestApproval", ReplyKind::Accepted, Some(json!({"decision":"accept"}))),
            ("item/permissions/requestApproval", ReplyKind::GrantedEmpty, Some(json!({"permissions":{}}))),
            ("execCommandApproval", ReplyKind::Accepted, Some(json!({"decision":"approved"}))),
            ("applyPatchApproval", ReplyKind::Accepted, Some(json!({"decision":"approved"}))),
            (
                "mcpServer/elicitation/request",
                ReplyKind::Declined,
                Some(json!({"action":"decline","content":null,"_meta":null})),
            ),
            ("item/tool/call", ReplyKind::MethodError, None),
            ("account/chatgptAuthTokens/refresh", ReplyKind::MethodError, None),
            ("attestation/generate", ReplyKind::MethodError, None),
            ("item/tool/requestUserInput", ReplyKind::MethodError, None),
            ("something/new", ReplyKind::MethodError, None),
        ];
        for (method, kind, result) in cases {
            let a = answer(method, Access::Full);
            assert_eq!(a.kind, kind, "{method}");
            assert_eq!(a.result, result, "{method}");
            assert_eq!(a.error.map(|e| e.code), result.is_none().then_some(METHOD_NOT_FOUND), "{method}");
        }
    }

    #[test]
    fn read_only_grants_nothing() {
        for method in ["item/commandExecution/requestApproval", "item/permissions/requestApproval", "x"] {
            let a = answer(method, Access::ReadOnly);
            assert_eq!(a.kind, ReplyKind::MethodError);
            assert!(a.result.is_none());
        }
    }

    #[test]
    fn ask_declines_what_the_app_left_unanswered() {
        let a = answer("item/commandExecution/requestApproval", Access::Ask);
        assert_eq!((a.kind, a.result), (ReplyKind::Declined, Some(json!({"decision": "decline"}))));
        assert_eq!(answer("execCommandApproval", Access::Ask).kind, ReplyKind::Declined);
        assert_eq!(answer("item/tool/requestUserInput", Access::Ask).kind, ReplyKind::MethodError);
    }

    #[test]
    fn an_unfit_answer_gets_the_refusal_whatever_the_access() {
        let refusals = [
            ("item/commandExecution/requestApproval", ReplyKind::Declined),
            ("item/fileChange/requestApproval", ReplyKind::Declined),
            ("execCommandApproval", ReplyKind::Declined),
            ("item/permissions/requestApproval", ReplyKind::GrantedEmpty),
            ("mcpServer/elicitation/request", ReplyKind::Declined),
            ("item/tool/call", ReplyKind::MethodError),
            ("item/tool/requestUserInput", ReplyKind::MethodError),
        ];
        for (method, kind) in refusals {
            assert_eq!(refused(method).kind, kind, "{method}");
        }
        // What full access would accept is declined.
        assert_eq!(refused("item/commandExecution/requestApproval").result, Some(json!({"decision": "decline"})));
        assert_eq!(
            refused("applyPatchApproval").result,
            Some(json!({"decision": {"denied": {"rejection": "declined by the app"}}}))
        );
    }

    #[test]
    fn an_ending_turn_cancels_what_waits() {
        let a = cancelled("item/commandExecution/requestApproval");
        assert_eq!((a.kind, a.result), (ReplyKind::Cancelled, Some(json!({"decision": "cancel"}))));
        assert_eq!(cancelled("applyPatchApproval").result, Some(json!({"decision": "abort"})));
        let user_input = cancelled("item/tool/requestUserInput");
        assert_eq!((user_input.kind, user_input.error.map(|e| e.code)), (ReplyKind::Cancelled, Some(METHOD_NOT_FOUND)));
    }
}
