//! The turn's session on the exchange: handshake → login check → thread (started read-only, or
//! resumed) → for a read-only turn the isolation checks → turn (or review) ([`script`]) → wait
//! for its end. The session is the exchange's owner: notifications go to the state machine,
//! server requests to the app's handler or the reply policy ([`requests`]), an abort answers
//! what waits and becomes `turn/interrupt` of every live turn (sub-agents' included, and each
//! turn that starts after) with its grace, and its own wake-ups are the caller's steers, a
//! prepared turn's input, the app's answers, and room in the event queue. With `until: 'idle'`
//! it also keeps the bounds of the wait (`maxContinuations`, `idleWaitMs`), which end it as an
//! abort does but completed.

use super::controls::{AppAnswer, Controls, Steer};
use super::ending::{self, Ending};
use super::state::{Stopping, TurnState};
use crate::events::{
    AgentRef, CutReason, DiagnosticEvent, DiagnosticSource, HarnessEvent, PassthroughEvent, PassthroughReason,
};
use crate::exchange::{Exchange, Frame, Input, Output, Owner, Stop, Wire};
use crate::options::input::InputItem;
use crate::options::{TurnInput, TurnOptions, Until};
use crate::protocol::{CompletedTurn, RpcError, TurnInterrupt, TurnSteer, WorkspaceWrite};
use crate::stream::EventStream;
use serde_json::json;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// How long the run waits, with `until: 'idle'`, for the continuation an active goal calls for
/// (Codex starts it some 20 ms after `turn/completed`); past it, the goal is named as cut off.
const CONTINUATION_WAIT: Duration = Duration::from_secs(5);

mod requests;
mod script;

/// What the `started` event says besides the server's own answer.
#[derive(Clone, Copy)]
pub(super) struct Started<'a> {
    pub turn_key: &'a str,
    pub pid: u32,
    pub codex_path: &'a str,
}

/// stderr lines read before `started` went out: they follow it (it is always the first event).
pub(crate) type Prelude = Arc<Mutex<Option<Vec<String>>>>;

/// A server request the app is answering.
struct Asked {
    id: serde_json::Value,
    method: String,
    params: Box<RawValue>,
    agent: Option<AgentRef>,
    deadline: Instant,
    /// A call of an app tool (`tools`): its name and deadline.
    tool: Option<requests::AskedTool>,
}

/// The turn, as the owner of its exchange.
pub(super) struct Session<'a> {
    options: &'a TurnOptions,
    stream: &'a EventStream,
    controls: &'a Controls,
    prelude: &'a Prelude,
    pub(super) state: TurnState,
    /// How the server completed the turn, once it did: the run's end.
    completed: Option<Ending>,
    scratch: Vec<HarnessEvent>,
    /// Steers from the caller; `None` once the caller's side closed.
    steers: Option<mpsc::UnboundedReceiver<Steer>>,
    /// Steers that came before the turn had an id, sent once it has one.
    held_steers: Vec<Steer>,
    /// `turn/steer` requests sent, and who waits for each one's answer.
    sent_steers: Vec<(i64, oneshot::Sender<Result<(), RpcError>>)>,
    /// A prepared turn waits here for its input.
    start: Option<oneshot::Receiver<TurnInput>>,
    given: Option<TurnInput>,
    /// The app's answers to server requests; `None` when the app answers none.
    answers: Option<mpsc::UnboundedReceiver<(u64, AppAnswer)>>,
    asked: HashMap<u64, Asked>,
    next_key: u64,
    /// Since when an active goal's continuation is due (with `until: 'idle'`).
    continuation_since: Option<Instant>,
    /// The user's turn's completion was seen (its `turnCompleted` went out, if the run went on).
    owned_seen: bool,
    /// With `until: 'idle'`: when the wait reaches `idleWaitMs` (from the user's turn's end).
    idle_deadline: Option<Instant>,
    /// A bound ended the wait: past this, what it interrupted and did not confirm is killed.
    bound_grace: Option<Instant>,
    /// The turns sent `turn/interrupt` (thread, turn): each once.
    interrupted: Vec<(String, String)>,
    /// The end of the window the stream holds events in, as its last `may_read` said (see
    /// `stream::COALESCE`); kept here so that a frame locks the queue once.
    release_at: std::cell::Cell<Option<Instant>>,
    /// The turn was sent an output schema: its final message is parsed.
    structured: bool,
    /// The model the thread runs (plan mode's settings name it when the turn gives none).
    thread_model: Option<String>,
    /// An `ask` turn's sandbox: the user's workspace-write settings, read with the thread.
    workspace_write: Option<WorkspaceWrite>,
}

