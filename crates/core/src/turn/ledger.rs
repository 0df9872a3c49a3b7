//! One thread's work as the turn reads it — the turn's own thread, or one of its sub-agents':
//! its notifications become harness events, and it keeps what an outcome needs (the final
//! message, the proposed plan, the usage, how its last turn ended, the items still open). Pure:
//! no I/O.
//!
//! The deltas of an item add up to the whole text its completion carries: what Codex sent only
//! whole (a fast command's output, a message or reasoning it did not stream) goes out as one
//! more delta before `itemCompleted`, or, when the deltas were not its beginning, as the whole
//! text replacing them.

use crate::events::{
    DeltaEvent, DiffEvent, HarnessEvent, ItemDroppedEvent, ItemEvent, PlanEvent, RateLimitsEvent, ReasoningDeltaEvent,
    ReasoningPart, RetryingEvent, Usage, UsageEvent,
};
use crate::protocol::{
    method, params, CompletedTurn, Delta, DiffUpdatedParams, ErrorParams, ItemHead, PlanUpdatedParams,
    RateLimitsUpdatedParams, ReasoningTexts, Scope, TokenUsageParams, TurnCompletedParams, TurnError,
};
use serde_json::value::RawValue;
use xxhash_rust::xxh64::{xxh64, Xxh64};

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

/// Which text of an item a delta adds to (an agent message's is kept whole: `Ledger::streaming`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Text {
    /// A command's output (`aggregatedOutput`).
    Output,
    /// A plan item's text.
    Plan,
    /// A reasoning item's summary part, or raw part, of this index.
    Reasoning(ReasoningPart, i64),
}

/// What the deltas of one text of an item have streamed: how many bytes, and their digest —
/// enough to tell whether the whole text continues them, without a copy of each delta.
struct Streamed {
    item_id: String,
    text: Text,
    len: usize,
    digest: Xxh64,
}

