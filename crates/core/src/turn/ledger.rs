//! One thread's work as the turn reads it — the turn's own thread, or one of its sub-agents':
//! its notifications become harness events, and it keeps what an outcome needs (the final
//! message, the usage, how its last turn ended, the items still open). Pure: no I/O.

use crate::events::{HarnessEvent, ReasoningPart, Usage};
use crate::protocol::{
    method, params, CompletedTurn, Delta, DiffUpdatedParams, ErrorParams, ItemHead, PlanUpdatedParams,
    RateLimitsUpdatedParams, Scope, TokenUsageParams, TurnCompletedParams, TurnError,
};
use serde_json::value::RawValue;

/// What a notification of the thread amounts to. Events are nearly every answer, and each goes
/// on into the queue at once: boxing them would cost an allocation per event.
#[allow(clippy::large_enum_variant)]
pub(super) enum Handled {
    /// Its dedicated event.
    Event(HarnessEvent),
    /// A change of the ledger only.
    Quiet,
    /// No dedicated event, or params of an unexpected shape: it goes out as `native`, so that
    /// nothing is dropped.
    Native,
}

/// A completed agent message of the current turn.
struct AgentMessage {
    item_id: String,
    text: String,
    /// Its phase is `final_answer`.
    is_final: bool,
}

/// An item started and not (yet) completed.
pub(super) struct OpenItem {
    pub id: String,
    /// A command's session still running after its command returned (`exec_command` with a tty).
    pub terminal: Option<(Option<String>, String)>,
}

#[derive(Default)]
pub(super) struct Ledger {
    /// The thread's turn running now, or the last one.
    turn_id: Option<String>,
    running: bool,
    /// Completed agent messages of the current turn, in order.
    messages: Vec<AgentMessage>,
    /// The agent message being streamed and its text so far (restarted by a repeated start):
    /// the last resort for the final message when no completed item carries it.
    streaming: Option<(String, String)>,
    /// The thread's total before the work the turn counts (from usage updates of earlier turns).
    usage_baseline: Usage,
    usage_total: Option<Usage>,
    /// How the thread's last turn ended.
    completion: Option<CompletedTurn>,
    last_error: Option<TurnError>,
    open: Vec<OpenItem>,
}

impl Ledger {
    pub fn turn_id(&self) -> Option<&str> {
        self.turn_id.as_deref()
    }

    /// A turn of the thread runs (started, not completed).
    pub fn running(&self) -> bool {
        self.running
    }

    /// How the thread's last turn ended, once it did.
    pub fn completion(&self) -> Option<&CompletedTurn> {
        self.completion.as_ref()
    }

    /// The error of the last non-retried `error` notification, if any.
    pub fn last_error(&self) -> Option<&TurnError> {
        self.last_error.as_ref()
    }

    /// The work's usage: the thread total now minus the total before it.
    pub fn usage(&self) -> Option<Usage> {
        self.usage_total.map(|total| total.since(self.usage_baseline))
    }

    /// The thread's total before this turn, from a usage update of an earlier turn (replayed
    /// by the server on resume), as long as none of this turn came.
    pub fn earlier_usage(&mut self, line: &str) {
        if self.usage_total.is_none() {
            if let Some(p) = params::<TokenUsageParams>(line) {
                self.usage_baseline = p.token_usage.total.into();
            }
        }
    }

    /// Items still open.
    pub fn open_items(&self) -> &[OpenItem] {
        &self.open
    }