/// The session's own wake-ups.
pub(super) enum Wake {
    /// The event queue has room again: reading goes on.
    Room,
    Steer(Option<Steer>),
    Start(Option<TurnInput>),
    Answer(Option<(u64, AppAnswer)>),
}

impl<'a> Session<'a> {
    pub(super) fn new(
        options: &'a TurnOptions,
        stream: &'a EventStream,
        controls: &'a Controls,
        prelude: &'a Prelude,
    ) -> Self {
        Session {
            options,
            stream,
            controls,
            prelude,
            state: TurnState::new(options.until == Until::Idle),
            completed: None,
            scratch: Vec::new(),
            steers: controls.take_steers(),
            held_steers: Vec::new(),
            sent_steers: Vec::new(),
            start: None,
            given: None,
            answers: if options.app_answers || options.tools.is_some() { controls.take_answers() } else { None },
            asked: HashMap::new(),
            next_key: 1,
            continuation_since: None,
            owned_seen: false,
            idle_deadline: None,
            bound_grace: None,
            interrupted: Vec::new(),
            release_at: std::cell::Cell::new(None),
            structured: false,
            thread_model: None,
            workspace_write: None,
        }
    }

    /// Plays the script to its end: how the turn ended.
    pub(super) async fn run<R: Input, W: Output>(
        &mut self,
        exchange: &mut Exchange<'_, R, W>,
        started: Started<'_>,
    ) -> Ending {
        let stop = match self.script(exchange, started).await {
            Ok(()) => Stop::Done,
            Err(stop) => stop,
        };
        let ending = match stop {
            Stop::Done => self.completed.take().expect("a run is done once its turn completed"),
            Stop::Failed(failure) => Ending::Failed(failure),
            Stop::Eof { .. } => Ending::Eof,
            Stop::Cancelled => Ending::Kill,
        };
        // What the app was still asked is answered (nothing may wait for it), and every item
        // still open is closed for it.
        self.cancel_asked(&mut exchange.wire).await;
        self.update_state(|state, out| state.drop_open(out));
        match &ending {
            // The app can show the outcome now; the terminal follows once the tree is gone. (A
            // user's turn that completed while the run went on had its `turnCompleted` then.)
            Ending::Turn(outcome) if !self.owned_seen => {
                self.stream.push(&HarnessEvent::TurnCompleted((**outcome).clone()))
            }
            _ => {}
        }
        // Events held back for a larger batch must not wait for the end.
        self.stream.release();
        // Steers still waiting, and any later one, are answered "ended" now, not after the tree.
        self.answer_sent_steers(&mut exchange.wire);
        self.controls.end_steering();
        self.steers = None;
        self.held_steers.clear();
        self.sent_steers.clear();
        ending
    }

    /// The ending of a turn the server completed: what its terminal event will say.
    fn completed_ending(&self, turn: CompletedTurn) -> Ending {
        Ending::Turn(Box::new(ending::completed(&self.state, self.structured, &turn)))
    }

