//! What this package sends: each request's params as a struct, paired with its method and the
//! type of its result in [`super::methods::TABLE`], in the way Codex's own protocol crate pairs
//! them. Optional fields are left out of the wire when absent.

use super::RpcError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

/// A request or notification we send. `params` is always present on requests.
#[derive(Serialize)]
pub struct Outgoing<'a, P: Serialize> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    pub method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

/// Our answer to a server request.
#[derive(Serialize)]
pub struct Reply<'a> {
    pub id: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a RpcError>,
}

/// `clientInfo.name`: Codex sends it to the model provider as the `originator` header.
pub const CLIENT_NAME: &str = "rennet";
pub const CLIENT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A request: its params (the struct itself), its method and the type of its result.
pub trait Request: Serialize {
    const METHOD: &'static str;
    type Result: DeserializeOwned;
}

/// When Codex asks before it acts. Threads always start with `never`; a turn of `access: 'ask'`
/// runs `on-request` (Codex asks before it escalates beyond the sandbox).
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    Never,
    OnRequest,
}

/// The thread's sandbox. Always read-only: a writable thread sandbox in a git directory makes
/// the server mark the project trusted in the user's config.toml.
#[derive(Serialize, Clone, Copy, Debug)]
#[serde(rename_all = "kebab-case")]
pub enum ThreadSandbox {
    ReadOnly,
}

/// The turn's sandbox policy.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SandboxPolicy {
    DangerFullAccess,
    ReadOnly,
    /// The workspace writable, Codex asking (under `on-request`) before anything beyond it.
    WorkspaceWrite(WorkspaceWrite),
}

/// What `workspaceWrite` lets write besides the cwd, in the protocol's words. Every field is
/// always sent: one left out is Codex's default, which replaces the user's own setting for the
/// turn (and the turns after it).
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceWrite {
    /// Absolute paths (Codex rejects a relative one).
    pub writable_roots: Vec<String>,
    pub network_access: bool,
    pub exclude_tmpdir_env_var: bool,
    pub exclude_slash_tmp: bool,
}

/// Codex's collaboration mode for a turn (plan mode plans and may ask questions). Experimental:
/// sent only with `initialize.capabilities.experimentalApi`.
#[derive(Serialize, Debug)]
pub struct CollaborationMode<'a> {
    pub mode: &'a str,
    pub settings: ModeSettings<'a>,
}

/// The mode's settings: the model (the turn's, else the thread's); the rest Codex's own.
#[derive(Serialize, Debug)]
pub struct ModeSettings<'a> {
    pub model: &'a str,
    pub reasoning_effort: Option<&'a str>,
    pub developer_instructions: Option<&'a str>,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Initialize {
    client_info: ClientInfo,
    /// Only when a request needs the experimental surface (plan mode's `collaborationMode`).
    #[serde(skip_serializing_if = "Option::is_none")]
    capabilities: Option<Capabilities>,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Capabilities {
    experimental_api: bool,
}

#[derive(Serialize, Debug)]
struct ClientInfo {
    name: &'static str,
    title: Option<&'static str>,
    version: &'static str,
}

impl Initialize {
    /// This package, as it introduces itself.
    pub fn ours() -> Initialize {
        Initialize {
            client_info: ClientInfo { name: CLIENT_NAME, title: None, version: CLIENT_VERSION },
            capabilities: None,
        }
    }

    /// [`Initialize::ours`], asking for the experimental API when `experimental`.
    pub fn with_experimental_api(mut self, experimental: bool) -> Initialize {
        self.capabilities = experimental.then_some(Capabilities { experimental_api: true });
        self
    }
}

