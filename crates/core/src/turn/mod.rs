//! The turn runner: handshake → thread → turn → terminal, over any connection.
//!
//! `drive` is generic over the byte streams and the process, so the same runner is driven by
//! a scripted peer in `cargo test` and by the real `codex app-server` child in production. Its
//! parts: the exchange every run speaks through ([`crate::exchange`]), the turn's session on it
//! ([`session`]), the state machine that routes notifications ([`state`]), the reply policy
//! for server requests ([`policy`]), what the caller gives a running turn ([`controls`]), and
//! the ending ([`ending`]): how an outcome becomes the terminal event.

mod agents;
mod controls;
mod ending;
mod ledger;
pub mod policy;
mod routing;
mod session;
pub mod state;

pub use controls::{steer_outcome, AppAnswer, AppHandler, Controls, Readiness, Steer, PRELUDE};

use crate::app_server::{self, NotStarted, Started};
use crate::cancel::Cancel;
use crate::events::{DiagnosticSource, HarnessEvent, Terminal};
use crate::exchange::{Exchange, Input, Output};
use crate::failure::{Code, Failure, FailureSource};
use crate::options::{Access, TurnOptions};
use crate::process::stderr::LineSink;
use crate::process::{ServerProcess, Spec};
use crate::resolve::Resolved;
use crate::rpc::Connection;
use crate::stream::EventStream;
use crate::transport::FrameReader;
use ending::Ending;
use serde_json::json;
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tracing::field::Empty;
use tracing::Instrument;

/// stderr lines forwarded as `diagnostic` events; later lines only reach the tail and logs.
pub const MAX_STDERR_EVENTS: usize = 200;

/// A running turn, as its caller holds it: its events, its cancellation, and its controls.
#[derive(Clone)]
pub struct Handle {
    pub stream: Arc<EventStream>,
    pub cancel: Arc<Cancel>,
    pub controls: Arc<Controls>,
}

/// The turn, ready to run: its handle, and the work to spawn on the runtime. However the work
/// ends — a defect included — the turn's end-of-turn duties are done once: steers answered,
/// readiness told, the one terminal event queued. `aborted`: the caller's signal was aborted
/// already, so nothing is started.
pub fn start(options: TurnOptions, aborted: bool) -> (Handle, impl Future<Output = ()> + Send + 'static) {
    start_with(options, aborted, |options, handle, key| async move {
        let run = start_and_drive(&options, &handle.stream, &handle.cancel, &handle.controls, &key);
        let Some(idle_timeout) = options.idle_timeout else { return run.await };
        // A prepared turn not started in time ends as a disposed one does.
        tokio::pin!(run);
        tokio::select! {
            biased;
            terminal = &mut run => terminal,
            () = handle.controls.end_idle(idle_timeout, &handle.cancel) => run.await,
        }
    })
}

