//! The exchange with one `codex app-server` child: what a turn and every call around turns do
//! alike. The handshake ([`handshake`]), one request at a time with its deadline while every
//! other frame goes to the exchange's [`Owner`] ([`Exchange::ask`]), every page of a list
//! ([`Exchange::list_all`]), and one way to stop ([`Stop`]) with one wording for a request's
//! failures ([`failures`]).
//!
//! The owner is what makes a run a turn or a call: it routes notifications (a turn's state
//! machine; a call owns no thread and ignores them), answers server requests (a turn's reply
//! policy or the app's handler; a call refuses every one), decides what an abort means (a turn
//! interrupts and waits for a grace; a call stops at once), and may bring wake-ups of its own
//! (a turn's steers, a prepared turn's input). Underneath, one frame loop keeps the deadlines,
//! pauses reading while the owner's consumer lags, and makes every write give way to an abort,
//! a kill or a deadline: a server that stops reading its stdin must not hold anything up.

pub mod failures;
pub mod handshake;
mod stop;

pub use stop::Stop;

use crate::cancel::Cancel;
use crate::protocol::{Page, Reply, Request, RpcError, Scope, ServerCall};
use crate::rpc::{Connection, Received, Unsent};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::future::Future;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

/// Pages read of a paginated list before the answer counts as endless.
pub const MAX_PAGES: usize = 100;

/// A frame that is not the answer to one of our requests: the owner's to handle.
pub enum Frame {
    Notification {
        method: Cow<'static, str>,
        scope: Box<Scope>,
        line: String,
    },
    /// A server request: it waits for an answer ([`Wire::reply`]).
    Request {
        id: Value,
        method: String,
        line: String,
    },
    /// A response to no request of ours, as it was received.
    Stray(String),
    /// A non-JSON line before the first frame (a launcher's banner).
    Preamble(String),
}

/// What a run does with what the exchange does not wait for itself.
///
/// Every method has the behaviour of a call around turns by default: no wake-ups of its own,
/// notifications ignored, server requests refused, an abort stops at once, reading never
/// pauses.
pub trait Owner: Send {
    /// A wake-up of the owner's own (a steer, a prepared turn's input, an app's answer).
    type Wake: Send;

    /// Resolves with the owner's next wake-up; pending while there is none. `reading`: the loop
    /// reads frames meanwhile; when it does not ([`Owner::may_read`] said no), the owner wakes
    /// it once reading may go on. Cancel-safe: the loop drops it when something else woke first.
    fn wake(&mut self, reading: bool) -> impl Future<Output = Self::Wake> + Send {
        let _ = reading;
        std::future::pending()
    }

    fn on_wake<R: Input, W: Output>(
        &mut self,
        wake: Self::Wake,
        wire: &mut Wire<'_, R, W>,
    ) -> impl Future<Output = Result<(), Stop>> + Send {
        let _ = (wake, wire);
        async { Ok(()) }
    }

    fn on_frame<R: Input, W: Output>(
        &mut self,
        frame: Frame,
        wire: &mut Wire<'_, R, W>,
    ) -> impl Future<Output = Result<(), Stop>> + Send {
        async move {
            match frame {
                Frame::Request { id, method, .. } => {
                    tracing::debug!(method = %method, "server request refused");
                    let error = refusal(format!("{method} refused: a call around turns grants nothing"));
                    wire.reply(&id, Err(&error)).await;
                }
                Frame::Preamble(line) => tracing::debug!(target: "rennet_codex::stderr", "preamble: {line}"),
                // A call owns nothing a notification or a stray answer could change.
                Frame::Notification { .. } | Frame::Stray(_) => {}
            }
            Ok(())
        }
    }

    /// What an abort means. `Err` ends the run now (killed); `Ok` after something was done
    /// about it (an interrupt sent, with its grace given to [`Wire::give_grace`]).
    fn on_abort<R: Input, W: Output>(
        &mut self,
        wire: &mut Wire<'_, R, W>,
    ) -> impl Future<Output = Result<(), Stop>> + Send {
        let _ = wire;
        async { Err(Stop::Cancelled) }
    }

    /// Before each wait: the owner's own reason to stop (its turn completed), if any.
    fn stopped(&mut self) -> Option<Stop> {
        None
    }

    /// The nearest deadline of the owner's own (an app's answer due, a continuation due).
    fn next_deadline(&self) -> Option<Instant> {
        None
    }

    /// A deadline of the owner's passed (the loop's timer fired at `now`).
    fn on_deadline<R: Input, W: Output>(
        &mut self,
        now: Instant,
        wire: &mut Wire<'_, R, W>,
    ) -> impl Future<Output = Result<(), Stop>> + Send {
        let _ = (now, wire);
        async { Ok(()) }
    }

