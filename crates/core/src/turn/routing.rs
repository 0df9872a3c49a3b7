//! The routing half of the turn state machine ([`super::state`]): who each notification
//! belongs to — the turn's own thread and the turns Codex runs on for it (goal continuations, a
//! review's inner turn), one of its sub-agents ([`super::agents`]), or someone else
//! (`passthrough`) — and the harness events each thread's ledger ([`super::ledger`]) makes of it.
//! Frames whose owner cannot be decided yet are held and replayed once it can.

use super::agents::{CollabCall, Held, SubAgentActivity};
use super::ledger::Handled;
use super::state::{Goal, Stopping, TurnState};
use crate::events::{AgentEvent, GoalEvent, HarnessEvent, PassthroughEvent, PassthroughReason, TurnStartedEvent};
use crate::protocol::{method, params, params_of, ItemHead, Scope};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// Who a notification belongs to.
enum Owner {
    /// The turn's own thread.
    Own,
    /// One of the turn's sub-agents.
    Agent(String),
    Foreign(PassthroughReason),
    /// Not decidable yet: its thread or turn id is not known.
    Undecided,
    /// A thread not known while a spawn of the turn is in flight: it may be the spawn's child.
    Spawning,
}

/// `turn/started` params, as far as ownership needs them.
#[derive(Deserialize)]
struct TurnStarted {
    turn: StartedTurn,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StartedTurn {
    #[serde(default)]
    root_turn_id: Option<String>,
}

#[derive(Deserialize)]
struct GoalUpdated {
    goal: Goal,
}

impl TurnState {
    /// `turnStarted` goes out for each of the turn's turns on our thread, once its id is known,
    /// whether it came from `turn/started` or from the acknowledgement.
    fn announce_turn(&mut self, turn_id: &str, out: &mut Vec<HarnessEvent>) {
        if let Some(thread_id) = &self.thread_id {
            out.push(HarnessEvent::TurnStarted(TurnStartedEvent {
                thread_id: thread_id.clone(),
                turn_id: turn_id.to_string(),
            }));
        }
    }

    pub(super) fn replay_held(&mut self, out: &mut Vec<HarnessEvent>) {
        for held in std::mem::take(&mut self.held) {
            self.notification(held.method, held.scope, held.line, out);
        }
    }

    /// Whether `turn_id` started on behalf of the turn (its own turn, a continuation, or a turn
    /// of one of its agents).
    fn is_root(&self, turn_id: &str) -> bool {
        self.own_turns.iter().any(|t| t == turn_id) || self.agents.has_turn(turn_id)
    }

    fn owner(&mut self, method: &str, scope: &Scope, line: &str, out: &mut Vec<HarnessEvent>) -> Owner {
        let Some(thread) = scope.thread_id() else {
            return match (scope.turn_id(), &self.turn_id) {
                (None, _) => Owner::Own,
                (Some(turn), Some(ours)) if turn == ours => Owner::Own,
                (Some(_), None) if self.turn_requested => Owner::Undecided,
                (Some(_), _) => Owner::Foreign(PassthroughReason::ForeignTurn),
            };
        };
        let Some(ours) = &self.thread_id else {
            return Owner::Undecided;
        };
        if thread != ours {
            if self.agents.get(thread).is_some() {
                return Owner::Agent(thread.to_string());
            }
            if method == method::TURN_STARTED {
                if let Some(started) = params::<TurnStarted>(line) {
                    if started.turn.root_turn_id.as_deref().is_some_and(|root| self.is_root(root)) {
                        // A thread working on behalf of the turn: a sub-agent of it.
                        let thread = thread.to_string();
                        self.agents.adopt(&thread, 1, None);
                        return Owner::Agent(thread);
                    }
                }
            }
            if self.agents.spawning() {
                return Owner::Spawning;
            }
            return Owner::Foreign(PassthroughReason::ForeignThread);
        }
        let Some(turn) = scope.turn_id() else {
            return Owner::Own;
        };
        if self.own_turns.iter().any(|t| t == turn) {
            return Owner::Own;
        }
        if method == method::TURN_STARTED || method == method::TURN_COMPLETED {
            let root = params::<TurnStarted>(line).and_then(|s| s.turn.root_turn_id).filter(|r| r != turn);
            if let Some(root) = &root {
                if self.is_root(root) {
                    // A goal continuation, or a review's inner turn: Codex runs on for the turn.
                    self.own_turns.push(turn.to_string());
                    self.count_continuation();
                    if method == method::TURN_STARTED {
                        self.announce_turn(turn, out);
                    }
                    return Owner::Own;
                }
            }
            // A Codex whose turns name no root (before `rootTurnId`; 0.150.0 seen): a turn that
            // starts on our thread while ours runs (a review's inner turn) or while a goal
            // continuation is due is one Codex runs for the turn.
            if root.is_none()
                && method == method::TURN_STARTED
                && self.turn_id.is_some()
                && (self.own.running() || self.continuation_due())
            {
                self.own_turns.push(turn.to_string());
                self.count_continuation();
                self.announce_turn(turn, out);
                return Owner::Own;
            }
            // Our thread runs one turn at a time: once ours is requested, the turn that starts
            // (or completes, if `turn/started` never came) on it is ours — the root of its chain
            // when it names one (a review's turn carries the review's id in its items).
            if self.turn_id.is_none() && self.turn_requested {
                let turn = turn.to_string();
                self.adopt_turn(root.as_deref().unwrap_or(&turn), out);
                if !self.own_turns.contains(&turn) {
                    self.own_turns.push(turn);
                }
                return Owner::Own;
            }
        }
        if self.turn_id.is_none() && self.turn_requested {
            return Owner::Undecided;
        }
        Owner::Foreign(PassthroughReason::ForeignTurn)
    }

