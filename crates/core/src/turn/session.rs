//! The turn's session on the exchange: handshake → login check → thread (started read-only, or
//! resumed) → for a read-only turn the isolation checks → turn (or review) → wait for its end.
//! The session is the exchange's owner: notifications go to the state machine, server requests
//! to the app's handler or the reply policy, an abort answers what waits and becomes
//! `turn/interrupt` of every live turn (sub-agents' included) with its grace, and its own
//! wake-ups are the caller's steers, a prepared turn's input, the app's answers, and room in
//! the event queue.

use super::controls::{AppAnswer, Controls, Readiness, Steer};
use super::ending::{self, Ending};
use super::policy;
use super::state::TurnState;
use crate::account;
use crate::events::{AgentRef, DiagnosticSource, HarnessEvent, PassthroughReason, ReplyKind};
use crate::exchange::{handshake, Exchange, Frame, Input, Output, Owner, Stop, Wire};
use crate::isolation;
use crate::options::{Access, TurnInput, TurnOptions, Until};
use crate::protocol::{
    params_of, ApprovalPolicy, CollaborationMode, CompletedTurn, ConfigRead, ExperimentalFeatureList,
    McpServerStatusList, ModeSettings, ReviewStart, RpcError, SandboxPolicy, ThreadResume, ThreadSandbox, ThreadStart,
    TurnInterrupt, TurnStart, TurnSteer,
};
use crate::stream::EventStream;
use serde::Deserialize;
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

