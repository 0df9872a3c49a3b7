//! The turn state machine: decides which notifications belong to the owned thread and turn,
//! turns them into harness events, and keeps what the terminal frame needs (final message,
//! usage, completion). Pure: no I/O, so every interleaving can be tested directly.

use crate::events::{HarnessEvent, PassthroughReason, ReasoningPart, Usage};
use crate::protocol::{
    method, params, params_of, CompletedTurn, Delta, DiffUpdatedParams, ErrorParams, ItemHead, PlanUpdatedParams,
    RateLimitsUpdatedParams, Scope, TokenUsageParams, TurnCompletedParams, TurnError,
};
use serde_json::value::RawValue;
use std::borrow::Cow;

/// A notification whose owner cannot be decided yet (its thread or turn id is not known).
struct Held {
    method: Cow<'static, str>,
    scope: Scope,
    line: String,
}

enum Owner {
    Owned,
    Foreign(PassthroughReason),
    Undecided,
}

/// What an owned notification amounts to. Events are nearly every answer, and each goes on
/// into the queue at once: boxing them would cost an allocation per event.
#[allow(clippy::large_enum_variant)]
enum Handled {
    /// Its dedicated event.
    Event(HarnessEvent),
    /// A change of the state only.
    Quiet,
    /// No dedicated event, or params of an unexpected shape: it goes out as `native`, so that
    /// nothing is dropped.
    Native,
}

/// A completed agent message of the turn.
struct AgentMessage {
    item_id: String,
    text: String,
    /// Its phase is `final_answer`.
    is_final: bool,
}

#[derive(Default)]
pub struct TurnState {
    thread_id: Option<String>,
    turn_id: Option<String>,
    /// `turn/start` has been sent: the next turn on our thread is ours.
    turn_requested: bool,
    held: Vec<Held>,
    /// Completed agent messages of this turn, in order.
    messages: Vec<AgentMessage>,
    /// The agent message being streamed and its text so far (restarted by a repeated start):
    /// the last resort for the final message when no completed item carries it.
    streaming: Option<(String, String)>,
    turn_announced: bool,
    /// The thread's total before this turn (from usage updates of earlier turns).
    usage_baseline: Usage,
    usage_total: Option<Usage>,
    completion: Option<CompletedTurn>,
    last_error: Option<TurnError>,
}

impl TurnState {
    pub fn thread_id(&self) -> Option<&str> {
        self.thread_id.as_deref()
    }

    pub fn turn_id(&self) -> Option<&str> {
        self.turn_id.as_deref()
    }

    pub fn is_completed(&self) -> bool {
        self.completion.is_some()
    }

    /// Our thread is known (from the `thread/start` or `thread/resume` response).
    pub fn set_thread(&mut self, thread_id: String, out: &mut Vec<HarnessEvent>) {
        self.thread_id = Some(thread_id);
        self.replay_held(out);
    }

    pub fn set_turn_requested(&mut self) {
        self.turn_requested = true;
    }

    /// Our turn id is known (from the `turn/start` acknowledgement).
    pub fn set_turn(&mut self, turn_id: String, out: &mut Vec<HarnessEvent>) {
        self.adopt_turn(&turn_id, out);
    }

    /// `turnStarted` goes out once, as soon as the turn id is known, whether it came from
    /// `turn/started` or from the acknowledgement (the notification may come later or never).
    fn announce_turn(&mut self, out: &mut Vec<HarnessEvent>) {
        if !self.turn_announced {
            if let (Some(thread_id), Some(turn_id)) = (&self.thread_id, &self.turn_id) {
                self.turn_announced = true;
                out.push(HarnessEvent::TurnStarted { thread_id: thread_id.clone(), turn_id: turn_id.clone() });
            }
        }
    }

    pub fn take_completion(&mut self) -> Option<CompletedTurn> {
        self.completion.take()
    }

    /// The error of the last non-retried `error` notification, if any.
    pub fn last_error(&self) -> Option<&TurnError> {
        self.last_error.as_ref()
    }