/// The delta that makes the deltas of a text add up to `whole`, the text its item completed
/// with, given how many bytes streamed and whether they are `whole`'s beginning: the rest,
/// unless nothing is left; else `whole` itself, which replaces them (`true`).
fn completing(whole: &str, streamed: usize, is_beginning: impl FnOnce(&[u8]) -> bool) -> Option<(&str, bool)> {
    if streamed <= whole.len() && whole.is_char_boundary(streamed) && is_beginning(&whole.as_bytes()[..streamed]) {
        Some((&whole[streamed..], false)).filter(|(rest, _)| !rest.is_empty())
    } else {
        Some((whole, true))
    }
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
    /// The final message of the thread's turns before the current one, if they had one.
    earlier_message: Option<String>,
    /// The text of the thread's last completed plan item.
    plan: Option<String>,
    /// The agent message being streamed and its text so far (restarted by a repeated start):
    /// what its completion's text is held against, and the last resort for the final message
    /// when no completed item carries it.
    streaming: Option<(String, String)>,
    /// What the deltas of the other texts of items not yet completed streamed.
    streamed: Vec<Streamed>,
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
            self.streamed.retain(|s| s.item_id != item.id);
            out(HarnessEvent::ItemDropped(ItemDroppedEvent { item_id: item.id }));
        }
    }

    /// A turn of the thread started: the current turn's messages start anew, and the final
    /// message so far is kept as the thread's, should the new turn complete none.
    pub fn turn_started(&mut self, turn_id: &str) {
        if self.turn_id.as_deref() != Some(turn_id) {
            if let Some(message) = self.completed_message(self.completion.as_ref()) {
                self.earlier_message = Some(message);
            }
            self.messages.clear();
            self.streaming = None;
        }
        self.turn_id = Some(turn_id.to_string());
        self.running = true;
    }

    /// The final answer, whatever the outcome: the current turn's last completed agent message
    /// marked `final_answer`, else its last completed agent message, else the last agent message
    /// among `completed`'s items (the turn's `turn/completed`), else the thread's earlier turns'
    /// final message. A turn that completed with none of these: the message being streamed.
    pub fn final_message(&self, completed: Option<&CompletedTurn>) -> Option<String> {
        self.completed_message(completed).or_else(|| self.earlier_message.clone()).or_else(|| {
            let finished = completed.is_some_and(|c| c.status == "completed");
            self.streaming.as_ref().filter(|_| finished).map(|(_, text)| text.clone())
        })
    }

    /// The current turn's final message among its completed agent messages, and `completed`'s items.
    fn completed_message(&self, completed: Option<&CompletedTurn>) -> Option<String> {
        if let Some(message) = self.messages.iter().rev().find(|m| m.is_final).or(self.messages.last()) {
            return Some(message.text.clone());
        }
        last_item_text(completed, "agentMessage")
    }

    /// Plan mode's proposed plan, whatever the outcome: the text of the last `plan` item among
    /// `completed`'s items, else of the thread's last completed one.
    pub fn proposed_plan(&self, completed: Option<&CompletedTurn>) -> Option<String> {
        last_item_text(completed, "plan").or_else(|| self.plan.clone())
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
                    if !started {
                        self.complete_texts(&head, &item, out);
                    }
                    self.track(&head, started);
                    item_head(&head, &item, started);
                }
                Handled::Event(if started {
                    HarnessEvent::ItemStarted(ItemEvent { item })
                } else {
                    HarnessEvent::ItemCompleted(ItemEvent { item })
                })
            }),
            method::AGENT_MESSAGE_DELTA => Delta::of(scope).map(|d| {
                match &mut self.streaming {
                    Some((id, text)) if *id == d.item_id => text.push_str(&d.delta),
                    // A delta before its message's start: the message streams from it.
                    _ => self.streaming = Some((d.item_id.clone(), d.delta.clone())),
                }
                Handled::Event(HarnessEvent::MessageDelta(DeltaEvent {
                    item_id: d.item_id,
                    delta: d.delta,
                    replace: false,
                }))
            }),
            method::REASONING_SUMMARY_DELTA | method::REASONING_TEXT_DELTA => Delta::of(scope).map(|d| {
                let (part, index) = if method == method::REASONING_SUMMARY_DELTA {
                    (ReasoningPart::Summary, d.summary_index)
                } else {
                    (ReasoningPart::Text, d.content_index)
                };
                let index = index.unwrap_or(0);
                self.stream(&d.item_id, Text::Reasoning(part, index), &d.delta);
                Handled::Event(HarnessEvent::ReasoningDelta(ReasoningDeltaEvent {
                    item_id: d.item_id,
                    delta: d.delta,
                    part,
                    index,
                    replace: false,
                }))
            }),
            method::COMMAND_OUTPUT_DELTA => Delta::of(scope).map(|d| {
                self.stream(&d.item_id, Text::Output, &d.delta);
                Handled::Event(HarnessEvent::CommandOutput(DeltaEvent {
                    item_id: d.item_id,
                    delta: d.delta,
                    replace: false,
                }))
            }),
            method::PLAN_DELTA => Delta::of(scope).map(|d| {
                self.stream(&d.item_id, Text::Plan, &d.delta);
                Handled::Event(HarnessEvent::PlanDelta(DeltaEvent {
                    item_id: d.item_id,
                    delta: d.delta,
                    replace: false,
                }))
            }),
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
                Handled::Event(HarnessEvent::Usage(UsageEvent {
                    turn: total.since(self.usage_baseline),
                    thread: total,
                    context_window: u.token_usage.model_context_window,
                }))
            }),
            method::TURN_PLAN_UPDATED => params::<PlanUpdatedParams>(line)
                .map(|p| Handled::Event(HarnessEvent::Plan(PlanEvent { explanation: p.explanation, plan: p.plan }))),
            method::TURN_DIFF_UPDATED => params::<DiffUpdatedParams>(line)
                .map(|d| Handled::Event(HarnessEvent::Diff(DiffEvent { diff: d.diff }))),
            method::ACCOUNT_RATE_LIMITS_UPDATED => params::<RateLimitsUpdatedParams>(line)
                .map(|r| Handled::Event(HarnessEvent::RateLimits(RateLimitsEvent { rate_limits: r.rate_limits }))),
            method::ERROR => params::<ErrorParams>(line).map(|e| {
                if e.will_retry {
                    Handled::Event(HarnessEvent::Retrying(RetryingEvent {
                        message: e.error.message,
                        codex_error_info: e.error.codex_error_info,
                    }))
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

    /// Counts a delta of an item's `text` (not an agent message's) as streamed.
    fn stream(&mut self, item_id: &str, text: Text, delta: &str) {
        // The item streaming now is nearly always the last one seen.
        match self.streamed.iter_mut().rev().find(|s| s.text == text && s.item_id == item_id) {
            Some(streamed) => {
                streamed.len += delta.len();
                streamed.digest.update(delta.as_bytes());
            }
            None => {
                let mut digest = Xxh64::new(0);
                digest.update(delta.as_bytes());
                self.streamed.push(Streamed { item_id: item_id.to_string(), text, len: delta.len(), digest });
            }
        }
    }

    /// The deltas that make what an item's deltas streamed add up to the whole texts of its
    /// completion (`item`), each before the item's `itemCompleted`.
    fn complete_texts(&mut self, head: &ItemHead, item: &RawValue, out: &mut impl FnMut(HarnessEvent)) {
        let id = &head.id;
        match head.kind.as_str() {
            "agentMessage" => {
                let Some(whole) = &head.text else { return };
                let streamed = self.streaming.as_ref().filter(|(streaming, _)| streaming == id).map(|(_, text)| text);
                let streamed = streamed.map_or("", String::as_str);
                if let Some((delta, replace)) = completing(whole, streamed.len(), |start| start == streamed.as_bytes())
                {
                    out(HarnessEvent::MessageDelta(DeltaEvent {
                        item_id: id.clone(),
                        delta: delta.to_string(),
                        replace,
                    }));
                }
            }
            "commandExecution" => {
                if let Some((delta, replace)) =
                    head.aggregated_output.as_deref().and_then(|w| self.rest(id, Text::Output, w))
                {
                    out(HarnessEvent::CommandOutput(DeltaEvent { item_id: id.clone(), delta, replace }));
                }
            }
            "plan" => {
                if let Some((delta, replace)) = head.text.as_deref().and_then(|w| self.rest(id, Text::Plan, w)) {
                    out(HarnessEvent::PlanDelta(DeltaEvent { item_id: id.clone(), delta, replace }));
                }
            }
            "reasoning" => {
                let Ok(texts) = serde_json::from_str::<ReasoningTexts>(item.get()) else { return };
                let parts = [(ReasoningPart::Summary, texts.summary), (ReasoningPart::Text, texts.content)];
                for (part, wholes) in parts {
                    for (index, whole) in (0..).zip(&wholes) {
                        if let Some((delta, replace)) = self.rest(id, Text::Reasoning(part, index), whole) {
                            out(HarnessEvent::ReasoningDelta(ReasoningDeltaEvent {
                                item_id: id.clone(),
                                delta,
                                part,
                                index,
                                replace,
                            }));
                        }
                    }
                }
            }
            _ => {}
        }
        self.streamed.retain(|s| s.item_id != *id);
    }

    /// [`completing`] for a text whose deltas only left their length and digest.
    fn rest(&self, item_id: &str, text: Text, whole: &str) -> Option<(String, bool)> {
        let streamed = self.streamed.iter().find(|s| s.text == text && s.item_id == item_id);
        let (len, digest) = streamed.map_or((0, None), |s| (s.len, Some(s.digest.digest())));
        let is_beginning = |start: &[u8]| digest.is_none_or(|digest| xxh64(start, 0) == digest);
        completing(whole, len, is_beginning).map(|(delta, replace)| (delta.to_string(), replace))
    }

    /// Keeps the completed agent messages and plans, and the items still open.
    fn track(&mut self, head: &ItemHead, started: bool) {
        let repeated = started && self.open.iter().any(|item| item.id == head.id);
        if repeated {
            // A repeated start (a retried stream) restarts the item's texts.
            self.streamed.retain(|s| s.item_id != head.id);
        }
        if head.kind == "plan" && !started {
            self.plan = head.text.clone();
        }
        if head.kind == "agentMessage" {
            // A repeated start (a retried stream) restarts the message.
            self.messages.retain(|m| m.item_id != head.id);
            if started {
                // Deltas that came before the first start are its beginning.
                let early = !repeated && self.streaming.as_ref().is_some_and(|(id, _)| *id == head.id);
                if !early {
                    self.streaming = Some((head.id.clone(), String::new()));
                }
            } else {
                // Completed: its deltas are accounted for (a later start of the id is a new text).
                if self.streaming.as_ref().is_some_and(|(id, _)| *id == head.id) {
                    self.streaming = None;
                }
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

/// The text of the last item of `kind` among a `turn/completed`'s items.
fn last_item_text(completed: Option<&CompletedTurn>, kind: &str) -> Option<String> {
    completed?
        .items
        .iter()
        .rev()
        .filter_map(|item| serde_json::from_str::<ItemHead>(item.get()).ok())
        .find(|head| head.kind == kind)
        .and_then(|head| head.text)
}
