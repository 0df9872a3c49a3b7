//! The turn runner: handshake → thread → turn → terminal, over any connection.
//!
//! `drive` is generic over the byte streams and the process, so the same runner is driven by
//! a scripted peer in `cargo test` and by the real `codex app-server` child in production.

mod launch;
pub mod policy;
pub mod state;

use crate::events::{Cancellation, DiagnosticSource, HarnessEvent, Status, Terminal};
use crate::failure::{Code, Failure, FailureSource};
use crate::isolation;
use crate::options::{Access, TurnOptions};
use crate::process::{self, End, ServerProcess, SpawnError, Spec};
use crate::protocol::{
    method, CompletedTurn, InitializeResult, Incoming, Outgoing, Reply, RpcError, ThreadResult,
    TurnStartResult,
};
use crate::stream::EventStream;
use crate::transport::{Frame, FrameError, FrameReader, FrameWriter, ReadItem};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use state::TurnState;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

/// `clientInfo.name`: Codex sends it to the model provider as the `originator` header.
pub const CLIENT_NAME: &str = "rennet";
pub const CLIENT_VERSION: &str = env!("CARGO_PKG_VERSION");
/// stderr lines forwarded as `diagnostic` events; later lines only reach the tail and logs.
pub const MAX_STDERR_EVENTS: usize = 200;
/// After stdout closes, how long the process may take to report its exit.
const EOF_EXIT_WAIT: Duration = Duration::from_millis(500);

/// Why the run stopped; turned into the terminal frame after the child is gone.
enum Ending {
    Turn(Box<CompletedTurn>),
    Failed(Failure),
    /// The server closed stdout.
    Eof,
    /// Abort before the turn existed, or an interrupt that was not honoured in time.
    Kill,
}

// Reads are nearly every wake (see `ReadItem`).
#[allow(clippy::large_enum_variant)]
enum Wake {
    Abort,
    Kill,
    Deadline,
    Room,
    Read(Result<ReadItem, FrameError>),
}

struct Session<'a, R, W, P> {
    reader: FrameReader<R>,
    writer: Option<FrameWriter<W>>,
    process: P,
    options: &'a TurnOptions,
    codex_path: &'a str,
    stream: &'a EventStream,
    state: TurnState,
    next_id: i64,
    /// Requests sent and not yet answered: id → method.
    pending: HashMap<i64, &'static str>,
    responses: HashMap<i64, Result<Box<RawValue>, RpcError>>,
    abort_seen: bool,
    interrupt_deadline: Option<Instant>,
    /// The one timer of the frame loop, set to the nearest deadline; moved only when that
    /// changes, since arming a timer for every frame would cost more than the frame.
    timer: Timer,
    scratch: Vec<HarnessEvent>,
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

/// Runs one turn over an established connection and ends the process. Returns the terminal
/// frame; the caller queues it.
pub async fn drive<R, W, P>(
    reader: R,
    writer: W,
    process: P,
    options: &TurnOptions,
    codex_path: &str,
    stream: &EventStream,
) -> Terminal
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: ServerProcess,
{
    let mut session = Session {
        reader: FrameReader::new(reader),
        writer: Some(FrameWriter::new(writer)),
        process,
        options,
        codex_path,
        stream,
        state: TurnState::default(),
        next_id: 1,
        pending: HashMap::new(),
        responses: HashMap::new(),
        abort_seen: false,
        interrupt_deadline: None,
        timer: Timer::new(),
        scratch: Vec::new(),
    };
    let ending = match session.run().await {
        Ok(never) => match never {},
        Err(ending) => ending,
    };
    session.finish(ending).await
}

enum Never {}