    /// Before each wait, with the wire free: sends what the owner held back (steers).
    fn settle<R: Input, W: Output>(&mut self, wire: &mut Wire<'_, R, W>) -> impl Future<Output = ()> + Send {
        let _ = wire;
        async {}
    }

    /// Whether to read the next frame now (a consumer that lags pauses reading, so the pipe
    /// pushes back on the server); `buffered`: a whole line is read already.
    fn may_read(&self, buffered: bool) -> bool {
        let _ = buffered;
        true
    }

    /// A wait for the server ended: nothing the owner produced may wait for the next read.
    fn release(&self) {}
}

/// What the exchange reads from: the child's stdout, or a scripted peer's pipe.
pub trait Input: AsyncRead + Unpin + Send {}
impl<T: AsyncRead + Unpin + Send> Input for T {}
/// What the exchange writes to: the child's stdin, or a scripted peer's pipe.
pub trait Output: AsyncWrite + Unpin + Send {}
impl<T: AsyncWrite + Unpin + Send> Output for T {}

/// A JSON-RPC "method not found" error saying `message`: nothing is granted.
pub fn refusal(message: String) -> RpcError {
    RpcError { code: crate::protocol::METHOD_NOT_FOUND, message, data: None }
}

/// The connection as the owner writes to it: every write gives way to an abort not yet
/// handled, a kill, and the end of an interrupt's grace.
pub struct Wire<'a, R, W> {
    conn: Connection<R, W>,
    cancel: &'a Cancel,
    /// The abort has been handled (an interrupt sent): writes no longer give way to it.
    abort_seen: bool,
    /// Past this, an interrupted run is killed.
    grace: Option<Instant>,
}

impl<'a, R: Input, W: Output> Wire<'a, R, W> {
    /// Sends a request: its id, to find its answer by ([`Wire::answer`]). Past `deadline` it is
    /// overdue and the run fails `REQUEST_TIMEOUT`, also when it could not be sent; without one
    /// its answer decides nothing of the run (a steer, an interrupt).
    pub async fn request<Q: Request>(&mut self, request: &Q, deadline: Option<Instant>) -> Result<i64, Unsent> {
        let give_way = self.give_way(deadline);
        self.conn.request(request, deadline, give_way).await
    }

    /// [`Wire::request`] for a method named at run time, with its params as given.
    pub async fn request_named(
        &mut self,
        method: &'static str,
        params: &impl serde::Serialize,
        deadline: Option<Instant>,
    ) -> Result<i64, Unsent> {
        let give_way = self.give_way(deadline);
        self.conn.request_named(method, params, deadline, give_way).await
    }

    /// A notification without params (`initialized`).
    pub async fn notify(&mut self, method: &'static str) -> Result<(), Unsent> {
        let give_way = self.give_way(None);
        self.conn.notify(method, give_way).await
    }

    /// Our answer to server request `id`. A reply that cannot be written is lost with the
    /// connection, which the run learns from its end.
    pub async fn reply(&mut self, id: &Value, answer: Result<&Value, &RpcError>) {
        let (result, error) = match answer {
            Ok(result) => (Some(result), None),
            Err(error) => (None, Some(error)),
        };
        let give_way = self.give_way(None);
        let _ = self.conn.reply(&Reply { id, result, error }, give_way).await;
    }

    /// The answer to request `id`, once it came (taken: asked once).
    pub fn answer(&mut self, id: i64) -> Option<Result<Box<RawValue>, RpcError>> {
        self.conn.answer(id)
    }

    /// Whether messages can still reach the server.
    pub fn can_write(&self) -> bool {
        self.conn.can_write()
    }

    /// The abort is handled by an interrupt that has until `until`: then the run is killed.
    pub fn give_grace(&mut self, until: Instant) {
        self.abort_seen = true;
        self.grace = Some(until);
    }

    /// Whether an abort was handled (by an interrupt).
    pub fn abort_seen(&self) -> bool {
        self.abort_seen
    }

    pub fn cancel(&self) -> &'a Cancel {
        self.cancel
    }

    fn give_way(&self, deadline: Option<Instant>) -> impl Future<Output = ()> + 'a {
        let (cancel, abort_seen) = (self.cancel, self.abort_seen);
        let until = self.grace.into_iter().chain(deadline).min();
        async move {
            tokio::select! {
                () = cancel.aborted(), if !abort_seen => {}
                () = cancel.killed() => {}
                () = sleep_until(until) => {}
            }
        }
    }
}

