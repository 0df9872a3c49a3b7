//! Every method this package speaks, in one table: the name in the protocol's spelling, who
//! sends it, and for the requests we send their params and result types. Routing reads the
//! server notifications from it, the reply policy the server requests, and a test holds the
//! table and `scripts/protocol-surface.json` (which `pnpm schema:check` verifies against the
//! schema each Codex version generates) to the same list.

/// Who sends a method, and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A request we send (`clientRequests`).
    ClientRequest,
    /// A notification we send (`clientNotifications`).
    ClientNotification,
    /// A notification the turn handles (`serverNotifications`); others come out as `native`.
    ServerNotification,
    /// A server request the policy grants (`serverRequests`); others get a method error.
    ServerRequest,
}

/// One row of [`TABLE`].
#[derive(Clone, Copy, Debug)]
pub struct Method {
    pub name: &'static str,
    pub kind: Kind,
}

macro_rules! methods {
    ($($konst:ident = $name:literal, $kind:ident $(, $params:ty => $result:ty)?;)*) => {
        /// Method names, in the protocol's own spelling.
        pub mod method {
            $(pub const $konst: &str = $name;)*
        }

        pub const TABLE: &[Method] = &[$(Method { name: $name, kind: Kind::$kind }),*];

        $($(impl super::Request for $params {
            const METHOD: &'static str = $name;
            type Result = $result;
        })?)*
    };
}

use super::requests::*;

methods! {
    INITIALIZE = "initialize", ClientRequest, Initialize => InitializeResult;
    INITIALIZED = "initialized", ClientNotification;
    // As a value: the report goes verbatim into an AUTH_REQUIRED failure's detail.
    ACCOUNT_READ = "account/read", ClientRequest, AccountRead => serde_json::Value;
    THREAD_START = "thread/start", ClientRequest, ThreadStart<'_> => ThreadResult;
    THREAD_RESUME = "thread/resume", ClientRequest, ThreadResume<'_> => ThreadResult;
    TURN_START = "turn/start", ClientRequest, TurnStart<'_> => TurnStartResult;
    // An acknowledgement: `turn/completed` says how the turn ended.
    TURN_INTERRUPT = "turn/interrupt", ClientRequest, TurnInterrupt<'_> => serde::de::IgnoredAny;
    TURN_STEER = "turn/steer", ClientRequest, TurnSteer<'_> => TurnSteerResult;
    // A review runs as a turn of the thread (`delivery: inline`).
    REVIEW_START = "review/start", ClientRequest, ReviewStart<'_> => ReviewStartResult;
    // Read as values: the isolation checks fail closed on any shape they do not expect, and
    // report the part that was wrong (never the rest: the configuration can hold credentials).
    CONFIG_READ = "config/read", ClientRequest, ConfigRead<'_> => serde_json::Value;
    EXPERIMENTAL_FEATURE_LIST = "experimentalFeature/list", ClientRequest, ExperimentalFeatureList<'_> => Page;
    MCP_SERVER_STATUS_LIST = "mcpServerStatus/list", ClientRequest, McpServerStatusList<'_> => Page;

    // Calls around turns (crate::call): the server's objects are handed on verbatim.
    ACCOUNT_RATE_LIMITS_READ = "account/rateLimits/read", ClientRequest, AccountRateLimitsRead => serde_json::Value;
    MODEL_LIST = "model/list", ClientRequest, ModelList => Page;
    THREAD_LIST = "thread/list", ClientRequest, ThreadList<'_> => Page;
    THREAD_READ = "thread/read", ClientRequest, ThreadRead<'_> => ThreadReadResult;
    THREAD_FORK = "thread/fork", ClientRequest, ThreadFork<'_> => ThreadResult;
    // Logging in and out: the only requests that write the user's credentials (`auth.json`).
    ACCOUNT_LOGIN_START = "account/login/start", ClientRequest, LoginStart<'_> => LoginStarted;
    ACCOUNT_LOGIN_CANCEL = "account/login/cancel", ClientRequest, LoginCancel<'_> => serde_json::Value;
    ACCOUNT_LOGOUT = "account/logout", ClientRequest, Logout => serde::de::IgnoredAny;
    // The thread verbs; revert and compact need the thread loaded (`thread/resume`, as ThreadLoad).
    THREAD_NAME_SET = "thread/name/set", ClientRequest, ThreadSetName<'_> => serde::de::IgnoredAny;
    THREAD_ARCHIVE = "thread/archive", ClientRequest, ThreadArchive<'_> => serde::de::IgnoredAny;
    THREAD_UNARCHIVE = "thread/unarchive", ClientRequest, ThreadUnarchive<'_> => serde::de::IgnoredAny;
    THREAD_DELETE = "thread/delete", ClientRequest, ThreadDelete<'_> => serde::de::IgnoredAny;
    THREAD_REVERT = "thread/revert", ClientRequest, ThreadRevert<'_> => serde::de::IgnoredAny;
    THREAD_METADATA_UPDATE = "thread/metadata/update", ClientRequest, ThreadMetadataUpdate<'_> => ThreadReadResult;
    // An acknowledgement: the compaction is a turn of its own, ended by its `turn/completed`.
    THREAD_COMPACT_START = "thread/compact/start", ClientRequest, ThreadCompactStart<'_> => serde::de::IgnoredAny;
    // Goals, never with the thread loaded (a loaded idle thread starts continuation turns).
    THREAD_GOAL_GET = "thread/goal/get", ClientRequest, ThreadGoalGet<'_> => GoalResult;
    THREAD_GOAL_SET = "thread/goal/set", ClientRequest, ThreadGoalSet<'_> => GoalResult;
    THREAD_GOAL_CLEAR = "thread/goal/clear", ClientRequest, ThreadGoalClear<'_> => serde::de::IgnoredAny;
    SKILLS_LIST = "skills/list", ClientRequest, SkillsList<'_> => SkillsListResult;

    THREAD_STARTED = "thread/started", ServerNotification;
    TURN_STARTED = "turn/started", ServerNotification;
    TURN_COMPLETED = "turn/completed", ServerNotification;
    ITEM_STARTED = "item/started", ServerNotification;
    ITEM_COMPLETED = "item/completed", ServerNotification;
    AGENT_MESSAGE_DELTA = "item/agentMessage/delta", ServerNotification;
    REASONING_SUMMARY_DELTA = "item/reasoning/summaryTextDelta", ServerNotification;
    REASONING_TEXT_DELTA = "item/reasoning/textDelta", ServerNotification;
    COMMAND_OUTPUT_DELTA = "item/commandExecution/outputDelta", ServerNotification;
    TOKEN_USAGE_UPDATED = "thread/tokenUsage/updated", ServerNotification;
    ERROR = "error", ServerNotification;
    TURN_PLAN_UPDATED = "turn/plan/updated", ServerNotification;
    TURN_DIFF_UPDATED = "turn/diff/updated", ServerNotification;
    ACCOUNT_RATE_LIMITS_UPDATED = "account/rateLimits/updated", ServerNotification;
    THREAD_GOAL_UPDATED = "thread/goal/updated", ServerNotification;
    PLAN_DELTA = "item/plan/delta", ServerNotification;
    // What a login waits for.
    ACCOUNT_LOGIN_COMPLETED = "account/login/completed", ServerNotification;

    COMMAND_EXECUTION_APPROVAL = "item/commandExecution/requestApproval", ServerRequest;
    FILE_CHANGE_APPROVAL = "item/fileChange/requestApproval", ServerRequest;
    PERMISSIONS_APPROVAL = "item/permissions/requestApproval", ServerRequest;
    // The legacy (v1) approvals.
    EXEC_COMMAND_APPROVAL = "execCommandApproval", ServerRequest;
    APPLY_PATCH_APPROVAL = "applyPatchApproval", ServerRequest;
    MCP_ELICITATION = "mcpServer/elicitation/request", ServerRequest;
    REQUEST_USER_INPUT = "item/tool/requestUserInput", ServerRequest;
    DYNAMIC_TOOL_CALL = "item/tool/call", ServerRequest;
}