impl<R, W, P> Session<'_, R, W, P>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: ServerProcess,
{
    async fn run(&mut self) -> Result<Never, Ending> {
        let init = self
            .request(
                method::INITIALIZE,
                json!({"clientInfo": {"name": CLIENT_NAME, "title": null, "version": CLIENT_VERSION}}),
            )
            .await?;
        let init: InitializeResult = parse_result(method::INITIALIZE, &init)?;
        self.stream.push(&HarnessEvent::Started {
            pid: self.process.pid(),
            codex_path: self.codex_path.to_string(),
            codex_version: crate::protocol::version_from_user_agent(&init.user_agent),
            user_agent: init.user_agent,
        });
        self.notify(method::INITIALIZED).await;

        let opts = self.options;
        // The thread is always started read-only: a writable thread sandbox in a git
        // directory makes the server mark the project trusted in the user's config.toml.
        // Full access is granted per turn instead (`sandboxPolicy`).
        let mut thread_params = json!({
            "cwd": opts.thread_cwd,
            "approvalPolicy": "never",
            "sandbox": "read-only",
        });
        if let Some(model) = &opts.model {
            thread_params["model"] = json!(model);
        }
        let read_only = opts.access == Access::ReadOnly;
        let requested: Vec<String> = opts.mcp.as_ref().map(|p| p.servers.keys().cloned().collect()).unwrap_or_default();
        if read_only {
            // Codex merges configuration layers, so an empty table cannot clear the user's
            // servers: each configured one (project layers included) is disabled by name.
            let config = self
                .request("config/read", json!({"cwd": opts.thread_cwd}))
                .await
                .map_err(isolation_doubt)?;
            let config: Value = parse_result("config/read", &config).map_err(isolation_doubt)?;
            let configured = isolation::configured_servers(&config).map_err(Ending::Failed)?;
            thread_params["config"] = isolation::thread_config(&configured, &requested);
        }
        let (thread_method, resumed) = match &opts.thread_id {
            Some(id) => {
                thread_params["threadId"] = json!(id);
                (method::THREAD_RESUME, true)
            }
            None => (method::THREAD_START, false),
        };
        let thread = self.request(thread_method, thread_params).await?;
        if read_only {
            let report: Value = parse_result(thread_method, &thread)?;
            isolation::check_thread(&report).map_err(Ending::Failed)?;
        }
        let thread: ThreadResult = parse_result(thread_method, &thread)?;
        self.stream.push(&HarnessEvent::ThreadStarted { thread_id: thread.thread.id.clone(), resumed });
        let mut out = std::mem::take(&mut self.scratch);
        self.state.set_thread(thread.thread.id.clone(), &mut out);
        self.emit(out);

        if read_only {
            self.confirm_isolation(&thread.thread.id, &requested).await.map_err(isolation_doubt)?;
        }

        let mut turn_params = json!({
            "threadId": thread.thread.id,
            "input": [{"type": "text", "text": opts.prompt, "text_elements": []}],
            "cwd": opts.thread_cwd,
            "approvalPolicy": "never",
            "sandboxPolicy": match opts.access {
                Access::Full => json!({"type": "dangerFullAccess"}),
                Access::ReadOnly => json!({"type": "readOnly"}),
            },
        });
        if let Some(model) = &opts.model {
            turn_params["model"] = json!(model);
        }
        if let Some(effort) = &opts.effort {
            turn_params["effort"] = json!(effort);
        }
        if let Some(schema) = &opts.output_schema {
            turn_params["outputSchema"] = serde_json::from_str(schema.get()).unwrap_or(Value::Null);
        }
        self.state.set_turn_requested();
        let ack = self.request(method::TURN_START, turn_params).await?;
        let ack: TurnStartResult = parse_result(method::TURN_START, &ack)?;
        if let Some(turn_id) = ack.turn.id {
            let mut out = std::mem::take(&mut self.scratch);
            self.state.set_turn(turn_id, &mut out);
            self.emit(out);
        }
        // The acknowledgement is not a result: the turn ends on `turn/completed` (or a
        // failure), however long it takes.
        self.pump(None).await?;
        unreachable!("pump without an awaited response only returns an ending")
    }

