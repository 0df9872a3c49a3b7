//! A call's script on the exchange: the handshake, then the call's request(s) — one row per
//! call. The call owns no thread: notifications change nothing, and every server request is
//! refused (the exchange's default [`Owner`]); the calls that wait for something the server
//! announces (a login's completion, a compaction's turn) watch for it with an owner of their
//! own ([`super::login`], [`super::compact`]).

use crate::exchange::{failures, handshake, Exchange, Input, Output, Owner, Stop};
use crate::options::call::{Call, CallOptions};
use crate::protocol::{
    method, AccountRateLimitsRead, AccountRead, ApprovalPolicy, ModelList, Page, SkillsList, ThreadArchive,
    ThreadDelete, ThreadFork, ThreadGoalClear, ThreadGoalGet, ThreadGoalSet, ThreadList, ThreadLoad, ThreadRead,
    ThreadRevert, ThreadSandbox, ThreadSetName, ThreadUnarchive,
};
use crate::resolve::Target;
use serde_json::{json, Value};

/// A call around turns, as the owner of its exchange: the exchange's defaults.
pub(super) struct Caller;

impl Owner for Caller {
    type Wake = std::convert::Infallible;
}

/// The handshake, then the call: what it resolves with.
pub(super) async fn play<R: Input, W: Output>(
    exchange: &mut Exchange<'_, R, W>,
    options: &CallOptions,
) -> Result<Value, Stop> {
    let owner = &mut Caller;
    // `thread/revert` is on the protocol's experimental surface before 0.171.0 ("requires
    // experimentalApi capability" on 0.150.0); nothing else of a call is.
    let experimental = matches!(options.call, Call::RevertThread { .. });
    handshake::handshake(exchange, owner, experimental).await?;
    Ok(match &options.call {
        Call::ReadAccount => account_info(exchange, owner, &options.target).await?,
        Call::ListModels { include_hidden } => {
            // Sent as asked, and applied here too: a Codex that lists hidden models anyway
            // must not put them in a picker.
            let include = include_hidden.then_some(true);
            let models = exchange.list_all(owner, |cursor| ModelList { cursor, include_hidden: include }).await?;
            let shown = models.into_iter().filter(|m| *include_hidden || m.get("hidden") != Some(&Value::Bool(true)));
            Value::Array(shown.collect())
        }
        Call::ListThreads { limit, cursor, archived, cwd, search_term, sort_key, source_kinds } => {
            let cwd = cwd.then_some(options.target.thread_cwd.as_str());
            let list = ThreadList {
                limit: *limit,
                cursor: cursor.as_deref(),
                archived: *archived,
                cwd,
                search_term: search_term.as_deref(),
                sort_key: sort_key.as_deref(),
                source_kinds: source_kinds.as_deref(),
            };
            let Page { data, next_cursor } = exchange.call(owner, &list).await?;
            json!({"threads": data, "nextCursor": next_cursor})
        }
        Call::ReadThread { thread_id, include_turns } => {
            exchange.call(owner, &ThreadRead { thread_id, include_turns: *include_turns }).await?.thread
        }
        Call::ForkThread { thread_id, last_turn_id } => {
            let fork = ThreadFork {
                thread_id,
                last_turn_id: last_turn_id.as_deref(),
                approval_policy: ApprovalPolicy::Never,
                sandbox: ThreadSandbox::ReadOnly,
            };
            json!({"threadId": exchange.call(owner, &fork).await?.thread.id})
        }
        Call::LoginWithApiKey { api_key } => super::login::with_api_key(exchange, &options.target, api_key).await?,
        Call::Logout => {
            exchange.call(owner, &crate::protocol::Logout {}).await?;
            Value::Null
        }
        Call::RenameThread { thread_id, name } => {
            exchange.call(owner, &ThreadSetName { thread_id, name }).await?;
            Value::Null
        }
        Call::ArchiveThread { thread_id } => {
            exchange.call(owner, &ThreadArchive { thread_id }).await?;
            Value::Null
        }
        Call::UnarchiveThread { thread_id } => {
            exchange.call(owner, &ThreadUnarchive { thread_id }).await?;
            Value::Null
        }
        Call::DeleteThread { thread_id } => {
            exchange.call(owner, &ThreadDelete { thread_id }).await?;
            Value::Null
        }
        Call::RevertThread { thread_id, before_turn_id } => {
            // Codex reverts only a thread this child has loaded ("thread not found" otherwise).
            load_thread(exchange, owner, thread_id).await?;
            exchange.call(owner, &ThreadRevert { thread_id, before_turn_id }).await?;
            Value::Null
        }
        Call::CompactThread { thread_id } => {
            load_thread(exchange, owner, thread_id).await?;
            super::compact::compact(exchange, thread_id).await?
        }
        // The goal calls never load the thread: a loaded idle thread with an active goal starts
        // continuation turns (model requests) on its own.
        Call::ReadGoal { thread_id } => exchange.call(owner, &ThreadGoalGet { thread_id }).await?.goal,
        Call::SetGoal { thread_id, goal } => {
            let set = ThreadGoalSet {
                thread_id,
                objective: goal.objective.as_deref(),
                status: goal.status.as_deref(),
                token_budget: goal.token_budget,
            };
            exchange.call(owner, &set).await?.goal
        }
        Call::ClearGoal { thread_id } => {
            exchange.call(owner, &ThreadGoalClear { thread_id }).await?;
            Value::Null
        }
        Call::ListSkills => {
            let list = SkillsList { cwds: [options.target.thread_cwd.as_str()], force_reload: None };
            skills(exchange.call(owner, &list).await?.data)
        }
        Call::ListMcpServers { connect } => super::mcp::list(exchange, owner, &options.target, *connect).await?,
        // Played by its own handle (super::login), never as a call.
        Call::StartLogin { .. } => {
            let message = "startLogin runs with a handle of its own";
            return Err(Stop::Failed(crate::failure::Failure::new(
                crate::failure::FailureSource::Internal,
                crate::failure::Code::InternalError,
                message,
            )));
        }
        Call::Request { method, params } => {
            let version = exchange.codex_version.clone();
            match exchange.ask_named(owner, method, params).await? {
                Ok(raw) => failures::parse_result(method, &raw).map_err(Stop::Failed)?,
                Err(error) => return Err(Stop::Failed(failures::rpc_failure(method, error, version.as_deref()))),
            }
        }
    })
}