/// Who is logged in, and whether a login is needed (no token refresh is asked for).
#[derive(Serialize, Debug)]
pub struct AccountRead {}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStart<'a> {
    pub cwd: &'a str,
    pub approval_policy: ApprovalPolicy,
    pub sandbox: ThreadSandbox,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'a str>,
    /// Configuration layered over the user's for this thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    /// Not stored: not listed, not resumable (sent only when asked for).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ephemeral: bool,
    /// The app's tools (experimental: needs `initialize.capabilities.experimentalApi`); sent
    /// only by a turn given tools, and only to start a thread (Codex ignores it on a resume:
    /// a thread keeps the tools it was started with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dynamic_tools: Option<Vec<DynamicToolSpec<'a>>>,
}

/// One tool of `thread/start.dynamicTools`: a top-level function (`type: "function"`).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct DynamicToolSpec<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: &'a str,
    pub description: &'a str,
    /// A JSON Schema object, sent verbatim (Codex sends it to the model as the function's
    /// `parameters`).
    pub input_schema: &'a RawValue,
}

/// `thread/resume`: `thread/start`'s params and the stored thread's id.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResume<'a> {
    pub thread_id: &'a str,
    #[serde(flatten)]
    pub thread: ThreadStart<'a>,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TurnStart<'a> {
    pub thread_id: &'a str,
    /// The protocol's `UserInput` items, as the caller gave them (checked in the options).
    pub input: &'a RawValue,
    pub cwd: &'a str,
    pub approval_policy: ApprovalPolicy,
    pub sandbox_policy: SandboxPolicy,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collaboration_mode: Option<CollaborationMode<'a>>,
}

/// A review of changes, run inline on the thread as a turn of it.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ReviewStart<'a> {
    pub thread_id: &'a str,
    /// The protocol's `ReviewTarget`, as the caller gave it (checked in the options).
    pub target: &'a RawValue,
    pub delivery: &'static str,
}

/// `review/start` result: the review's turn (its id is what the review's items carry).
#[derive(Deserialize, Debug)]
pub struct ReviewStartResult {
    pub turn: TurnRef,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TurnInterrupt<'a> {
    pub thread_id: &'a str,
    pub turn_id: &'a str,
}

/// More input for the running turn; refused unless `expected_turn_id` is the active turn.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteer<'a> {
    pub thread_id: &'a str,
    /// As [`TurnStart::input`].
    pub input: &'a RawValue,
    pub expected_turn_id: &'a str,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerResult {
    pub turn_id: String,
}

/// The effective configuration for a directory, project layers included.
#[derive(Serialize, Debug)]
pub struct ConfigRead<'a> {
    pub cwd: &'a str,
}

/// The merged configuration of a `config/read` result: only an object `config` is one. Else
/// why not, and a report of what was there instead — never the rest of the answer, which can
/// hold credentials.
pub fn merged_config(config_read: &Value) -> Result<&serde_json::Map<String, Value>, (&'static str, Value)> {
    if let Some(config) = config_read.get("config").and_then(Value::as_object) {
        return Ok(config);
    }
    let config = config_read.get("config").cloned();
    let message = if config.is_some() {
        "config/read reported a config that is not an object"
    } else {
        "config/read answered without a config"
    };
    let mut members: Vec<&String> = config_read.as_object().map(|o| o.keys().collect()).unwrap_or_default();
    members.sort();
    Err((message, serde_json::json!({"config": config, "members": members})))
}

/// One page of the features and whether each is on, for a thread.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentalFeatureList<'a> {
    pub thread_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// One page of the MCP servers and their state, for a thread.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatusList<'a> {
    pub thread_id: &'a str,
    /// Only what tells whether a server runs (no resource listings).
    pub detail: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// One page of a paginated list, its entries as the server sent them (the isolation checks
/// tolerate no entry of unexpected shape; the calls hand them on).
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    pub data: Vec<Value>,
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// The plan's usage limits; refused without a ChatGPT login.
#[derive(Serialize, Debug)]
pub struct AccountRateLimitsRead {}

/// One page of the models the server offers.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ModelList {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_hidden: Option<bool>,
}