    /// Asks the server, for this thread, whether the isolation holds. The turn starts only
    /// after it confirms.
    async fn confirm_isolation(&mut self, thread_id: &str, requested: &[String]) -> Result<(), Ending> {
        let features = self.list_all("experimentalFeature/list", json!({"threadId": thread_id})).await?;
        isolation::check_features(&features).map_err(Ending::Failed)?;
        let servers = self
            .list_all("mcpServerStatus/list", json!({"threadId": thread_id, "detail": "toolsAndAuthOnly"}))
            .await?;
        isolation::check_servers(&servers, requested).map_err(Ending::Failed)
    }

    /// Every entry of a paginated list.
    async fn list_all(&mut self, method: &'static str, params: Value) -> Result<Vec<Value>, Ending> {
        const MAX_PAGES: usize = 100;
        let mut entries = Vec::new();
        let mut params = params;
        for _ in 0..MAX_PAGES {
            let result = self.request(method, params.clone()).await?;
            let result: Value = parse_result(method, &result)?;
            let (data, next) = isolation::page(&result, method).map_err(Ending::Failed)?;
            entries.extend(data);
            match next {
                Some(cursor) => params["cursor"] = json!(cursor),
                None => return Ok(entries),
            }
        }
        Err(Ending::Failed(isolation::not_confirmed(format!("{method} did not end after {MAX_PAGES} pages"), Value::Null)))
    }

    fn emit(&mut self, mut events: Vec<HarnessEvent>) {
        for event in events.drain(..) {
            self.stream.push(&event);
        }
        self.scratch = events;
    }

