//! Property tests: the frame decoder and the turn runner fed arbitrary server byte streams and
//! interleavings. Whatever the server does, the runner ends, without panicking, with exactly
//! one terminal event, and ends the process. `PROPTEST_CASES` raises the number of cases for a
//! long run (64 by default, to keep `cargo test` quick).

use super::Control;
use super::FakeProcess;
use crate::options;
use crate::stream::EventStream;
use crate::transport::{FrameError, FrameReader};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader, ReadBuf};
use tokio::sync::mpsc;

const THREAD: &str = "thr-1";
const TURN: &str = "turn-1";

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

// ---------------------------------------------------------------------------------------------
// the frame decoder

/// Hands out its bytes in the given chunks, one chunk per read, pending in between.
struct Chunked {
    chunks: VecDeque<Vec<u8>>,
    yield_next: bool,
}

impl Chunked {
    fn new(bytes: &[u8], cuts: &[usize]) -> Chunked {
        let mut chunks = VecDeque::new();
        let mut rest = bytes;
        for &cut in cuts {
            if rest.is_empty() {
                break;
            }
            let (head, tail) = rest.split_at(cut.min(rest.len()).max(1));
            chunks.push_back(head.to_vec());
            rest = tail;
        }
        if !rest.is_empty() {
            chunks.push_back(rest.to_vec());
        }
        Chunked { chunks, yield_next: false }
    }
}

impl AsyncRead for Chunked {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        // Pending between chunks, as a pipe is: the reader must resume where it left off.
        if self.yield_next {
            self.yield_next = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.yield_next = true;
        if let Some(mut chunk) = self.chunks.pop_front() {
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            if n < chunk.len() {
                self.chunks.push_front(chunk.split_off(n));
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// Everything the reader makes of `bytes` cut at `cuts`, up to end of stream or the first error.
fn decode(bytes: &[u8], cuts: &[usize], limit: usize) -> Vec<Result<String, FrameError>> {
    runtime().block_on(crate::transport::tests::drain(
        FrameReader::with_limit(Chunked::new(bytes, cuts), limit),
        bytes.len(),
    ))
}

/// Bytes that look a little like the wire: JSON punctuation, newlines, and anything else.
fn wire_bytes() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => any::<u8>(),
        2 => Just(b'\n'),
        1 => Just(b'\r'),
        2 => prop::sample::select(b"{}[]\":,".to_vec()),
        1 => Just(b' '),
    ];
    let fragment = prop_oneof![
        3 => prop::collection::vec(byte, 0..64),
        1 => Just(br#"{"method":"item/agentMessage/delta","params":{"delta":"x"}}"#.to_vec()),
        1 => Just(br#"{"id":1,"result":{}}"#.to_vec()),
        1 => Just(b"\n".to_vec()),
    ];
    prop::collection::vec(fragment, 0..24).prop_map(|v| v.concat())
}

fn cuts() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..96, 0..48)
}

proptest! {
    #![proptest_config(config())]

    /// Any bytes, cut anywhere: no panic, the stream is read to its end or to one error.
    #[test]
    fn decoder_ends_on_any_bytes(bytes in wire_bytes(), cuts in cuts(), limit in 16usize..512) {
        let got = decode(&bytes, &cuts, limit);
        prop_assert!(got.iter().filter(|r| r.is_err()).count() <= 1);
    }

    /// Where the reads happen to be cut changes nothing in what is decoded.
    #[test]
    fn decoder_ignores_chunk_boundaries(bytes in wire_bytes(), a in cuts(), b in cuts()) {
        prop_assert_eq!(decode(&bytes, &a, 256), decode(&bytes, &b, 256));
    }

    /// Valid frames come out exactly as they went in, whatever the chunking and line endings.
    #[test]
    fn decoder_round_trips_frames(
        texts in prop::collection::vec(any::<String>(), 1..16),
        crlf in any::<bool>(),
        last_newline in any::<bool>(),
        cuts in cuts(),
    ) {
        let lines: Vec<String> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"method": "m", "params": {"i": i, "text": t}}).to_string())
            .collect();
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut bytes = lines.join(eol);
        if last_newline {
            bytes.push_str(eol);
        }
        let got = decode(bytes.as_bytes(), &cuts, 1 << 20);
        let want: Vec<Result<String, FrameError>> = lines.iter().map(|l| Ok(format!("frame:{l}"))).collect();
        prop_assert_eq!(got, want);
    }
}

