//! How a turn's outcome becomes its terminal event, and the failures of the requests on the way.

use super::ledger::Ledger;
use super::state::TurnState;
use crate::app_server::{self, Gone};
use crate::events::{AgentStatus, Cancellation, CutReason, Status, Terminal, Usage};
use crate::exchange::Stop;
use crate::failure::{Code, Failure, FailureSource};
use crate::isolation;
use crate::protocol::{CompletedTurn, TurnError};
use serde_json::{json, Value};

/// Why the run stopped.
pub(super) enum Ending {
    /// The server completed the owned turn (with any status): what its terminal says.
    Turn(Box<Terminal>),
    /// A bound of `until: 'idle'` ended the run, and what it interrupted did not confirm within
    /// the grace: what its terminal says, and the child is killed.
    Cut(Box<Terminal>),
    Failed(Failure),
    /// The server closed its stdout.
    Eof,
    /// Abort before the turn existed, an interrupt that was not honoured in time, or a kill.
    Kill,
}

/// What is known of the process once it is gone.
pub(super) struct Exit<'a> {
    pub gone: Gone,
    pub stderr_tail: &'a dyn Fn() -> Vec<String>,
}

/// A failed terminal of this turn's thread and turn, with its final message and proposed plan
/// (the thread's last, whatever the outcome; `completed`: the turn Codex completed, if it did),
/// its usage so far, its agents and what the child's end cuts off (the run having ended for
/// `reason`); the ending fills in the rest.
fn blank(state: &TurnState, reason: CutReason, completed: Option<&CompletedTurn>) -> Terminal {
    Terminal {
        thread_id: state.thread_id().map(str::to_string),
        turn_id: state.turn_id().map(str::to_string),
        final_message: state.final_message(completed),
        proposed_plan: state.proposed_plan(completed),
        usage: state.turn_usage(),
        agents: state.agents(),
        total_usage: state.total_usage(),
        cut_off: state.cut_off(reason),
        ..Terminal::empty()
    }
}

/// The terminal event of a run that ended as `ending`.
pub(super) fn terminal(ending: Ending, state: &TurnState, abort_seen: bool, exit: Exit<'_>) -> Terminal {
    // The server's end after an abort is the end the abort asked for.
    let ending = match ending {
        Ending::Eof if abort_seen => Ending::Kill,
        ending => ending,
    };
    let reason = match &ending {
        Ending::Kill => CutReason::Abort,
        _ => CutReason::Failed,
    };
    let mut terminal = blank(state, reason, None);
    match ending {
        Ending::Turn(outcome) | Ending::Cut(outcome) => return *outcome,
        Ending::Kill => {
            terminal.status = Status::Cancelled;
            terminal.cancellation = Some(Cancellation::Killed);
        }
        Ending::Eof => {
            terminal.failure = Some(app_server::exited("the turn completed", &exit.gone, (exit.stderr_tail)()));
        }
        Ending::Failed(failure) => terminal.failure = Some(app_server::with_stderr_tail(failure, exit.stderr_tail)),
    }
    terminal
}

/// What a turn the server completed amounts to (its `turnCompleted` event, and its terminal).
pub(super) fn completed(state: &TurnState, structured: bool, completed: &CompletedTurn) -> Terminal {
    let mut terminal = blank(state, state.end_reason(), Some(completed));
    outcome(&mut terminal, completed, state.last_error());
    if structured && terminal.status == Status::Completed {
        let text = terminal.final_message.clone();
        let invalid = |message: String| {
            Failure::new(FailureSource::Turn, Code::StructuredOutputInvalid, message).with_detail(json!({"text": text}))
        };
        match text.as_deref().map(serde_json::from_str::<Value>) {
            Some(Ok(value)) => terminal.structured_output = Some(value),
            Some(Err(e)) => {
                terminal.status = Status::Failed;
                terminal.failure = Some(invalid(format!("the final message is not valid JSON: {e}")));
            }
            None => {
                terminal.status = Status::Failed;
                terminal.failure = Some(invalid("the turn completed without a final message".to_string()));
            }
        }
    }
    terminal
}