/// One page of the stored threads, newest first.
#[derive(Serialize, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct ThreadList<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archived: Option<bool>,
    /// Only threads whose session directory is this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<&'a str>,
    /// Only threads whose title contains this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_term: Option<&'a str>,
    /// `created_at` (the server's default), `updated_at`, `recency_at`, `section_position`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sort_key: Option<&'a str>,
    /// Only threads from these sources (the server's default: the interactive ones, so
    /// sub-agent threads only when asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_kinds: Option<&'a [String]>,
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRead<'a> {
    pub thread_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_turns: Option<bool>,
}

/// A new thread with the history of `thread_id` (through `last_turn_id`). Read-only at the
/// thread level for the same reason as `thread/start` (see [`ThreadSandbox`]).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ThreadFork<'a> {
    pub thread_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_turn_id: Option<&'a str>,
    pub approval_policy: ApprovalPolicy,
    pub sandbox: ThreadSandbox,
}

/// `thread/read` result: the thread as the server keeps it, handed on verbatim.
#[derive(Deserialize, Debug)]
pub struct ThreadReadResult {
    pub thread: Value,
}

#[derive(Deserialize, Default, Debug)]
pub struct TurnRef {
    #[serde(default)]
    pub id: Option<String>,
}

/// `initialize` result.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub user_agent: String,
}

/// `thread/start` and `thread/resume` results: the thread id, and the sandbox and approval
/// policy the thread got (checked for a read-only turn).
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResult {
    pub thread: ThreadRef,
    #[serde(default)]
    pub sandbox: Value,
    #[serde(default)]
    pub approval_policy: Value,
}

#[derive(Deserialize, Debug)]
pub struct ThreadRef {
    pub id: String,
    /// The model the thread runs (plan mode's settings name it when the turn gives none).
    #[serde(default)]
    pub model: Option<String>,
}

/// `turn/start` result (an acknowledgement).
#[derive(Deserialize, Debug)]
pub struct TurnStartResult {
    pub turn: TurnRef,
}

// -------------------------------------------------------------------------------------------
// Calls around turns beyond the first five: logging in and out, the thread verbs, goals, skills
// and MCP status (crate::call, crate::login), and any other method (`request()`).

/// `account/login/start`: the login the app asked for. The API key goes here and nowhere else:
/// never in a log record, an error or a command line (`Debug` does not show it either).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum LoginStart<'a> {
    ApiKey {
        #[serde(rename = "apiKey")]
        api_key: &'a str,
    },
    /// In the browser: the child listens on 127.0.0.1 for the callback until the login ends (port
    /// 1455 when free, else another; the answer's `authUrl` names it).
    Chatgpt,
    /// A code the user enters on another device.
    ChatgptDeviceCode,
}

impl std::fmt::Debug for LoginStart<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LoginStart::ApiKey { .. } => "LoginStart::ApiKey { api_key: <redacted> }",
            LoginStart::Chatgpt => "LoginStart::Chatgpt",
            LoginStart::ChatgptDeviceCode => "LoginStart::ChatgptDeviceCode",
        })
    }
}

/// `account/login/start` result: what the app shows the user (the browser URL, or the
/// verification URL and code), by the login's type.
#[derive(Deserialize, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct LoginStarted {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub login_id: Option<String>,
    #[serde(default)]
    pub auth_url: Option<String>,
    #[serde(default)]
    pub verification_url: Option<String>,
    #[serde(default)]
    pub user_code: Option<String>,
}

/// Ends a login that has not completed: the server answers `{status: "canceled" | "notFound"}`
/// and sends `account/login/completed {success: false}`.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct LoginCancel<'a> {
    pub login_id: &'a str,
}

/// Removes the stored credentials (`auth.json`).
#[derive(Serialize, Debug)]
pub struct Logout {}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSetName<'a> {
    pub thread_id: &'a str,
    pub name: &'a str,
}

