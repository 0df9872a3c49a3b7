//! The JSON-RPC connection to `codex app-server`: request ids, the requests waiting for an
//! answer and their deadlines, the answers that came, and writes that give way. A server that
//! stops reading its stdin fills the pipe, and a write to it would wait for ever: every write
//! races a future of the caller's (an abort, a deadline), and a write that lost, or failed,
//! ends all writing. Writes never block reads: while a write waits for the server to read, the
//! frames the server sends meanwhile are read into a backlog (a server may answer what it read
//! before it reads on), handed out first. The frame loop that decides what to do with each
//! message is the caller's.

use crate::protocol::{Incoming, Outgoing, Reply, Request, RpcError, ServerCall};
use crate::transport::{FrameError, FrameReader, FrameWriter, ReadItem};
use serde::Serialize;
use serde_json::value::RawValue;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

pub struct Connection<R, W> {
    reader: FrameReader<R>,
    /// `None` once a write failed or gave way: nothing more can reach the server.
    writer: Option<FrameWriter<W>>,
    next_id: i64,
    pending: HashMap<i64, Pending>,
    answers: HashMap<i64, Result<Box<RawValue>, RpcError>>,
    /// What was read while a write waited, oldest first; after an end of file or a read error
    /// nothing more is read into it.
    backlog: VecDeque<Result<Read, FrameError>>,
}

/// A message as read, before it is handed out: an answer is kept for its request only then, so
/// that what came before it is handled first.
#[derive(Debug)]
enum Read {
    Answer(i64, Result<Box<RawValue>, RpcError>),
    Other(Received),
}

/// Frames read into the backlog during one write, at most: beyond, the write waits (a server
/// that needs us to read more than this before it reads would be one that never reads).
const MAX_BACKLOG: usize = 4096;

struct Pending {
    method: &'static str,
    deadline: Option<Instant>,
}

/// What a message was, once the connection has read it.
#[derive(Debug)]
pub enum Received {
    /// The answer to one of our requests: kept until [`Connection::answer`] takes it.
    Answer { id: i64 },
    /// A response to no request of ours, as it was received.
    Stray(String),
    /// A server request or notification, with its line (a notification's params are read
    /// from it when a handler needs them).
    Call { call: ServerCall, line: String },
    /// A non-JSON line before the first message (a launcher's banner).
    Preamble(String),
    /// The server closed its stdout.
    Eof,
}

/// Why a message did not reach the server.
#[derive(Debug)]
pub enum Unsent {
    /// Writing failed (the server is gone or closed its stdin).
    Failed(std::io::Error),
    /// The caller's future won the race with the write.
    GaveWay,
    /// An earlier write failed or gave way.
    Closed,
}

