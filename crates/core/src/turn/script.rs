//! The turn's script: initialize → thread (started read-only, or resumed) → for a read-only turn
//! the isolation checks → turn → wait for `turn/completed`. Underneath, one frame loop routes
//! what the server sends (notifications to the state machine, requests to the reply policy),
//! keeps the request deadlines, pauses reading while the consumer lags, and turns an abort into
//! `turn/interrupt` and its grace.

use super::ending::{self, Ending};
use super::policy;
use super::state::TurnState;
use crate::account;
use crate::control::{Caller, Control, Readiness, Steer};
use crate::discovery::env::{Env, Os};
use crate::events::{DiagnosticSource, HarnessEvent, PassthroughReason};
use crate::isolation;
use crate::options::{Access, TurnInput, TurnOptions};
use crate::protocol::{
    method, AccountRead, ApprovalPolicy, CompletedTurn, ConfigRead, ExperimentalFeatureList, Initialize,
    McpServerStatusList, Page, Reply, Request, RpcError, SandboxPolicy, ServerCall, ThreadResume, ThreadSandbox,
    ThreadStart, TurnInterrupt, TurnStart, TurnSteer,
};
use crate::rpc::{Connection, Received};
use crate::stream::EventStream;
use crate::transport::FrameError;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Pages read of a paginated list before the answer counts as endless.
const MAX_PAGES: usize = 100;

/// What the `started` event says besides the server's own answer.
pub(super) struct Started<'a> {
    pub turn_key: &'a str,
    pub pid: u32,
    pub codex_path: &'a str,
}

pub(super) struct Session<'a, R, W> {
    conn: Connection<R, W>,
    options: &'a TurnOptions,
    stream: &'a EventStream,
    control: &'a Control,
    started: Started<'a>,
    pub(super) state: TurnState,
    pub(super) abort_seen: bool,
    interrupt_deadline: Option<Instant>,
    /// The one timer of the frame loop, set to the nearest deadline; moved only when that
    /// changes, since arming a timer for every frame would cost more than the frame.
    timer: Timer,
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

/// What woke the frame loop. Reads are nearly every wake.
#[allow(clippy::large_enum_variant)]
enum Wake {
    Kill,
    Abort,
    Deadline,
    Room,
    Steer(Option<Steer>),
    Start(Option<TurnInput>),
    Read(Result<Received, FrameError>),
}

