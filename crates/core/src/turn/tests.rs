//! The runner driven through in-memory pipes by a scripted peer: no processes.

use super::{drive, Controls};
use crate::cancel::Cancel;
use crate::options;
use crate::process::{End, ExitInfo, ServerProcess, EXIT_GRACE};
use crate::stream::EventStream;
use serde_json::{json, Value};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

const THREAD: &str = "thr-1";
const TURN: &str = "turn-1";
/// The turn's working directory: absolute on this platform (the scripted server never looks at it).
const CWD: &str = if cfg!(windows) { r"C:\work" } else { "/work" };

/// The caller's side of a turn in these tests: its cancellation and its controls together.
#[derive(Default)]
pub(crate) struct Control {
    pub cancel: Cancel,
    pub controls: Controls,
}

impl Control {
    pub(crate) fn new() -> Control {
        Control::default()
    }

    pub(crate) fn request_abort(&self) {
        self.cancel.request_abort();
    }

    pub(crate) fn request_kill(&self) {
        self.cancel.request_kill();
    }
}

impl std::ops::Deref for Control {
    type Target = Controls;

    fn deref(&self) -> &Controls {
        &self.controls
    }
}

/// Stands in for the child: records how it was ended.
pub(crate) struct FakeProcess {
    exited: Arc<AtomicBool>,
    exit_code: Arc<Mutex<i32>>,
    ended: Arc<Mutex<Option<End>>>,
}

impl ServerProcess for FakeProcess {
    fn pid(&self) -> u32 {
        4242
    }

    async fn wait_exit(&mut self, within: Duration) -> Option<ExitInfo> {
        let until = tokio::time::Instant::now() + within;
        while tokio::time::Instant::now() < until {
            if self.exited.load(Ordering::SeqCst) {
                return Some(ExitInfo { code: Some(*self.exit_code.lock().unwrap()), signal: None });
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        None
    }

    async fn end_tree(&mut self, how: End) -> ExitInfo {
        *self.ended.lock().unwrap() = Some(how);
        if self.exited.load(Ordering::SeqCst) {
            ExitInfo { code: Some(*self.exit_code.lock().unwrap()), signal: None }
        } else {
            ExitInfo { code: None, signal: Some(15) }
        }
    }

    fn stderr_tail(&self) -> Vec<String> {
        vec!["last stderr line".into()]
    }
}

/// The server side of the pipes, with helpers that speak the protocol.
pub(crate) struct Peer {
    lines: Lines<BufReader<DuplexStream>>,
    out: Option<DuplexStream>,
    exited: Arc<AtomicBool>,
    exit_code: Arc<Mutex<i32>>,
    stream: Arc<EventStream>,
    control: Arc<Control>,
    /// Every message the client sent, in order.
    received: Arc<Mutex<Vec<Value>>>,
}

impl Peer {
    pub(crate) async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.lines.next_line())
            .await
            .expect("the client sent nothing within 5 s")
            .unwrap()
            .expect("the client closed stdin");
        let value: Value = serde_json::from_str(&line).unwrap();
        assert!(value.get("jsonrpc").is_none(), "no jsonrpc member on the wire");
        self.received.lock().unwrap().push(value.clone());
        value
    }

    pub(crate) async fn expect(&mut self, method: &str) -> Value {
        let message = self.recv().await;
        assert_eq!(message["method"], method, "{message}");
        message
    }

    pub(crate) async fn raw(&mut self, line: &str) {
        let out = self.out.as_mut().expect("still writing");
        out.write_all(line.as_bytes()).await.unwrap();
        out.write_all(b"\n").await.unwrap();
    }

    pub(crate) async fn send(&mut self, value: Value) {
        self.raw(&value.to_string()).await;
    }

    pub(crate) async fn respond(&mut self, request: &Value, result: Value) {
        self.send(json!({"id": request["id"], "result": result})).await;
    }

    pub(crate) async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"method": method, "params": params, "emittedAtMs": 1})).await;
    }

    /// initialize → initialized → thread/start; returns the thread request.
    /// `initialize`, `initialized`, and `account/read` answered as with a custom model provider
    /// (no OpenAI login needed).
    async fn initialize(&mut self) {
        let init = self.expect("initialize").await;
        assert_eq!(init["params"]["clientInfo"]["name"], "rennet");
        self.respond(&init, json!({"userAgent": "rennet/0.171.0 (Test; x86_64) (rennet; 0.1.0)", "codexHome": "/h"}))
            .await;
        let initialized = self.expect("initialized").await;
        assert!(initialized.get("id").is_none());
        let account = self.expect("account/read").await;
        self.respond(&account, json!({"account": null, "requiresOpenaiAuth": false})).await;
    }

    async fn handshake(&mut self) -> Value {
        self.initialize().await;
        let mut thread = self.recv().await;
        if thread["method"] == "config/read" {
            self.respond(&thread, json!({"config": {"mcp_servers": {"ambient": {"command": "x"}}}, "origins": {}}))
                .await;
            thread = self.recv().await;
        }
        let read_only = thread["params"]["sandbox"] == "read-only";
        self.respond(
            &thread,
            json!({"thread": {"id": THREAD}, "sandbox": {"type": "readOnly"}, "approvalPolicy": "never"}),
        )
        .await;
        if thread["params"].get("config").is_some() && read_only {
            let features = self.expect("experimentalFeature/list").await;
            self.respond(&features, json!({"data": [{"name": "hooks", "enabled": false}], "nextCursor": null})).await;
            let servers = self.expect("mcpServerStatus/list").await;
            self.respond(
                &servers,
                json!({"data": [{"name": "ambient", "runtimeStatus": "disabled"}], "nextCursor": null}),
            )
            .await;
        }
        thread
    }

    /// turn/start acknowledged, then turn/started; returns the turn request.
    async fn start_turn(&mut self) -> Value {
        let turn = self.expect("turn/start").await;
        self.respond(&turn, json!({"turn": {"id": TURN, "status": "inProgress", "items": []}})).await;
        self.notify("turn/started", json!({"threadId": THREAD, "turn": {"id": TURN, "status": "inProgress"}})).await;
        turn
    }

    async fn complete(&mut self, status: &str) {
        self.notify("turn/completed", json!({"threadId": THREAD, "turn": {"id": TURN, "status": status, "items": []}}))
            .await;
    }

    async fn message(&mut self, id: &str, text: &str) {
        let item = json!({"type": "agentMessage", "id": id, "text": "", "phase": null});
        self.notify("item/started", json!({"threadId": THREAD, "turnId": TURN, "item": item})).await;
        self.notify(
            "item/agentMessage/delta",
            json!({"threadId": THREAD, "turnId": TURN, "itemId": id, "delta": text}),
        )
        .await;
        let item = json!({"type": "agentMessage", "id": id, "text": text, "phase": null});
        self.notify("item/completed", json!({"threadId": THREAD, "turnId": TURN, "item": item})).await;
    }

    /// Aborts once the runner has handled everything sent so far: it handles frames in order,
    /// so its answer to a server request sent now comes after all of them.
    async fn abort_after_pending_frames(&mut self) {
        self.send(json!({"id": "sync", "method": "item/tool/requestUserInput", "params": {}})).await;
        while self.recv().await["id"] != "sync" {}
        self.control.request_abort();
    }

    /// The process exits: stdout closes.
    pub(crate) fn exit(&mut self, code: i32) {
        *self.exit_code.lock().unwrap() = code;
        self.exited.store(true, Ordering::SeqCst);
        self.out = None;
    }

    /// Waits until the client closes stdin (the real server then exits).
    pub(crate) async fn until_stdin_closed(&mut self) {
        while let Ok(Ok(Some(line))) = tokio::time::timeout(Duration::from_secs(5), self.lines.next_line()).await {
            self.received.lock().unwrap().push(serde_json::from_str(&line).unwrap());
        }
        self.exit(0);
    }
}