/// The params of a request about one stored thread and nothing else, under the method's name.
macro_rules! thread_params {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Serialize, Debug)]
        #[serde(rename_all = "camelCase")]
        pub struct $name<'a> {
            pub thread_id: &'a str,
        }
    )*};
}

thread_params! {
    /// Moves the thread out of `thread/list` (into `archived: true`).
    ThreadArchive;
    ThreadUnarchive;
    /// Removes the thread from both lists and from disk.
    ThreadDelete;
    /// Starts compacting a loaded thread: answered at once, then a turn of its own.
    ThreadCompactStart;
    ThreadGoalGet;
    ThreadGoalClear;
}

/// Patches a stored thread's metadata (its Git facts) as the app gave it: what is absent stays,
/// `null` clears.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ThreadMetadataUpdate<'a> {
    pub thread_id: &'a str,
    #[serde(flatten)]
    pub patch: &'a Value,
}

/// Removes `before_turn_id` and every later turn from a loaded thread's history (not the files
/// those turns changed).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRevert<'a> {
    pub thread_id: &'a str,
    pub before_turn_id: &'a str,
}

/// Creates or changes the thread's goal; what is absent stays as it is. `token_budget`:
/// `Some(None)` sends `null` (no budget).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalSet<'a> {
    pub thread_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objective: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<Option<i64>>,
}

/// `thread/goal/get` and `thread/goal/set` results: the goal verbatim (`null`: none).
#[derive(Deserialize, Debug)]
pub struct GoalResult {
    #[serde(default)]
    pub goal: Value,
}

/// The skills Codex finds for each directory (repo skills under `.agents/skills` and
/// `.codex/skills`, the user's under `$CODEX_HOME/skills`).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct SkillsList<'a> {
    pub cwds: [&'a str; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub force_reload: Option<bool>,
}

/// `skills/list` result: one entry per directory asked, as the server sent it.
#[derive(Deserialize, Debug)]
pub struct SkillsListResult {
    pub data: Vec<Value>,
}

/// `thread/resume` as a call loads a stored thread before a request that needs it loaded: no
/// `cwd` (the thread keeps its own), read-only and approval `never` for the reason of
/// [`ThreadSandbox`].
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ThreadLoad<'a> {
    pub thread_id: &'a str,
    pub approval_policy: ApprovalPolicy,
    pub sandbox: ThreadSandbox,
}

impl Request for ThreadLoad<'_> {
    const METHOD: &'static str = super::method::THREAD_RESUME;
    type Result = ThreadResult;
}