    /// Sends `turn/interrupt` to every running turn of the run not sent one yet: at an abort or a
    /// bound, and then to each turn that starts after (a sub-agent whose turn had no id yet, a
    /// continuation Codex was about to start). Its answer changes nothing (`turn/completed`
    /// decides), so it has no deadline of its own; one that could not be written is tried again.
    async fn interrupt_live<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) {
        for (thread_id, turn_id) in self.state.live_turns() {
            if self.interrupted.iter().any(|(t, u)| *t == thread_id && *u == turn_id) {
                continue;
            }
            if let Ok(id) = wire.request(&TurnInterrupt { thread_id: &thread_id, turn_id: &turn_id }, None).await {
                tracing::debug!(id, thread_id = %thread_id, turn_id = %turn_id, "turn/interrupt sent");
                self.interrupted.push((thread_id, turn_id));
            }
        }
    }

    /// A bound of `until: 'idle'` ends the wait: what runs is interrupted as an abort does, and
    /// the run ends once it confirmed (or, past the grace, with it killed) — completed, since the
    /// user's turn was; `cutOff` names what the bound stopped, with `reason`.
    async fn end_wait<R: Input, W: Output>(&mut self, reason: CutReason, wire: &mut Wire<'_, R, W>) {
        tracing::debug!(reason = json!(reason).as_str(), "the idle wait reached its bound");
        self.state.stop_waiting(Stopping::Bound(reason));
        if self.state.working() {
            self.bound_grace = Some(Instant::now() + self.options.interrupt_grace);
            self.interrupt_live(wire).await;
        }
    }

    /// After each notification of the turn: a bound of the wait reached, and what starts once the
    /// run stopped waiting is interrupted.
    async fn after_notification<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) {
        if self.state.is_completed() {
            return;
        }
        if self.state.continuations_spent(self.options.idle.max_continuations) {
            // Rather than wait for the next continuation (another model request), end here.
            self.end_wait(CutReason::MaxContinuations, wire).await;
        }
        if self.state.stopping().is_some() {
            self.interrupt_live(wire).await;
        }
    }

    /// Runs `f` on the state machine and sends out the events it produced.
    fn update_state(&mut self, f: impl FnOnce(&mut TurnState, &mut Vec<HarnessEvent>)) {
        let mut out = std::mem::take(&mut self.scratch);
        let had_turn_id = self.state.turn_id().is_some();
        f(&mut self.state, &mut out);
        if !had_turn_id {
            if let Some(turn_id) = self.state.turn_id() {
                tracing::Span::current().record("turnId", turn_id);
            }
        }
        for event in out.drain(..) {
            self.stream.push(&event);
        }
        self.scratch = out;
    }

    /// Hands each sent steer whose answer came its answer.
    fn answer_sent_steers<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) {
        let mut waiting = Vec::with_capacity(self.sent_steers.len());
        for (id, answer) in std::mem::take(&mut self.sent_steers) {
            match wire.answer(id) {
                Some(result) => {
                    // The server's refusal verbatim; what it accepted needs no more words.
                    let _ = answer.send(result.map(|_| ()));
                }
                None => waiting.push((id, answer)),
            }
        }
        self.sent_steers = waiting;
    }
}

