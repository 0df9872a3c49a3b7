//! The turn's session on the exchange: handshake → login check → thread (started read-only, or
//! resumed) → for a read-only turn the isolation checks → turn → wait for `turn/completed`.
//! The session is the exchange's owner: notifications go to the state machine, server requests
//! to the reply policy, an abort becomes `turn/interrupt` and its grace, and its own wake-ups
//! are the caller's steers, a prepared turn's input, and room in the event queue.

use super::controls::{Controls, Readiness, Steer};
use super::ending::{self, Ending};
use super::policy;
use super::state::TurnState;
use crate::account;
use crate::events::{DiagnosticSource, HarnessEvent, PassthroughReason};
use crate::exchange::{handshake, Exchange, Frame, Input, Output, Owner, Stop, Wire};
use crate::isolation;
use crate::options::{Access, TurnInput, TurnOptions};
use crate::protocol::{
    ApprovalPolicy, CompletedTurn, ConfigRead, ExperimentalFeatureList, McpServerStatusList, RpcError, SandboxPolicy,
    ThreadResume, ThreadSandbox, ThreadStart, TurnInterrupt, TurnStart, TurnSteer,
};
use crate::stream::EventStream;
use serde_json::json;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// What the `started` event says besides the server's own answer.
pub(super) struct Started<'a> {
    pub turn_key: &'a str,
    pub pid: u32,
    pub codex_path: &'a str,
}

/// The turn, as the owner of its exchange.
pub(super) struct Session<'a> {
    options: &'a TurnOptions,
    stream: &'a EventStream,
    controls: &'a Controls,
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
    /// The turn was sent an output schema: its final message is parsed.
    structured: bool,
}

/// The session's own wake-ups.
pub(super) enum Wake {
    /// The event queue has room again: reading goes on.
    Room,
    Steer(Option<Steer>),
    Start(Option<TurnInput>),
}

impl<'a> Session<'a> {
    pub(super) fn new(options: &'a TurnOptions, stream: &'a EventStream, controls: &'a Controls) -> Self {
        Session {
            options,
            stream,
            controls,
            state: TurnState::default(),
            completed: None,
            scratch: Vec::new(),
            steers: controls.take_steers(),
            held_steers: Vec::new(),
            sent_steers: Vec::new(),
            start: None,
            given: None,
            structured: false,
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
        let hello = handshake::handshake(exchange, self, false).await?;
        self.stream.push(&HarnessEvent::Started {
            turn_key: started.turn_key.to_string(),
            pid: started.pid,
            codex_path: started.codex_path.to_string(),
            codex_version: hello.codex_version,
            user_agent: hello.user_agent,
        });
        self.check_login(exchange).await?;

        let read_only = self.options.access == Access::ReadOnly;
        let (thread_id, configured) = self.open_thread(exchange, read_only).await?;
        if let Some(configured) = configured {
            self.confirm_isolation(exchange, &thread_id, &configured).await.map_err(ending::isolation_doubt)?;
        }
        // Everything up to `turn/start` is done: a prepared turn waits here for its input.
        self.controls.set_readiness(Readiness::Ready { thread_id: thread_id.clone() });
        match self.options.turn.as_ref() {
            Some(input) => self.start_turn(exchange, &thread_id, input).await?,
            None => {
                self.start = self.controls.take_start();
                let input = exchange.pump_until(self, |session, _| session.given.take()).await?;
                self.start_turn(exchange, &thread_id, &input).await?;
            }
        }
        // The acknowledgement is not a result: the turn ends on `turn/completed` (or a
        // failure), however long it takes.
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
        };
        let (thread, resumed) = match &opts.thread_id {
            Some(thread_id) => (exchange.call(self, &ThreadResume { thread_id, thread }).await?, true),
            None => (exchange.call(self, &thread).await?, false),
        };
        if read_only {
            isolation::check_thread(&thread.sandbox, &thread.approval_policy).map_err(Stop::Failed)?;
        }
        let thread_id = thread.thread.id;
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
        let turn = TurnStart {
            thread_id,
            input: &input.input,
            cwd: &opts.target.thread_cwd,
            approval_policy: ApprovalPolicy::Never,
            sandbox_policy: match opts.access {
                Access::Full => SandboxPolicy::DangerFullAccess,
                Access::ReadOnly => SandboxPolicy::ReadOnly,
            },
            model: opts.model.as_deref(),
            effort: input.effort.as_deref(),
            output_schema: input.output_schema.as_deref(),
        };
        self.state.set_turn_requested();
        let ack = exchange.call(self, &turn).await?;
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
}

impl Owner for Session<'_> {
    type Wake = Wake;