/// `account/read`, then `account/rateLimits/read` on the same child: `AccountInfo`, with how
/// the child can authenticate (`auth`, the rule of a turn's `AUTH_REQUIRED`).
pub(super) async fn account_info<R: Input, W: Output, O: Owner>(
    exchange: &mut Exchange<'_, R, W>,
    owner: &mut O,
    target: &Target,
) -> Result<Value, Stop> {
    let report = exchange.call(owner, &AccountRead {}).await?;
    let Some(requires) = report.get("requiresOpenaiAuth").and_then(Value::as_bool) else {
        let why = "requiresOpenaiAuth is not a boolean";
        return Err(Stop::Failed(failures::unexpected_result(method::ACCOUNT_READ, why, &report.to_string())));
    };
    // Refused without a ChatGPT login (an API key has no plan), and by a Codex without it.
    let rate_limits = match exchange.ask(owner, &AccountRateLimitsRead {}).await? {
        Ok(limits) => limits,
        Err(error) => {
            tracing::debug!(code = error.code, "account/rateLimits/read refused: {}", error.message);
            Value::Null
        }
    };
    let auth = crate::account::auth(&report, &handshake::child_env(target));
    let account = report.get("account").cloned().unwrap_or(Value::Null);
    Ok(json!({"account": account, "requiresOpenaiAuth": requires, "rateLimits": rate_limits, "auth": auth}))
}

/// Loads a stored thread in this child, as a turn resumes it but without a `cwd` of its own
/// (the thread keeps its directory): read-only, approval `never`, so that nothing is written
/// to the user's configuration.
async fn load_thread<R: Input, W: Output>(
    exchange: &mut Exchange<'_, R, W>,
    owner: &mut Caller,
    thread_id: &str,
) -> Result<(), Stop> {
    let load = ThreadLoad { thread_id, approval_policy: ApprovalPolicy::Never, sandbox: ThreadSandbox::ReadOnly };
    exchange.call(owner, &load).await.map(drop)
}

/// The skills of the directory asked for (`skills/list` answers one entry per directory), each
/// as the server sent it. A skill Codex could not read is not a skill: its error is logged.
fn skills(entries: Vec<Value>) -> Value {
    let mut found = Vec::new();
    for mut entry in entries {
        if let Some(Value::Array(errors)) = entry.get("errors") {
            if !errors.is_empty() {
                tracing::debug!(count = errors.len(), "skills/list: skills that could not be read");
            }
        }
        if let Some(Value::Array(skills)) = entry.get_mut("skills").map(Value::take) {
            found.extend(skills);
        }
    }
    Value::Array(found)
}
