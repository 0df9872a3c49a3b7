//! `compactThread`: `thread/compact/start` is answered at once, and the compaction then runs as
//! a turn of its own on the loaded thread (`turn/started`, a `contextCompaction` item, one model
//! request, `thread/tokenUsage/updated`, `turn/completed`). The call ends at that turn's
//! `turn/completed`, with the usage of its model request(s).

use super::script::Caller;
use crate::events::Usage;
use crate::exchange::{Exchange, Frame, Input, Output, Owner, Stop, Wire};
use crate::failure::{Code, Failure, FailureSource};
use crate::protocol::{method, params, ThreadCompactStart, TokenUsageParams, TurnCompletedParams};
use serde_json::{json, Value};

/// Watches the thread's notifications for the compaction's turn.
struct Compaction<'a> {
    thread_id: &'a str,
    /// The first turn started on the thread once compaction was asked for.
    turn_id: Option<String>,
    /// The sum of each model response's usage in that turn.
    usage: Option<Usage>,
    completed: Option<TurnCompletedParams>,
}

impl Compaction<'_> {
    /// Whether a frame of turn `turn` belongs to the compaction (before `turn/started` came,
    /// any turn of the thread does: there is no other).
    fn owns(&self, turn: Option<&str>) -> bool {
        match (&self.turn_id, turn) {
            (Some(ours), Some(turn)) => ours == turn,
            _ => true,
        }
    }
}

impl Owner for Compaction<'_> {
    type Wake = std::convert::Infallible;

    async fn on_frame<R: Input, W: Output>(&mut self, frame: Frame, wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
        let Frame::Notification { method, scope, line } = frame else {
            return Caller.on_frame(frame, wire).await;
        };
        if scope.thread_id() != Some(self.thread_id) {
            return Ok(());
        }
        match method.as_ref() {
            method::TURN_STARTED if self.turn_id.is_none() => self.turn_id = scope.turn_id().map(str::to_string),
            method::TOKEN_USAGE_UPDATED if self.owns(scope.turn_id()) => {
                if let Some(last) = params::<TokenUsageParams>(&line).and_then(|p| p.token_usage.last) {
                    self.usage = Some(self.usage.unwrap_or_default().plus(last.into()));
                }
            }
            method::TURN_COMPLETED if self.owns(scope.turn_id()) => self.completed = params(&line),
            _ => {}
        }
        Ok(())
    }
}

/// Asks for the compaction of the loaded thread and waits for its turn to complete.
pub(super) async fn compact<R: Input, W: Output>(
    exchange: &mut Exchange<'_, R, W>,
    thread_id: &str,
) -> Result<Value, Stop> {
    let mut compaction = Compaction { thread_id, turn_id: None, usage: None, completed: None };
    exchange.call(&mut compaction, &ThreadCompactStart { thread_id }).await?;
    let completed = exchange.pump_until(&mut compaction, |c, _| c.completed.take()).await?;
    let turn = completed.turn;
    if turn.status == "completed" {
        return Ok(json!({"usage": compaction.usage}));
    }
    let message = match &turn.error {
        Some(error) => error.message.clone(),
        None => format!("the compaction's turn ended {}", turn.status),
    };
    let mut failure = Failure::new(FailureSource::Turn, Code::TurnFailed, message)
        .with_detail(json!({"threadId": thread_id, "turnId": turn.id, "status": turn.status}));
    if let Some(error) = &turn.error {
        failure = failure.with_codex_error_info(&error.codex_error_info);
        failure.detail["codexErrorInfo"] = error.codex_error_info.clone();
    }
    Err(Stop::Failed(failure))
}