    /// Routes one notification, given the scope read from its params and its line.
    pub fn notification(
        &mut self,
        method: Cow<'static, str>,
        mut scope: Scope,
        line: String,
        out: &mut Vec<HarnessEvent>,
    ) {
        match self.owner(&method, &scope, &line, out) {
            Owner::Undecided => self.held.push(Held { method, scope, line }),
            Owner::Spawning => self.agents.held.push(Held { method, scope, line }),
            Owner::Foreign(reason) => {
                if reason == PassthroughReason::ForeignTurn && method == method::TOKEN_USAGE_UPDATED {
                    // Usage of an earlier turn on our (resumed) thread, replayed by the server:
                    // the thread total before this turn.
                    self.own.earlier_usage(&line);
                }
                out.push(HarnessEvent::Passthrough(PassthroughEvent { reason, message: raw(line) }))
            }
            Owner::Own => self.own_notification(&method, &mut scope, &line, out),
            Owner::Agent(thread) => self.agent_notification(&thread, &method, &mut scope, &line, out),
        }
    }

    fn own_notification(&mut self, method: &str, scope: &mut Scope, line: &str, out: &mut Vec<HarnessEvent>) {
        if method == method::THREAD_GOAL_UPDATED {
            if let Some(updated) = params::<GoalUpdated>(line) {
                self.goal = Some(updated.goal);
            }
            if let Some(goal) = params_of(line).and_then(|p| goal_of(&p)) {
                out.push(HarnessEvent::Goal(GoalEvent { goal }));
                return;
            }
        }
        let mut spawned = Vec::new();
        let mut emit = |event: HarnessEvent| out.push(event);
        let handled = self.own.notification(method, scope, line, &mut emit, |head, item, started| {
            spawned.extend(collab_of(head, item, started));
        });
        match handled {
            Handled::Event(event) => out.push(event),
            Handled::Quiet => {}
            Handled::Native => out.push(HarnessEvent::notification(method, params_of(line).unwrap_or_else(null))),
        }
        if method == method::TURN_COMPLETED {
            if scope.turn_id() != self.turn_id.as_deref() {
                // A later turn of ours completing is not the turn's end (a continuation's, before
                // its successor): the app still sees it.
                out.push(HarnessEvent::notification(method, params_of(line).unwrap_or_else(null)));
            } else if self.owned.is_none() {
                self.owned = self.own.completion().cloned();
            }
        }
        self.found_agents(spawned, 0, out);
    }

