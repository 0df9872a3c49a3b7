//! Calls around turns — who is logged in, logging in and out, which models there are, the
//! stored threads and what an app does to them, goals, skills, MCP status, and any other
//! method — each one short-lived `codex app-server` child: started, ended and described as a
//! turn's is ([`crate::app_server`]), speaking over the same exchange ([`crate::exchange`]):
//! the handshake and the call's request(s), each with its deadline, while an abort or the
//! server's end stops everything at once. Nothing the server asks for is granted. A call is one
//! row of [`script::play`]; a ChatGPT login has a handle of its own ([`login`]). `drive` is
//! generic over the connection and the process, so `cargo test` plays the server.

mod compact;
pub mod login;
mod mcp;
mod script;

pub use crate::options::call::{parse, refused_method, Call, CallOptions, GoalChange, LoginKind, Secret};

use crate::app_server::{self, NotStarted, Started};
use crate::cancel::Cancel;
use crate::exchange::{Exchange, Input, Output, Stop};
use crate::failure::{Code, Failure, FailureSource};
use crate::process::{Child, ServerProcess, Spec};
use crate::resolve::Resolved;
use crate::rpc::Connection;
use crate::transport::FrameReader;
use serde_json::Value;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tracing::field::Empty;
use tracing::Instrument;

/// How a call ended: what it resolves with, or why not (`CANCELLED` when it was aborted;
/// nothing is left of the child either way).
pub type Outcome = Result<Value, Failure>;

/// A running call, as its caller holds it.
pub struct Running {
    cancel: Arc<Cancel>,
    outcome: Mutex<Option<oneshot::Receiver<String>>>,
}

impl Running {
    /// Ends the child at once (a call has nothing to interrupt politely); its outcome then
    /// says `CANCELLED`. Idempotent.
    pub fn abort(&self) {
        self.cancel.request_kill();
    }

    pub fn cancel(&self) -> &Arc<Cancel> {
        &self.cancel
    }

    /// How the call went, once its child is gone: the JSON text of its envelope
    /// ([`crate::envelope`]). Once per call.
    pub async fn outcome(&self) -> String {
        let waiting = self.outcome.lock().unwrap_or_else(|e| e.into_inner()).take();
        let answered = match waiting {
            Some(waiting) => waiting.await.ok(),
            None => None,
        };
        answered.unwrap_or_else(|| {
            let failure =
                Failure::new(FailureSource::Internal, Code::InternalError, "the call's outcome was already taken");
            crate::envelope::to_json::<()>(&Err(failure))
        })
    }
}

/// The call, ready to run: its handle, and the work to spawn on the runtime (it settles the
/// handle's outcome however it ends, a defect included). `aborted`: nothing is started.
pub fn start(options: CallOptions, aborted: bool) -> (Running, impl Future<Output = ()> + Send + 'static) {
    start_with(options, aborted, run)
}

/// [`start`] with the runner given (a test's can fail as production's must not).
fn start_with<F, Fut>(
    options: CallOptions,
    aborted: bool,
    runner: F,
) -> (Running, impl Future<Output = ()> + Send + 'static)
where
    F: FnOnce(CallOptions, Arc<Cancel>) -> Fut + Send + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    let cancel = Arc::new(Cancel::new());
    if aborted {
        cancel.request_kill();
    }
    let (settle, outcome) = oneshot::channel();
    let work = {
        let cancel = cancel.clone();
        async move {
            let outcome = crate::supervise::catching(runner(options, cancel)).await.and_then(|outcome| outcome);
            let _ = settle.send(crate::envelope::to_json(&outcome));
        }
    };
    (Running { cancel, outcome: Mutex::new(Some(outcome)) }, work)
}

/// Starts the child, plays the call, ends the child; then the outcome.
pub async fn run(options: CallOptions, cancel: Arc<Cancel>) -> Outcome {
    let span = tracing::info_span!("call", call = options.call.name(), pid = Empty);
    async move {
        let outcome = start_and_drive(&options, &cancel).await;
        let code = outcome.as_ref().err().map(|failure| failure.code.as_str());
        tracing::info!(code, "call ended");
        outcome
    }
    .instrument(span)
    .await
}