/// A notification's name as `&'static str` when the turn handles it, so that routing needs no
/// copy of it per frame.
pub(crate) fn known(name: std::borrow::Cow<'_, str>) -> std::borrow::Cow<'static, str> {
    match TABLE.iter().find(|m| m.kind == Kind::ServerNotification && m.name == name) {
        Some(m) => std::borrow::Cow::Borrowed(m.name),
        None => std::borrow::Cow::Owned(name.into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    const SURFACE: &str = include_str!("../../../../scripts/protocol-surface.json");

    #[test]
    fn the_table_and_the_schema_checked_surface_list_the_same_methods() {
        let surface: serde_json::Value = serde_json::from_str(SURFACE).unwrap();
        for (section, kind) in [
            ("clientRequests", Kind::ClientRequest),
            ("clientNotifications", Kind::ClientNotification),
            ("serverNotifications", Kind::ServerNotification),
            ("serverRequests", Kind::ServerRequest),
        ] {
            let listed: BTreeSet<&str> = surface[section].as_object().unwrap().keys().map(String::as_str).collect();
            let table: BTreeSet<&str> = TABLE.iter().filter(|m| m.kind == kind).map(|m| m.name).collect();
            assert_eq!(table, listed, "{section}: the table (left) and protocol-surface.json (right) differ");
        }
    }

    #[test]
    fn handled_notifications_are_borrowed() {
        assert!(matches!(known("turn/started".into()), std::borrow::Cow::Borrowed(_)));
        assert!(matches!(known("turn/start".into()), std::borrow::Cow::Owned(_)));
    }
}
