//! How server-to-client requests are answered: at once, by table, never by a person.

use crate::events::ReplyKind;
use crate::exchange::refusal;
use crate::options::Access;
use crate::protocol::{method, RpcError};
use serde_json::{json, Value};

/// Replies under full access. Everything not listed, and everything under read-only access,
/// gets a JSON-RPC method error.
const FULL_ACCESS: &[(&str, ReplyKind)] = &[
    (method::COMMAND_EXECUTION_APPROVAL, ReplyKind::Accepted),
    (method::FILE_CHANGE_APPROVAL, ReplyKind::Accepted),
    (method::PERMISSIONS_APPROVAL, ReplyKind::GrantedEmpty),
    // Legacy v1 approvals answer with a ReviewDecision.
    (method::EXEC_COMMAND_APPROVAL, ReplyKind::Accepted),
    (method::APPLY_PATCH_APPROVAL, ReplyKind::Accepted),
    // Codex auto-declines server elicitations under approval `never`; one that still arrives
    // is declined rather than left to hang the MCP server.
    (method::MCP_ELICITATION, ReplyKind::Declined),
];

pub struct Answer {
    pub kind: ReplyKind,
    pub result: Option<Value>,
    pub error: Option<RpcError>,
}

pub fn answer(method: &str, access: Access) -> Answer {
    let kind = match access {
        Access::Full => FULL_ACCESS.iter().find(|(m, _)| *m == method).map(|(_, k)| *k),
        Access::ReadOnly => None,
    };
    let result = match (kind, method) {
        (Some(ReplyKind::Accepted), method::EXEC_COMMAND_APPROVAL | method::APPLY_PATCH_APPROVAL) => {
            json!({"decision": "approved"})
        }
        (Some(ReplyKind::Accepted), _) => json!({"decision": "accept"}),
        (Some(ReplyKind::GrantedEmpty), _) => json!({"permissions": {}}),
        (Some(ReplyKind::Declined), _) => json!({"action": "decline"}),
        (Some(ReplyKind::MethodError) | None, _) => {
            let message = match access {
                Access::Full => format!("{method} is not supported by this client"),
                Access::ReadOnly => format!("{method} refused: this turn is read-only and grants nothing"),
            };
            return Answer { kind: ReplyKind::MethodError, result: None, error: Some(refusal(message)) };
        }
    };
    Answer { kind: kind.expect("matched above"), result: Some(result), error: None }
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
            ("mcpServer/elicitation/request", ReplyKind::Declined, Some(json!({"action":"decline"}))),
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
}