async fn start_and_drive(options: &CallOptions, cancel: &Cancel) -> Outcome {
    let mut child = start_child(options, cancel).await?;
    let (stdout, stdin) = child.pipes();
    drive(stdout, stdin, child, options, cancel).await
}

/// The `codex app-server` child of a call (a login's included), started where its target says.
async fn start_child(options: &CallOptions, cancel: &Cancel) -> Result<Child, Failure> {
    let prepare = |resolved: Resolved| async move {
        let mut args = vec![std::ffi::OsString::from("app-server")];
        // Listing MCP servers without starting them: no plugin or app brings servers of its own.
        if options.call == (Call::ListMcpServers { connect: false }) {
            args.extend(crate::isolation::feature_args());
        }
        let mut spec: Spec = resolved.launch.spec(args);
        spec.stdin = true;
        // Whatever Codex writes to stderr is logged: never a key.
        match &options.call {
            Call::LoginWithApiKey { api_key } => spec.secrets.push(api_key.expose().to_string()),
            Call::Request { params, .. } => credentials_in(params, &mut spec.secrets),
            _ => {}
        }
        Ok::<_, Failure>(spec)
    };
    match app_server::start(&options.target, cancel, prepare, None).await {
        Ok(Started { child, .. }) => Ok(child),
        Err(NotStarted::Aborted) => Err(cancelled(&options.call)),
        Err(NotStarted::Failed(failure)) => Err(failure),
    }
}

/// Plays one call over an established connection and ends the process before it answers.
pub async fn drive<R: Input, W: Output, P: ServerProcess>(
    reader: R,
    writer: W,
    process: P,
    options: &CallOptions,
    cancel: &Cancel,
) -> Outcome {
    let conn = Connection::new(FrameReader::new(reader), writer);
    let mut exchange = Exchange::new(conn, cancel, options.request_timeout);
    let played = script::play(&mut exchange, options).await;
    finish(played, exchange, process, &options.call, cancel).await
}

/// Ends the child of a call that played (`played`) and says how the call went.
async fn finish<R: Input, W: Output, P: ServerProcess>(
    played: Result<Value, Stop>,
    mut exchange: Exchange<'_, R, W>,
    mut process: P,
    call: &Call,
    cancel: &Cancel,
) -> Outcome {
    let leaving = played.as_ref().err().map_or(app_server::Leaving::Done, Stop::leaving);
    let gone = app_server::end(&mut process, exchange.close(), leaving, cancel).await;
    match played {
        // An abort while the child was being ended still wins: the caller is not waiting any more.
        Ok(_) if cancel.abort_requested() => Err(cancelled(call)),
        Ok(value) => Ok(value),
        Err(Stop::Cancelled | Stop::Done) => Err(cancelled(call)),
        Err(Stop::Eof { waiting }) => {
            let before = format!("it answered {}", waiting.unwrap_or("the call"));
            Err(app_server::exited(&before, &gone, process.stderr_tail()))
        }
        Err(Stop::Failed(failure)) => Err(app_server::with_stderr_tail(failure, || process.stderr_tail())),
    }
}

/// The values of `params` that are credentials by their name (`apiKey`, `accessToken`,
/// `secretAccessKey`, `sessionToken`…, as `account/login/start` takes them through `request()`).
fn credentials_in(params: &Value, found: &mut Vec<String>) {
    match params {
        Value::Object(fields) => {
            for (name, value) in fields {
                let name = name.to_ascii_lowercase();
                let secret = ["key", "token", "secret", "password"].iter().any(|word| name.contains(word));
                match value {
                    Value::String(text) if secret => found.push(text.clone()),
                    other => credentials_in(other, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| credentials_in(item, found)),
        _ => {}
    }
}

/// What a call that was aborted rejects with; JavaScript adds the abort's reason as `cause`.
fn cancelled(call: &Call) -> Failure {
    let name = call.name();
    Failure::new(FailureSource::Jsonrpc, Code::Cancelled, format!("{name} was cancelled"))
        .with_detail(serde_json::json!({"call": name}))
}

#[cfg(test)]
mod tests;
