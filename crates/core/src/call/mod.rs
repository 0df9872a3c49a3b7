//! Calls around turns — who is logged in, which models there are, the stored threads — each
//! one short-lived `codex app-server` child: started, ended and described as a turn's is
//! ([`crate::server`]), over the same JSON-RPC connection ([`crate::rpc`]). In between, the
//! handshake and the call's request(s), each with its deadline, while an abort or the server's
//! end stops everything at once. Nothing the server asks for is granted. `drive` is generic
//! over the connection and the process, so `cargo test` plays the server.

mod options;
mod script;

pub use options::{parse, Call, CallOptions};

use crate::control::Control;
use crate::failure::Failure;
use crate::process::{ServerProcess, Spec};
use crate::rpc::Connection;
use crate::server::{self, Leaving, NotStarted, Started};
use crate::target::Resolved;
use crate::transport::FrameReader;
use script::{Link, Stop};
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tracing::field::Empty;
use tracing::Instrument;

/// How a call ended.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// What the call resolves with.
    Answered(Value),
    Failed(Failure),
    /// Aborted: nothing is left of the child.
    Cancelled,
}

impl Outcome {
    /// The JSON text JavaScript reads: `{"ok": …}`, `{"failure": …}` or `{"cancelled": true}`.
    pub fn to_json(&self) -> String {
        match self {
            Outcome::Answered(value) => json!({ "ok": value }),
            Outcome::Failed(failure) => json!({ "failure": failure }),
            Outcome::Cancelled => json!({ "cancelled": true }),
        }
        .to_string()
    }
}

/// Production entry: starts the child, plays the call, ends the child; then the outcome.
pub async fn run(options: CallOptions, control: Arc<Control>) -> Outcome {
    let span = tracing::info_span!("call", call = options.call.name(), pid = Empty);
    async move {
        let outcome = start_and_drive(&options, &control).await;
        let code = match &outcome {
            Outcome::Failed(failure) => Some(failure.code.as_str()),
            _ => None,
        };
        tracing::info!(cancelled = outcome == Outcome::Cancelled, code, "call ended");
        outcome
    }
    .instrument(span)
    .await
}

async fn start_and_drive(options: &CallOptions, control: &Control) -> Outcome {
    let prepare = |resolved: Resolved| async move {
        let mut spec: Spec = resolved.launch.spec(["app-server"]);
        spec.stdin = true;
        Ok::<_, Failure>(spec)
    };
    let mut child = match server::start(&options.target, control, prepare, None).await {
        Ok(Started { child, .. }) => child,
        Err(NotStarted::Aborted) => return Outcome::Cancelled,
        Err(NotStarted::Failed(failure)) => return Outcome::Failed(failure),
    };
    let (stdin, stdout) = (child.stdin.take().expect("stdin is piped"), child.stdout.take().expect("stdout is piped"));
    drive(stdout, stdin, child, options, control).await
}

/// Plays one call over an established connection and ends the process before it answers.
pub async fn drive<R, W, P>(reader: R, writer: W, mut process: P, options: &CallOptions, control: &Control) -> Outcome
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: ServerProcess,
{
    let conn = Connection::new(FrameReader::new(reader), writer);
    let mut link = Link::new(conn, control, options.request_timeout);
    let played = script::play(&mut link, options).await;
    let leaving = match &played {
        Err(Stop::Eof(_)) => Leaving::Eof,
        Err(Stop::Cancelled) => Leaving::Kill,
        _ => Leaving::Done,
    };
    let gone = server::end(&mut process, link.close(), leaving, control).await;
    match played {
        // An abort while the child was being ended still wins: the caller is not waiting any more.
        Ok(_) if control.abort_requested() => Outcome::Cancelled,
        Ok(value) => Outcome::Answered(value),
        Err(Stop::Cancelled) => Outcome::Cancelled,
        Err(Stop::Eof(method)) => {
            Outcome::Failed(server::exited(&format!("it answered {method}"), &gone, process.stderr_tail()))
        }
        Err(Stop::Failed(failure)) => Outcome::Failed(server::with_stderr_tail(failure, || process.stderr_tail())),
    }
}

#[cfg(test)]
mod tests;
