//! The turn runner: handshake → thread → turn → terminal, over any connection.
//!
//! `drive` is generic over the byte streams and the process, so the same runner is driven by
//! a scripted peer in `cargo test` and by the real `codex app-server` child in production. Its
//! parts: the JSON-RPC connection ([`crate::rpc`]), the turn's script ([`script`]), the state
//! machine that routes notifications ([`state`]), the reply policy for server requests
//! ([`policy`]), and the ending ([`ending`]): how an outcome becomes the terminal event.

mod ending;
pub mod policy;
mod script;
pub mod state;

use crate::control::{Caller, Control, Readiness};
use crate::events::{DiagnosticSource, HarnessEvent, Terminal};
use crate::failure::{Code, Failure, FailureSource};
use crate::options::{Access, TurnOptions};
use crate::process::stderr::LineSink;
use crate::process::{ServerProcess, Spec};
use crate::rpc::Connection;
use crate::server::{self, Leaving, NotStarted, Started};
use crate::stream::EventStream;
use crate::target::Resolved;
use crate::transport::FrameReader;
use ending::Ending;
use serde_json::json;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tracing::field::Empty;
use tracing::Instrument;

/// stderr lines forwarded as `diagnostic` events; later lines only reach the tail and logs.
pub const MAX_STDERR_EVENTS: usize = 200;

/// Runs one turn over an established connection and ends the process. Returns the terminal
/// event; the caller queues it.
pub async fn drive<R, W, P>(
    reader: R,
    writer: W,
    mut process: P,
    options: &TurnOptions,
    codex_path: &str,
    turn_key: &str,
    caller: Caller<'_>,
) -> Terminal
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: ServerProcess,
{
    let conn = Connection::new(FrameReader::new(reader), writer);
    let started = script::Started { turn_key, pid: process.pid(), codex_path };
    let mut session = script::Session::new(conn, options, caller, started);
    let ending = session.run().await;

    let leaving = match ending {
        Ending::Eof => Leaving::Eof,
        Ending::Kill => Leaving::Kill,
        _ => Leaving::Done,
    };
    let gone = server::end(&mut process, session.close(), leaving, caller.control).await;
    let stderr_tail = || process.stderr_tail();
    let exit = ending::Exit { gone, stderr_tail: &stderr_tail };
    ending::terminal(ending, &session.state, session.abort_seen, exit)
}

/// A short id of a turn, unique in this process: in its `started` event and in every log
/// record it produces, so that an app can tell turns apart in its own logs.
fn turn_key() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Production entry: finds and spawns `codex app-server`, drives the turn, queues the terminal.
/// Everything it logs carries the turn's context (a span): its key, then the child's pid and
/// the thread and turn ids once they are known.
pub async fn run(options: TurnOptions, stream: Arc<EventStream>, control: Arc<Control>) {
    let key = turn_key();
    let span = tracing::info_span!("turn", turnKey = %key, pid = Empty, threadId = Empty, turnId = Empty);
    async move {
        let terminal = start_and_drive(&options, &stream, &control, &key).await;
        // Also where the turn never reached its frame loop (a spawn failure, an early abort).
        control.end_steering();
        // A preparation that ended before it was ready: the failure its terminal carries.
        control.set_readiness(Readiness::Failed(terminal.failure.clone().unwrap_or_else(|| {
            Failure::new(
                FailureSource::Turn,
                Code::Cancelled,
                "the prepared turn was disposed or aborted before it was ready",
            )
        })));
        // In the words of the terminal event: `status="failed" code="PROCESS_EXITED"`.
        let (status, cancellation) = (json!(terminal.status), json!(terminal.cancellation));
        let code = terminal.failure.as_ref().map(|f| f.code.as_str());
        tracing::info!(status = status.as_str(), cancellation = cancellation.as_str(), code, "turn ended");
        stream.finish(terminal);
    }
    .instrument(span)
    .await
}

async fn start_and_drive(
    options: &TurnOptions,
    stream: &Arc<EventStream>,
    control: &Control,
    turn_key: &str,
) -> Terminal {
    let forwarded = AtomicUsize::new(0);
    let sink = stream.clone();
    let on_stderr: LineSink = Box::new(move |line| {
        if forwarded.fetch_add(1, Ordering::Relaxed) < MAX_STDERR_EVENTS {
            sink.push(&HarnessEvent::Diagnostic { source: DiagnosticSource::Stderr, line });
        }
    });
    let prepare = |resolved| prepare_launch(options, resolved);
    let (mut child, codex_path, _guarded) =
        match server::start(&options.target, control, prepare, Some(on_stderr)).await {
            Ok(Started { child, codex_path, guarded }) => (child, codex_path, guarded),
            Err(NotStarted::Aborted) => return Terminal::killed_before_start(),
            Err(NotStarted::Failed(failure)) => return Terminal::failed(failure),
        };
    let (stdin, stdout) = (child.stdin.take().expect("stdin is piped"), child.stdout.take().expect("stdout is piped"));
    drive(stdout, stdin, child, options, &codex_path, turn_key, Caller { events: stream, control }).await
}

/// The child to start: `app-server` with the arguments the options call for.
async fn prepare_launch(options: &TurnOptions, resolved: Resolved) -> Result<Spec, Failure> {
    let Resolved { mut launch, .. } = resolved;
    let mut args: Vec<std::ffi::OsString> = vec!["app-server".into()];
    if let Some(policy) = &options.mcp {
        // Before anything is spawned: validation, the configured inventory, collisions.
        let extra = crate::mcp_policy::prepare(&launch, policy).await?;
        args.extend(extra.args);
        launch.add_env(extra.env);
    }
    if options.access == Access::ReadOnly {
        args.extend(crate::isolation::feature_args());
    }
    let mut spec = launch.spec(args);
    spec.stdin = true;
    spec.secrets = secret_values(options, &launch.env);
    Ok(spec)
}

/// What must not leave through the child's stderr: MCP header values, the variables MCP
/// bearer tokens are read from, and every variable of `env` whose name says it holds a
/// credential (`…TOKEN…`, `…SECRET…`, `…KEY…`, `…PASSWORD…`, `…AUTH…`, `…CREDENTIAL…`).
fn secret_values(options: &TurnOptions, child_env: &[(String, String)]) -> Vec<String> {
    const MARKS: [&str; 6] = ["TOKEN", "SECRET", "KEY", "PASSWORD", "AUTH", "CREDENTIAL"];
    let token_vars: Vec<&str> = options
        .mcp
        .iter()
        .flat_map(|policy| policy.servers.values())
        .filter_map(|server| server.bearer_token_env_var.as_deref())
        .collect();
    let header_values = options
        .mcp
        .iter()
        .flat_map(|policy| policy.servers.values())
        .flat_map(|server| server.http_headers.iter().flat_map(|h| h.values().cloned()));
    let env_values = child_env
        .iter()
        .filter(|(k, _)| {
            let upper = k.to_ascii_uppercase();
            token_vars.contains(&k.as_str()) || MARKS.iter().any(|m| upper.contains(m))
        })
        .map(|(_, v)| v.clone());
    header_values.chain(env_values).collect()
}

#[cfg(test)]
pub(crate) mod tests;