    fn agent_notification(
        &mut self,
        thread: &str,
        method: &str,
        scope: &mut Scope,
        line: &str,
        out: &mut Vec<HarnessEvent>,
    ) {
        let Some(agent) = self.agents.get_mut(thread) else { return };
        let reference = agent.reference.clone();
        let wrap =
            |event: HarnessEvent| HarnessEvent::Agent(AgentEvent { agent: reference.clone(), event: Box::new(event) });
        if method == method::TURN_STARTED {
            agent.started = true;
            if matches!(self.stopping, Some(Stopping::Bound(_))) && !self.bound_stopped.iter().any(|t| t == thread) {
                // It starts after a bound ended the wait: it is interrupted at once, and named.
                self.bound_stopped.push(thread.to_string());
            }
            if let Some(turn) = scope.turn_id() {
                out.push(wrap(HarnessEvent::TurnStarted(TurnStartedEvent {
                    thread_id: thread.to_string(),
                    turn_id: turn.to_string(),
                })));
            }
        }
        let mut spawned = Vec::new();
        let mut inner = Vec::new();
        let handled =
            agent.ledger.notification(method, scope, line, &mut |event| inner.push(event), |head, item, started| {
                spawned.extend(collab_of(head, item, started));
            });
        out.extend(inner.into_iter().map(&wrap));
        let event = match handled {
            Handled::Event(event) => Some(event),
            Handled::Quiet if method == method::TURN_COMPLETED => agent.ledger.completion().map(|completed| {
                HarnessEvent::TurnCompleted(super::ending::agent_turn(thread, &agent.ledger, completed))
            }),
            Handled::Quiet => None,
            Handled::Native if method == method::THREAD_GOAL_UPDATED => {
                params_of(line).and_then(|p| goal_of(&p)).map(|goal| HarnessEvent::Goal(GoalEvent { goal }))
            }
            Handled::Native => Some(HarnessEvent::notification(method, params_of(line).unwrap_or_else(null))),
        };
        out.extend(event.map(wrap));
        self.found_agents(spawned, reference.depth, out);
    }

    /// Spawn calls seen in a thread `depth` deep: new agents, and the frames held for them.
    fn found_agents(&mut self, calls: Vec<Spawn>, depth: u32, out: &mut Vec<HarnessEvent>) {
        if calls.is_empty() {
            return;
        }
        for spawn in calls {
            match spawn {
                Spawn::Collab(call, completed) => {
                    self.agents.collab_call(call, depth, completed);
                }
                Spawn::Activity(activity) => {
                    self.agents.adopt(&activity.agent_thread_id, depth + 1, activity.agent_path);
                }
            }
        }
        // Held frames of threads now known go to their agents; once no spawn is in flight,
        // the rest were never the turn's.
        let held = std::mem::take(&mut self.agents.held);
        for held in held {
            self.notification(held.method, held.scope, held.line, out);
        }
    }

    /// The turn a `turn/started` or `turn/completed` of our thread names is ours, when the
    /// acknowledgement has not told its id yet.
    pub(super) fn adopt_turn(&mut self, turn_id: &str, out: &mut Vec<HarnessEvent>) {
        if self.turn_id.is_none() {
            self.turn_id = Some(turn_id.to_string());
            // It runs from now on, whether or not `turn/started` comes (an abort interrupts it).
            if self.own.completion().is_none() {
                self.own.turn_started(turn_id);
            }
            if !self.own_turns.iter().any(|t| t == turn_id) {
                self.own_turns.push(turn_id.to_string());
            }
            if !self.turn_announced {
                self.turn_announced = true;
                self.announce_turn(turn_id, out);
            }
            self.replay_held(out);
        }
    }
}

/// A spawn seen in an item: a collab tool call, or a sub-agent's activity (multi-agent v2).
enum Spawn {
    Collab(CollabCall, bool),
    Activity(SubAgentActivity),
}

/// The spawn an item is, if it is one.
fn collab_of(head: &ItemHead, item: &RawValue, started: bool) -> Option<Spawn> {
    match head.kind.as_str() {
        "collabAgentToolCall" => serde_json::from_str(item.get()).ok().map(|call| Spawn::Collab(call, !started)),
        "subAgentActivity" => serde_json::from_str(item.get()).ok().map(Spawn::Activity),
        _ => None,
    }
}

/// `goal` of `thread/goal/updated` params, as Codex sent it.
fn goal_of(params: &RawValue) -> Option<Box<RawValue>> {
    #[derive(Deserialize)]
    struct Params {
        goal: Box<RawValue>,
    }
    serde_json::from_str::<Params>(params.get()).ok().map(|p| p.goal)
}

fn null() -> Box<RawValue> {
    RawValue::from_string("null".into()).expect("null is JSON")
}

/// A received line as raw JSON (it parsed once already, so this cannot fail in practice).
fn raw(line: String) -> Box<RawValue> {
    RawValue::from_string(line).unwrap_or_else(|_| null())
}
