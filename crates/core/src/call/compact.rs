//! `compactThread`: `thread/compact/start` is answered at once, and the compaction then runs as
//! a turn of its own on the loaded thread (`turn/started`, a `contextCompaction` item, one model
//! request, `thread/tokenUsage/updated`, `turn/completed`). The call ends at that turn's
//! `turn/completed`, with the usage of its model request(s).
//!
//! Its usage is the thread total's growth over the compaction: Codex 0.171.0 sends three updates
//! in that turn — the total so far again (its `last` the previous turn's response), the total
//! after the compaction's model request (`last` that request), and the same total with a `last`
//! that estimates the compacted context (no input or output) — so summing `last` would count
//! what is not the compaction's.

use super::Caller;
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
    /// The thread's total when the first update came, and as the last one said it.
    first_total: Option<Usage>,
    final_total: Option<Usage>,
    /// The last `last` of the compaction's turn that counted input or output: a model response.
    response: Option<Usage>,
    completed: Option<TurnCompletedParams>,
}

impl Compaction<'_> {
    /// The compaction's usage: how much the thread total grew, else the model response Codex
    /// reported for it; `None` without either.
    fn usage(&self) -> Option<Usage> {
        match (self.first_total, self.final_total) {
            (Some(first), Some(last)) if last.total > first.total => Some(last.since(first)),
            _ => self.response,
        }
    }
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
            method::TOKEN_USAGE_UPDATED => {
                let Some(usage) = params::<TokenUsageParams>(&line).map(|p| p.token_usage) else {
                    return Ok(());
                };
                let total: Usage = usage.total.into();
                self.first_total.get_or_insert(total);
                self.final_total = Some(total);
                let last: Option<Usage> = usage.last.map(Into::into);
                if let Some(last) = last.filter(|l| l.input > 0 || l.output > 0) {
                    if self.turn_id.is_some() && self.owns(scope.turn_id()) {
                        self.response = Some(last);
                    }
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
    let mut compaction =
        Compaction { thread_id, turn_id: None, first_total: None, final_total: None, response: None, completed: None };
    exchange.call(&mut compaction, &ThreadCompactStart { thread_id }).await?;
    let completed = exchange.pump_until(&mut compaction, |c, _| c.completed.take()).await?;
    let turn = completed.turn;
    if turn.status == "completed" {
        return Ok(json!({"usage": compaction.usage()}));
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