/// `mcpServerStatus/list` without a thread: the server connects to every enabled server to
/// ask it (stdio commands start, remote servers are contacted).
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatusConnect {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl Request for McpServerStatusConnect {
    const METHOD: &'static str = super::method::MCP_SERVER_STATUS_LIST;
    type Result = Page;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wire<Q: Request>(q: &Q) -> Value {
        serde_json::to_value(q).unwrap()
    }

    #[test]
    fn params_are_what_the_server_expects() {
        assert_eq!(
            wire(&Initialize::ours()),
            json!({"clientInfo": {"name": "rennet", "title": null, "version": CLIENT_VERSION}})
        );
        let start = ThreadStart {
            cwd: "/w",
            approval_policy: ApprovalPolicy::Never,
            sandbox: ThreadSandbox::ReadOnly,
            model: None,
            config: None,
            ephemeral: false,
            dynamic_tools: None,
        };
        assert_eq!(wire(&start), json!({"cwd": "/w", "approvalPolicy": "never", "sandbox": "read-only"}));
        let ephemeral =
            ThreadStart { ephemeral: true, ..ThreadStart { model: None, config: None, dynamic_tools: None, ..start } };
        assert_eq!(wire(&ephemeral)["ephemeral"], json!(true));
        let resume = ThreadResume { thread_id: "th", thread: ThreadStart { model: Some("m"), ..start } };
        assert_eq!(
            wire(&resume),
            json!({"threadId": "th", "cwd": "/w", "approvalPolicy": "never", "sandbox": "read-only", "model": "m"})
        );
        let schema = RawValue::from_string(r#"{"type":"object"}"#.into()).unwrap();
        let input = serde_json::value::to_raw_value(&[crate::options::input::InputItem::text("hi")]).unwrap();
        let turn = TurnStart {
            thread_id: "th",
            input: &input,
            cwd: "/w",
            approval_policy: ApprovalPolicy::Never,
            sandbox_policy: SandboxPolicy::DangerFullAccess,
            model: None,
            effort: Some("low"),
            output_schema: Some(&schema),
            collaboration_mode: None,
        };
        assert_eq!(
            wire(&turn),
            json!({"threadId": "th", "input": [{"type": "text", "text": "hi", "text_elements": []}], "cwd": "/w",
                   "approvalPolicy": "never", "sandboxPolicy": {"type": "dangerFullAccess"}, "effort": "low",
                   "outputSchema": {"type": "object"}})
        );
        let plan = TurnStart {
            approval_policy: ApprovalPolicy::OnRequest,
            sandbox_policy: SandboxPolicy::WorkspaceWrite(WorkspaceWrite {
                writable_roots: vec!["/opt/cache".into()],
                exclude_slash_tmp: true,
                ..WorkspaceWrite::default()
            }),
            output_schema: None,
            effort: None,
            collaboration_mode: Some(CollaborationMode {
                mode: "plan",
                settings: ModeSettings { model: "m", reasoning_effort: None, developer_instructions: None },
            }),
            ..turn
        };
        let plan = wire(&plan);
        assert_eq!(plan["approvalPolicy"], "on-request");
        // Every setting named: one left out would be Codex's default, not the user's.
        assert_eq!(
            plan["sandboxPolicy"],
            json!({"type": "workspaceWrite", "writableRoots": ["/opt/cache"], "networkAccess": false,
                   "excludeTmpdirEnvVar": false, "excludeSlashTmp": true})
        );
        assert_eq!(
            plan["collaborationMode"],
            json!({"mode": "plan", "settings": {"model": "m", "reasoning_effort": null, "developer_instructions": null}})
        );
        assert_eq!(serde_json::to_value(SandboxPolicy::ReadOnly).unwrap(), json!({"type": "readOnly"}));
        let list = McpServerStatusList { thread_id: "th", detail: "toolsAndAuthOnly", cursor: None };
        assert_eq!(wire(&list), json!({"threadId": "th", "detail": "toolsAndAuthOnly"}));
        let at = McpServerStatusList { cursor: Some("2".into()), ..list };
        assert_eq!(wire(&at)["cursor"], "2");
        assert_eq!(wire(&AccountRateLimitsRead {}), json!({}));
        assert_eq!(wire(&ModelList { cursor: None, include_hidden: Some(false) }), json!({"includeHidden": false}));
        assert_eq!(wire(&ThreadList::default()), json!({}));
        let list = ThreadList {
            limit: Some(5),
            cursor: Some("c"),
            archived: Some(true),
            cwd: Some("/w"),
            ..Default::default()
        };
        assert_eq!(wire(&list), json!({"limit": 5, "cursor": "c", "archived": true, "cwd": "/w"}));
        assert_eq!(wire(&ThreadRead { thread_id: "th", include_turns: None }), json!({"threadId": "th"}));
        let fork = ThreadFork {
            thread_id: "th",
            last_turn_id: Some("tu"),
            approval_policy: ApprovalPolicy::Never,
            sandbox: ThreadSandbox::ReadOnly,
        };
        assert_eq!(
            wire(&fork),
            json!({"threadId": "th", "lastTurnId": "tu", "approvalPolicy": "never", "sandbox": "read-only"})
        );
    }
}