struct Run {
    events: Vec<Value>,
    terminal: Value,
    received: Vec<Value>,
    /// How the process was ended.
    ended: Option<End>,
}

impl Run {
    fn types(&self) -> Vec<&str> {
        self.events.iter().map(|e| e["type"].as_str().unwrap()).collect()
    }

    fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }

    fn sent(&self, method: &str) -> Vec<&Value> {
        self.received.iter().filter(|m| m["method"] == method).collect()
    }
}

/// A scripted server over in-memory pipes: the peer, the process it stands in for, the
/// client's ends of the pipes, and what the peer will have seen.
pub(crate) struct Wiring {
    pub peer: Peer,
    pub process: FakeProcess,
    pub reader: DuplexStream,
    pub writer: DuplexStream,
    /// How the process was ended.
    pub ended: Arc<Mutex<Option<End>>>,
    /// Every message the client sent, in order.
    pub received: Arc<Mutex<Vec<Value>>>,
}

pub(crate) fn wiring(stream: Arc<EventStream>, control: Arc<Control>) -> Wiring {
    let (client_read, server_write) = tokio::io::duplex(1 << 16);
    let (server_read, client_write) = tokio::io::duplex(1 << 16);
    let exited = Arc::new(AtomicBool::new(false));
    let exit_code = Arc::new(Mutex::new(0));
    let ended = Arc::new(Mutex::new(None));
    let received = Arc::new(Mutex::new(Vec::new()));
    let peer = Peer {
        lines: BufReader::new(server_read).lines(),
        out: Some(server_write),
        exited: exited.clone(),
        exit_code: exit_code.clone(),
        stream,
        control,
        received: received.clone(),
    };
    let process = FakeProcess { exited, exit_code, ended: ended.clone() };
    Wiring { peer, process, reader: client_read, writer: client_write, ended, received }
}

/// Waits for the peer's script: its own assertions count, and its panic fails the test.
pub(crate) async fn finished(script: tokio::task::JoinHandle<()>) {
    match tokio::time::timeout(Duration::from_secs(3), script).await {
        Ok(Err(e)) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Ok(_) => {}
        Err(_) => panic!("the peer script did not finish"),
    }
}

/// `drive` over the fake process and pipes; panics if the turn does not end within 10 s.
async fn drive_fake(
    reader: DuplexStream,
    writer: DuplexStream,
    process: FakeProcess,
    options: &options::TurnOptions,
    stream: &EventStream,
    control: &Control,
) -> crate::events::Terminal {
    let caller = (stream, &control.cancel, &control.controls);
    tokio::time::timeout(
        Duration::from_secs(10),
        drive(reader, writer, process, options, "/bin/fake-codex", "t-test", caller),
    )
    .await
    .expect("the turn ended")
}

async fn run<F, Fut>(options: Value, script: F) -> Run
where
    F: FnOnce(Peer) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let stream = Arc::new(EventStream::new());
    let control = Arc::new(Control::new());
    let Wiring { peer, process, reader: client_read, writer: client_write, ended, received } =
        wiring(stream.clone(), control.clone());
    let script = tokio::spawn(script(peer));
    let mut opts = json!({"prompt": "say hi", "cwd": CWD});
    opts.as_object_mut().unwrap().extend(options.as_object().unwrap().clone());
    let prepared = opts.as_object_mut().unwrap().remove("prepared").is_some();
    let review = opts.as_object_mut().unwrap().remove("review").is_some();
    let opts = if prepared {
        options::parse_prepared(&opts.to_string())
    } else if review {
        opts.as_object_mut().unwrap().remove("prompt");
        options::parse_review(&opts.to_string())
    } else {
        options::parse(&opts.to_string())
    };
    let opts = opts.unwrap();
    let terminal = drive_fake(client_read, client_write, process, &opts, &stream, &control).await;
    stream.finish(terminal);
    let mut events = Vec::new();
    while let Some(batch) = stream.next_batch().await {
        events.extend(crate::batch::decode(&batch).unwrap());
    }
    finished(script).await;
    let terminal = events.last().cloned().unwrap();
    assert_eq!(terminal["type"], "terminal");
    assert_eq!(events.iter().filter(|e| e["type"] == "terminal").count(), 1);
    let received = received.lock().unwrap().clone();
    let ended = *ended.lock().unwrap();
    Run { events, terminal, received, ended }
}