/// [`start`] with the runner given (a test's can fail as production's must not).
fn start_with<F, Fut>(
    options: TurnOptions,
    aborted: bool,
    runner: F,
) -> (Handle, impl Future<Output = ()> + Send + 'static)
where
    F: FnOnce(TurnOptions, Handle, String) -> Fut + Send + 'static,
    Fut: Future<Output = Terminal> + Send + 'static,
{
    let handle = Handle {
        stream: Arc::new(EventStream::new()),
        cancel: Arc::new(Cancel::new()),
        controls: Arc::new(Controls::new()),
    };
    if aborted {
        handle.cancel.request_abort();
    }
    let running = handle.clone();
    let work = async move {
        let key = turn_key();
        let span = tracing::info_span!("turn", turnKey = %key, pid = Empty, threadId = Empty, turnId = Empty);
        let runner = runner(options, running.clone(), key).instrument(span.clone());
        let terminal = crate::supervise::catching(runner).await.unwrap_or_else(Terminal::failed);
        span.in_scope(|| finish(&running, terminal));
    };
    (handle, work)
}

/// The end of every turn, however it ended (a spawn failure, an early abort, a defect
/// included): steers answered "ended", the preparation told, the terminal queued.
fn finish(handle: &Handle, terminal: Terminal) {
    handle.controls.end_steering();
    // A preparation that ended before it was ready: the failure its terminal carries.
    handle.controls.set_readiness(Readiness::Failed(terminal.failure.clone().unwrap_or_else(|| {
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
    handle.stream.finish(terminal);
}

/// Runs one turn over an established connection and ends the process. Returns the terminal
/// event; the caller queues it.
pub async fn drive<R: Input, W: Output, P: ServerProcess>(
    reader: R,
    writer: W,
    process: P,
    options: &TurnOptions,
    codex_path: &str,
    turn_key: &str,
    caller: (&EventStream, &Cancel, &Controls),
) -> Terminal {
    let prelude: session::Prelude = Arc::new(Mutex::new(None));
    drive_with(reader, writer, process, options, codex_path, turn_key, caller, &prelude).await
}

/// [`drive`], with the stderr lines read before `started` in `prelude` (they follow it).
#[allow(clippy::too_many_arguments)]
async fn drive_with<R: Input, W: Output, P: ServerProcess>(
    reader: R,
    writer: W,
    mut process: P,
    options: &TurnOptions,
    codex_path: &str,
    turn_key: &str,
    (stream, cancel, controls): (&EventStream, &Cancel, &Controls),
    prelude: &session::Prelude,
) -> Terminal {
    let conn = Connection::new(FrameReader::new(reader), writer);
    let mut exchange = Exchange::new(conn, cancel, options.request_timeout);
    let started = session::Started { turn_key, pid: process.pid(), codex_path };
    let mut session = session::Session::new(options, stream, controls, prelude);
    let ending = session.run(&mut exchange, started).await;
    // A run that ended before `started` still shows what the server said on stderr.
    session::flush_prelude(prelude, stream);

    let leaving = match ending {
        Ending::Eof => app_server::Leaving::Eof,
        Ending::Kill | Ending::Cut(_) => app_server::Leaving::Kill,
        _ => app_server::Leaving::Done,
    };
    let abort_seen = exchange.wire.abort_seen();
    let gone = app_server::end(&mut process, exchange.close(), leaving, cancel).await;
    let stderr_tail = || process.stderr_tail();
    let exit = ending::Exit { gone, stderr_tail: &stderr_tail };
    ending::terminal(ending, &session.state, abort_seen, exit)
}

/// A short id of a turn, unique in this process: in its `started` event and in every log
/// record it produces, so that an app can tell turns apart in its own logs.
fn turn_key() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Finds and spawns `codex app-server`, drives the turn; the terminal event.
async fn start_and_drive(
    options: &TurnOptions,
    stream: &Arc<EventStream>,
    cancel: &Cancel,
    controls: &Controls,
    turn_key: &str,
) -> Terminal {
    let forwarded = AtomicUsize::new(0);
    let sink = stream.clone();
    // Held until `started` has gone out: it is always the first event.
    let prelude: session::Prelude = Arc::new(Mutex::new(Some(Vec::new())));
    let held = prelude.clone();
    let on_stderr: LineSink = Box::new(move |line| {
        if forwarded.fetch_add(1, Ordering::Relaxed) < MAX_STDERR_EVENTS {
            match held.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                Some(lines) => lines.push(line),
                None => sink.push(&HarnessEvent::Diagnostic { source: DiagnosticSource::Stderr, line }),
            }
        }
    });
    let prepare = |resolved| prepare_launch(options, resolved);
    let (mut child, codex_path, _guarded) =
        match app_server::start(&options.target, cancel, prepare, Some(on_stderr)).await {
            Ok(Started { child, codex_path, guarded }) => (child, codex_path, guarded),
            Err(NotStarted::Aborted) => return Terminal::killed_before_start(),
            Err(NotStarted::Failed(failure)) => return Terminal::failed(failure),
        };
    let (stdout, stdin) = child.pipes();
    drive_with(stdout, stdin, child, options, &codex_path, turn_key, (stream, cancel, controls), &prelude).await
}

/// The child to start: `app-server` with the arguments the options call for.
async fn prepare_launch(options: &TurnOptions, resolved: Resolved) -> Result<Spec, Failure> {
    let Resolved { mut launch, .. } = resolved;
    let mut args: Vec<std::ffi::OsString> = vec!["app-server".into()];
    if let Some(policy) = &options.mcp {
        // Before anything is spawned: validation, the configured inventory, collisions.
        let extra = crate::mcp_policy::prepare(&launch, policy, options.request_timeout).await?;
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
