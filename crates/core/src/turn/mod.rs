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

use crate::app_server::{self, NotStarted};
use crate::cancel::Cancel;
use crate::events::{DiagnosticEvent, DiagnosticSource, HarnessEvent, Terminal};
use crate::exchange::{Exchange, Input, Output};
use crate::failure::{Code, Failure, FailureSource};
use crate::options::target::Target;
use crate::options::{Access, TurnOptions};
use crate::process::stderr::LineSink;
use crate::process::{ServerProcess, Spec};
use crate::resolve::Resolved;
use crate::run;
use crate::stream::EventStream;
use ending::Ending;
use serde_json::json;
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing::field::Empty;

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
    start_with(options, aborted, |turn, cancel| async move {
        let (idle_timeout, controls) = (turn.options.idle_timeout, turn.handle.controls.clone());
        let run = run::start_and_drive(turn, &cancel);
        let Some(idle_timeout) = idle_timeout else { return run.await };
        // A prepared turn not started in time ends as a disposed one does.
        tokio::pin!(run);
        tokio::select! {
            biased;
            terminal = &mut run => terminal,
            () = controls.end_idle(idle_timeout, &cancel) => run.await,
        }
    })
}

/// [`start`] with the work given (a test's can fail as production's must not).
fn start_with<F, Fut>(
    options: TurnOptions,
    aborted: bool,
    work: F,
) -> (Handle, impl Future<Output = ()> + Send + 'static)
where
    F: FnOnce(Turn, Arc<Cancel>) -> Fut + Send + 'static,
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
    // Held until `started` has gone out: it is always the first event.
    let prelude: session::Prelude = Arc::new(Mutex::new(Some(Vec::new())));
    let turn = Turn { options, handle: handle.clone(), prelude, key: String::new() };
    let work = run::start_with(turn, handle.cancel.clone(), move |terminal| finish(&running, terminal), work);
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
    (stream, cancel, controls): (&EventStream, &Cancel, &Controls),
) -> Terminal {
    let prelude: session::Prelude = Arc::new(Mutex::new(None));
    let started = session::Started { turn_key, pid: process.pid(), codex_path };
    let script = Script { options, stream, controls, prelude: &prelude, started };
    run::drive(reader, writer, process, cancel, script).await
}

/// A short id of a turn, unique in this process: in its `started` event and in every log
/// record it produces, so that an app can tell turns apart in its own logs.
fn turn_key() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A turn, as the shell runs it: its options, its handle, its key once its work began, and the
/// stderr lines read before `started` went out.
struct Turn {
    options: TurnOptions,
    handle: Handle,
    prelude: session::Prelude,
    key: String,
}

impl run::Run for Turn {
    type Outcome = Terminal;
    type Script<'a> = Script<'a>;

    fn span(&mut self) -> tracing::Span {
        self.key = turn_key();
        tracing::info_span!("turn", turnKey = %self.key, pid = Empty, threadId = Empty, turnId = Empty)
    }

    fn target(&self) -> &Target {
        &self.options.target
    }

    async fn prepare(&self, resolved: Resolved) -> Result<Spec, Failure> {
        prepare_launch(&self.options, resolved).await
    }

    /// The first [`MAX_STDERR_EVENTS`] lines as `diagnostic` events, after `started`.
    fn on_stderr(&self) -> Option<LineSink> {
        let forwarded = AtomicUsize::new(0);
        let (sink, held) = (self.handle.stream.clone(), self.prelude.clone());
        Some(Box::new(move |line| {
            if forwarded.fetch_add(1, Ordering::Relaxed) < MAX_STDERR_EVENTS {
                match held.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                    Some(lines) => lines.push(line),
                    None => {
                        sink.push(&HarnessEvent::Diagnostic(DiagnosticEvent { source: DiagnosticSource::Stderr, line }))
                    }
                }
            }
        }))
    }

    fn not_started(&self, why: NotStarted) -> Terminal {
        match why {
            NotStarted::Aborted => Terminal::killed_before_start(),
            NotStarted::Failed(failure) => Terminal::failed(failure),
        }
    }

    fn defect(failure: Failure) -> Terminal {
        Terminal::failed(failure)
    }

    fn script<'a>(&'a self, pid: u32, codex_path: &'a str) -> Script<'a> {
        let Handle { stream, controls, .. } = &self.handle;
        let started = session::Started { turn_key: &self.key, pid, codex_path };
        Script { options: &self.options, stream, controls, prelude: &self.prelude, started }
    }
}

/// The turn's session on the exchange, and the terminal its end amounts to.
struct Script<'a> {
    options: &'a TurnOptions,
    stream: &'a EventStream,
    controls: &'a Controls,
    prelude: &'a session::Prelude,
    started: session::Started<'a>,
}

impl<'a> run::Script for Script<'a> {
    type Outcome = Terminal;
    /// The session stays until the child is gone: what the caller gives meanwhile goes nowhere.
    type Played = (Ending, session::Session<'a>);

    fn request_timeout(&self) -> Duration {
        self.options.request_timeout
    }

    async fn play<R: Input, W: Output>(&mut self, exchange: &mut Exchange<'_, R, W>) -> Self::Played {
        let mut session = session::Session::new(self.options, self.stream, self.controls, self.prelude);
        let ending = session.run(exchange, self.started).await;
        // A run that ended before `started` still shows what the server said on stderr.
        session::flush_prelude(self.prelude, self.stream);
        (ending, session)
    }

    fn leaving(&self, (ending, _): &Self::Played) -> app_server::Leaving {
        match ending {
            Ending::Eof => app_server::Leaving::Eof,
            Ending::Kill | Ending::Cut(_) => app_server::Leaving::Kill,
            _ => app_server::Leaving::Done,
        }
    }

    fn outcome(self, (ending, session): Self::Played, ended: run::Ended<'_>) -> Terminal {
        let exit = ending::Exit { gone: ended.gone, stderr_tail: ended.stderr_tail };
        ending::terminal(ending, &session.state, ended.abort_seen, exit)
    }
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