    /// This turn's usage: the thread total now minus the total before the turn.
    pub fn turn_usage(&self) -> Option<Usage> {
        self.usage_total.map(|total| total.since(self.usage_baseline))
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

    fn replay_held(&mut self, out: &mut Vec<HarnessEvent>) {
        for held in std::mem::take(&mut self.held) {
            self.notification(held.method, held.scope, held.line, out);
        }
    }

    fn owner(&self, method: &str, scope: &Scope) -> Owner {
        if let Some(thread) = scope.thread_id() {
            match &self.thread_id {
                None => return Owner::Undecided,
                Some(ours) if ours != thread => return Owner::Foreign(PassthroughReason::ForeignThread),
                Some(_) => {}
            }
        }
        if let Some(turn) = scope.turn_id() {
            match &self.turn_id {
                Some(ours) if ours == turn => {}
                Some(_) => return Owner::Foreign(PassthroughReason::ForeignTurn),
                // Our thread runs one turn at a time: once ours is requested, the turn that
                // starts (or completes, if `turn/started` never came) on it is ours.
                None if self.turn_requested && (method == method::TURN_STARTED || method == method::TURN_COMPLETED) => {
                }
                None if self.turn_requested => return Owner::Undecided,
                None => return Owner::Foreign(PassthroughReason::ForeignTurn),
            }
        }
        Owner::Owned
    }

    /// Routes one notification, given the scope read from its params and its line.
    pub fn notification(
        &mut self,
        method: Cow<'static, str>,
        mut scope: Scope,
        line: String,
        out: &mut Vec<HarnessEvent>,
    ) {
        match self.owner(&method, &scope) {
            Owner::Undecided => self.held.push(Held { method, scope, line }),
            Owner::Foreign(reason) => {
                if reason == PassthroughReason::ForeignTurn
                    && method == method::TOKEN_USAGE_UPDATED
                    && self.usage_total.is_none()
                {
                    // Usage of an earlier turn on our (resumed) thread, replayed by the server:
                    // the thread total before this turn.
                    if let Some(p) = params::<TokenUsageParams>(&line) {
                        self.usage_baseline = p.token_usage.total.into();
                    }
                }
                out.push(HarnessEvent::Passthrough { reason, message: raw(line) });
            }
            Owner::Owned => match self.owned(&method, &mut scope, &line, out) {
                Handled::Event(event) => out.push(event),
                Handled::Quiet => {}
                Handled::Native => out.push(HarnessEvent::Native {
                    method: method.into_owned(),
                    params: params_of(&line).unwrap_or_else(null),
                }),
            },
        }
    }

    /// What an owned notification amounts to.
    fn owned(&mut self, method: &str, scope: &mut Scope, line: &str, out: &mut Vec<HarnessEvent>) -> Handled {
        // Only the notifications without a delta or an item need their params whole.
        let handled = match method {
            method::TURN_STARTED => scope.turn_id().map(|turn| {
                self.adopt_turn(turn, out);
                Handled::Quiet
            }),
            method::TURN_COMPLETED => params::<TurnCompletedParams>(line).map(|c| {
                self.adopt_turn(&c.turn.id, out);
                self.completion = Some(c.turn);
                Handled::Quiet
            }),
            method::ITEM_STARTED | method::ITEM_COMPLETED => scope.take_item().map(|item| {
                let started = method == method::ITEM_STARTED;
                if let Ok(head) = serde_json::from_str::<ItemHead>(item.get()) {
                    if head.kind == "agentMessage" {
                        // A repeated start (a retried stream) restarts the message.
                        self.messages.retain(|m| m.item_id != head.id);
                        if started {
                            self.streaming = Some((head.id.clone(), String::new()));
                        } else {
                            let is_final = head.phase.as_deref() == Some("final_answer");
                            self.messages.push(AgentMessage {
                                item_id: head.id,
                                text: head.text.unwrap_or_default(),
                                is_final,
                            });
                        }
                    }
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

    /// The turn a `turn/started` or `turn/completed` of our thread names is ours, when the
    /// acknowledgement has not told its id yet.
    fn adopt_turn(&mut self, turn_id: &str, out: &mut Vec<HarnessEvent>) {
        if self.turn_id.is_none() {
            self.turn_id = Some(turn_id.to_string());
            self.announce_turn(out);
            self.replay_held(out);
        }
    }
}

fn null() -> Box<RawValue> {
    RawValue::from_string("null".into()).expect("null is JSON")
}

/// A received line as raw JSON (it parsed once already, so this cannot fail in practice).
fn raw(line: String) -> Box<RawValue> {
    RawValue::from_string(line).unwrap_or_else(|_| null())
}