    async fn send(&mut self, message: &impl serde::Serialize) {
        let Some(writer) = &mut self.writer else {
            return;
        };
        // A server that reads nothing more fills the pipe and the write waits for ever: an
        // abort, or the end of the interrupt's grace, must still end the turn.
        let written = tokio::select! {
            biased;
            result = writer.send(message) => Some(result),
            _ = self.stream.aborted(), if !self.abort_seen => None,
            _ = self.stream.killed() => None,
            _ = sleep_until(self.interrupt_deadline) => None,
        };
        match written {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                // The server is gone or stopped reading; reading stdout tells us how it ended.
                tracing::debug!("write to codex app-server failed: {e}");
                self.writer = None;
            }
            None => {
                // Part of the frame may be in the pipe: nothing more can follow it.
                tracing::debug!("write to codex app-server abandoned: it reads nothing");
                self.writer = None;
            }
        }
    }

    async fn notify(&mut self, method: &'static str) {
        self.send(&Outgoing::<Value> { id: None, method, params: None }).await;
    }

    async fn request(&mut self, method: &'static str, params: Value) -> Result<Box<RawValue>, Ending> {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(id, method);
        // Never the params: they carry the prompt and the caller's configuration.
        tracing::debug!(id, method, "request");
        self.send(&Outgoing { id: Some(id), method, params: Some(params) }).await;
        let deadline = Instant::now() + self.options.request_timeout;
        match self.pump(Some((id, method, deadline))).await {
            Ok(result) => Ok(result),
            Err(ending) => Err(ending),
        }
    }

    /// Processes frames until the awaited response arrives or the run must end.
    async fn pump(&mut self, awaiting: Option<(i64, &'static str, Instant)>) -> Result<Box<RawValue>, Ending> {
        let outcome = self.pump_frames(awaiting).await;
        // Events held back for a larger batch must not wait for the next read (or the end).
        self.stream.release();
        outcome
    }

    async fn pump_frames(&mut self, awaiting: Option<(i64, &'static str, Instant)>) -> Result<Box<RawValue>, Ending> {
        loop {
            if let Some(completed) = self.state.take_completion() {
                return Err(Ending::Turn(Box::new(completed)));
            }
            if let Some((id, method, _)) = awaiting {
                if let Some(outcome) = self.responses.remove(&id) {
                    return outcome.map_err(|e| Ending::Failed(rpc_failure(method, e)));
                }
            }
            let reading = self.stream.may_read(self.reader.has_buffered_line(), std::time::Instant::now());
            let release_at = reading.release_at.map(Instant::from_std);
            let request_deadline = awaiting.map(|a| a.2);
            self.timer.set([request_deadline, self.interrupt_deadline, release_at].into_iter().flatten().min());
            let wake = tokio::select! {
                biased;
                _ = self.stream.killed() => Wake::Kill,
                _ = self.stream.aborted(), if !self.abort_seen => Wake::Abort,
                _ = self.timer.fired() => Wake::Deadline,
                _ = self.stream.room(), if !reading.room => Wake::Room,
                item = self.reader.next(), if reading.room => Wake::Read(item),
            };
            match wake {
                Wake::Kill => return Err(Ending::Kill),
                Wake::Abort => {
                    self.abort_seen = true;
                    self.on_abort().await?;
                }
                Wake::Deadline => {
                    let now = Instant::now();
                    if release_at.is_some_and(|at| at <= now) {
                        self.stream.release();
                    }
                    if self.interrupt_deadline.is_some_and(|d| d <= now) {
                        return Err(Ending::Kill);
                    }
                    if let Some((_, method, _)) = awaiting.filter(|a| a.2 <= now) {
                        let timeout = self.options.request_timeout.as_millis();
                        return Err(Ending::Failed(
                            Failure::new(
                                FailureSource::Jsonrpc,
                                Code::RequestTimeout,
                                format!("{method} got no response within {timeout} ms"),
                            )
                            .with_detail(json!({"method": method, "timeoutMs": timeout})),
                        ));
                    }
                }
                Wake::Room => {}
                Wake::Read(Ok(ReadItem::Frame(frame))) => self.on_frame(frame).await,
                Wake::Read(Ok(ReadItem::Preamble(line))) => {
                    self.stream.push(&HarnessEvent::Diagnostic { source: DiagnosticSource::Preamble, line })
                }
                Wake::Read(Ok(ReadItem::Eof)) => return Err(Ending::Eof),
                Wake::Read(Err(e)) => return Err(Ending::Failed(e.into())),
            }
        }
    }

    /// Abort: before the turn id exists, kill at once; after, interrupt and wait for the grace.
    async fn on_abort(&mut self) -> Result<(), Ending> {
        if self.state.is_completed() {
            return Ok(());
        }
        let (Some(thread_id), Some(turn_id)) = (self.state.thread_id(), self.state.turn_id()) else {
            return Err(Ending::Kill);
        };
        if self.writer.is_none() {
            // Nothing can reach the server any more, not even the interrupt.
            return Err(Ending::Kill);
        }
        let params = json!({"threadId": thread_id, "turnId": turn_id});
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(id, method::TURN_INTERRUPT);
        // The grace runs from now, also for the write of the interrupt itself.
        self.interrupt_deadline = Some(Instant::now() + self.options.interrupt_grace);
        self.send(&Outgoing { id: Some(id), method: method::TURN_INTERRUPT, params: Some(params) }).await;
        tracing::debug!(id, "abort: turn/interrupt sent");
        Ok(())
    }

    async fn on_frame(&mut self, frame: Frame) {
        match frame.message {
            Incoming::Response { id, outcome } => {
                match id.as_i64().and_then(|n| self.pending.remove(&n).map(|m| (n, m))) {
                    Some((n, method)) if method != method::TURN_INTERRUPT => {
                        match &outcome {
                            Ok(_) => tracing::debug!(id = n, method, "response"),
                            Err(e) => tracing::debug!(id = n, method, code = e.code, "error response: {}", e.message),
                        }
                        self.responses.insert(n, outcome);
                    }
                    // The interrupt's answer changes nothing: `turn/completed` decides.
                    Some(_) => {}
                    None => self.stream.push(&HarnessEvent::Passthrough {
                        reason: crate::events::PassthroughReason::UnknownResponse,
                        message: RawValue::from_string(frame.line).expect("a parsed frame is JSON"),
                    }),
                }
            }
            Incoming::Request { id, method } => {
                let answer = policy::answer(&method, self.options.access);
                tracing::debug!(method = %method, reply = json!(answer.kind).as_str(), "server request answered");
                self.send(&Reply { id: &id, result: answer.result.as_ref(), error: answer.error.as_ref() }).await;
                self.stream.push(&HarnessEvent::ServerRequest { method, id, reply: answer.kind });
            }
            Incoming::Notification { method, scope } => {
                tracing::trace!(method = %method, "notification");
                let mut out = std::mem::take(&mut self.scratch);
                self.state.notification(method, scope, frame.line, &mut out);
                self.emit(out);
            }
        }
    }

    /// Closes stdin, ends the process tree, and builds the terminal frame.
    async fn finish(mut self, ending: Ending) -> Terminal {
        // Before stdin closes: the server exits on EOF and its orphans leave its tree.
        self.process.capture_tree();
        if let Some(writer) = self.writer.take() {
            writer.close().await;
        }
        let exited_by_itself = match ending {
            Ending::Eof => self.process.wait_exit(EOF_EXIT_WAIT).await,
            _ => None,
        };
        // Killed: the grace (if any) is spent, nothing more is waited for. Otherwise the
        // server may leave by itself on stdin EOF, as it does after a turn.
        let how = match ending {
            Ending::Kill => End::Kill,
            _ => End::Polite(process::EXIT_GRACE),
        };
        let exit = self.process.end_tree(how).await;

        let mut terminal = Terminal {
            status: Status::Failed,
            thread_id: self.state.thread_id().map(str::to_string),
            turn_id: self.state.turn_id().map(str::to_string),
            final_message: None,
            structured_output: None,
            usage: self.state.turn_usage(),
            cancellation: None,
            failure: None,
        };
        match ending {
            Ending::Turn(completed) => self.completed_turn(&mut terminal, *completed),
            Ending::Kill => {
                terminal.status = Status::Cancelled;
                terminal.cancellation = Some(Cancellation::Killed);
            }
            Ending::Eof if self.abort_seen => {
                terminal.status = Status::Cancelled;
                terminal.cancellation = Some(Cancellation::Killed);
            }
            Ending::Eof => {
                let message = match exited_by_itself {
                    Some(exit) => format!("codex app-server {} before the turn completed", exit.how()),
                    None => "codex app-server closed its stdout but kept running".to_string(),
                };
                terminal.failure = Some(
                    Failure::new(FailureSource::Exit, Code::ProcessExited, message).with_detail(json!({
                        "exitCode": exit.code,
                        "signal": exit.signal,
                        "exitedByItself": exited_by_itself.is_some(),
                        "stderrTail": self.process.stderr_tail(),
                    })),
                );
            }
            Ending::Failed(mut failure) => {
                if failure.source == FailureSource::Parse {
                    if let Value::Object(detail) = &mut failure.detail {
                        detail.insert("stderrTail".into(), json!(self.process.stderr_tail()));
                    }
                }
                terminal.failure = Some(failure);
            }
        }
        terminal
    }

    fn completed_turn(&self, terminal: &mut Terminal, completed: CompletedTurn) {
        match completed.status.as_str() {
            "completed" => {
                let text = self.state.final_message(&completed);
                terminal.status = Status::Completed;
                if self.options.output_schema.is_some() {
                    match text.as_deref().map(serde_json::from_str::<Value>) {
                        Some(Ok(value)) => terminal.structured_output = Some(value),
                        Some(Err(e)) => {
                            terminal.status = Status::Failed;
                            terminal.failure = Some(
                                Failure::new(
                                    FailureSource::Turn,
                                    Code::StructuredOutputInvalid,
                                    format!("the final message is not valid JSON: {e}"),
                                )
                                .with_detail(json!({"text": text})),
                            );
                        }
                        None => {
                            terminal.status = Status::Failed;
                            terminal.failure = Some(
                                Failure::new(
                                    FailureSource::Turn,
                                    Code::StructuredOutputInvalid,
                                    "the turn completed without a final message",
                                )
                                .with_detail(json!({"text": null})),
                            );
                        }
                    }
                }
                terminal.final_message = text;
            }
            "interrupted" => {
                terminal.status = Status::Cancelled;
                terminal.cancellation = Some(Cancellation::Interrupted);
            }
            status => {
                let error = completed.error.as_ref().or(self.state.last_error());
                let message = match error {
                    Some(e) => e.message.clone(),
                    None => format!("the turn ended with status {status}"),
                };
                terminal.failure = Some(Failure::new(FailureSource::Turn, Code::TurnFailed, message).with_detail(json!({
                    "status": status,
                    "codexErrorInfo": error.map(|e| e.codex_error_info.clone()).unwrap_or(Value::Null),
                    "additionalDetails": error.map(|e| e.additional_details.clone()).unwrap_or(Value::Null),
                })));
            }
        }
    }
}

/// In a read-only turn, an error or an unexpected answer while checking the isolation means
/// it is not confirmed: the turn is never started.
fn isolation_doubt(ending: Ending) -> Ending {
    match ending {
        Ending::Failed(failure) if failure.source == FailureSource::Jsonrpc && failure.code != Code::IsolationNotConfirmed => {
            let report = json!({"code": failure.code, "message": failure.message, "detail": failure.detail});
            Ending::Failed(isolation::not_confirmed(
                format!("the isolation could not be confirmed: {}", failure.message),
                report,
            ))
        }
        other => other,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

fn parse_result<T: serde::de::DeserializeOwned>(method: &'static str, raw: &RawValue) -> Result<T, Ending> {
    serde_json::from_str(raw.get()).map_err(|e| {
        Ending::Failed(
            Failure::new(FailureSource::Jsonrpc, Code::UnexpectedResponse, format!("unexpected {method} result: {e}"))
                .with_detail(json!({"method": method, "result": crate::transport::excerpt(raw.get())})),
        )
    })
}

fn rpc_failure(method: &'static str, error: RpcError) -> Failure {
    Failure::new(FailureSource::Jsonrpc, Code::RequestFailed, error.message).with_detail(json!({
        "method": method,
        "code": error.code,
        "data": error.data,
    }))
}

/// Production entry: finds and spawns `codex app-server`, drives the turn, queues the terminal.
pub async fn run(options: TurnOptions, stream: Arc<EventStream>) {
    let terminal = start_and_drive(&options, &stream).await;
    // In the words of the terminal event: `status="failed" code="PROCESS_EXITED"`.
    let (status, cancellation) = (json!(terminal.status), json!(terminal.cancellation));
    let code = terminal.failure.as_ref().map(|f| f.code.as_str());
    tracing::info!(status = status.as_str(), cancellation = cancellation.as_str(), code, "turn ended");
    stream.finish(terminal);
}

async fn start_and_drive(options: &TurnOptions, stream: &Arc<EventStream>) -> Terminal {
    if stream.abort_requested() {
        // Aborted before it began (an already-aborted signal): nothing to start.
        return Terminal::killed_before_start();
    }
    // Discovery and the MCP inventory run child processes of their own and can take seconds:
    // an abort meanwhile ends the turn at once, before anything of the turn is spawned, and
    // only after those processes are gone (a discovery that others still wait for goes on).
    let discovery = launch::discovery_for(options);
    let prepared = tokio::select! {
        prepared = prepare_launch(options, discovery.as_ref()) => Some(prepared),
        () = stream.aborted() => None,
    };
    let Some(prepared) = prepared else {
        if let Some(discovery) = discovery {
            discovery.leave().await;
        }
        return Terminal::killed_before_start();
    };
    drop(discovery);
    let (launch, spec) = match prepared {
        Ok(prepared) => prepared,
        Err(failure) => return Terminal::failed(failure),
    };
    let forwarded = AtomicUsize::new(0);
    let sink = stream.clone();
    let spawned = process::spawn(
        &spec,
        Some(Box::new(move |line| {
            tracing::debug!(target: "rennet_codex::stderr", "{line}");
            if forwarded.fetch_add(1, Ordering::Relaxed) < MAX_STDERR_EVENTS {
                sink.push(&HarnessEvent::Diagnostic { source: DiagnosticSource::Stderr, line });
            }
        })),
    );
    let mut child = match spawned {
        Ok(child) => {
            // The program only: argv may carry MCP header values, and env values are secrets.
            tracing::info!(program = %spec.program.display(), pid = child.pid(), "codex app-server started");
            child
        }
        Err(e) => {
            let (code, message) = match e {
                SpawnError::NotFound(m) => (Code::CodexNotFound, m),
                SpawnError::NotExecutable(m) => (Code::CodexNotExecutable, m),
                SpawnError::CwdNotFound(m) => (Code::CwdNotFound, m),
                SpawnError::Other(m) => (Code::SpawnFailed, m),
            };
            return Terminal::failed(
                Failure::new(FailureSource::Spawn, code, message)
                    .with_detail(json!({"codexPath": launch.codex_path})),
            );
        }
    };
    let (stdin, stdout) = (child.stdin.take().expect("stdin is piped"), child.stdout.take().expect("stdout is piped"));
    drive(stdout, stdin, child, options, &launch.codex_path, stream).await
}

/// The child to start: its launch, and `app-server` with the arguments the options call for.
async fn prepare_launch(
    options: &TurnOptions,
    discovery: Option<&crate::discovery::Waiter>,
) -> Result<(launch::ChildLaunch, Spec), Failure> {
    let mut launch = launch::resolve(options, discovery).await?;
    let mut args = launch.prefix_args.clone();
    args.push("app-server".into());
    if let Some(policy) = &options.mcp {
        // Before anything is spawned: validation, the configured inventory, collisions.
        let extra = crate::mcp_policy::prepare(&launch.program, &launch.prefix_args, &launch.host_cwd, &launch.env, policy)
            .await
            ?;
        args.extend(extra.args);
        launch.add_env(extra.env);
    }
    if options.access == Access::ReadOnly {
        args.extend(crate::isolation::feature_args());
    }
    let mut spec = Spec::new(launch.program.clone(), args, launch.host_cwd.clone());
    spec.env = launch.env.clone();
    spec.stdin = true;
    spec.secrets = secret_values(options, &launch.env);
    Ok((launch, spec))
}

/// What must not leave through the child's stderr: MCP header values, the variables MCP
/// bearer tokens are read from, and every variable of `env` whose name says it holds a
/// credential (`…TOKEN…`, `…SECRET…`, `…KEY…`, `…PASSWORD…`, `…AUTH…`, `…CREDENTIAL…`).
fn secret_values(options: &TurnOptions, child_env: &[(String, String)]) -> Vec<String> {
    const MARKS: [&str; 6] = ["TOKEN", "SECRET", "KEY", "PASSWORD", "AUTH", "CREDENTIAL"];
    let token_vars: Vec<&str> = options
        .mcp
        .iter()
        .flat_map(|policy| policy.servers.values())
        .filter_map(|server| server.bearer_token_env_var.as_deref())
        .collect();
    let header_values = options
        .mcp
        .iter()
        .flat_map(|policy| policy.servers.values())
        .flat_map(|server| server.http_headers.iter().flat_map(|h| h.values().cloned()));
    let env_values = child_env
        .iter()
        .filter(|(k, _)| {
            let upper = k.to_ascii_uppercase();
            token_vars.contains(&k.as_str()) || MARKS.iter().any(|m| upper.contains(m))
        })
        .map(|(_, v)| v.clone());
    header_values.chain(env_values).collect()
}

#[cfg(test)]
mod tests;
