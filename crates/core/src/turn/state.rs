//! The turn state machine: decides which notifications belong to the turn — its own thread's
//! turn (and the turns Codex runs on for it: goal continuations, a review's inner turn), and
//! the threads of its sub-agents ([`super::agents`]) — turns them into harness events through
//! each thread's ledger ([`super::ledger`]), and keeps what the terminal event needs. Pure: no
//! I/O, so every interleaving can be tested directly.

use super::agents::{Agents, CollabCall, Held, SubAgentActivity};
use super::ledger::{Handled, Ledger};
use crate::events::{AgentOutcome, AgentRef, CutOff, CutReason, HarnessEvent, PassthroughReason, Usage};
use crate::protocol::{method, params, params_of, CompletedTurn, ItemHead, Scope, TurnError};
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

/// The goal of the turn's thread, as far as the end of a turn needs it.
#[derive(Deserialize)]
struct Goal {
    #[serde(default)]
    objective: String,
    #[serde(default)]
    status: String,
}

#[derive(Deserialize)]
struct GoalUpdated {
    goal: Goal,
}

/// Why the run stopped waiting for the thread and its agents to be idle: what runs is
/// interrupted, and the run ends once each interrupted turn confirmed (or its grace passed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopping {
    /// The caller aborted the run.
    Abort,
    /// A bound of `until: 'idle'` ended the wait (`MaxContinuations`, `IdleWaitMs`).
    Bound(CutReason),
}

#[derive(Default)]
pub struct TurnState {
    thread_id: Option<String>,
    /// The turn the caller asked for (a review's: the turn its items carry).
    turn_id: Option<String>,
    /// `turn/start` has been sent: the next turn on our thread is ours.
    turn_requested: bool,
    /// The turns of our thread that are the turn's: the user's, and those Codex ran on for it.
    own_turns: Vec<String>,
    /// Frames whose owner cannot be decided yet.
    held: Vec<Held>,
    own: Ledger,
    turn_announced: bool,
    agents: Agents,
    goal: Option<Goal>,
    /// The run ends only when the thread and every agent are idle and no goal continuation is due.
    until_idle: bool,
    /// The run's end has been reached (see [`TurnState::take_completion`]).
    ended: bool,
    /// An active goal's continuation was waited for long enough: it is not coming.
    continuation_given_up: bool,
    /// The user's turn, as Codex completed it (a continuation's completion does not replace it).
    owned: Option<CompletedTurn>,
    /// The goal continuation turns Codex started after the user's turn.
    continuations: u32,
    /// The run no longer waits for the thread to be idle: it ends once what it interrupted confirmed.
    stopping: Option<Stopping>,
    /// The abort came after the user's turn completed (in the wait of `until: 'idle'`).
    aborted_in_wait: bool,
    /// Agents a bound stopped (interrupted): named as cut off whether or not they confirmed.
    bound_stopped: Vec<String>,
}

impl TurnState {
    pub fn new(until_idle: bool) -> TurnState {
        TurnState { until_idle, ..TurnState::default() }
    }

    pub fn thread_id(&self) -> Option<&str> {
        self.thread_id.as_deref()
    }

    pub fn turn_id(&self) -> Option<&str> {
        self.turn_id.as_deref()
    }

    /// The run reached its end: nothing more is asked of the server.
    pub fn is_completed(&self) -> bool {
        self.ended
    }

    /// Our thread is known (from the `thread/start` or `thread/resume` response).
    pub fn set_thread(&mut self, thread_id: String, out: &mut Vec<HarnessEvent>) {
        self.thread_id = Some(thread_id);
        self.replay_held(out);
    }

    pub fn set_turn_requested(&mut self) {
        self.turn_requested = true;
    }

    /// Our turn id is known (from the `turn/start` or `review/start` answer).
    pub fn set_turn(&mut self, turn_id: String, out: &mut Vec<HarnessEvent>) {
        self.adopt_turn(&turn_id, out);
    }

    /// The turn that ended, when the run may end: with `until: 'turnCompleted'` once the turn
    /// completed; with `until: 'idle'` once the thread and every agent are idle and no goal
    /// continuation is due (a goal still `active` at `turn/completed` is the signal that one comes).
    ///
    /// Once the run stopped waiting (an abort, a bound), it ends when every turn it interrupted
    /// confirmed: nothing of the thread runs and no agent is busy; a continuation due is not
    /// waited for. The completion returned is the run's: an abort in the wait makes it
    /// `interrupted`, a continuation a bound interrupted leaves it `completed` (see [`Self::outcome`]).
    pub fn take_completion(&mut self) -> Option<CompletedTurn> {
        if self.ended || self.own.running() {
            return None;
        }
        let completion = self.own.completion()?;
        let waiting = match self.stopping {
            Some(_) => self.agents.busy(),
            None => self.until_idle && (self.agents.busy() || self.continuation_due()),
        };
        if waiting {
            return None;
        }
        // The user's turn (`turn/completed` of a review carries the review's id, which is ours).
        if !self.until_idle && Some(completion.id.as_str()) != self.turn_id.as_deref() {
            return None;
        }
        self.ended = true;
        Some(self.outcome(completion.clone()))
    }