    async fn wake(&mut self, reading: bool) -> Wake {
        let (stream, steers, start) = (self.stream, &mut self.steers, &mut self.start);
        tokio::select! {
            () = stream.room(), if !reading => Wake::Room,
            steer = next(steers), if steers.is_some() => Wake::Steer(steer),
            input = next_start(start), if start.is_some() => Wake::Start(input),
            else => std::future::pending().await,
        }
    }

    async fn on_wake<R: Input, W: Output>(&mut self, wake: Wake, _wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
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
        }
        Ok(())
    }

    async fn on_frame<R: Input, W: Output>(&mut self, frame: Frame, wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
        match frame {
            Frame::Stray(line) => self.stream.push(&HarnessEvent::Passthrough {
                reason: PassthroughReason::UnknownResponse,
                message: RawValue::from_string(line).expect("a parsed frame is JSON"),
            }),
            Frame::Request { id, method, .. } => {
                let answer = policy::answer(&method, self.options.access);
                tracing::debug!(method = %method, reply = json!(answer.kind).as_str(), "server request answered");
                let reply = match (&answer.result, &answer.error) {
                    (_, Some(error)) => Err(error),
                    (Some(result), None) => Ok(result),
                    (None, None) => unreachable!("an answer has a result or an error"),
                };
                wire.reply(&id, reply).await;
                self.stream.push(&HarnessEvent::ServerRequest { method, id, reply: answer.kind });
            }
            Frame::Notification { method, scope, line } => {
                tracing::trace!(method = %method, "notification");
                self.update_state(|state, out| state.notification(method, scope, line, out));
            }
            Frame::Preamble(line) => {
                self.stream.push(&HarnessEvent::Diagnostic { source: DiagnosticSource::Preamble, line })
            }
        }
        Ok(())
    }

    /// Before the turn id exists, kill at once; after, interrupt and wait for the grace.
    async fn on_abort<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) -> Result<(), Stop> {
        if self.state.is_completed() {
            return Ok(());
        }
        let (Some(thread_id), Some(turn_id)) = (self.state.thread_id(), self.state.turn_id()) else {
            return Err(Stop::Cancelled);
        };
        if !wire.can_write() {
            // Nothing can reach the server any more, not even the interrupt.
            return Err(Stop::Cancelled);
        }
        // The grace runs from now, also for the write of the interrupt itself.
        wire.give_grace(Instant::now() + self.options.interrupt_grace);
        // Its answer changes nothing (`turn/completed` decides), so it has no deadline of its own.
        if let Ok(id) = wire.request(&TurnInterrupt { thread_id, turn_id }, None).await {
            tracing::debug!(id, "abort: turn/interrupt sent");
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

    /// Sends the held steers once the turn has an id, and hands each sent one its answer; once
    /// the turn completed, or an abort was asked for, a held one is answered "ended" (dropped)
    /// and nothing is sent.
    async fn settle<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) {
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
        self.stream.may_read(buffered)
    }

    fn release(&self) {
        self.stream.release();
    }
}

async fn next_start(start: &mut Option<oneshot::Receiver<TurnInput>>) -> Option<TurnInput> {
    match start {
        Some(start) => start.await.ok(),
        None => std::future::pending().await,
    }
}

async fn next(steers: &mut Option<mpsc::UnboundedReceiver<Steer>>) -> Option<Steer> {
    match steers {
        Some(steers) => steers.recv().await,
        None => std::future::pending().await,
    }
}