pub struct Exchange<'a, R, W> {
    pub wire: Wire<'a, R, W>,
    request_timeout: Duration,
    /// The server's version, once the handshake told it: a method it does not have reads
    /// `METHOD_UNSUPPORTED` with it.
    pub codex_version: Option<String>,
    /// The one timer of the frame loop, set to the nearest deadline; moved only when that
    /// changes, since arming a timer for every frame would cost more than the frame.
    timer: Timer,
}

/// What woke the frame loop. Reads are nearly every wake.
enum Woke<T> {
    Kill,
    Abort,
    Deadline,
    Owner(T),
    Read(Result<Received, crate::transport::FrameError>),
}

impl<'a, R: Input, W: Output> Exchange<'a, R, W> {
    pub fn new(conn: Connection<R, W>, cancel: &'a Cancel, request_timeout: Duration) -> Self {
        Exchange {
            wire: Wire { conn, cancel, abort_seen: false, grace: None },
            request_timeout,
            codex_version: None,
            timer: Timer::new(),
        }
    }

    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Sends a request and handles frames until its answer came, as its result type.
    pub async fn call<Q: Request, O: Owner>(&mut self, owner: &mut O, request: &Q) -> Result<Q::Result, Stop> {
        let version = self.codex_version.clone();
        self.ask(owner, request)
            .await?
            .map_err(|error| Stop::Failed(failures::rpc_failure(Q::METHOD, error, version.as_deref())))
    }

    /// [`Exchange::call`], with the server's error answer as a value rather than the run's end.
    pub async fn ask<Q: Request, O: Owner>(
        &mut self,
        owner: &mut O,
        request: &Q,
    ) -> Result<Result<Q::Result, RpcError>, Stop> {
        match self.ask_named(owner, Q::METHOD, request).await? {
            Ok(raw) => failures::parse_result(Q::METHOD, &raw).map(Ok).map_err(Stop::Failed),
            Err(error) => Ok(Err(error)),
        }
    }

    /// [`Exchange::ask`] for a method named at run time (`request()`'s): the result as sent.
    pub async fn ask_named<O: Owner>(
        &mut self,
        owner: &mut O,
        method: &'static str,
        params: &impl serde::Serialize,
    ) -> Result<Result<Box<RawValue>, RpcError>, Stop> {
        let deadline = Instant::now() + self.request_timeout;
        // A request that did not reach the server gets no answer: its deadline (also while a
        // server that reads nothing holds up the write), an abort or the server's end decides.
        let id = self.wire.request_named(method, params, Some(deadline)).await.ok();
        self.pump_until(owner, |_, wire| id.and_then(|id| wire.answer(id))).await.map_err(|stop| match stop {
            Stop::Eof { waiting: None } => Stop::Eof { waiting: Some(method) },
            stop => stop,
        })
    }

