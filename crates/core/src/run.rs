//! The one shell every turn, call and login runs in: its work supervised on a task of its own
//! ([`crate::supervise`]) under the run's log span; its `codex app-server` child started for its
//! target, racing an abort ([`app_server::start`]); the child's pipes made the exchange
//! ([`crate::exchange`]) the run's script plays on; the child ended with its tree
//! ([`app_server::end`]) before anyone is told how it went; and then the run's `finish`, once,
//! however the work ended (nothing started, an abort, a defect included).
//!
//! What makes a run a turn, a call or a login is its own part: the [`Run`] (its span, the child
//! it asks for, what it ends with when nothing started) and the [`Script`] it plays on the
//! exchange (and what its end amounts to), with the `finish` its caller waits on. [`drive`] is
//! generic over the connection and the process, so `cargo test` plays the server.

use crate::app_server::{self, Gone, Leaving, NotStarted, Started};
use crate::cancel::Cancel;
use crate::exchange::{Exchange, Input, Output};
use crate::failure::Failure;
use crate::process::stderr::LineSink;
use crate::process::{ServerProcess, Spec};
use crate::resolve::{Resolved, Target};
use crate::rpc::Connection;
use crate::transport::FrameReader;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;

/// A run's own part, before its child runs.
pub trait Run: Send + Sync + 'static {
    /// What the run ends with, and its `finish` is given: a turn's terminal, a call's outcome.
    type Outcome: Send + 'static;
    /// What it plays on the exchange once its child runs.
    type Script<'a>: Script<Outcome = Self::Outcome>
    where
        Self: 'a;

    /// The run's log span, made as its work begins (a turn's key with it).
    fn span(&mut self) -> tracing::Span;

    /// What comes before anything starts (a browser login waits for the one it took over
    /// from); `Err`: the run's outcome, with nothing started.
    fn begin(&mut self) -> impl Future<Output = Result<(), Self::Outcome>> + Send {
        async { Ok(()) }
    }

    /// Which Codex, where, with which environment.
    fn target(&self) -> &Target;

    /// The child to start for the resolved Codex: its arguments, its environment, and what its
    /// stderr must never show.
    fn prepare(&self, resolved: Resolved) -> impl Future<Output = Result<Spec, Failure>> + Send;

    /// Sees each line of the child's stderr, after the log.
    fn on_stderr(&self) -> Option<LineSink> {
        None
    }

    /// Nothing was started: an abort came first, or the start failed.
    fn not_started(&self, why: NotStarted) -> Self::Outcome;

    /// What a defect (a panic) inside the run's work amounts to.
    fn defect(failure: Failure) -> Self::Outcome;

    /// The script for the child started: its `pid`, the Codex it runs (`codex_path`).
    fn script<'a>(&'a self, pid: u32, codex_path: &'a str) -> Self::Script<'a>;
}

/// A run's own part on the exchange.
pub trait Script: Send {
    type Outcome;
    /// How the play ended, before the child is ended.
    type Played: Send;

    /// Each request's deadline on the exchange.
    fn request_timeout(&self) -> Duration;

    /// Plays the run on the exchange, from the handshake to the run's end.
    fn play<R: Input, W: Output>(
        &mut self,
        exchange: &mut Exchange<'_, R, W>,
    ) -> impl Future<Output = Self::Played> + Send;

    /// How the child is to be ended after the play ended so.
    fn leaving(&self, played: &Self::Played) -> Leaving;

    /// What the run amounts to, once its child is gone.
    fn outcome(self, played: Self::Played, ended: Ended<'_>) -> Self::Outcome;
}

/// What is known once the child is gone.
pub struct Ended<'a> {
    pub gone: Gone,
    /// The exchange saw the abort.
    pub abort_seen: bool,
    pub cancel: &'a Cancel,
    /// The last lines of the child's stderr.
    pub stderr_tail: &'a dyn Fn() -> Vec<String>,
}

/// The run, as work to spawn on the runtime: it ends with `finish` told the outcome, once,
/// however it ended (a defect included).
pub fn start<T: Run>(
    run: T,
    cancel: Arc<Cancel>,
    finish: impl FnOnce(T::Outcome) + Send + 'static,
) -> impl Future<Output = ()> + Send + 'static {
    start_with(run, cancel, finish, |run, cancel| async move { start_and_drive(run, &cancel).await })
}

/// [`start`] with the work given (a test's can fail as production's must not).
pub(crate) async fn start_with<T, F, Fut>(
    mut run: T,
    cancel: Arc<Cancel>,
    finish: impl FnOnce(T::Outcome) + Send + 'static,
    work: F,
) where
    T: Run,
    F: FnOnce(T, Arc<Cancel>) -> Fut + Send + 'static,
    Fut: Future<Output = T::Outcome> + Send + 'static,
{
    let span = run.span();
    let work = work(run, cancel).instrument(span.clone());
    let outcome = crate::supervise::catching(work).await.unwrap_or_else(T::defect);
    span.in_scope(|| finish(outcome));
}

/// Starts the run's child, plays its script, ends the child; then the outcome.
pub async fn start_and_drive<T: Run>(mut run: T, cancel: &Cancel) -> T::Outcome {
    if let Err(outcome) = run.begin().await {
        return outcome;
    }
    let started = app_server::start(run.target(), cancel, |resolved| run.prepare(resolved), run.on_stderr()).await;
    // The ticket is held until the run is done: one guard runs for everything it starts.
    let Started { mut child, codex_path, guarded: _guarded } = match started {
        Ok(started) => started,
        Err(why) => return run.not_started(why),
    };
    let (stdout, stdin) = child.pipes();
    let script = run.script(child.pid(), &codex_path);
    drive(stdout, stdin, child, cancel, script).await
}

/// Plays `script` over an established connection and ends the process before it says how
/// the run went.
pub async fn drive<R: Input, W: Output, P: ServerProcess, S: Script>(
    reader: R,
    writer: W,
    mut process: P,
    cancel: &Cancel,
    mut script: S,
) -> S::Outcome {
    let conn = Connection::new(FrameReader::new(reader), writer);
    let mut exchange = Exchange::new(conn, cancel, script.request_timeout());
    let played = script.play(&mut exchange).await;
    let leaving = script.leaving(&played);
    let abort_seen = exchange.wire.abort_seen();
    let gone = app_server::end(&mut process, exchange.close(), leaving, cancel).await;
    let stderr_tail = || process.stderr_tail();
    script.outcome(played, Ended { gone, abort_seen, cancel, stderr_tail: &stderr_tail })
}
