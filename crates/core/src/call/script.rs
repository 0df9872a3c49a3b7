//! A call's script on the exchange: the handshake, then the call's request(s). The call owns
//! no thread: notifications change nothing, and every server request is refused (the
//! exchange's default [`Owner`]).

use super::options::{Call, CallOptions};
use crate::exchange::{failures, handshake, Exchange, Input, Output, Owner, Stop};
use crate::protocol::{
    method, AccountRateLimitsRead, AccountRead, ApprovalPolicy, ModelList, Page, ThreadFork, ThreadList, ThreadRead,
    ThreadSandbox,
};
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
    handshake::handshake(exchange, owner, false).await?;
    Ok(match &options.call {
        Call::ReadAccount => {
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
            let account = report.get("account").cloned().unwrap_or(Value::Null);
            json!({"account": account, "requiresOpenaiAuth": requires, "rateLimits": rate_limits})
        }
        Call::ListModels { include_hidden } => {
            // Sent as asked, and applied here too: a Codex that lists hidden models anyway
            // must not put them in a picker.
            let include = include_hidden.then_some(true);
            let models = exchange.list_all(owner, |cursor| ModelList { cursor, include_hidden: include }).await?;
            let shown = models.into_iter().filter(|m| *include_hidden || m.get("hidden") != Some(&Value::Bool(true)));
            Value::Array(shown.collect())
        }
        Call::ListThreads { limit, cursor, archived, cwd } => {
            let cwd = cwd.then_some(options.target.thread_cwd.as_str());
            let list = ThreadList { limit: *limit, cursor: cursor.as_deref(), archived: *archived, cwd };
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
    })
}