// ---------------------------------------------------------------------------------------------
// the runner

/// One thing the server does, at some point of the run.
#[derive(Debug, Clone)]
enum Act {
    /// A delta; for our thread and turn or not.
    Delta {
        thread: bool,
        turn: bool,
        text: String,
    },
    ItemCompleted {
        text: String,
    },
    Completed {
        thread: bool,
        turn: bool,
        status: &'static str,
    },
    RetryError,
    /// A server request with one of the methods the policy knows, or an unknown one.
    Request {
        method: &'static str,
    },
    /// A response to an id the client may or may not have used.
    Response {
        id: i64,
        error: bool,
    },
    /// Any bytes as one line.
    Line(Vec<u8>),
    /// Bytes without a newline (the next act continues the line).
    Partial(Vec<u8>),
    Abort,
    Pause(u8),
}

/// How the server answers one of the client's requests.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Ok,
    Error,
    Twice,
    Never,
}

#[derive(Debug, Clone)]
struct Script {
    initialize: Answer,
    thread_start: Answer,
    turn_start: Answer,
    interrupt: Answer,
    acts: Vec<Act>,
    /// What ends the script: close stdout (exit), or keep it open (only an abort, a
    /// completion or a fatal frame then ends the run).
    close: bool,
}

fn answer() -> impl Strategy<Value = Answer> {
    prop_oneof![6 => Just(Answer::Ok), 1 => Just(Answer::Error), 1 => Just(Answer::Twice), 1 => Just(Answer::Never)]
}

fn act() -> impl Strategy<Value = Act> {
    let text = "[a-z \\u{e9}\\u{1F600}]{0,8}";
    prop_oneof![
        16 => (any::<bool>(), any::<bool>(), text).prop_map(|(a, b, text)| Act::Delta { thread: a || b, turn: a, text }),
        4 => text.prop_map(|text| Act::ItemCompleted { text }),
        4 => (any::<bool>(), any::<bool>(), prop::sample::select(vec!["completed", "failed", "interrupted", "weird"]))
            .prop_map(|(a, b, status)| Act::Completed { thread: a || b, turn: a, status }),
        2 => Just(Act::RetryError),
        4 => prop::sample::select(vec![
            "item/commandExecution/requestApproval",
            "item/fileChange/requestApproval",
            "item/tool/requestUserInput",
            "mcpServer/elicitation/request",
            "fake/unknown",
        ])
        .prop_map(|method| Act::Request { method }),
        2 => (0i64..8, any::<bool>()).prop_map(|(id, error)| Act::Response { id, error }),
        // Rare, as each one usually ends the run.
        1 => junk(24).prop_map(Act::Line),
        1 => junk(12).prop_map(Act::Partial),
        1 => Just(Act::Abort),
        2 => (0u8..20).prop_map(Act::Pause),
    ]
}

/// Mostly printable text, sometimes any bytes at all (invalid UTF-8 ends a run at once).
fn junk(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::collection::vec(0x20u8..0x7f, 0..max),
        1 => prop::collection::vec(any::<u8>(), 0..max),
    ]
}

fn script() -> impl Strategy<Value = Script> {
    (answer(), answer(), answer(), answer(), prop::collection::vec(act(), 0..24), any::<bool>()).prop_map(
        |(initialize, thread_start, turn_start, interrupt, acts, close)| Script {
            initialize,
            thread_start,
            turn_start,
            interrupt,
            acts,
            close,
        },
    )
}