#[tokio::test]
async fn happy_turn_streams_events_and_completes() {
    let r = run(json!({}), |mut p| async move {
        let thread = p.handshake().await;
        assert_eq!(thread["method"], "thread/start");
        assert_eq!(thread["params"], json!({"cwd": CWD, "approvalPolicy": "never", "sandbox": "read-only"}));
        let turn = p.start_turn().await;
        assert_eq!(turn["params"]["sandboxPolicy"], json!({"type": "dangerFullAccess"}));
        assert_eq!(turn["params"]["approvalPolicy"], "never");
        assert_eq!(turn["params"]["input"][0]["text"], "say hi");
        assert!(turn["params"].get("effort").is_none() && turn["params"].get("model").is_none());
        assert!(turn["params"].get("outputSchema").is_none());
        p.notify("item/reasoning/summaryTextDelta", json!({"threadId": THREAD, "turnId": TURN, "itemId": "rs", "delta": "think", "summaryIndex": 1})).await;
        p.notify("item/reasoning/textDelta", json!({"threadId": THREAD, "turnId": TURN, "itemId": "rs", "delta": "raw", "contentIndex": 0})).await;
        p.notify("item/commandExecution/outputDelta", json!({"threadId": THREAD, "turnId": TURN, "itemId": "c1", "delta": "out\n"})).await;
        p.message("msg_1", "Hello").await;
        p.notify("thread/tokenUsage/updated", json!({"threadId": THREAD, "turnId": TURN, "tokenUsage": {
            "total": {"totalTokens": 150, "inputTokens": 100, "cachedInputTokens": 20, "outputTokens": 50, "reasoningOutputTokens": 10},
            "last": {"totalTokens": 150, "inputTokens": 100, "cachedInputTokens": 20, "outputTokens": 50, "reasoningOutputTokens": 10},
            "modelContextWindow": 258400}})).await;
        p.notify("account/rateLimits/updated", json!({"rateLimits": {"limitId": "codex", "primary": null}})).await;
        p.notify("turn/plan/updated", json!({"threadId": THREAD, "turnId": TURN, "explanation": null,
            "plan": [{"step": "Read", "status": "completed"}, {"step": "Write", "status": "inProgress"}]})).await;
        p.notify("turn/diff/updated", json!({"threadId": THREAD, "turnId": TURN, "diff": "--- a/x\n+++ b/x\n"})).await;
        // Another turn's plan changes nothing of this one.
        p.notify("turn/plan/updated", json!({"threadId": THREAD, "turnId": "other", "plan": []})).await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(
        r.types(),
        vec![
            "started",
            "threadStarted",
            "turnStarted",
            "reasoningDelta",
            "reasoningDelta",
            "commandOutput",
            "itemStarted",
            "messageDelta",
            "itemCompleted",
            "usage",
            "rateLimits",
            "plan",
            "diff",
            "passthrough",
            "turnCompleted",
            "terminal"
        ]
    );
    // turnCompleted says, before the child is gone, what the terminal says after.
    let mut completed = r.of_type("turnCompleted")[0].clone();
    completed["type"] = json!("terminal");
    assert_eq!(completed, r.terminal);
    assert_eq!(r.events[0]["pid"], 4242);
    assert_eq!(r.events[0]["turnKey"], "t-test");
    assert_eq!(r.events[0]["codexVersion"], "0.171.0");
    assert_eq!(
        r.events[3],
        json!({"type": "reasoningDelta", "itemId": "rs", "delta": "think", "part": "summary", "index": 1})
    );
    assert_eq!(r.events[4]["part"], "text");
    let usage = json!({"input": 100, "cacheRead": 20, "output": 50, "reasoning": 10, "total": 150});
    assert_eq!(r.events[9], json!({"type": "usage", "turn": usage, "thread": usage, "contextWindow": 258400}));
    assert_eq!(r.events[10], json!({"type": "rateLimits", "rateLimits": {"limitId": "codex", "primary": null}}));
    assert_eq!(
        r.events[11],
        json!({"type": "plan", "explanation": null,
               "plan": [{"step": "Read", "status": "completed"}, {"step": "Write", "status": "inProgress"}]})
    );
    assert_eq!(r.events[12], json!({"type": "diff", "diff": "--- a/x\n+++ b/x\n"}));
    assert_eq!(r.events[13]["reason"], "foreignTurn");
    assert_eq!(
        r.terminal,
        json!({"type": "terminal", "status": "completed", "threadId": THREAD, "turnId": TURN,
               "finalMessage": "Hello", "proposedPlan": null, "usage": usage, "failure": null, "agents": [],
               "totalUsage": usage, "cutOff": []})
    );
    assert!(r.sent("turn/interrupt").is_empty());
    assert_eq!(r.ended, Some(End::Polite(EXIT_GRACE)));
}

#[tokio::test]
async fn turn_started_before_ack_and_completion_without_started() {
    let r = run(json!({"model": "m1", "effort": "low"}), |mut p| async move {
        let thread = p.handshake().await;
        assert_eq!(thread["params"]["model"], "m1");
        let turn = p.expect("turn/start").await;
        assert_eq!(turn["params"]["effort"], "low");
        // Early notifications of the new turn, before its acknowledgement.
        p.notify(
            "item/agentMessage/delta",
            json!({"threadId": THREAD, "turnId": TURN, "itemId": "m", "delta": "early"}),
        )
        .await;
        p.notify("turn/started", json!({"threadId": THREAD, "turn": {"id": TURN}})).await;
        p.respond(&turn, json!({"turn": {"id": TURN}})).await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.types(), vec!["started", "threadStarted", "turnStarted", "messageDelta", "turnCompleted", "terminal"]);
    assert_eq!(r.terminal["status"], "completed");

    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        let turn = p.expect("turn/start").await;
        p.notify(
            "turn/completed",
            json!({"threadId": THREAD, "turn": {"id": TURN, "status": "completed",
            "items": [{"type": "agentMessage", "id": "m", "text": "from items"}]}}),
        )
        .await;
        p.respond(&turn, json!({"turn": {"id": TURN}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.types(), vec!["started", "threadStarted", "turnStarted", "turnCompleted", "terminal"]);
    assert_eq!(r.terminal["status"], "completed");
    assert_eq!(r.terminal["turnId"], TURN);
    assert_eq!(r.terminal["finalMessage"], "from items");
}

#[tokio::test]
async fn structured_output_parsed_or_rejected() {
    let schema = json!({"type": "object", "properties": {"answer": {"type": "string"}}});
    let r = run(json!({"outputSchema": schema}), |mut p| async move {
        p.handshake().await;
        let turn = p.start_turn().await;
        assert_eq!(turn["params"]["outputSchema"]["properties"]["answer"]["type"], "string");
        p.message("m", r#"{"answer":"42"}"#).await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["structuredOutput"], json!({"answer": "42"}));

    let r = run(json!({"outputSchema": schema}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.message("m", "not json").await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "failed");
    assert_eq!(r.terminal["failure"]["code"], "STRUCTURED_OUTPUT_INVALID");
    assert_eq!(r.terminal["failure"]["source"], "turn");
    assert_eq!(r.terminal["failure"]["detail"]["text"], "not json");
    assert_eq!(r.terminal["finalMessage"], "not json");
}

#[tokio::test]
async fn server_requests_are_answered_by_policy() {
    let methods = [
        ("item/commandExecution/requestApproval", json!({"result": {"decision": "accept"}}), "accepted"),
        ("item/fileChange/requestApproval", json!({"result": {"decision": "accept"}}), "accepted"),
        ("item/permissions/requestApproval", json!({"result": {"permissions": {}}}), "grantedEmpty"),
        ("execCommandApproval", json!({"result": {"decision": "approved"}}), "accepted"),
        (
            "mcpServer/elicitation/request",
            json!({"result": {"action": "decline", "content": null, "_meta": null}}),
            "declined",
        ),
        ("item/tool/call", json!({"error": {"code": -32601}}), "methodError"),
        ("account/chatgptAuthTokens/refresh", json!({"error": {"code": -32601}}), "methodError"),
        ("brand/new", json!({"error": {"code": -32601}}), "methodError"),
    ];
    for access in ["full", "readOnly"] {
        let script = methods.clone();
        let r = run(json!({"access": access}), move |mut p| async move {
            let methods = script;
            p.handshake().await;
            p.start_turn().await;
            for (i, (method, expected, _)) in methods.iter().enumerate() {
                p.send(json!({"id": i, "method": method, "params": {"threadId": THREAD, "turnId": TURN}})).await;
                let reply = p.recv().await;
                assert_eq!(reply["id"], i);
                let expected = if access == "full" { expected.clone() } else { json!({"error": {"code": -32601}}) };
                if let Some(result) = expected.get("result") {
                    assert_eq!(&reply["result"], result, "{method}");
                } else {
                    assert_eq!(reply["error"]["code"], -32601, "{method}");
                    assert!(reply.get("result").is_none());
                }
            }
            p.complete("completed").await;
            p.until_stdin_closed().await;
        })
        .await;
        let replies: Vec<_> =
            r.of_type("serverRequest").iter().map(|e| e["reply"].as_str().unwrap().to_string()).collect();
        let expected: Vec<_> = methods
            .iter()
            .map(|(_, _, kind)| if access == "full" { kind.to_string() } else { "methodError".to_string() })
            .collect();
        assert_eq!(replies, expected);
        assert_eq!(r.terminal["status"], "completed");
    }
}

#[tokio::test]
async fn foreign_frames_pass_through_and_change_nothing() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.notify(
            "item/agentMessage/delta",
            json!({"threadId": "sub-thread", "turnId": "t9", "itemId": "x", "delta": "sub"}),
        )
        .await;
        p.notify(
            "turn/completed",
            json!({"threadId": "sub-thread", "turn": {"id": "t9", "status": "failed", "items": []}}),
        )
        .await;
        p.notify(
            "turn/completed",
            json!({"threadId": THREAD, "turn": {"id": "other-turn", "status": "completed", "items": []}}),
        )
        .await;
        p.send(json!({"id": 999, "result": {}})).await;
        p.notify("brand/newNotification", json!({"threadId": THREAD, "x": 1})).await;
        p.message("m", "ours").await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    let passthrough: Vec<_> = r.of_type("passthrough").iter().map(|e| e["reason"].as_str().unwrap()).collect();
    assert_eq!(passthrough, vec!["foreignThread", "foreignThread", "foreignTurn", "unknownResponse"]);
    assert_eq!(r.of_type("passthrough")[3]["message"], json!({"id": 999, "result": {}}));
    // A method the pinned schema does not list: kept, under a type of its own.
    assert!(r.of_type("native").is_empty());
    let unknown = r.of_type("unknownNotification");
    assert_eq!(unknown[0]["method"], "brand/newNotification");
    assert_eq!(unknown[0]["params"], json!({"threadId": THREAD, "x": 1}));
    assert_eq!(r.terminal["status"], "completed");
    assert_eq!(r.terminal["finalMessage"], "ours");
    assert_eq!(r.of_type("messageDelta").len(), 1);
}

#[tokio::test]
async fn retries_are_progress_and_restart_the_item() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        let started = json!({"threadId": THREAD, "turnId": TURN, "item": {"type": "agentMessage", "id": "m", "text": ""}});
        p.notify("item/started", started.clone()).await;
        p.notify("item/agentMessage/delta", json!({"threadId": THREAD, "turnId": TURN, "itemId": "m", "delta": "Hel"})).await;
        p.notify("error", json!({"threadId": THREAD, "turnId": TURN, "willRetry": true,
            "error": {"message": "Reconnecting... 1/2", "codexErrorInfo": {"responseStreamDisconnected": {"httpStatusCode": null}}}})).await;
        p.message("m", "Hello again").await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    let retrying = r.of_type("retrying");
    assert_eq!(retrying.len(), 1);
    assert_eq!(retrying[0]["message"], "Reconnecting... 1/2");
    assert_eq!(retrying[0]["codexErrorInfo"], json!({"responseStreamDisconnected": {"httpStatusCode": null}}));
    assert_eq!(r.of_type("itemStarted").len(), 2);
    assert_eq!(r.terminal["finalMessage"], "Hello again");

    // Only the deltas of the last attempt carry the text: they are the last resort.
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        let started =
            json!({"threadId": THREAD, "turnId": TURN, "item": {"type": "agentMessage", "id": "m", "text": ""}});
        for attempt in ["Hel", "Hello again"] {
            p.notify("item/started", started.clone()).await;
            p.notify(
                "item/agentMessage/delta",
                json!({"threadId": THREAD, "turnId": TURN, "itemId": "m", "delta": attempt}),
            )
            .await;
        }
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["finalMessage"], "Hello again");
}

#[tokio::test]
async fn turn_failure_keeps_the_provider_message() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        let error = json!({"message": "Quota exceeded. Check your plan and billing details.", "codexErrorInfo": "usageLimitExceeded", "additionalDetails": null});
        p.notify("error", json!({"threadId": THREAD, "turnId": TURN, "willRetry": false, "error": error})).await;
        p.notify("turn/completed", json!({"threadId": THREAD, "turn": {"id": TURN, "status": "failed", "items": [], "error": error}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.of_type("native")[0]["method"], "error");
    assert_eq!(r.terminal["status"], "failed");
    assert_eq!(
        r.terminal["failure"],
        json!({"source": "turn", "code": "TURN_FAILED", "message": "Quota exceeded. Check your plan and billing details.",
               "detail": {"status": "failed", "codexErrorInfo": "usageLimitExceeded", "additionalDetails": null},
               "retryable": false, "reason": "usageLimit"})
    );
}

/// `initialize`, `initialized`, then `account/read` answered with `answer` (a result or an error).
async fn account_read_answered(p: &mut Peer, answer: Value) {
    let init = p.expect("initialize").await;
    p.respond(&init, json!({"userAgent": "rennet/0.171.0"})).await;
    p.expect("initialized").await;
    let account = p.expect("account/read").await;
    assert_eq!(account["params"], json!({}));
    match answer.get("error") {
        Some(error) => p.send(json!({"id": account["id"], "error": error})).await,
        None => p.respond(&account, answer).await,
    }
}

#[tokio::test]
async fn a_turn_no_one_can_authenticate_fails_before_the_thread() {
    let not_logged_in = json!({"account": null, "requiresOpenaiAuth": true, "userId": null});
    let report = not_logged_in.clone();
    // An empty key counts as none (and hides one the test process may have).
    let r = run(json!({"env": {"OPENAI_API_KEY": "", "CODEX_API_KEY": ""}}), move |mut p| async move {
        account_read_answered(&mut p, report).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.types(), vec!["started", "terminal"]);
    let failure = &r.terminal["failure"];
    assert_eq!((failure["source"].as_str(), failure["code"].as_str()), (Some("jsonrpc"), Some("AUTH_REQUIRED")));
    assert!(failure["message"].as_str().unwrap().contains("codex login"), "{failure}");
    assert_eq!(failure["detail"]["report"], not_logged_in);
    assert!(r.received.iter().all(|m| m["method"] != "thread/start"), "{:?}", r.received);
}

#[tokio::test]
async fn a_login_report_that_does_not_stop_the_turn() {
    let not_logged_in = json!({"account": null, "requiresOpenaiAuth": true});
    for (why, env, answer) in [
        ("an API key for the child", json!({"OPENAI_API_KEY": "sk-test"}), not_logged_in.clone()),
        ("a custom model provider", json!({}), json!({"account": null, "requiresOpenaiAuth": false})),
        ("logged in", json!({}), json!({"account": {"type": "apiKey"}, "requiresOpenaiAuth": true})),
        // Older Codex: the method is unknown.
        (
            "no account/read",
            json!({}),
            json!({"error": {"code": -32600, "message": "Invalid request: unknown variant `account/read`"}}),
        ),
        ("not found", json!({}), json!({"error": {"code": -32601, "message": "method not found"}})),
    ] {
        let r = run(json!({"env": env}), move |mut p| async move {
            account_read_answered(&mut p, answer).await;
            let thread = p.expect("thread/start").await;
            p.respond(&thread, json!({"thread": {"id": THREAD}})).await;
            p.start_turn().await;
            p.complete("completed").await;
            p.until_stdin_closed().await;
        })
        .await;
        assert_eq!(r.terminal["status"], "completed", "{why}: {}", r.terminal);
    }
}

#[tokio::test]
async fn input_items_reach_turn_start_in_order() {
    let image = std::env::current_exe().unwrap().display().to_string();
    let input = json!([
        {"type": "text", "text": "what is this?"},
        {"type": "localImage", "path": image},
        {"type": "image", "url": "https://example.com/a.png", "detail": "low"},
    ]);
    let options = json!({"prompt": null, "input": input});
    let r = run(options, move |mut p| async move {
        p.handshake().await;
        let turn = p.start_turn().await;
        assert_eq!(
            turn["params"]["input"],
            json!([
                {"type": "text", "text": "what is this?", "text_elements": []},
                {"type": "localImage", "path": image},
                {"type": "image", "url": "https://example.com/a.png", "detail": "low"},
            ])
        );
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "completed", "{}", r.terminal);
}

#[tokio::test]
async fn steers_reach_the_running_turn_and_never_change_its_end() {
    use crate::options::input::InputItem;
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        // Before the turn has an id: held until it has one.
        let early = p.control.steer(vec![InputItem::text("first")]);
        let turn = p.expect("turn/start").await;
        p.respond(&turn, json!({"turn": {"id": TURN, "items": [], "status": "inProgress"}})).await;
        let steer = p.expect("turn/steer").await;
        assert_eq!(
            steer["params"],
            json!({"threadId": THREAD, "expectedTurnId": TURN,
                   "input": [{"type": "text", "text": "first", "text_elements": []}]})
        );
        p.respond(&steer, json!({"turnId": TURN})).await;
        assert_eq!(early.await.unwrap(), Ok(()));
        // Refused: the server's error verbatim, and the turn goes on.
        let refused = p.control.steer(vec![InputItem::text("second")]);
        let steer = p.expect("turn/steer").await;
        let error = json!({"code": -32600, "message": "cannot steer a review turn"});
        p.send(json!({"id": steer["id"], "error": error})).await;
        let refusal = refused.await.unwrap().unwrap_err();
        assert_eq!((refusal.code, refusal.message.as_str()), (-32600, "cannot steer a review turn"));
        p.message("msg_1", "Done").await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
        // After the end: answered "ended" at once, and nothing is sent.
        assert!(p.control.steer(vec![InputItem::text("late")]).await.is_err());
    })
    .await;
    assert_eq!(r.terminal["status"], "completed", "{}", r.terminal);
    assert_eq!(r.terminal["finalMessage"], "Done");
    assert_eq!(r.received.iter().filter(|m| m["method"] == "turn/steer").count(), 2);
}

#[tokio::test]
async fn a_steer_after_an_abort_is_ended_and_not_sent() {
    use crate::options::input::InputItem;
    let r = run(json!({"interruptGraceMs": 2000}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.abort_after_pending_frames().await;
        p.control.request_abort();
        let interrupt = p.expect("turn/interrupt").await;
        assert!(p.control.steer(vec![InputItem::text("too late")]).await.is_err());
        p.respond(&interrupt, json!({})).await;
        p.complete("interrupted").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "cancelled", "{}", r.terminal);
    assert!(r.received.iter().all(|m| m["method"] != "turn/steer"));
}

/// `run` for a prepared turn: the options without the turn's input.
async fn run_prepared<F, Fut>(options: Value, script: F) -> Run
where
    F: FnOnce(Peer) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut options = options;
    options.as_object_mut().unwrap().insert("prompt".into(), Value::Null);
    options.as_object_mut().unwrap().insert("prepared".into(), json!(true));
    run(options, script).await
}

#[tokio::test]
async fn a_prepared_turn_waits_for_its_input_then_starts_it() {
    use crate::options::parse_start;
    use crate::turn::Readiness;
    let r = run_prepared(json!({}), |mut p| async move {
        p.handshake().await;
        assert_eq!(p.control.readiness().await, Readiness::Ready { thread_id: THREAD.into() });
        // While it waits, the thread's own traffic is handled as in a turn.
        p.notify("thread/status/changed", json!({"threadId": THREAD, "status": {"type": "idle"}})).await;
        p.send(json!({"id": 7, "method": "item/tool/requestUserInput", "params": {"threadId": THREAD}})).await;
        let reply = p.recv().await;
        assert_eq!((reply["id"].as_i64(), reply["error"]["code"].as_i64()), (Some(7), Some(-32601)));
        let input = parse_start(r#"{"input":[{"type":"text","text":"now"}],"effort":"low"}"#, None).unwrap();
        assert!(p.control.start(input));
        assert!(!p.control.start(parse_start(r#"{"prompt":"twice"}"#, None).unwrap()));
        let turn = p.start_turn().await;
        assert_eq!(turn["params"]["input"], json!([{"type": "text", "text": "now", "text_elements": []}]));
        assert_eq!(turn["params"]["effort"], "low");
        p.message("msg_1", "Started late").await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "completed", "{}", r.terminal);
    assert_eq!(r.terminal["finalMessage"], "Started late");
    assert_eq!(r.types()[..2], ["started", "threadStarted"]);
}

#[tokio::test]
async fn a_prepared_turn_aborted_while_waiting_is_killed_and_sends_nothing() {
    let r = run_prepared(json!({}), |mut p| async move {
        p.handshake().await;
        p.control.readiness().await;
        p.control.request_abort();
        // Nothing is sent: there is no turn to interrupt.
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "cancelled", "{}", r.terminal);
    assert_eq!(r.terminal["cancellation"], "killed");
    assert!(r.received.iter().all(|m| m["method"] != "turn/start" && m["method"] != "turn/interrupt"));
}

#[tokio::test]
async fn request_errors_and_timeouts_are_jsonrpc_failures() {
    let r = run(json!({}), |mut p| async move {
        p.initialize().await;
        let thread = p.expect("thread/start").await;
        p.send(json!({"id": thread["id"], "error": {"code": -32600, "message": "Invalid request: missing field `params`"}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(
        r.terminal["failure"],
        json!({"source": "jsonrpc", "code": "REQUEST_FAILED", "message": "Invalid request: missing field `params`", "retryable": false,
               "detail": {"method": "thread/start", "code": -32600, "data": null}})
    );
    assert_eq!(r.types(), vec!["started", "terminal"]);

    let r = run(json!({"requestTimeoutMs": 100}), |mut p| async move {
        p.expect("initialize").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["failure"]["code"], "REQUEST_TIMEOUT");
    assert_eq!(r.terminal["failure"]["source"], "jsonrpc");
    assert_eq!(r.terminal["failure"]["detail"]["method"], "initialize");
}

#[tokio::test]
async fn preamble_is_tolerated_then_bad_lines_fail() {
    let r = run(json!({}), |mut p| async move {
        p.raw("Welcome to the dev shell").await;
        p.raw("\u{1b}[?2004h").await;
        p.handshake().await;
        p.start_turn().await;
        p.raw("oops, not json").await;
        p.until_stdin_closed().await;
    })
    .await;
    let diagnostics: Vec<_> = r.of_type("diagnostic").iter().map(|e| e["line"].as_str().unwrap().to_string()).collect();
    // A line of nothing but a terminal mode switch is no text for an app: skipped.
    assert_eq!(diagnostics, vec!["Welcome to the dev shell"]);
    assert_eq!(r.terminal["failure"]["source"], "parse");
    assert_eq!(r.terminal["failure"]["code"], "MALFORMED_FRAME");
    assert_eq!(r.terminal["failure"]["detail"]["line"], "oops, not json");
    assert_eq!(r.terminal["turnId"], TURN);
}

#[tokio::test]
async fn exit_mid_turn_reports_the_process_detail() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.exit(3);
    })
    .await;
    assert_eq!(r.terminal["status"], "failed");
    assert_eq!(r.terminal["failure"]["source"], "exit");
    assert_eq!(r.terminal["failure"]["code"], "PROCESS_EXITED");
    assert_eq!(r.terminal["failure"]["message"], "codex app-server exited with code 3 before the turn completed");
    assert_eq!(r.terminal["failure"]["detail"]["exitCode"], 3);
    assert_eq!(r.terminal["failure"]["detail"]["stderrTail"], json!(["last stderr line"]));
}

#[tokio::test]
async fn abort_before_the_turn_id_kills_at_once() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.expect("turn/start").await;
        p.control.request_abort();
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "cancelled");
    assert_eq!(r.terminal["cancellation"], "killed");
    assert_eq!(r.terminal["failure"], Value::Null);
    assert!(r.sent("turn/interrupt").is_empty());
    assert_eq!(r.ended, Some(End::Kill));
}

#[tokio::test]
async fn abort_after_turn_started_interrupts() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.abort_after_pending_frames().await;
        p.control.request_abort();
        let interrupt = p.expect("turn/interrupt").await;
        assert_eq!(interrupt["params"], json!({"threadId": THREAD, "turnId": TURN}));
        p.respond(&interrupt, json!({})).await;
        p.complete("interrupted").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "cancelled");
    assert_eq!(r.terminal["cancellation"], "interrupted");
    assert_eq!(r.sent("turn/interrupt").len(), 1);
    // The server completed the turn: it may leave by itself.
    assert_eq!(r.ended, Some(End::Polite(EXIT_GRACE)));
}

#[tokio::test]
async fn ignored_interrupt_is_killed_after_the_grace() {
    let r = run(json!({"interruptGraceMs": 200}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.abort_after_pending_frames().await;
        let asked = tokio::time::Instant::now();
        p.expect("turn/interrupt").await;
        p.until_stdin_closed().await;
        let took = asked.elapsed();
        // Not before the grace; the bound above only tells the grace from a stalled runner.
        assert!(took >= Duration::from_millis(190) && took < Duration::from_secs(4), "{took:?}");
    })
    .await;
    assert_eq!(r.terminal["status"], "cancelled");
    assert_eq!(r.terminal["cancellation"], "killed");
    assert_eq!(r.ended, Some(End::Kill));
}

#[tokio::test]
async fn abort_after_completion_sends_nothing() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.message("m", "done").await;
        p.complete("completed").await;
        // Stdin closes once the runner has seen the completion.
        p.until_stdin_closed().await;
        p.control.request_abort();
    })
    .await;
    assert_eq!(r.terminal["status"], "completed");
    assert!(r.sent("turn/interrupt").is_empty());
}

#[tokio::test]
async fn resume_counts_only_this_turns_usage() {
    let usage = |total: i64| json!({"totalTokens": total, "inputTokens": total, "cachedInputTokens": 0, "outputTokens": 0, "reasoningOutputTokens": 0});
    let r = run(json!({"threadId": THREAD}), move |mut p| async move {
        p.initialize().await;
        let resume = p.expect("thread/resume").await;
        assert_eq!(resume["params"]["threadId"], THREAD);
        assert_eq!(resume["params"]["sandbox"], "read-only");
        p.respond(&resume, json!({"thread": {"id": THREAD}})).await;
        // The server replays the last known usage of the previous turn.
        p.notify(
            "thread/tokenUsage/updated",
            json!({"threadId": THREAD, "turnId": "previous", "tokenUsage": {"total": usage(100), "last": usage(100)}}),
        )
        .await;
        p.start_turn().await;
        p.notify(
            "thread/tokenUsage/updated",
            json!({"threadId": THREAD, "turnId": TURN, "tokenUsage": {"total": usage(130), "last": usage(30)}}),
        )
        .await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.of_type("threadStarted")[0]["resumed"], true);
    assert_eq!(r.of_type("passthrough")[0]["reason"], "foreignTurn");
    assert_eq!(r.of_type("usage")[0]["turn"]["total"], 30);
    assert_eq!(r.of_type("usage")[0]["thread"]["total"], 130);
    assert_eq!(r.terminal["usage"]["total"], 30);

    // Without a replayed total, the first update's `total - last` is the baseline.
    let r = run(json!({"threadId": THREAD}), move |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.notify(
            "thread/tokenUsage/updated",
            json!({"threadId": THREAD, "turnId": TURN, "tokenUsage": {"total": usage(1150), "last": usage(150)}}),
        )
        .await;
        p.notify(
            "thread/tokenUsage/updated",
            json!({"threadId": THREAD, "turnId": TURN, "tokenUsage": {"total": usage(1525), "last": usage(375)}}),
        )
        .await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    let turn_totals: Vec<_> = r.of_type("usage").iter().map(|u| u["turn"]["total"].clone()).collect();
    assert_eq!(turn_totals, vec![json!(150), json!(525)]);
    assert_eq!(r.terminal["usage"]["total"], 525);
}

#[tokio::test]
async fn a_full_queue_pauses_reading_but_abort_still_works() {
    let r = run(json!({"interruptGraceMs": 300}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        // Nobody pulls: after the queue fills, the runner stops reading and these writes
        // block on the pipe.
        let stream = p.stream.clone();
        let flood = async {
            for i in 0..(crate::stream::MAX_QUEUED_EVENTS + 2000) {
                p.notify(
                    "item/agentMessage/delta",
                    json!({"threadId": THREAD, "turnId": TURN, "itemId": "m", "delta": i.to_string()}),
                )
                .await;
            }
        };
        // Blocked means: the queue filled up and the flood still could not finish (a fixed
        // timeout alone would also pass on a machine too busy to read 4096 events in time).
        let filled_then_waited = async {
            while stream.has_room() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        tokio::select! {
            () = flood => panic!("the pipe should push back when nobody reads"),
            () = filled_then_waited => {}
        }
        p.control.request_abort();
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "cancelled");
    assert_eq!(r.terminal["cancellation"], "killed");
    assert_eq!(r.ended, Some(End::Kill));
    let deltas = r.of_type("messageDelta");
    // Everything that was read arrived, in order.
    for (i, d) in deltas.iter().enumerate() {
        assert_eq!(d["delta"], i.to_string());
    }
    assert!(deltas.len() >= crate::stream::MAX_QUEUED_EVENTS - 10);
}

#[tokio::test]
async fn a_kill_while_the_server_is_waited_for_ends_it_at_once() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        // Stdout closes but the process stays; the runner closes stdin and waits for its exit.
        p.out = None;
        while let Ok(Ok(Some(_))) = tokio::time::timeout(Duration::from_secs(5), p.lines.next_line()).await {}
        p.control.request_kill();
    })
    .await;
    assert_eq!(r.terminal["failure"]["code"], "PROCESS_EXITED");
    assert_eq!(r.ended, Some(End::Kill));
}

#[tokio::test]
async fn a_request_the_server_does_not_read_times_out() {
    // A prompt larger than the pipe: its write waits for a reader that never comes.
    let prompt = "x".repeat(4 << 16);
    let r = run(json!({"prompt": prompt, "requestTimeoutMs": 300}), |mut p| async move {
        p.handshake().await;
        let stream = p.stream.clone();
        let ended = tokio::time::timeout(Duration::from_secs(5), async {
            while !stream.is_finished() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        assert!(ended.is_ok(), "the write of turn/start outlived the request's deadline");
        drop(p);
    })
    .await;
    assert_eq!(r.terminal["status"], "failed");
    assert_eq!(r.terminal["failure"]["code"], "REQUEST_TIMEOUT");
    assert_eq!(r.terminal["failure"]["detail"]["method"], "turn/start");
}

#[tokio::test]
async fn a_server_that_reads_nothing_cannot_hold_an_abort_up() {
    let r = run(json!({"interruptGraceMs": 200}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        let (stream, control) = (p.stream.clone(), p.control.clone());
        // Requests whose replies nobody reads: once the pipe is full, the runner's write
        // waits, and it reads no more requests either.
        let flood = async {
            for id in 0..100_000 {
                let params = json!({"threadId": THREAD, "turnId": TURN, "itemId": format!("call_{id}")});
                p.send(json!({"id": id, "method": "item/commandExecution/requestApproval", "params": params})).await;
            }
        };
        tokio::select! {
            () = flood => panic!("the pipes should fill when nobody reads"),
            () = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
        control.request_abort();
        // Still reading nothing (dropping the pipe would end the write with an error).
        let ended = tokio::time::timeout(Duration::from_secs(3), async {
            while !stream.is_finished() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        assert!(ended.is_ok(), "the abort waited for a write the server never reads");
    })
    .await;
    assert_eq!(r.terminal["status"], "cancelled");
    assert_eq!(r.terminal["cancellation"], "killed");
    assert_eq!(r.ended, Some(End::Kill));
    let answered = r.of_type("serverRequest").len();
    assert!(answered > 0 && answered < 100_000, "{answered} requests answered");
}

#[tokio::test]
async fn read_only_turn_confirms_isolation_before_starting() {
    let r = run(json!({"access": "readOnly"}), |mut p| async move {
        p.initialize().await;
        let config = p.expect("config/read").await;
        assert_eq!(config["params"]["cwd"], CWD);
        p.respond(&config, json!({"config": {"mcp_servers": {"ambient": {}, "proj.srv": {}}}})).await;
        let thread = p.expect("thread/start").await;
        assert_eq!(
            thread["params"]["config"],
            json!({"mcp_servers": {"ambient": {"enabled": false}, "proj.srv": {"enabled": false}}})
        );
        assert_eq!(thread["params"]["sandbox"], "read-only");
        p.respond(
            &thread,
            json!({"thread": {"id": THREAD}, "sandbox": {"type": "readOnly"}, "approvalPolicy": "never"}),
        )
        .await;
        // Two pages of features, then the servers.
        let features = p.expect("experimentalFeature/list").await;
        assert_eq!(features["params"]["threadId"], THREAD);
        p.respond(&features, json!({"data": [{"name": "plugins", "enabled": false}], "nextCursor": "1"})).await;
        let features = p.expect("experimentalFeature/list").await;
        assert_eq!(features["params"]["cursor"], "1");
        p.respond(&features, json!({"data": [{"name": "shell_tool", "enabled": true}], "nextCursor": null})).await;
        let servers = p.expect("mcpServerStatus/list").await;
        p.respond(
            &servers,
            json!({"data": [{"name": "ambient", "runtimeStatus": "disabled"},
                                              {"name": "proj.srv", "runtimeStatus": "disabled"}]}),
        )
        .await;
        let turn = p.start_turn().await;
        assert_eq!(turn["params"]["sandboxPolicy"], json!({"type": "readOnly"}));
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "completed");
}

#[tokio::test]
async fn read_only_turn_fails_closed_on_any_doubt() {
    let features_ok = json!({"data": [{"name": "hooks", "enabled": false}, {"name": "shell_tool", "enabled": true}]});
    let ambient_ok = json!({"name": "ambient", "runtimeStatus": "disabled"});
    // (what goes wrong, at which step, with what the server answers there) → the turn must
    // never start. The configuration names one server, `ambient`.
    let cases: Vec<(&str, &str, Value)> = vec![
        (
            "writable thread",
            "thread",
            json!({"thread": {"id": THREAD}, "sandbox": {"type": "dangerFullAccess"}, "approvalPolicy": "never"}),
        ),
        ("config/read error", "config-error", Value::Null),
        ("config/read without a config", "config", json!({"origins": {}})),
        ("config/read with a config that is not an object", "config", json!({"config": "not an object"})),
        ("config/read with mcp_servers that is not a table", "config", json!({"config": {"mcp_servers": ["ambient"]}})),
        ("a feature still on", "features", json!({"data": [{"name": "hooks", "enabled": true}]})),
        ("no features reported", "features", json!({"data": []})),
        ("features answered with an error", "features-error", Value::Null),
        ("the features never answered", "features-silent", Value::Null),
        ("a server still connected", "servers", json!({"data": [{"name": "ambient", "runtimeStatus": "connected"}]})),
        ("a configured server not reported", "servers", json!({"data": []})),
        (
            "a plugin server running",
            "servers",
            json!({"data": [ambient_ok.clone(), {"name": "plug", "runtimeStatus": "starting", "pluginId": "p@m"}]}),
        ),
        ("no runtimeStatus (Codex before 0.150)", "servers", json!({"data": [{"name": "ambient"}]})),
        ("servers of an unexpected shape", "servers", json!({"items": []})),
        ("a second page that omits the server", "servers-paged", json!({"data": [], "nextCursor": null})),
    ];
    for (what, step, report) in cases {
        let features_ok = features_ok.clone();
        let r = run(json!({"access": "readOnly", "requestTimeoutMs": 300}), move |mut p| async move {
            p.initialize().await;
            let config = p.expect("config/read").await;
            if step == "config-error" {
                p.send(json!({"id": config["id"], "error": {"code": -32603, "message": "config broken"}})).await;
                return p.until_stdin_closed().await;
            }
            if step == "config" {
                p.respond(&config, report).await;
                return p.until_stdin_closed().await;
            }
            p.respond(&config, json!({"config": {"mcp_servers": {"ambient": {}}}})).await;
            let thread = p.expect("thread/start").await;
            if step == "thread" {
                p.respond(&thread, report).await;
                return p.until_stdin_closed().await;
            }
            p.respond(
                &thread,
                json!({"thread": {"id": THREAD}, "sandbox": {"type": "readOnly"}, "approvalPolicy": "never"}),
            )
            .await;
            let features = p.expect("experimentalFeature/list").await;
            match step {
                "features" => p.respond(&features, report).await,
                "features-error" => {
                    p.send(json!({"id": features["id"], "error": {"code": -32600, "message": "nope"}})).await
                }
                "features-silent" => {}
                _ => {
                    p.respond(&features, features_ok).await;
                    let servers = p.expect("mcpServerStatus/list").await;
                    if step == "servers-paged" {
                        p.respond(
                            &servers,
                            json!({"data": [{"name": "other", "runtimeStatus": "disabled"}], "nextCursor": "2"}),
                        )
                        .await;
                        let next = p.expect("mcpServerStatus/list").await;
                        assert_eq!(next["params"]["cursor"], "2");
                        p.respond(&next, report).await;
                    } else {
                        p.respond(&servers, report).await;
                    }
                }
            }
            p.until_stdin_closed().await;
        })
        .await;
        assert_eq!(r.terminal["status"], "failed", "{what}");
        assert_eq!(r.terminal["failure"]["code"], "ISOLATION_NOT_CONFIRMED", "{what}: {}", r.terminal);
        assert!(r.terminal["failure"]["detail"]["report"] != Value::Null, "{what}");
        assert!(r.sent("turn/start").is_empty(), "{what}: turn/start must not be sent");
        if step == "config" {
            assert!(r.sent("thread/start").is_empty(), "{what}: thread/start must not be sent");
        }
    }
}

#[tokio::test]
async fn read_only_turn_with_a_config_naming_no_servers_disables_none() {
    let r = run(json!({"access": "readOnly"}), |mut p| async move {
        p.initialize().await;
        let config = p.expect("config/read").await;
        p.respond(&config, json!({"config": {"model": "m"}, "origins": {}})).await;
        let thread = p.expect("thread/start").await;
        assert_eq!(thread["params"]["config"], json!({"mcp_servers": {}}));
        p.respond(
            &thread,
            json!({"thread": {"id": THREAD}, "sandbox": {"type": "readOnly"}, "approvalPolicy": "never"}),
        )
        .await;
        let features = p.expect("experimentalFeature/list").await;
        p.respond(&features, json!({"data": [{"name": "hooks", "enabled": false}]})).await;
        let servers = p.expect("mcpServerStatus/list").await;
        p.respond(&servers, json!({"data": []})).await;
        p.start_turn().await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "completed", "{}", r.terminal);
}

mod proptests;

mod agent_loop;

mod outputs;

mod tools;

/// A defect inside the runner: the turn still ends with its one terminal, a waiting steer is
/// answered "ended" and a prepared turn's readiness says why — done once, by the core.
#[tokio::test]
async fn a_defect_in_the_runner_still_ends_the_turn_once() {
    let opts = options::parse_prepared(&json!({"cwd": CWD}).to_string()).unwrap();
    let (handle, work) = super::start_with(opts, false, |_, _| async { panic!("defect in a turn") });
    let steer = handle.controls.steer(vec![crate::options::input::InputItem::text("more")]);
    work.await;
    let steered = super::steer_outcome(steer.await).unwrap_err();
    assert_eq!(steered.code, crate::failure::Code::TurnEnded);
    match handle.controls.readiness().await {
        super::Readiness::Failed(failure) => assert_eq!(failure.code, crate::failure::Code::InternalError),
        other => panic!("{other:?}"),
    }
    let mut events = Vec::new();
    while let Some(batch) = handle.stream.next_batch().await {
        events.extend(crate::batch::decode(&batch).unwrap());
    }
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["type"], "terminal");
    assert_eq!(events[0]["failure"]["code"], "INTERNAL_ERROR");
    assert_eq!(events[0]["failure"]["message"], "defect in a turn");
}

/// A request larger than the pipe, to a server that writes before it reads on (as a server that
/// answers as it reads may): the client reads while its write waits, so neither waits for ever.
#[tokio::test]
async fn a_large_request_is_written_while_the_server_writes() {
    let prompt = "x".repeat(1 << 20);
    let r = run(json!({"prompt": prompt}), |mut p| async move {
        p.handshake().await;
        let pad = "y".repeat(1000);
        for _ in 0..500 {
            p.notify("thread/status/changed", json!({"threadId": THREAD, "status": {"type": "active"}, "pad": pad}))
                .await;
        }
        let turn = p.start_turn().await;
        assert_eq!(turn["params"]["input"][0]["text"].as_str().unwrap().len(), 1 << 20);
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "completed", "{}", r.terminal);
    assert_eq!(r.of_type("native").len(), 500);
}