    /// Every entry of a paginated list, `page` being the request for the page at a cursor.
    pub async fn list_all<Q: Request<Result = Page>, O: Owner>(
        &mut self,
        owner: &mut O,
        page: impl Fn(Option<String>) -> Q,
    ) -> Result<Vec<Value>, Stop> {
        let mut entries = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let result = self.call(owner, &page(cursor)).await?;
            entries.extend(result.data);
            match result.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(entries),
            }
        }
        Err(Stop::Failed(failures::endless(Q::METHOD)))
    }

    /// Handles frames until `done` has something, or the run must stop.
    pub async fn pump_until<T, O: Owner>(
        &mut self,
        owner: &mut O,
        mut done: impl FnMut(&mut O, &mut Wire<'a, R, W>) -> Option<T>,
    ) -> Result<T, Stop> {
        let outcome = loop {
            if let Some(value) = done(owner, &mut self.wire) {
                break Ok(value);
            }
            if let Some(stop) = owner.stopped() {
                break Err(stop);
            }
            owner.settle(&mut self.wire).await;
            let buffered = self.wire.conn.has_buffered_line();
            let read = owner.may_read(buffered);
            let deadlines = [self.wire.conn.next_deadline(), self.wire.grace, owner.next_deadline()];
            self.timer.set(deadlines.into_iter().flatten().min());
            let cancel = self.wire.cancel;
            let woke = if read && buffered && self.quiet(cancel) {
                Woke::Read(self.wire.conn.receive().await)
            } else {
                tokio::select! {
                    biased;
                    () = cancel.killed() => Woke::Kill,
                    () = cancel.aborted(), if !self.wire.abort_seen => Woke::Abort,
                    () = self.timer.fired() => Woke::Deadline,
                    wake = owner.wake(read) => Woke::Owner(wake),
                    received = self.wire.conn.receive(), if read => Woke::Read(received),
                }
            };
            let handled = match woke {
                Woke::Kill => Err(Stop::Cancelled),
                Woke::Abort => {
                    self.wire.abort_seen = true;
                    owner.on_abort(&mut self.wire).await
                }
                Woke::Deadline => match self.deadline() {
                    Ok(()) => owner.on_deadline(Instant::now(), &mut self.wire).await,
                    stop => stop,
                },
                Woke::Owner(wake) => owner.on_wake(wake, &mut self.wire).await,
                Woke::Read(Ok(received)) => match received {
                    Received::Answer { .. } => Ok(()),
                    Received::Eof => Err(Stop::Eof { waiting: None }),
                    Received::Stray(line) => owner.on_frame(Frame::Stray(line), &mut self.wire).await,
                    Received::Preamble(line) => owner.on_frame(Frame::Preamble(line), &mut self.wire).await,
                    Received::Call { call: ServerCall::Request { id, method }, line } => {
                        owner.on_frame(Frame::Request { id, method, line }, &mut self.wire).await
                    }
                    Received::Call { call: ServerCall::Notification { method, scope }, line } => {
                        owner.on_frame(Frame::Notification { method, scope, line }, &mut self.wire).await
                    }
                },
                Woke::Read(Err(e)) => Err(Stop::Failed(e.into())),
            };
            if let Err(stop) = handled {
                break Err(stop);
            }
        };
        // What the owner held back for a larger batch must not wait for the next read (or the end).
        owner.release();
        outcome
    }

    /// Whether no kill, no unseen abort and no deadline is due. With the next frame already
    /// read and waiting, the usual case inside a burst of deltas, the frame is then taken without
    /// the select, which would register a waiter for each of its other branches (the two
    /// cancel flags, the owner's channels, the timer) and drop them again for a read that needs
    /// no waiting. The owner's wakes (a steer, an app's answer) wait for the buffered lines of
    /// this read, a few hundred at most; kills, aborts and deadlines are checked every frame.
    fn quiet(&self, cancel: &Cancel) -> bool {
        !cancel.kill_requested()
            && (self.wire.abort_seen || !cancel.abort_requested())
            && self.timer.at.is_none_or(|at| at > Instant::now())
    }

    /// The timer fired: an interrupt's grace that ran out, or a request that is overdue.
    fn deadline(&self) -> Result<(), Stop> {
        let now = Instant::now();
        if self.wire.grace.is_some_and(|d| d <= now) {
            return Err(Stop::Cancelled);
        }
        match self.wire.conn.overdue(now) {
            Some(method) => Err(Stop::Failed(failures::request_timeout(method, self.request_timeout))),
            None => Ok(()),
        }
    }

    /// Closes the server's stdin (`codex app-server` exits on EOF).
    pub async fn close(&mut self) {
        self.wire.conn.close().await;
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

#[cfg(test)]
mod tests {
    use super::failures::rpc_failure;
    use crate::failure::Code;
    use crate::protocol::RpcError;

    #[test]
    fn a_frame_is_a_few_words_to_move() {
        // Every frame is moved through half a dozen calls between the pipe and its owner: the
        // scope of a notification is boxed, so that a move is not a copy of its 240 bytes
        // (BENCHMARKS.md, "Where the time goes").
        let sizes = [
            ("ServerCall", std::mem::size_of::<crate::protocol::ServerCall>()),
            ("Received", std::mem::size_of::<crate::rpc::Received>()),
            ("Frame", std::mem::size_of::<super::Frame>()),
        ];
        for (name, size) in sizes {
            assert!(size <= 128, "{name} is {size} bytes");
        }
    }

    #[test]
    fn a_method_the_server_lacks_is_unsupported_with_its_version() {
        let error = |code, message: &str| RpcError { code, message: message.into(), data: None };
        let unknown = error(-32600, "Invalid request: unknown variant `thread/goal/get`, expected one of `initialize`");
        let failure = rpc_failure("thread/goal/get", unknown, Some("0.150.0"));
        assert_eq!(failure.code, Code::MethodUnsupported);
        assert_eq!(failure.message, "Invalid request: unknown variant `thread/goal/get`, expected one of `initialize`");
        assert_eq!(failure.detail["method"], "thread/goal/get");
        assert_eq!(failure.detail["codexVersion"], "0.150.0");
        assert_eq!(rpc_failure("x/y", error(-32601, "Method not found"), None).code, Code::MethodUnsupported);
        // Another -32600 is the server's refusal of what was asked, not of the method.
        let refused = rpc_failure("thread/read", error(-32600, "thread not loaded: t"), Some("0.171.0"));
        assert_eq!(refused.code, Code::RequestFailed);
        // An unknown variant of a field (a bad sortKey) is not the method's.
        let field = error(-32600, "Invalid request: unknown variant `sideways`, expected one of `created_at`");
        assert_eq!(rpc_failure("thread/list", field, None).code, Code::RequestFailed);
    }
}