impl std::fmt::Display for Unsent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsent::Failed(e) => write!(f, "{e}"),
            Unsent::GaveWay => f.write_str("the write was abandoned: the server reads nothing"),
            Unsent::Closed => f.write_str("nothing can be written to the server any more"),
        }
    }
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Connection<R, W> {
    pub fn new(reader: FrameReader<R>, writer: W) -> Self {
        Connection {
            reader,
            writer: Some(FrameWriter::new(writer)),
            next_id: 1,
            pending: HashMap::new(),
            answers: HashMap::new(),
            backlog: VecDeque::new(),
        }
    }

    /// Sends a request with the next id, which it returns: its answer waits in
    /// [`Connection::answer`]; past `deadline` it is [`Connection::overdue`], also when it could
    /// not be sent.
    pub async fn request<Q: Request>(
        &mut self,
        params: &Q,
        deadline: Option<Instant>,
        give_way: impl Future<Output = ()>,
    ) -> Result<i64, Unsent> {
        self.request_named(Q::METHOD, params, deadline, give_way).await
    }

    /// [`Connection::request`] for a method named at run time (`request()`'s): its params as given.
    pub async fn request_named(
        &mut self,
        method: &'static str,
        params: &impl Serialize,
        deadline: Option<Instant>,
        give_way: impl Future<Output = ()>,
    ) -> Result<i64, Unsent> {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(id, Pending { method, deadline });
        // Never the params: they carry the prompt, the caller's configuration, an API key.
        tracing::debug!(id, method, "request");
        self.send(&Outgoing { id: Some(id), method, params: Some(params) }, give_way).await.map(|()| id)
    }

    /// A notification without params (`initialized`).
    pub async fn notify(&mut self, method: &'static str, give_way: impl Future<Output = ()>) -> Result<(), Unsent> {
        self.send(&Outgoing::<()> { id: None, method, params: None }, give_way).await
    }

    /// Our answer to a server request.
    pub async fn reply(&mut self, reply: &Reply<'_>, give_way: impl Future<Output = ()>) -> Result<(), Unsent> {
        self.send(reply, give_way).await
    }

    async fn send(&mut self, message: &impl Serialize, give_way: impl Future<Output = ()>) -> Result<(), Unsent> {
        let Some(writer) = &mut self.writer else {
            return Err(Unsent::Closed);
        };
        let (reader, pending, backlog) = (&mut self.reader, &mut self.pending, &mut self.backlog);
        let written = {
            let write = writer.send(message);
            tokio::pin!(write, give_way);
            loop {
                let reading = backlog.len() < MAX_BACKLOG && !backlog.back().is_some_and(ends_reading);
                tokio::select! {
                    biased;
                    result = &mut write => break result.map_err(Unsent::Failed),
                    () = &mut give_way => break Err(Unsent::GaveWay),
                    read = read_one(reader, pending), if reading => backlog.push_back(read),
                }
            }
        };
        if let Err(e) = &written {
            // Part of the frame may be in the pipe: nothing more can follow it.
            tracing::debug!("write to codex app-server ended: {e}");
            self.writer = None;
        }
        written
    }

    /// Whether messages can still reach the server.
    pub fn can_write(&self) -> bool {
        self.writer.is_some()
    }

    /// Reads the next message (what a write read meanwhile first). Cancel-safe: a read that
    /// loses a race loses nothing.
    pub async fn receive(&mut self) -> Result<Received, FrameError> {
        let read = match self.backlog.pop_front() {
            Some(read) => read,
            None => read_one(&mut self.reader, &mut self.pending).await,
        };
        Ok(match read? {
            Read::Answer(id, outcome) => {
                self.answers.insert(id, outcome);
                Received::Answer { id }
            }
            Read::Other(received) => received,
        })
    }

    /// The answer to request `id`, once it came.
    pub fn answer(&mut self, id: i64) -> Option<Result<Box<RawValue>, RpcError>> {
        self.answers.remove(&id)
    }

    /// The nearest deadline of the requests still waiting.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.pending.values().filter_map(|p| p.deadline).min()
    }

    /// The method of a request still waiting past its deadline.
    pub fn overdue(&self, now: Instant) -> Option<&'static str> {
        self.pending.values().find(|p| p.deadline.is_some_and(|d| d <= now)).map(|p| p.method)
    }

    /// Whether a whole message is already read and waiting (reading it costs no I/O).
    pub fn has_buffered_line(&self) -> bool {
        !self.backlog.is_empty() || self.reader.has_buffered_line()
    }

    /// Closes the server's stdin (`codex app-server` exits on EOF).
    pub async fn close(&mut self) {
        if let Some(writer) = self.writer.take() {
            writer.close().await;
        }
    }
}

/// After this, the server sends nothing more that could be read.
fn ends_reading(read: &Result<Read, FrameError>) -> bool {
    matches!(read, Ok(Read::Other(Received::Eof)) | Err(_))
}

/// Reads one message; an answer's request stops waiting (no deadline can pass for it any more).
/// Cancel-safe.
async fn read_one<R: AsyncRead + Unpin>(
    reader: &mut FrameReader<R>,
    pending: &mut HashMap<i64, Pending>,
) -> Result<Read, FrameError> {
    let frame = match reader.next().await? {
        ReadItem::Frame(frame) => frame,
        ReadItem::Preamble(line) => return Ok(Read::Other(Received::Preamble(line))),
        ReadItem::Eof => return Ok(Read::Other(Received::Eof)),
    };
    Ok(match frame.message {
        Incoming::Response { id, outcome } => match id.as_i64().and_then(|n| pending.remove(&n).map(|p| (n, p))) {
            Some((id, pending)) => {
                match &outcome {
                    Ok(_) => tracing::debug!(id, method = pending.method, "response"),
                    Err(e) => {
                        tracing::debug!(id, method = pending.method, code = e.code, "error response: {}", e.message)
                    }
                }
                Read::Answer(id, outcome)
            }
            None => Read::Other(Received::Stray(frame.line)),
        },
        Incoming::Call(call) => Read::Other(Received::Call { call, line: frame.line }),
    })
}