impl Owner for Session<'_> {
    type Wake = Wake;

    async fn wake(&mut self, reading: bool) -> Wake {
        let (stream, steers, start, answers) = (self.stream, &mut self.steers, &mut self.start, &mut self.answers);
        tokio::select! {
            () = stream.room(), if !reading => Wake::Room,
            steer = next(steers), if steers.is_some() => Wake::Steer(steer),
            input = next_start(start), if start.is_some() => Wake::Start(input),
            answer = next(answers), if answers.is_some() => Wake::Answer(answer),
            else => std::future::pending().await,
        }
    }

    async fn on_wake<R: Input, W: Output>(&mut self, wake: Wake, wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
        match wake {
            Wake::Room => {}
            // Held until the turn has an id; `settle` answers it "ended" if the turn completed
            // or was aborted first.
            Wake::Steer(Some(steer)) => self.held_steers.push(steer),
            Wake::Steer(None) => self.steers = None,
            Wake::Start(input) => {
                self.start = None;
                self.given = input;
            }
            Wake::Answer(Some((key, said))) => self.app_answered(key, said, wire).await,
            Wake::Answer(None) => self.answers = None,
        }
        Ok(())
    }

    async fn on_frame<R: Input, W: Output>(&mut self, frame: Frame, wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
        match frame {
            Frame::Stray(line) => self.stream.push(&HarnessEvent::Passthrough(PassthroughEvent {
                reason: PassthroughReason::UnknownResponse,
                message: RawValue::from_string(line).expect("a parsed frame is JSON"),
            })),
            Frame::Request { id, method, line } => self.server_request(id, method, line, wire).await,
            Frame::Notification { method, scope, line } => {
                tracing::trace!(method = %method, "notification");
                self.update_state(|state, out| state.notification(method, *scope, line, out));
                self.after_notification(wire).await;
            }
            Frame::Preamble(line) => self
                .stream
                .push(&HarnessEvent::Diagnostic(DiagnosticEvent { source: DiagnosticSource::Preamble, line })),
        }
        Ok(())
    }

    /// What waits for the app is answered first; then, before the turn id exists, kill at
    /// once; after, interrupt every live turn (the sub-agents' too: an interrupt of the parent
    /// does not stop them, and a sub-agent's turn that starts later is interrupted then) and wait
    /// within the grace until each confirmed. With nothing running (between the user's turn's
    /// end and a goal continuation Codex is about to start) the child is ended at once.
    async fn on_abort<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
        self.cancel_asked(wire).await;
        if self.state.is_completed() {
            return Ok(());
        }
        if self.state.thread_id().is_none() || self.state.turn_id().is_none() {
            return Err(Stop::Cancelled);
        }
        if !self.state.working() {
            // Nothing runs, nothing is due to: nothing to interrupt or wait for.
            return Err(Stop::Cancelled);
        }
        if !wire.can_write() {
            // Nothing can reach the server any more, not even the interrupt.
            return Err(Stop::Cancelled);
        }
        // The grace runs from now, also for the write of the interrupts themselves; the abort's,
        // not a bound's, decides from now on.
        wire.give_grace(Instant::now() + self.options.interrupt_grace);
        self.bound_grace = None;
        self.state.stop_waiting(Stopping::Abort);
        self.interrupt_live(wire).await;
        Ok(())
    }

    fn stopped(&mut self) -> Option<Stop> {
        if self.completed.is_none() {
            let completed = self.state.take_completion()?;
            self.completed = Some(self.completed_ending(completed));
        }
        Some(Stop::Done)
    }

    fn next_deadline(&self) -> Option<Instant> {
        let asked = self.asked.values().map(|a| a.deadline).min();
        let continuation = self.continuation_since.map(|since| since + CONTINUATION_WAIT);
        let release = self.release_at.get();
        let idle = self.idle_deadline.filter(|_| self.state.stopping().is_none());
        asked.into_iter().chain(continuation).chain(release).chain(idle).chain(self.bound_grace).min()
    }

    async fn on_deadline<R: Input, W: Output>(&mut self, now: Instant, wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
        if self.release_at.get().is_some_and(|at| at <= now) {
            // The window is over and no frame came to end it: the consumer gets what waited.
            self.release_at.set(None);
            self.stream.release();
        }
        let mut due: Vec<u64> = self.asked.iter().filter(|(_, a)| a.deadline <= now).map(|(key, _)| *key).collect();
        due.sort_unstable();
        for key in due {
            if let Some(asked) = self.asked.remove(&key) {
                self.time_out(key, asked, wire).await;
            }
        }
        if self.continuation_since.is_some_and(|since| since + CONTINUATION_WAIT <= now) {
            // No continuation came for the active goal: the run ends, naming the goal.
            tracing::debug!("no goal continuation came within {} ms", CONTINUATION_WAIT.as_millis());
            self.continuation_since = None;
            self.state.stop_waiting_for_continuation();
        }
        if self.bound_grace.is_some_and(|grace| grace <= now) {
            // What the bound interrupted did not confirm in time: the run ends now, completed as
            // the user's turn did, and the child is killed with what still runs (named cut off).
            self.bound_grace = None;
            if let Some(completion) = self.state.take_cut() {
                let outcome = ending::completed(&self.state, self.structured, &completion);
                self.completed = Some(Ending::Cut(Box::new(outcome)));
                return Err(Stop::Done);
            }
        }
        if self.idle_deadline.is_some_and(|at| at <= now) && self.state.stopping().is_none() {
            self.idle_deadline = None;
            self.end_wait(CutReason::IdleWaitMs, wire).await;
        }
        Ok(())
    }

    /// Sends the held steers once the turn has an id, and hands each sent one its answer; once
    /// the turn completed, or an abort was asked for, a held one is answered "ended" (dropped)
    /// and nothing is sent. Also notes since when a goal continuation is due, and — the user's
    /// turn completed while the run goes on — sends its `turnCompleted` and starts the idle wait's clock.
    async fn settle<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) {
        if !self.owned_seen {
            if let Some(owned) = self.state.owned() {
                // The run goes on (it did not stop at this completion): the app is told now.
                self.owned_seen = true;
                let outcome = ending::owned_turn(&self.state, self.structured, owned);
                self.stream.push(&HarnessEvent::TurnCompleted(outcome));
                if self.options.until == Until::Idle {
                    self.idle_deadline = Some(Instant::now() + self.options.idle.idle_wait);
                }
            }
        }
        let due = self.state.continuation_due() && self.state.stopping().is_none();
        match (due, self.continuation_since) {
            (true, None) => self.continuation_since = Some(Instant::now()),
            (false, Some(_)) => self.continuation_since = None,
            _ => {}
        }
        if self.held_steers.is_empty() && self.sent_steers.is_empty() {
            return;
        }
        if wire.abort_seen() || self.state.is_completed() {
            self.held_steers.clear();
        }
        if let (Some(thread_id), Some(turn_id)) = (self.state.thread_id(), self.state.turn_id()) {
            let (thread_id, turn_id) = (thread_id.to_string(), turn_id.to_string());
            for steer in std::mem::take(&mut self.held_steers) {
                let items = user_input(&steer.input);
                let request = TurnSteer { thread_id: &thread_id, input: &items, expected_turn_id: &turn_id };
                // Its answer decides nothing of the turn: no deadline, and an error is the
                // caller's refusal, not the turn's failure.
                if let Ok(id) = wire.request(&request, None).await {
                    self.sent_steers.push((id, steer.answer));
                }
            }
        }
        self.answer_sent_steers(wire);
    }

    fn may_read(&self, buffered: bool) -> bool {
        let reading = self.stream.may_read(buffered, std::time::Instant::now());
        self.release_at.set(reading.release_at.map(Instant::from_std));
        reading.room
    }

    fn release(&self) {
        self.stream.release();
    }
}

/// stderr lines read before `started` go out after it (as `diagnostic` events), and every
/// later one at once.
pub(super) fn flush_prelude(prelude: &Prelude, stream: &EventStream) {
    let lines = prelude.lock().unwrap_or_else(|e| e.into_inner()).take();
    for line in lines.into_iter().flatten() {
        stream.push(&HarnessEvent::Diagnostic(DiagnosticEvent { source: DiagnosticSource::Stderr, line }));
    }
}

/// The user's input items as the wire carries them: the protocol's `UserInput`.
fn user_input(items: &[InputItem]) -> Box<RawValue> {
    serde_json::value::to_raw_value(items).expect("input items are JSON")
}

async fn next_start(start: &mut Option<oneshot::Receiver<TurnInput>>) -> Option<TurnInput> {
    match start {
        Some(start) => start.await.ok(),
        None => std::future::pending().await,
    }
}

async fn next<T>(receiver: &mut Option<mpsc::UnboundedReceiver<T>>) -> Option<T> {
    match receiver {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}