    /// The grace of a bound passed with turns it interrupted still running: the run ends now,
    /// with the last turn of the thread Codex completed (they are named as cut off).
    pub fn take_cut(&mut self) -> Option<CompletedTurn> {
        if self.ended {
            return None;
        }
        let completion = self.own.completion()?.clone();
        self.ended = true;
        Some(self.outcome(completion))
    }

    /// The thread's last completion as the run's outcome, once the run stopped waiting.
    fn outcome(&self, mut completion: CompletedTurn) -> CompletedTurn {
        match self.stopping {
            // The app aborted what the turn left running: the run is cancelled, whatever the
            // user's turn was (its `turnCompleted` said that).
            Some(Stopping::Abort) if self.aborted_in_wait => completion.status = "interrupted".to_string(),
            // A bound interrupted a continuation: the user's turn did complete, and the turn
            // before the continuation too (Codex continues only after a completed turn).
            Some(Stopping::Bound(_)) if completion.status == "interrupted" => {
                completion.status = "completed".to_string()
            }
            _ => {}
        }
        completion
    }

    /// The user's turn, once Codex completed it.
    pub fn owned(&self) -> Option<&CompletedTurn> {
        self.owned.as_ref()
    }

    /// Work of the turn runs, or is due (a sub-agent spawned whose turn has not started yet):
    /// what an abort or a bound interrupts and waits for.
    pub fn working(&self) -> bool {
        self.own.running() || self.agents.busy()
    }

    /// The run stops waiting for the thread to be idle; an abort stays the reason once given.
    pub fn stop_waiting(&mut self, stopping: Stopping) {
        if self.stopping == Some(Stopping::Abort) {
            return;
        }
        if stopping == Stopping::Abort {
            self.aborted_in_wait = self.owned.is_some();
        } else {
            let busy = self.agents.all().iter().filter(|a| a.busy()).map(|a| a.reference.thread_id.clone());
            self.bound_stopped.extend(busy);
        }
        self.stopping = Some(stopping);
    }

    pub fn stopping(&self) -> Option<Stopping> {
        self.stopping
    }

    /// With `until: 'idle'`: a continuation is due and `max` of them ran already.
    pub fn continuations_spent(&self, max: u32) -> bool {
        self.until_idle && self.stopping.is_none() && self.continuation_due() && self.continuations >= max
    }

    /// Why the run ended before the work it names as cut off, when it ended on its own terms (a
    /// completion, a bound, an abort whose turns confirmed).
    pub fn end_reason(&self) -> CutReason {
        match self.stopping {
            Some(Stopping::Abort) => CutReason::Abort,
            Some(Stopping::Bound(reason)) => reason,
            None if self.continuation_given_up => CutReason::NoContinuation,
            None => CutReason::TurnCompleted,
        }
    }

    /// The thread's last turn completed with its goal still active: Codex starts a continuation
    /// on its own (nothing announces it).
    pub fn continuation_due(&self) -> bool {
        !self.continuation_given_up
            && !self.own.running()
            && self.own.completion().is_some_and(|c| c.status == "completed")
            && self.goal.as_ref().is_some_and(|g| g.status == "active")
    }

    /// No continuation came for the active goal: the run may end (the goal is named as cut off).
    pub fn stop_waiting_for_continuation(&mut self) {
        self.continuation_given_up = true;
    }

    /// The error of the last non-retried `error` notification of our thread, if any.
    pub fn last_error(&self) -> Option<&TurnError> {
        self.own.last_error()
    }

    /// This turn's usage (its continuations' included): the thread total now minus before.
    pub fn turn_usage(&self) -> Option<Usage> {
        self.own.usage()
    }

    /// `turn_usage` and every agent's usage together.
    pub fn total_usage(&self) -> Option<Usage> {
        match (self.turn_usage(), self.agents.usage()) {
            (Some(own), Some(agents)) => Some(own.plus(agents)),
            (own, agents) => own.or(agents),
        }
    }

    /// The thread's last completed agent message (see [`Ledger::final_message`]).
    pub fn final_message(&self, completed: Option<&CompletedTurn>) -> Option<String> {
        self.own.final_message(completed)
    }

    /// The thread's last completed plan (see [`Ledger::proposed_plan`]).
    pub fn proposed_plan(&self, completed: Option<&CompletedTurn>) -> Option<String> {
        self.own.proposed_plan(completed)
    }

    pub fn agents(&self) -> Vec<AgentOutcome> {
        self.agents.outcomes()
    }