impl<'a, R, W> Session<'a, R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    pub(super) fn new(
        conn: Connection<R, W>,
        options: &'a TurnOptions,
        caller: Caller<'a>,
        started: Started<'a>,
    ) -> Self {
        Session {
            conn,
            options,
            stream: caller.events,
            control: caller.control,
            started,
            state: TurnState::default(),
            abort_seen: false,
            interrupt_deadline: None,
            timer: Timer::new(),
            scratch: Vec::new(),
            steers: caller.control.take_steers(),
            held_steers: Vec::new(),
            sent_steers: Vec::new(),
            start: None,
            given: None,
            structured: false,
        }
    }

    /// Plays the script to its end: how the turn ended.
    pub(super) async fn run(&mut self) -> Ending {
        let ending = match self.script().await {
            Ok(ending) | Err(ending) => ending,
        };
        if let Ending::Turn(outcome) = &ending {
            // The app can show the outcome now; the terminal follows once the tree is gone.
            self.stream.push(&HarnessEvent::TurnCompleted((**outcome).clone()));
        }
        // Events held back for a larger batch must not wait for the end.
        self.stream.release();
        // Steers still waiting, and any later one, are answered "ended" now, not after the tree.
        self.answer_sent_steers();
        self.control.end_steering();
        self.steers = None;
        self.held_steers.clear();
        self.sent_steers.clear();
        ending
    }

    async fn script(&mut self) -> Result<Ending, Ending> {
        let init = self.call(&Initialize::ours()).await?;
        self.stream.push(&HarnessEvent::Started {
            turn_key: self.started.turn_key.to_string(),
            pid: self.started.pid,
            codex_path: self.started.codex_path.to_string(),
            codex_version: crate::protocol::version_from_user_agent(&init.user_agent),
            user_agent: init.user_agent,
        });
        let _ = self.conn.notify(method::INITIALIZED, self.give_way(None)).await;
        self.check_login().await?;

        let read_only = self.options.access == Access::ReadOnly;
        let (thread_id, configured) = self.open_thread(read_only).await?;
        if let Some(configured) = configured {
            self.confirm_isolation(&thread_id, &configured).await.map_err(ending::isolation_doubt)?;
        }
        // Everything up to `turn/start` is done: a prepared turn waits here for its input.
        self.control.set_readiness(Readiness::Ready { thread_id: thread_id.clone() });
        match self.options.turn.as_ref() {
            Some(input) => self.start_turn(&thread_id, input).await?,
            None => {
                let input = self.wait_for_start().await?;
                self.start_turn(&thread_id, &input).await?;
            }
        }
        // The acknowledgement is not a result: the turn ends on `turn/completed` (or a
        // failure), however long it takes.
        let completed = self.pump_until(|session| session.state.take_completion()).await?;
        Ok(self.completed(completed))
    }

    /// The ending of a turn the server completed: what its terminal event will say.
    fn completed(&self, turn: CompletedTurn) -> Ending {
        Ending::Turn(Box::new(ending::completed(&self.state, self.structured, &turn)))
    }

    /// Starts (or resumes) the thread, always read-only: a writable thread sandbox in a git
    /// directory makes the server mark the project trusted in the user's config.toml. Full
    /// access is granted per turn instead (`sandboxPolicy`). For a read-only turn, also the MCP
    /// servers of the effective configuration, each disabled for the thread.
    async fn open_thread(&mut self, read_only: bool) -> Result<(String, Option<Vec<String>>), Ending> {
        let opts = self.options;
        let configured = if read_only {
            // Codex merges configuration layers, so an empty table cannot clear the user's
            // servers: each configured one (project layers included) is disabled by name.
            let config =
                self.call(&ConfigRead { cwd: &opts.target.thread_cwd }).await.map_err(ending::isolation_doubt)?;
            Some(isolation::configured_servers(&config).map_err(Ending::Failed)?)
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
            Some(thread_id) => (self.call(&ThreadResume { thread_id, thread }).await?, true),
            None => (self.call(&thread).await?, false),
        };
        if read_only {
            isolation::check_thread(&thread.sandbox, &thread.approval_policy).map_err(Ending::Failed)?;
        }
        let thread_id = thread.thread.id;
        tracing::Span::current().record("threadId", thread_id.as_str());
        self.stream.push(&HarnessEvent::ThreadStarted { thread_id: thread_id.clone(), resumed });
        self.update_state(|state, out| state.set_thread(thread_id.clone(), out));
        Ok((thread_id, configured))
    }

    /// Asks the server, for this thread, whether the isolation holds. The turn starts only
    /// after it confirms.
    async fn confirm_isolation(&mut self, thread_id: &str, requested: &[String]) -> Result<(), Ending> {
        let features = self.list_all(|cursor| ExperimentalFeatureList { thread_id, cursor }).await?;
        let absent = isolation::check_features(&features).map_err(Ending::Failed)?;
        if !absent.is_empty() {
            tracing::debug!(features = ?absent, "features this Codex does not have");
        }
        let servers =
            self.list_all(|cursor| McpServerStatusList { thread_id, detail: "toolsAndAuthOnly", cursor }).await?;
        isolation::check_servers(&servers, requested).map_err(Ending::Failed)
    }

    /// Every entry of a paginated list, `page` being the request for the page at a cursor.
    async fn list_all<Q: Request<Result = Page>>(
        &mut self,
        page: impl Fn(Option<String>) -> Q,
    ) -> Result<Vec<Value>, Ending> {
        let mut entries = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let result = self.call(&page(cursor)).await?;
            entries.extend(result.data);
            match result.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(entries),
            }
        }
        Err(Ending::Failed(isolation::not_confirmed(
            format!("{} did not end after {MAX_PAGES} pages", Q::METHOD),
            Value::Null,
        )))
    }

    /// The prepared turn's input, once `start` gave it; meanwhile the thread's own
    /// notifications and requests are handled as in a turn.
    async fn wait_for_start(&mut self) -> Result<TurnInput, Ending> {
        self.start = self.control.take_start();
        self.pump_until(|session| session.given.take()).await
    }

    async fn start_turn(&mut self, thread_id: &str, input: &TurnInput) -> Result<(), Ending> {
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
        let ack = self.call(&turn).await?;
        if let Some(turn_id) = ack.turn.id {
            self.update_state(|state, out| state.set_turn(turn_id, out));
        }
        Ok(())
    }

    /// Before the thread: a turn nobody can authenticate fails now, rather than retrying its
    /// model request for minutes. A server without `account/read` (older Codex) goes on, as
    /// does one that cannot say.
    async fn check_login(&mut self) -> Result<(), Ending> {
        let report = match self.ask(&AccountRead {}).await? {
            Ok(report) => report,
            Err(error) => {
                tracing::debug!(code = error.code, "account/read not answered: {}", error.message);
                return Ok(());
            }
        };
        let target = &self.options.target;
        let child_env = match target.locus {
            None => Env::from_process(&target.env, Os::current()),
            // Inside WSL only what `env` gives crosses into the distribution.
            Some(_) => Env::from_pairs(target.env.clone(), Os::Unix),
        };
        if account::login_missing(&report, &child_env) {
            return Err(Ending::Failed(account::auth_required(report)));
        }
        Ok(())
    }

    /// Sends a request and processes frames until its answer came, as its result type.
    async fn call<Q: Request>(&mut self, request: &Q) -> Result<Q::Result, Ending> {
        self.ask(request).await?.map_err(|error| Ending::Failed(ending::rpc_failure(Q::METHOD, error)))
    }

    /// [`Session::call`], with the server's error answer as a value rather than the run's end.
    async fn ask<Q: Request>(&mut self, request: &Q) -> Result<Result<Q::Result, RpcError>, Ending> {
        let deadline = Instant::now() + self.options.request_timeout;
        // A request that did not reach the server gets no answer: its deadline (also while a
        // server that reads nothing holds up the write), an abort or the server's end decides.
        let id = self.conn.request(request, Some(deadline), self.give_way(Some(deadline))).await.ok();
        match self.pump_until(|session| id.and_then(|id| session.conn.answer(id))).await? {
            Ok(raw) => ending::parse_result(Q::METHOD, &raw).map(Ok),
            Err(error) => Ok(Err(error)),
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

    /// Processes frames until `done` has something or the run must end.
    async fn pump_until<T>(&mut self, mut done: impl FnMut(&mut Self) -> Option<T>) -> Result<T, Ending> {
        let outcome = loop {
            if let Some(value) = done(self) {
                break Ok(value);
            }
            if let Some(completed) = self.state.take_completion() {
                break Err(self.completed(completed));
            }
            if !(self.held_steers.is_empty() && self.sent_steers.is_empty()) {
                self.settle_steers().await;
            }
            let room = self.stream.may_read(self.conn.has_buffered_line());
            self.timer.set([self.conn.next_deadline(), self.interrupt_deadline].into_iter().flatten().min());
            let wake = tokio::select! {
                biased;
                _ = self.control.killed() => Wake::Kill,
                _ = self.control.aborted(), if !self.abort_seen => Wake::Abort,
                _ = self.timer.fired() => Wake::Deadline,
                _ = self.stream.room(), if !room => Wake::Room,
                steer = next_steer(&mut self.steers), if self.steers.is_some() => Wake::Steer(steer),
                input = next_start(&mut self.start), if self.start.is_some() => Wake::Start(input),
                received = self.conn.receive(), if room => Wake::Read(received),
            };
            match wake {
                Wake::Kill => break Err(Ending::Kill),
                Wake::Abort => {
                    self.abort_seen = true;
                    if let Err(ending) = self.on_abort().await {
                        break Err(ending);
                    }
                }
                Wake::Deadline => {
                    let now = Instant::now();
                    if self.interrupt_deadline.is_some_and(|d| d <= now) {
                        break Err(Ending::Kill);
                    }
                    if let Some(method) = self.conn.overdue(now) {
                        break Err(Ending::Failed(ending::request_timeout(method, self.options.request_timeout)));
                    }
                }
                Wake::Room => {}
                // Held until the turn has an id; `settle_steers` answers it "ended" if the turn
                // completed or was aborted first.
                Wake::Steer(Some(steer)) => self.held_steers.push(steer),
                Wake::Steer(None) => self.steers = None,
                Wake::Start(input) => {
                    self.start = None;
                    self.given = input;
                }
                Wake::Read(Ok(received)) => {
                    if let Some(ending) = self.on_received(received).await {
                        break Err(ending);
                    }
                }
                Wake::Read(Err(e)) => break Err(Ending::Failed(e.into())),
            }
        };
        // Events held back for a larger batch must not wait for the next read (or the end).
        self.stream.release();
        outcome
    }

    /// Sends the held steers once the turn has an id, and hands each sent one its answer; once
    /// the turn completed, or an abort was asked for, a held one is answered "ended" (dropped)
    /// and nothing is sent.
    async fn settle_steers(&mut self) {
        if self.abort_seen || self.state.is_completed() {
            self.held_steers.clear();
        }
        if let (Some(thread_id), Some(turn_id)) = (self.state.thread_id(), self.state.turn_id()) {
            let (thread_id, turn_id) = (thread_id.to_string(), turn_id.to_string());
            for steer in std::mem::take(&mut self.held_steers) {
                let request = TurnSteer { thread_id: &thread_id, input: &steer.input, expected_turn_id: &turn_id };
                // Its answer decides nothing of the turn: no deadline, and an error is the
                // caller's refusal, not the turn's failure.
                if let Ok(id) = self.conn.request(&request, None, self.give_way(None)).await {
                    self.sent_steers.push((id, steer.answer));
                }
            }
        }
        self.answer_sent_steers();
    }

    /// Hands each sent steer whose answer came its answer.
    fn answer_sent_steers(&mut self) {
        let mut waiting = Vec::with_capacity(self.sent_steers.len());
        for (id, answer) in std::mem::take(&mut self.sent_steers) {
            match self.conn.answer(id) {
                Some(result) => {
                    // The server's refusal verbatim; what it accepted needs no more words.
                    let _ = answer.send(result.map(|_| ()));
                }
                None => waiting.push((id, answer)),
            }
        }
        self.sent_steers = waiting;
    }

    /// Abort: before the turn id exists, kill at once; after, interrupt and wait for the grace.
    async fn on_abort(&mut self) -> Result<(), Ending> {
        if self.state.is_completed() {
            return Ok(());
        }
        let (Some(thread_id), Some(turn_id)) = (self.state.thread_id(), self.state.turn_id()) else {
            return Err(Ending::Kill);
        };
        if !self.conn.can_write() {
            // Nothing can reach the server any more, not even the interrupt.
            return Err(Ending::Kill);
        }
        let interrupt = TurnInterrupt { thread_id, turn_id };
        // The grace runs from now, also for the write of the interrupt itself.
        let deadline = Instant::now() + self.options.interrupt_grace;
        self.interrupt_deadline = Some(deadline);
        // Its answer changes nothing (`turn/completed` decides), so it has no deadline of its own.
        if let Ok(id) = self.conn.request(&interrupt, None, self.give_way(None)).await {
            tracing::debug!(id, "abort: turn/interrupt sent");
        }
        Ok(())
    }

    async fn on_received(&mut self, received: Received) -> Option<Ending> {
        match received {
            Received::Answer { .. } => {}
            Received::Stray(line) => self.stream.push(&HarnessEvent::Passthrough {
                reason: PassthroughReason::UnknownResponse,
                message: RawValue::from_string(line).expect("a parsed frame is JSON"),
            }),
            Received::Call { call: ServerCall::Request { id, method }, .. } => {
                let answer = policy::answer(&method, self.options.access);
                tracing::debug!(method = %method, reply = json!(answer.kind).as_str(), "server request answered");
                let reply = Reply { id: &id, result: answer.result.as_ref(), error: answer.error.as_ref() };
                let _ = self.conn.reply(&reply, self.give_way(None)).await;
                self.stream.push(&HarnessEvent::ServerRequest { method, id, reply: answer.kind });
            }
            Received::Call { call: ServerCall::Notification { method, scope }, line } => {
                tracing::trace!(method = %method, "notification");
                self.update_state(|state, out| state.notification(method, scope, line, out));
            }
            Received::Preamble(line) => {
                self.stream.push(&HarnessEvent::Diagnostic { source: DiagnosticSource::Preamble, line })
            }
            Received::Eof => return Some(Ending::Eof),
        }
        None
    }

    /// Closes the server's stdin.
    pub(super) async fn close(&mut self) {
        self.conn.close().await;
    }

    /// What a write to the server gives way to: an abort not yet handled, a kill, the end of
    /// the interrupt's grace, and `deadline` (the request's own).
    fn give_way(&self, deadline: Option<Instant>) -> impl std::future::Future<Output = ()> + 'a {
        let (control, abort_seen) = (self.control, self.abort_seen);
        let until = self.interrupt_deadline.into_iter().chain(deadline).min();
        async move {
            tokio::select! {
                _ = control.aborted(), if !abort_seen => {}
                _ = control.killed() => {}
                _ = sleep_until(until) => {}
            }
        }
    }
}

async fn next_start(start: &mut Option<oneshot::Receiver<TurnInput>>) -> Option<TurnInput> {
    match start {
        Some(start) => start.await.ok(),
        None => std::future::pending().await,
    }
}

async fn next_steer(steers: &mut Option<mpsc::UnboundedReceiver<Steer>>) -> Option<Steer> {
    match steers {
        Some(steers) => steers.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

struct Timer {
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
    at: Option<Instant>,
}

impl Timer {
    fn new() -> Timer {
        Timer { sleep: Box::pin(tokio::time::sleep_until(Instant::now())), at: None }
    }

    fn set(&mut self, at: Option<Instant>) {
        if at != self.at {
            if let Some(at) = at {
                self.sleep.as_mut().reset(at);
            }
            self.at = at;
        }
    }

    async fn fired(&mut self) {
        match self.at {
            Some(_) => self.sleep.as_mut().await,
            None => std::future::pending().await,
        }
    }
}