/// The user's turn, completed while the run goes on (`until: 'idle'`, or an abort waiting for
/// the sub-agents it interrupted): its `turnCompleted`, as things are now. Nothing is cut off
/// (the run waits for what still runs), so only the agents whose work ended are counted.
pub(super) fn owned_turn(state: &TurnState, structured: bool, owned: &CompletedTurn) -> Terminal {
    let mut terminal = completed(state, structured, owned);
    terminal.agents.retain(|agent| agent.status != AgentStatus::CutOff);
    terminal.total_usage = terminal
        .agents
        .iter()
        .filter_map(|a| a.usage)
        .fold(terminal.usage, |total, usage| Some(total.map_or(usage, |total: Usage| total.plus(usage))));
    terminal.cut_off.clear();
    terminal
}

/// A sub-agent's turn the server completed: its `turnCompleted` event (nested in an `agent` event).
pub(super) fn agent_turn(thread_id: &str, ledger: &Ledger, completed: &CompletedTurn) -> Terminal {
    let mut terminal = Terminal {
        thread_id: Some(thread_id.to_string()),
        turn_id: Some(completed.id.clone()),
        final_message: ledger.final_message(Some(completed)),
        proposed_plan: ledger.proposed_plan(Some(completed)),
        usage: ledger.usage(),
        ..Terminal::empty()
    };
    outcome(&mut terminal, completed, ledger.last_error());
    terminal
}

/// Status, cancellation and failure of a completed turn.
fn outcome(terminal: &mut Terminal, completed: &CompletedTurn, last_error: Option<&TurnError>) {
    match completed.status.as_str() {
        "completed" => terminal.status = Status::Completed,
        "interrupted" => {
            terminal.status = Status::Cancelled;
            terminal.cancellation = Some(Cancellation::Interrupted);
        }
        status => {
            let error = completed.error.as_ref().or(last_error);
            let message = match error {
                Some(e) => e.message.clone(),
                None => format!("the turn ended with status {status}"),
            };
            let codex_error_info = error.map(|e| e.codex_error_info.clone()).unwrap_or(Value::Null);
            let failure = Failure::new(FailureSource::Turn, Code::TurnFailed, message)
                .with_codex_error_info(&codex_error_info)
                .with_detail(json!({
                    "status": status,
                    "codexErrorInfo": codex_error_info,
                    "additionalDetails": error.map(|e| e.additional_details.clone()).unwrap_or(Value::Null),
                }));
            terminal.failure = Some(failure);
        }
    }
}

/// In a read-only turn, an error or an unexpected answer while checking the isolation means
/// it is not confirmed: the turn is never started.
pub(super) fn isolation_doubt(stop: Stop) -> Stop {
    match stop {
        Stop::Failed(failure)
            if failure.source == FailureSource::Jsonrpc && failure.code != Code::IsolationNotConfirmed =>
        {
            let report = json!({"code": failure.code, "message": failure.message, "detail": failure.detail});
            Stop::Failed(isolation::not_confirmed(
                format!("the isolation could not be confirmed: {}", failure.message),
                report,
            ))
        }
        other => other,
    }
}

/// `thread/start` answered the app's tools with an error. One that names them (the missing
/// `experimentalApi`, a definition Codex refuses, a Codex that does not know the field) is
/// `APP_TOOLS_REFUSED`, Codex's message verbatim: the thread was not started, the model was
/// asked nothing, and nothing is retried without the tools. Any other error reads as every
/// request's does.
pub(super) fn tools_refused(error: crate::protocol::RpcError, codex_version: Option<&str>) -> Failure {
    let lower = error.message.to_ascii_lowercase();
    if !(lower.contains("dynamic tool") || lower.contains("dynamictools")) {
        return crate::exchange::failures::rpc_failure("thread/start", error, codex_version);
    }
    Failure::new(FailureSource::Jsonrpc, Code::AppToolsRefused, error.message.clone()).with_detail(json!({
        "method": "thread/start",
        "code": error.code,
        "data": error.data,
        "codexVersion": codex_version,
    }))
}