    /// The sub-agent a server request of `thread_id` comes from, when it is one of the turn's.
    pub fn agent_of(&self, thread_id: &str) -> Option<AgentRef> {
        self.agents.get(thread_id).map(|a| a.reference.clone())
    }

    /// The turns running now, the turn's own and its agents': what an abort interrupts.
    pub fn live_turns(&self) -> Vec<(String, String)> {
        let own = self.thread_id.iter().zip(self.own.turn_id()).filter(|_| self.own.running());
        let own = own.map(|(t, u)| (t.clone(), u.to_string()));
        let agents = self.agents.all().iter().filter(|a| a.ledger.running());
        let agents = agents.filter_map(|a| a.ledger.turn_id().map(|t| (a.reference.thread_id.clone(), t.to_string())));
        own.chain(agents).collect()
    }

    /// What Codex was still doing, or would have done, if the child ended now, the run having
    /// ended for `reason`: the agents busy (and those a bound stopped), an active goal, terminal
    /// sessions left open.
    pub fn cut_off(&self, reason: CutReason) -> Vec<CutOff> {
        let mut cut = Vec::new();
        let stopped = |a: &super::agents::Agent| a.busy() || self.bound_stopped.contains(&a.reference.thread_id);
        for agent in self.agents.all().iter().filter(|a| stopped(a)) {
            cut.push(CutOff::Agent {
                thread_id: agent.reference.thread_id.clone(),
                nickname: agent.reference.nickname.clone(),
                reason,
            });
        }
        if let Some(goal) = self.goal.as_ref().filter(|g| g.status == "active") {
            cut.push(CutOff::Goal { objective: goal.objective.clone(), status: goal.status.clone(), reason });
        }
        let ledgers = std::iter::once(&self.own).chain(self.agents.all().iter().map(|a| &a.ledger));
        for item in ledgers.flat_map(|l| l.open_items()) {
            if let Some((process_id, command)) = &item.terminal {
                cut.push(CutOff::BackgroundTerminal {
                    item_id: item.id.clone(),
                    process_id: process_id.clone(),
                    command: command.clone(),
                });
            }
        }
        cut
    }

    /// The run ends: every item still open is closed for the app.
    pub fn drop_open(&mut self, out: &mut Vec<HarnessEvent>) {
        self.own.drop_open(true, &mut |event| out.push(event));
        for agent in self.agents.all_mut() {
            let reference = agent.reference.clone();
            agent.ledger.drop_open(true, &mut |event| {
                out.push(HarnessEvent::Agent { agent: reference.clone(), event: Box::new(event) })
            });
        }
    }

    /// A turn of ours started after the user's completed: a goal continuation.
    fn count_continuation(&mut self) {
        if self.owned.is_some() {
            self.continuations += 1;
        }
    }

    /// `turnStarted` goes out for each of the turn's turns on our thread, once its id is known,
    /// whether it came from `turn/started` or from the acknowledgement.
    fn announce_turn(&mut self, turn_id: &str, out: &mut Vec<HarnessEvent>) {
        if let Some(thread_id) = &self.thread_id {
            out.push(HarnessEvent::TurnStarted { thread_id: thread_id.clone(), turn_id: turn_id.to_string() });
        }
    }

    fn replay_held(&mut self, out: &mut Vec<HarnessEvent>) {
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
                out.push(HarnessEvent::Passthrough { reason, message: raw(line) })
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
                out.push(HarnessEvent::Goal { goal });
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
            Handled::Native => out.push(HarnessEvent::Native {
                method: method.to_string(),
                params: params_of(line).unwrap_or_else(null),
            }),
        }
        if method == method::TURN_COMPLETED {
            if scope.turn_id() != self.turn_id.as_deref() {
                // A later turn of ours completing is not the turn's end (a continuation's, before
                // its successor): the app still sees it.
                out.push(HarnessEvent::Native {
                    method: method.to_string(),
                    params: params_of(line).unwrap_or_else(null),
                });
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
        let wrap = |event: HarnessEvent| HarnessEvent::Agent { agent: reference.clone(), event: Box::new(event) };
        if method == method::TURN_STARTED {
            agent.started = true;
            if matches!(self.stopping, Some(Stopping::Bound(_))) && !self.bound_stopped.iter().any(|t| t == thread) {
                // It starts after a bound ended the wait: it is interrupted at once, and named.
                self.bound_stopped.push(thread.to_string());
            }
            if let Some(turn) = scope.turn_id() {
                out.push(wrap(HarnessEvent::TurnStarted { thread_id: thread.to_string(), turn_id: turn.to_string() }));
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
                params_of(line).and_then(|p| goal_of(&p)).map(|goal| HarnessEvent::Goal { goal })
            }
            Handled::Native => {
                Some(HarnessEvent::Native { method: method.to_string(), params: params_of(line).unwrap_or_else(null) })
            }
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
    fn adopt_turn(&mut self, turn_id: &str, out: &mut Vec<HarnessEvent>) {
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
