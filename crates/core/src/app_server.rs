//! One `codex app-server` child, as a turn and a call around turns both have it: started
//! under the host-death guard for a [`Target`] (discovery or `codexPath`, racing an abort),
//! its stderr drained and logged, and ended — stdin closed, a moment to leave by itself, then
//! its whole tree — before anyone is told how it went, and how its end reads. What each says to
//! the server in between goes through the exchange ([`crate::exchange`]).

use crate::cancel::Cancel;
use crate::failure::{Code, Failure, FailureSource};
use crate::process::{self, guard, Child, End, ExitInfo, ServerProcess, SpawnError, Spec};
use crate::resolve::{Resolved, Target};
use serde_json::{json, Value};
use std::future::Future;
use std::time::Duration;

/// After stdout closes, how long the process may take to report its exit.
const EOF_EXIT_WAIT: Duration = Duration::from_millis(500);

/// A started child, and the Codex it runs.
pub struct Started {
    pub child: Child,
    /// The executable `started.codexPath` names (the argv may start with a launcher).
    pub codex_path: String,
    /// Held until the caller is done: one guard runs for everything the caller starts.
    pub guarded: guard::Ticket,
}

/// Why nothing runs.
pub enum NotStarted {
    /// An abort came first; whatever discovery started for it is gone.
    Aborted,
    Failed(Failure),
}

/// Starts `app-server` for `target`: `prepare` turns the resolved Codex into the child to
/// spawn (its arguments, extra environment); `on_stderr` sees each stderr line after the log.
/// Nothing is started without the guard, nor once `cancel` asks for an abort.
pub async fn start<F, Fut>(
    target: &Target,
    cancel: &Cancel,
    prepare: F,
    on_stderr: Option<process::stderr::LineSink>,
) -> Result<Started, NotStarted>
where
    F: FnOnce(Resolved) -> Fut,
    Fut: Future<Output = Result<Spec, Failure>>,
{
    if cancel.abort_requested() {
        // Aborted before it began (an already-aborted signal): nothing to start.
        return Err(NotStarted::Aborted);
    }
    // Before anything starts (discovery's probes and the MCP inventory included): without the
    // host-death guard nothing may, and holding a ticket keeps one guard running for all of them.
    let guarded = guard::ticket().map_err(|why| NotStarted::Failed(why.failure()))?;
    // Discovery and the MCP inventory run child processes of their own and can take seconds:
    // an abort meanwhile ends it at once, before anything of its own is spawned, and only after
    // those processes are gone (a discovery that others still wait for goes on).
    let discovery = crate::resolve::discovery_for(target);
    let prepared = async {
        let resolved = crate::resolve::resolve(target, discovery.as_ref()).await?;
        let codex_path = resolved.codex_path.clone();
        Ok::<_, Failure>((codex_path, prepare(resolved).await?))
    };
    let prepared = tokio::select! {
        prepared = prepared => Some(prepared),
        () = cancel.aborted() => None,
    };
    let Some(prepared) = prepared else {
        if let Some(discovery) = discovery {
            discovery.leave().await;
        }
        return Err(NotStarted::Aborted);
    };
    drop(discovery);
    let (codex_path, spec) = prepared.map_err(NotStarted::Failed)?;
    let sink: process::stderr::LineSink = Box::new(move |line| {
        tracing::debug!(target: "rennet_codex::stderr", "{line}");
        if let Some(on_stderr) = &on_stderr {
            on_stderr(line);
        }
    });
    match process::spawn(&spec, Some(sink)) {
        Ok(child) => {
            // The program only: argv may carry MCP header values, and env values are secrets.
            tracing::Span::current().record("pid", child.pid());
            tracing::info!(program = %spec.launch.program.display(), pid = child.pid(), "codex app-server started");
            Ok(Started { child, codex_path, guarded })
        }
        Err(e) => Err(NotStarted::Failed(spawn_failure(e, &codex_path))),
    }
}

/// A spawn that failed, in the words of a terminal failure.
fn spawn_failure(e: SpawnError, codex_path: &str) -> Failure {
    let (code, message) = match e {
        SpawnError::NotFound(m) => (Code::CodexNotFound, m),
        SpawnError::NotExecutable(m) => (Code::CodexNotExecutable, m),
        SpawnError::CwdNotFound(m) => (Code::CwdNotFound, m),
        SpawnError::Other(m) => (Code::SpawnFailed, m),
        SpawnError::GuardUnavailable(why) => return why.failure(),
    };
    Failure::new(FailureSource::Spawn, code, message).with_detail(json!({"codexPath": codex_path}))
}

/// How the conversation with the child stopped, as far as ending it goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Leaving {
    /// The server closed its stdout: it may be exiting by itself.
    Eof,
    /// Ended at once: an abort with no grace left, or a kill.
    Kill,
    /// Anything else: it may leave by itself on stdin EOF, as it does after its work.
    Done,
}

impl crate::exchange::Stop {
    /// How the child is to be ended after its exchange stopped so. (Said here, where children
    /// are ended: the exchange knows nothing of them.)
    pub fn leaving(&self) -> Leaving {
        use crate::exchange::Stop;
        match self {
            Stop::Eof { .. } => Leaving::Eof,
            Stop::Cancelled => Leaving::Kill,
            Stop::Failed(_) | Stop::Done => Leaving::Done,
        }
    }
}

/// How the child ended.
pub struct Gone {
    pub exit: ExitInfo,
    /// How it ended when it did by itself (after closing its stdout).
    pub by_itself: Option<ExitInfo>,
}

/// Ends the child and its tree: `close` closes its stdin (its [`process::Stdin`] notes what the
/// child started just before the pipe closes), and a kill asked of `cancel` meanwhile cuts
/// every wait short.
pub async fn end<P: ServerProcess>(
    process: &mut P,
    close: impl Future<Output = ()>,
    leaving: Leaving,
    cancel: &Cancel,
) -> Gone {
    close.await;
    let by_itself = match leaving {
        Leaving::Eof => tokio::select! {
            biased;
            () = cancel.killed() => None,
            exit = process.wait_exit(EOF_EXIT_WAIT) => exit,
        },
        _ => None,
    };
    let exit = match leaving {
        Leaving::Kill => process.end_tree(End::Kill).await,
        _ => tokio::select! {
            biased;
            () = cancel.killed() => process.end_tree(End::Kill).await,
            exit = process.end_tree(End::Polite(process::EXIT_GRACE)) => exit,
        },
    };
    Gone { exit, by_itself }
}

/// The server closed its stdout before `before` (`the turn completed`): how it went, with the
/// last lines of its stderr.
pub fn exited(before: &str, gone: &Gone, stderr_tail: Vec<String>) -> Failure {
    let message = match gone.by_itself {
        Some(by_itself) => format!("codex app-server {} before {before}", by_itself.how()),
        None => "codex app-server closed its stdout but kept running".to_string(),
    };
    Failure::new(FailureSource::Exit, Code::ProcessExited, message).with_detail(json!({
        "exitCode": gone.exit.code,
        "signal": gone.exit.signal,
        "exitedByItself": gone.by_itself.is_some(),
        "stderrTail": stderr_tail,
    }))
}

/// Stdout that is not the protocol: what the server said on stderr goes with it.
pub fn with_stderr_tail(mut failure: Failure, stderr_tail: impl FnOnce() -> Vec<String>) -> Failure {
    if failure.source == FailureSource::Parse {
        if let Value::Object(detail) = &mut failure.detail {
            detail.insert("stderrTail".into(), json!(stderr_tail()));
        }
    }
    failure
}
