//! The turn state machine: what the turn is at each moment — its thread and turn, the turns
//! Codex runs on for it, its sub-agents, its goal, whether the run may end (and, with `until:
//! 'idle'`, why it stopped waiting) — and what the terminal event needs. Which notification
//! belongs to whom is its other half, [`super::routing`]. Pure: no I/O, so every interleaving
//! can be tested directly.

use super::agents::{Agents, Held};
use super::ledger::Ledger;
use crate::events::{AgentEvent, AgentOutcome, AgentRef, CutOff, CutReason, HarnessEvent, Usage};
use crate::protocol::{CompletedTurn, TurnError};
use serde::Deserialize;

/// The goal of the turn's thread, as far as the end of a turn needs it.
#[derive(Deserialize)]
pub(super) struct Goal {
    #[serde(default)]
    pub(super) objective: String,
    #[serde(default)]
    pub(super) status: String,
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
    pub(super) thread_id: Option<String>,
    /// The turn the caller asked for (a review's: the turn its items carry).
    pub(super) turn_id: Option<String>,
    /// `turn/start` has been sent: the next turn on our thread is ours.
    pub(super) turn_requested: bool,
    /// The turns of our thread that are the turn's: the user's, and those Codex ran on for it.
    pub(super) own_turns: Vec<String>,
    /// Frames whose owner cannot be decided yet.
    pub(super) held: Vec<Held>,
    pub(super) own: Ledger,
    pub(super) turn_announced: bool,
    pub(super) agents: Agents,
    pub(super) goal: Option<Goal>,
    /// The run ends only when the thread and every agent are idle and no goal continuation is due.
    pub(super) until_idle: bool,
    /// The run's end has been reached (see [`TurnState::take_completion`]).
    pub(super) ended: bool,
    /// An active goal's continuation was waited for long enough: it is not coming.
    pub(super) continuation_given_up: bool,
    /// The user's turn, as Codex completed it (a continuation's completion does not replace it).
    pub(super) owned: Option<CompletedTurn>,
    /// The goal continuation turns Codex started after the user's turn.
    pub(super) continuations: u32,
    /// The run no longer waits for the thread to be idle: it ends once what it interrupted confirmed.
    pub(super) stopping: Option<Stopping>,
    /// The abort came after the user's turn completed (in the wait of `until: 'idle'`).
    pub(super) aborted_in_wait: bool,
    /// Agents a bound stopped (interrupted): named as cut off whether or not they confirmed.
    pub(super) bound_stopped: Vec<String>,
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
                out.push(HarnessEvent::Agent(AgentEvent { agent: reference.clone(), event: Box::new(event) }))
            });
        }
    }

    /// A turn of ours started after the user's completed: a goal continuation.
    pub(super) fn count_continuation(&mut self) {
        if self.owned.is_some() {
            self.continuations += 1;
        }
    }
}