    /// Closes every open item for the app (`itemDropped`); `sessions_too`: also the terminal
    /// sessions, which outlive a turn but not the child.
    pub fn drop_open(&mut self, sessions_too: bool, out: &mut impl FnMut(HarnessEvent)) {
        let (dropped, kept): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.open).into_iter().partition(|item| sessions_too || item.terminal.is_none());
        self.open = kept;
        for item in dropped {
            out(HarnessEvent::ItemDropped { item_id: item.id });
        }
    }

    /// A turn of the thread started: the current turn's messages start anew.
    pub fn turn_started(&mut self, turn_id: &str) {
        if self.turn_id.as_deref() != Some(turn_id) {
            self.messages.clear();
            self.streaming = None;
        }
        self.turn_id = Some(turn_id.to_string());
        self.running = true;
    }

    /// The final answer: the last completed agent message marked `final_answer`, else the last
    /// completed agent message, else the last agent message among `turn/completed`'s items.
    pub fn final_message(&self, completed: &CompletedTurn) -> Option<String> {
        if let Some(message) = self.messages.iter().rev().find(|m| m.is_final).or(self.messages.last()) {
            return Some(message.text.clone());
        }
        completed
            .items
            .iter()
            .rev()
            .filter_map(|item| serde_json::from_str::<ItemHead>(item.get()).ok())
            .find(|head| head.kind == "agentMessage")
            .and_then(|head| head.text)
            .or_else(|| self.streaming.as_ref().map(|(_, text)| text.clone()))
    }

    /// What a notification of the thread amounts to; `item_head` sees each item's head (the
    /// turn watches for sub-agents being started).
    pub fn notification(
        &mut self,
        method: &str,
        scope: &mut Scope,
        line: &str,
        out: &mut impl FnMut(HarnessEvent),
        mut item_head: impl FnMut(&ItemHead, &RawValue, bool),
    ) -> Handled {
        // Only the notifications without a delta or an item need their params whole.
        let handled = match method {
            method::TURN_STARTED => scope.turn_id().map(|turn| {
                let turn = turn.to_string();
                self.turn_started(&turn);
                Handled::Quiet
            }),
            method::TURN_COMPLETED => params::<TurnCompletedParams>(line).map(|c| {
                self.running = false;
                self.turn_id = Some(c.turn.id.clone());
                // Closed for the app now: a response dropped for a steer never completes its item.
                self.drop_open(false, out);
                self.completion = Some(c.turn);
                Handled::Quiet
            }),
            method::ITEM_STARTED | method::ITEM_COMPLETED => scope.take_item().map(|item| {
                let started = method == method::ITEM_STARTED;
                if let Ok(head) = serde_json::from_str::<ItemHead>(item.get()) {
                    self.track(&head, started);
                    item_head(&head, &item, started);
                }
                Handled::Event(if started {
                    HarnessEvent::ItemStarted { item }
                } else {
                    HarnessEvent::ItemCompleted { item }
                })
            }),
            method::AGENT_MESSAGE_DELTA => Delta::of(scope).map(|d| {
                if let Some((id, text)) = &mut self.streaming {
                    if *id == d.item_id {
                        text.push_str(&d.delta);
                    }
                }
                Handled::Event(HarnessEvent::MessageDelta { item_id: d.item_id, delta: d.delta })
            }),
            method::REASONING_SUMMARY_DELTA | method::REASONING_TEXT_DELTA => Delta::of(scope).map(|d| {
                let (part, index) = if method == method::REASONING_SUMMARY_DELTA {
                    (ReasoningPart::Summary, d.summary_index)
                } else {
                    (ReasoningPart::Text, d.content_index)
                };
                Handled::Event(HarnessEvent::ReasoningDelta {
                    item_id: d.item_id,
                    delta: d.delta,
                    part,
                    index: index.unwrap_or(0),
                })
            }),
            method::COMMAND_OUTPUT_DELTA => Delta::of(scope)
                .map(|d| Handled::Event(HarnessEvent::CommandOutput { item_id: d.item_id, delta: d.delta })),
            method::PLAN_DELTA => {
                Delta::of(scope).map(|d| Handled::Event(HarnessEvent::PlanDelta { item_id: d.item_id, delta: d.delta }))
            }
            method::TOKEN_USAGE_UPDATED => params::<TokenUsageParams>(line).map(|u| {
                let total: Usage = u.token_usage.total.into();
                if self.usage_total.is_none() {
                    // The thread total before this turn's first model response. Exact even
                    // when the server did not replay the earlier usage on resume.
                    if let Some(last) = u.token_usage.last {
                        self.usage_baseline = total.since(last.into());
                    }
                }
                self.usage_total = Some(total);
                Handled::Event(HarnessEvent::Usage {
                    turn: total.since(self.usage_baseline),
                    thread: total,
                    context_window: u.token_usage.model_context_window,
                })
            }),
            method::TURN_PLAN_UPDATED => params::<PlanUpdatedParams>(line)
                .map(|p| Handled::Event(HarnessEvent::Plan { explanation: p.explanation, plan: p.plan })),
            method::TURN_DIFF_UPDATED => {
                params::<DiffUpdatedParams>(line).map(|d| Handled::Event(HarnessEvent::Diff { diff: d.diff }))
            }
            method::ACCOUNT_RATE_LIMITS_UPDATED => params::<RateLimitsUpdatedParams>(line)
                .map(|r| Handled::Event(HarnessEvent::RateLimits { rate_limits: r.rate_limits })),
            method::ERROR => params::<ErrorParams>(line).map(|e| {
                if e.will_retry {
                    Handled::Event(HarnessEvent::Retrying {
                        message: e.error.message,
                        codex_error_info: e.error.codex_error_info,
                    })
                } else {
                    // The failure itself is reported by `turn/completed`; the notification
                    // still goes out as `native`.
                    self.last_error = Some(e.error);
                    Handled::Native
                }
            }),
            _ => None,
        };
        handled.unwrap_or(Handled::Native)
    }

    /// Keeps the completed agent messages and the items still open.
    fn track(&mut self, head: &ItemHead, started: bool) {
        if head.kind == "agentMessage" {
            // A repeated start (a retried stream) restarts the message.
            self.messages.retain(|m| m.item_id != head.id);
            if started {
                self.streaming = Some((head.id.clone(), String::new()));
            } else {
                let is_final = head.phase.as_deref() == Some("final_answer");
                self.messages.push(AgentMessage {
                    item_id: head.id.clone(),
                    text: head.text.clone().unwrap_or_default(),
                    is_final,
                });
            }
        }
        self.open.retain(|item| item.id != head.id);
        if started {
            let terminal = (head.kind == "commandExecution")
                .then(|| (head.process_id.clone(), head.command.clone().unwrap_or_default()));
            self.open.push(OpenItem { id: head.id.clone(), terminal });
        }
    }
}