fn line(value: Value) -> Vec<u8> {
    let mut bytes = value.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

fn act_bytes(act: &Act) -> Vec<u8> {
    let ids =
        |thread: bool, turn: bool| (if thread { THREAD } else { "thr-other" }, if turn { TURN } else { "turn-other" });
    match act {
        Act::Delta { thread, turn, text } => {
            let (t, u) = ids(*thread, *turn);
            line(
                json!({"method": "item/agentMessage/delta", "params": {"threadId": t, "turnId": u, "itemId": "m", "delta": text}}),
            )
        }
        Act::ItemCompleted { text } => {
            line(json!({"method": "item/completed", "params": {"threadId": THREAD, "turnId": TURN,
            "item": {"type": "agentMessage", "id": "m", "text": text, "phase": null}}}))
        }
        Act::Completed { thread, turn, status } => {
            let (t, u) = ids(*thread, *turn);
            line(
                json!({"method": "turn/completed", "params": {"threadId": t, "turn": {"id": u, "status": status, "items": [],
                "error": if *status == "failed" { json!({"message": "boom"}) } else { Value::Null }}}}),
            )
        }
        Act::RetryError => {
            line(json!({"method": "error", "params": {"threadId": THREAD, "turnId": TURN, "willRetry": true,
            "error": {"message": "Reconnecting... 1/5"}}}))
        }
        Act::Request { method } => {
            line(json!({"method": method, "id": 1000, "params": {"threadId": THREAD, "turnId": TURN}}))
        }
        Act::Response { id, error } => {
            if *error {
                line(json!({"id": id, "error": {"code": -32600, "message": "nope"}}))
            } else {
                line(json!({"id": id, "result": {}}))
            }
        }
        Act::Line(bytes) => {
            let mut bytes: Vec<u8> = bytes.iter().copied().filter(|&b| b != b'\n').collect();
            bytes.push(b'\n');
            bytes
        }
        Act::Partial(bytes) => bytes.iter().copied().filter(|&b| b != b'\n').collect(),
        Act::Abort | Act::Pause(_) => Vec::new(),
    }
}

/// The answer of the server to a client request, by method.
fn answers(request: &Value, script: &Script) -> Vec<Vec<u8>> {
    let id = request["id"].clone();
    let (how, result) = match request["method"].as_str().unwrap_or("") {
        "initialize" => {
            (script.initialize, json!({"userAgent": "rennet/0.171.0 (T) (rennet; 0.1.0)", "codexHome": "/h"}))
        }
        "thread/start" => (script.thread_start, json!({"thread": {"id": THREAD}})),
        "turn/start" => (script.turn_start, json!({"turn": {"id": TURN, "status": "inProgress", "items": []}})),
        "turn/interrupt" => (script.interrupt, json!({})),
        _ => return Vec::new(),
    };
    let ok = line(json!({"id": id, "result": result}));
    match how {
        Answer::Ok => vec![ok],
        Answer::Twice => vec![ok.clone(), ok],
        Answer::Error => vec![line(json!({"id": id, "error": {"code": -32603, "message": "refused"}}))],
        Answer::Never => Vec::new(),
    }
}

struct Outcome {
    events: Vec<Value>,
    ended: bool,
}

/// Runs the runner against the script; panics if it does not end within 10 s.
fn play(script: Script) -> Outcome {
    runtime().block_on(async move {
        let (client_read, server_write) = tokio::io::duplex(1 << 16);
        let (server_read, client_write) = tokio::io::duplex(1 << 16);
        let stream = Arc::new(EventStream::new());
        let control = Arc::new(Control::new());
        let exited = Arc::new(AtomicBool::new(false));
        let ended = Arc::new(Mutex::new(None));
        let process = FakeProcess { exited: exited.clone(), exit_code: Arc::new(Mutex::new(0)), ended: ended.clone() };

        // One writer for both the answers and the script's acts; `None` closes stdout.
        let (tx, mut rx) = mpsc::unbounded_channel::<Option<Vec<u8>>>();
        let writer = tokio::spawn(async move {
            let mut out = server_write;
            while let Some(Some(bytes)) = rx.recv().await {
                if out.write_all(&bytes).await.is_err() {
                    break;
                }
            }
            drop(out);
            exited.store(true, Ordering::SeqCst);
        });
        let responder = {
            let (tx, script) = (tx.clone(), script.clone());
            tokio::spawn(async move {
                let mut lines = BufReader::new(server_read).lines();
                while let Ok(Some(l)) = lines.next_line().await {
                    let Ok(request) = serde_json::from_str::<Value>(&l) else { continue };
                    for bytes in answers(&request, &script) {
                        let _ = tx.send(Some(bytes));
                    }
                }
            })
        };
        let actor = {
            let (control, script) = (control.clone(), script.clone());
            tokio::spawn(async move {
                for act in &script.acts {
                    match act {
                        Act::Abort => control.request_abort(),
                        Act::Pause(ms) => tokio::time::sleep(Duration::from_millis(*ms as u64)).await,
                        act => {
                            let _ = tx.send(Some(act_bytes(act)));
                            tokio::task::yield_now().await;
                        }
                    }
                }
                if script.close {
                    let _ = tx.send(None);
                } else {
                    // Stdout stays open: if nothing else ends the run, the host does.
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    control.request_abort();
                }
            })
        };
        let reader = {
            let stream = stream.clone();
            tokio::spawn(async move {
                let mut events = Vec::new();
                while let Some(batch) = stream.next_batch().await {
                    events.extend(crate::batch::decode(&batch).unwrap());
                }
                events
            })
        };
        let opts = options::parse(
            &json!({"prompt": "p", "cwd": super::CWD, "requestTimeoutMs": 200, "interruptGraceMs": 100}).to_string(),
        )
        .unwrap();
        let terminal = super::drive_fake(client_read, client_write, process, &opts, &stream, &control).await;
        stream.finish(terminal);
        let events = tokio::time::timeout(Duration::from_secs(5), reader).await.expect("events drained").unwrap();
        actor.abort();
        responder.abort();
        writer.abort();
        Outcome { events, ended: ended.lock().map(|e| e.is_some()).unwrap_or(false) }
    })
}

proptest! {
    #![proptest_config(config())]

    /// Whatever the server sends and whenever the host aborts: one terminal event, the last,
    /// consistent with itself, and the process ended.
    #[test]
    fn runner_ends_with_exactly_one_terminal(script in script()) {
        // Before the turn/start acknowledgement names our turn, a turn that starts or completes
        // on our thread is taken as ours (state.rs: the thread runs one turn at a time).
        let ours_completed = script.acts.iter().any(|a| matches!(a, Act::Completed { thread: true, .. }));
        let outcome = play(script);
        let terminals: Vec<&Value> = outcome.events.iter().filter(|e| e["type"] == "terminal").collect();
        prop_assert_eq!(terminals.len(), 1);
        let terminal = outcome.events.last().unwrap();
        prop_assert_eq!(&terminal["type"], "terminal");
        prop_assert!(outcome.ended, "the process was not ended");
        let status = terminal["status"].as_str().unwrap();
        match status {
            "failed" => prop_assert!(terminal["failure"]["code"].is_string(), "{}", terminal),
            "completed" => {
                prop_assert!(ours_completed, "completed without our turn/completed: {}", terminal);
                prop_assert!(terminal["failure"].is_null());
            }
            "cancelled" => prop_assert!(terminal["cancellation"].is_string(), "{}", terminal),
            other => prop_assert!(false, "unknown status {}", other),
        }
        // Events of other threads and turns never pass as ours.
        for e in &outcome.events {
            if e["type"] == "messageDelta" {
                prop_assert!(!e["delta"].as_str().unwrap_or("").contains("other"));
            }
        }
    }
}
