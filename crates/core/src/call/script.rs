//! A call's script — `initialize`, `initialized`, the call's request(s) — and the small frame
//! loop under it: one request waits at a time, with its deadline; an abort (or a kill) ends the
//! call at once; what else arrives changes nothing (a call owns no thread), and every server
//! request is refused.

use super::options::{Call, CallOptions};
use crate::control::Control;
use crate::failure::{Code, Failure, FailureSource};
use crate::protocol::{
    method, AccountRateLimitsRead, AccountRead, ApprovalPolicy, Initialize, ModelList, Page, Reply, Request, RpcError,
    ServerCall, ThreadFork, ThreadList, ThreadRead, ThreadSandbox,
};
use crate::rpc::{Connection, Received};
use crate::server;
use crate::turn::policy;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

/// Pages of `model/list` read before the answer counts as endless.
pub(super) const MAX_PAGES: usize = 100;

/// Why a call stopped before its answer.
pub(super) enum Stop {
    Failed(Failure),
    /// The server closed its stdout while `method` waited for its answer.
    Eof(&'static str),
    /// An abort or a kill.
    Cancelled,
}

/// The call's side of the connection.
pub(super) struct Link<'a, R, W> {
    conn: Connection<R, W>,
    control: &'a Control,
    request_timeout: Duration,
}

impl<'a, R, W> Link<'a, R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    pub(super) fn new(conn: Connection<R, W>, control: &'a Control, request_timeout: Duration) -> Self {
        Link { conn, control, request_timeout }
    }

    /// Closes the server's stdin.
    pub(super) async fn close(&mut self) {
        self.conn.close().await;
    }

    /// Sends a request and reads frames until its answer came, as its result type.
    async fn call<Q: Request>(&mut self, request: &Q) -> Result<Q::Result, Stop> {
        self.ask(request).await?.map_err(|error| Stop::Failed(server::rpc_failure(Q::METHOD, error)))
    }

    /// [`Link::call`], with the server's error answer as a value rather than the call's end.
    async fn ask<Q: Request>(&mut self, request: &Q) -> Result<Result<Q::Result, RpcError>, Stop> {
        let deadline = Instant::now() + self.request_timeout;
        // A request that did not reach the server gets no answer: its deadline, an abort or the
        // server's end decides.
        let id = self.conn.request(request, Some(deadline), give_way(self.control, deadline)).await.ok();
        loop {
            if let Some(answer) = id.and_then(|id| self.conn.answer(id)) {
                return match answer {
                    Ok(raw) => server::parse_result(Q::METHOD, &raw).map(Ok).map_err(Stop::Failed),
                    Err(error) => Ok(Err(error)),
                };
            }
            let received = tokio::select! {
                biased;
                () = self.control.aborted() => return Err(Stop::Cancelled),
                () = tokio::time::sleep_until(deadline) => {
                    return Err(Stop::Failed(server::request_timeout(Q::METHOD, self.request_timeout)));
                }
                received = self.conn.receive() => received,
            };
            match received.map_err(|e| Stop::Failed(e.into()))? {
                Received::Call { call: ServerCall::Request { id, method }, .. } => {
                    let answer = policy::refusal(format!("{method} refused: a call around turns grants nothing"));
                    tracing::debug!(method = %method, "server request refused");
                    let reply = Reply { id: &id, result: None, error: answer.error.as_ref() };
                    let _ = self.conn.reply(&reply, give_way(self.control, deadline)).await;
                }
                Received::Eof => return Err(Stop::Eof(Q::METHOD)),
                Received::Preamble(line) => tracing::debug!(target: "rennet_codex::stderr", "preamble: {line}"),
                // Notifications and answers to nothing of ours: the call owns nothing they change.
                Received::Call { .. } | Received::Answer { .. } | Received::Stray(_) => {}
            }
        }
    }

    /// Every entry of `model/list`, page after page.
    async fn models(&mut self, include_hidden: Option<bool>) -> Result<Vec<Value>, Stop> {
        let mut models = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let page = self.call(&ModelList { cursor, include_hidden }).await?;
            models.extend(page.data);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(models),
            }
        }
        let message = format!("{} did not end after {MAX_PAGES} pages", method::MODEL_LIST);
        Err(Stop::Failed(
            Failure::new(FailureSource::Jsonrpc, Code::UnexpectedResponse, message)
                .with_detail(json!({"method": method::MODEL_LIST})),
        ))
    }
}

/// What a write gives way to: an abort (or kill), and the request's deadline.
async fn give_way(control: &Control, deadline: Instant) {
    tokio::select! {
        () = control.aborted() => {}
        () = tokio::time::sleep_until(deadline) => {}
    }
}

/// The handshake, then the call: what it resolves with.
pub(super) async fn play<R, W>(link: &mut Link<'_, R, W>, options: &CallOptions) -> Result<Value, Stop>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    link.call(&Initialize::ours()).await?;
    let deadline = Instant::now() + link.request_timeout;
    let _ = link.conn.notify(method::INITIALIZED, give_way(link.control, deadline)).await;
    Ok(match &options.call {
        Call::ReadAccount => {
            let report = link.call(&AccountRead {}).await?;
            let Some(requires) = report.get("requiresOpenaiAuth").and_then(Value::as_bool) else {
                let why = "requiresOpenaiAuth is not a boolean";
                return Err(Stop::Failed(server::unexpected_result(method::ACCOUNT_READ, why, &report.to_string())));
            };
            // Refused without a ChatGPT login (an API key has no plan), and by a Codex without it.
            let rate_limits = match link.ask(&AccountRateLimitsRead {}).await? {
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
            let models = link.models(include_hidden.then_some(true)).await?;
            let shown = models.into_iter().filter(|m| *include_hidden || m.get("hidden") != Some(&Value::Bool(true)));
            Value::Array(shown.collect())
        }
        Call::ListThreads { limit, cursor, archived, cwd } => {
            let cwd = cwd.then_some(options.target.thread_cwd.as_str());
            let list = ThreadList { limit: *limit, cursor: cursor.as_deref(), archived: *archived, cwd };
            let Page { data, next_cursor } = link.call(&list).await?;
            json!({"threads": data, "nextCursor": next_cursor})
        }
        Call::ReadThread { thread_id, include_turns } => {
            link.call(&ThreadRead { thread_id, include_turns: *include_turns }).await?.thread
        }
        Call::ForkThread { thread_id, last_turn_id } => {
            let fork = ThreadFork {
                thread_id,
                last_turn_id: last_turn_id.as_deref(),
                approval_policy: ApprovalPolicy::Never,
                sandbox: ThreadSandbox::ReadOnly,
            };
            json!({"threadId": link.call(&fork).await?.thread.id})
        }
    })
}