/// What the `started` event says besides the server's own answer.
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
    /// The end of the window the stream holds events in, as its last `may_read` said (see
    /// `stream::COALESCE`); kept here so that a frame locks the queue once.
    release_at: std::cell::Cell<Option<Instant>>,
    /// The turn was sent an output schema: its final message is parsed.
    structured: bool,
    /// The model the thread runs (plan mode's settings name it when the turn gives none).
    thread_model: Option<String>,
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
            answers: if options.app_answers { controls.take_answers() } else { None },
            asked: HashMap::new(),
            next_key: 1,
            continuation_since: None,
            release_at: std::cell::Cell::new(None),
            structured: false,
            thread_model: None,
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
        if let Ending::Turn(outcome) = &ending {
            // The app can show the outcome now; the terminal follows once the tree is gone.
            self.stream.push(&HarnessEvent::TurnCompleted((**outcome).clone()));
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

    async fn script<R: Input, W: Output>(
        &mut self,
        exchange: &mut Exchange<'_, R, W>,
        started: Started<'_>,
    ) -> Result<(), Stop> {
        // Only what a request needs from the experimental surface makes the package ask for it.
        let experimental = self.options.mode.is_some();
        let hello = handshake::handshake(exchange, self, experimental).await?;
        self.stream.push(&HarnessEvent::Started {
            turn_key: started.turn_key.to_string(),
            pid: started.pid,
            codex_path: started.codex_path.to_string(),
            codex_version: hello.codex_version,
            user_agent: hello.user_agent,
        });
        flush_prelude(self.prelude, self.stream);
        self.check_login(exchange).await?;

        let read_only = self.options.access == Access::ReadOnly;
        let (thread_id, configured) = self.open_thread(exchange, read_only).await?;
        if let Some(configured) = configured {
            self.confirm_isolation(exchange, &thread_id, &configured).await.map_err(ending::isolation_doubt)?;
        }
        // Everything up to `turn/start` is done: a prepared turn waits here for its input.
        self.controls.set_readiness(Readiness::Ready { thread_id: thread_id.clone() });
        match (&self.options.review, self.options.turn.as_ref()) {
            (Some(target), _) => self.start_review(exchange, &thread_id, target).await?,
            (None, Some(input)) => self.start_turn(exchange, &thread_id, input).await?,
            (None, None) => {
                self.start = self.controls.take_start();
                let input = exchange.pump_until(self, |session, _| session.given.take()).await?;
                self.start_turn(exchange, &thread_id, &input).await?;
            }
        }
        // The acknowledgement is not a result: the turn ends on `turn/completed` (or a
        // failure), however long it takes — with `until: 'idle'`, once everything it started is idle.
        exchange.pump_until(self, |_, _| None::<()>).await
    }

    /// Before the thread: a turn nobody can authenticate fails now, rather than retrying its
    /// model request for minutes. A server without `account/read` (older Codex) goes on, as
    /// does one that cannot say.
    async fn check_login<R: Input, W: Output>(&mut self, exchange: &mut Exchange<'_, R, W>) -> Result<(), Stop> {
        let options = self.options;
        match handshake::login(exchange, self, &options.target).await? {
            handshake::Login::Report { ready: true, .. } => Ok(()),
            handshake::Login::Report { report, ready: false } => Err(Stop::Failed(account::auth_required(report))),
            handshake::Login::Unknown(error) => {
                tracing::debug!(code = error.code, "account/read not answered: {}", error.message);
                Ok(())
            }
        }
    }

    /// Starts (or resumes) the thread, always read-only: a writable thread sandbox in a git
    /// directory makes the server mark the project trusted in the user's config.toml. Full
    /// access is granted per turn instead (`sandboxPolicy`). For a read-only turn, also the MCP
    /// servers of the effective configuration, each disabled for the thread.
    async fn open_thread<R: Input, W: Output>(
        &mut self,
        exchange: &mut Exchange<'_, R, W>,
        read_only: bool,
    ) -> Result<(String, Option<Vec<String>>), Stop> {
        let opts = self.options;
        let configured = if read_only {
            // Codex merges configuration layers, so an empty table cannot clear the user's
            // servers: each configured one (project layers included) is disabled by name.
            let read = ConfigRead { cwd: &opts.target.thread_cwd };
            let config = exchange.call(self, &read).await.map_err(ending::isolation_doubt)?;
            Some(isolation::configured_servers(&config).map_err(Stop::Failed)?)
        } else {
            None
        };
        let config = configured.as_deref().map(isolation::thread_config);
        let thread = ThreadStart {
            cwd: &opts.target.thread_cwd,
            approval_policy: ApprovalPolicy::Never,
            sandbox: ThreadSandbox::ReadOnly,
            model: opts.model.as_deref(),
            config,
            ephemeral: opts.ephemeral && opts.thread_id.is_none(),
        };
        let (thread, resumed) = match &opts.thread_id {
            Some(thread_id) => (exchange.call(self, &ThreadResume { thread_id, thread }).await?, true),
            None => (exchange.call(self, &thread).await?, false),
        };
        if read_only {
            isolation::check_thread(&thread.sandbox, &thread.approval_policy).map_err(Stop::Failed)?;
        }
        let thread_id = thread.thread.id;
        self.thread_model = thread.thread.model;
        tracing::Span::current().record("threadId", thread_id.as_str());
        self.stream.push(&HarnessEvent::ThreadStarted { thread_id: thread_id.clone(), resumed });
        self.update_state(|state, out| state.set_thread(thread_id.clone(), out));
        Ok((thread_id, configured))
    }

    /// Asks the server, for this thread, whether the isolation holds. The turn starts only
    /// after it confirms.
    async fn confirm_isolation<R: Input, W: Output>(
        &mut self,
        exchange: &mut Exchange<'_, R, W>,
        thread_id: &str,
        requested: &[String],
    ) -> Result<(), Stop> {
        let features = exchange.list_all(self, |cursor| ExperimentalFeatureList { thread_id, cursor }).await?;
        let absent = isolation::check_features(&features).map_err(Stop::Failed)?;
        if !absent.is_empty() {
            tracing::debug!(features = ?absent, "features this Codex does not have");
        }
        let servers = exchange
            .list_all(self, |cursor| McpServerStatusList { thread_id, detail: "toolsAndAuthOnly", cursor })
            .await?;
        isolation::check_servers(&servers, requested).map_err(Stop::Failed)
    }

    async fn start_turn<R: Input, W: Output>(
        &mut self,
        exchange: &mut Exchange<'_, R, W>,
        thread_id: &str,
        input: &TurnInput,
    ) -> Result<(), Stop> {
        let opts = self.options;
        self.structured = input.output_schema.is_some();
        let model = input.model.as_deref().or(opts.model.as_deref());
        let thread_model = self.thread_model.clone();
        let collaboration_mode = opts.mode.map(|mode| CollaborationMode {
            mode: mode.as_str(),
            settings: ModeSettings {
                model: model.or(thread_model.as_deref()).unwrap_or_default(),
                reasoning_effort: None,
                developer_instructions: None,
            },
        });
        let (approval_policy, sandbox_policy) = match opts.access {
            Access::Full => (ApprovalPolicy::Never, SandboxPolicy::DangerFullAccess),
            Access::ReadOnly => (ApprovalPolicy::Never, SandboxPolicy::ReadOnly),
            Access::Ask => (ApprovalPolicy::OnRequest, SandboxPolicy::WorkspaceWrite),
        };
        let turn = TurnStart {
            thread_id,
            input: &input.input,
            cwd: &opts.target.thread_cwd,
            approval_policy,
            sandbox_policy,
            model,
            effort: input.effort.as_deref(),
            output_schema: input.output_schema.as_deref(),
            collaboration_mode,
        };
        self.state.set_turn_requested();
        let ack = exchange.call(self, &turn).await?;
        if let Some(turn_id) = ack.turn.id {
            self.update_state(|state, out| state.set_turn(turn_id, out));
        }
        Ok(())
    }

    /// A review of the thread's changes, inline: a turn of the thread whose items carry the
    /// review's turn id.
    async fn start_review<R: Input, W: Output>(
        &mut self,
        exchange: &mut Exchange<'_, R, W>,
        thread_id: &str,
        target: &RawValue,
    ) -> Result<(), Stop> {
        self.state.set_turn_requested();
        let review = ReviewStart { thread_id, target, delivery: "inline" };
        let ack = exchange.call(self, &review).await?;
        if let Some(turn_id) = ack.turn.id {
            self.update_state(|state, out| state.set_turn(turn_id, out));
        }
        Ok(())
    }

    /// The ending of a turn the server completed: what its terminal event will say.
    fn completed_ending(&self, turn: CompletedTurn) -> Ending {
        Ending::Turn(Box::new(ending::completed(&self.state, self.structured, &turn)))
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

    /// A server request: the app's to answer when it has a handler (within its time), else the
    /// fixed policy's at once.
    async fn server_request<R: Input, W: Output>(
        &mut self,
        id: serde_json::Value,
        method: String,
        line: String,
        wire: &mut Wire<'_, R, W>,
    ) {
        let params = params_of(&line).unwrap_or_else(|| RawValue::from_string("null".into()).expect("null is JSON"));
        let agent = thread_of(&params).and_then(|thread| self.state.agent_of(&thread));
        if self.answers.is_some() && !wire.abort_seen() && !self.state.is_completed() {
            let key = self.next_key;
            self.next_key += 1;
            let request = json!({"key": key, "method": method, "id": id, "params": params, "agent": agent});
            if self.controls.ask_app(request.to_string()) {
                let deadline = Instant::now() + self.options.server_request_timeout;
                tracing::debug!(method = %method, key, "server request handed to the app");
                self.asked.insert(key, Asked { id, method, params, agent, deadline });
                return;
            }
        }
        let answer = policy::answer(&method, self.options.access);
        self.reply(wire, id, method, params, agent, answer, None).await;
    }

    /// Sends `answer` to request `id` and tells the app how it was answered; `why`: a
    /// diagnostic to go with it (an app answer that did not fit).
    #[allow(clippy::too_many_arguments)]
    async fn reply<R: Input, W: Output>(
        &mut self,
        wire: &mut Wire<'_, R, W>,
        id: serde_json::Value,
        method: String,
        params: Box<RawValue>,
        agent: Option<AgentRef>,
        answer: policy::Answer,
        why: Option<String>,
    ) {
        tracing::debug!(method = %method, reply = json!(answer.kind).as_str(), "server request answered");
        wire.reply(&id, answer.reply()).await;
        if let Some(why) = why {
            self.stream.push(&HarnessEvent::Diagnostic { source: DiagnosticSource::Client, line: why });
        }
        self.stream.push(&HarnessEvent::ServerRequest { method, id, params, agent, reply: answer.kind });
    }

    /// The app's word on request `key` (dropped when the request was answered already).
    async fn app_answered<R: Input, W: Output>(&mut self, key: u64, said: AppAnswer, wire: &mut Wire<'_, R, W>) {
        let Some(asked) = self.asked.remove(&key) else {
            tracing::debug!(key, "a late answer of the app dropped");
            return;
        };
        let (answer, why) = match said {
            AppAnswer::Reply(result) => {
                (policy::Answer { kind: ReplyKind::App, result: Some(result), error: None }, None)
            }
            AppAnswer::Pass => (policy::answer(&asked.method, self.options.access), None),
            AppAnswer::Unfit(why) => {
                let answer = policy::answer(&asked.method, self.options.access);
                let sent = json!(answer.kind);
                let why = format!(
                    "the app's answer to {} does not fit its response type ({why}); the fixed policy's reply ({}) was sent instead",
                    asked.method,
                    sent.as_str().unwrap_or_default()
                );
                (answer, Some(why))
            }
        };
        self.reply(wire, asked.id, asked.method, asked.params, asked.agent, answer, why).await;
    }

    /// Every request the app has not answered yet is answered "cancelled" (the turn is ending).
    async fn cancel_asked<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) {
        let mut asked: Vec<_> = self.asked.drain().collect();
        asked.sort_by_key(|(key, _)| *key);
        for (_, asked) in asked {
            let answer = policy::cancelled(&asked.method);
            self.reply(wire, asked.id, asked.method, asked.params, asked.agent, answer, None).await;
        }
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
            Frame::Stray(line) => self.stream.push(&HarnessEvent::Passthrough {
                reason: PassthroughReason::UnknownResponse,
                message: RawValue::from_string(line).expect("a parsed frame is JSON"),
            }),
            Frame::Request { id, method, line } => self.server_request(id, method, line, wire).await,
            Frame::Notification { method, scope, line } => {
                tracing::trace!(method = %method, "notification");
                self.update_state(|state, out| state.notification(method, *scope, line, out));
            }
            Frame::Preamble(line) => {
                self.stream.push(&HarnessEvent::Diagnostic { source: DiagnosticSource::Preamble, line })
            }
        }
        Ok(())
    }

    /// What waits for the app is answered first; then, before the turn id exists, kill at
    /// once; after, interrupt every live turn (the sub-agents' too: an interrupt of the parent
    /// does not stop them) and wait for the grace.
    async fn on_abort<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
        self.cancel_asked(wire).await;
        if self.state.is_completed() {
            return Ok(());
        }
        if self.state.thread_id().is_none() || self.state.turn_id().is_none() {
            return Err(Stop::Cancelled);
        }
        let live = self.state.live_turns();
        if live.is_empty() {
            // Nothing runs (the turn completed, and with it everything it started): nothing to wait for.
            return Err(Stop::Cancelled);
        }
        if !wire.can_write() {
            // Nothing can reach the server any more, not even the interrupt.
            return Err(Stop::Cancelled);
        }
        // The grace runs from now, also for the write of the interrupts themselves.
        wire.give_grace(Instant::now() + self.options.interrupt_grace);
        for (thread_id, turn_id) in &live {
            // Its answer changes nothing (`turn/completed` decides), so it has no deadline of its own.
            if let Ok(id) = wire.request(&TurnInterrupt { thread_id, turn_id }, None).await {
                tracing::debug!(id, "abort: turn/interrupt sent");
            }
        }
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
        asked.into_iter().chain(continuation).chain(release).min()
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
                let mut answer = policy::answer(&asked.method, self.options.access);
                answer.kind = ReplyKind::TimedOut;
                self.reply(wire, asked.id, asked.method, asked.params, asked.agent, answer, None).await;
            }
        }
        if self.continuation_since.is_some_and(|since| since + CONTINUATION_WAIT <= now) {
            // No continuation came for the active goal: the run ends, naming the goal.
            tracing::debug!("no goal continuation came within {} ms", CONTINUATION_WAIT.as_millis());
            self.continuation_since = None;
            self.state.stop_waiting_for_continuation();
        }
        Ok(())
    }

    /// Sends the held steers once the turn has an id, and hands each sent one its answer; once
    /// the turn completed, or an abort was asked for, a held one is answered "ended" (dropped)
    /// and nothing is sent. Also notes since when a goal continuation is due.
    async fn settle<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) {
        match (self.state.continuation_due(), self.continuation_since) {
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
                let request = TurnSteer { thread_id: &thread_id, input: &steer.input, expected_turn_id: &turn_id };
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
        stream.push(&HarnessEvent::Diagnostic { source: DiagnosticSource::Stderr, line });
    }
}

/// The thread a server request is about (`params.threadId`, or a legacy request's `conversationId`).
fn thread_of(params: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Scope {
        #[serde(default)]
        thread_id: Option<String>,
        #[serde(default)]
        conversation_id: Option<String>,
    }
    serde_json::from_str::<Scope>(params.get()).ok().and_then(|s| s.thread_id.or(s.conversation_id))
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
