//! The turn is everything Codex does for it: sub-agents, goal continuations, terminal sessions,
//! plan mode, server requests the app answers, reviews — through the scripted peer.

use super::{run, Peer, CWD, THREAD, TURN};
use crate::turn::AppAnswer;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(super) const CHILD: &str = "thr-child";
pub(super) const CHILD_TURN: &str = "turn-child";

fn usage(total: i64) -> Value {
    json!({"threadId": THREAD, "turnId": TURN, "tokenUsage": {
        "total": {"totalTokens": total, "inputTokens": total, "cachedInputTokens": 0, "outputTokens": 0, "reasoningOutputTokens": 0},
        "last": {"totalTokens": total, "inputTokens": total, "cachedInputTokens": 0, "outputTokens": 0, "reasoningOutputTokens": 0},
        "modelContextWindow": null}})
}

fn usage_of(thread: &str, turn: &str, total: i64) -> Value {
    let mut u = usage(total);
    u["threadId"] = json!(thread);
    u["turnId"] = json!(turn);
    u
}

fn spawn_item(status: &str, receivers: &[&str]) -> Value {
    json!({"type": "collabAgentToolCall", "id": "call_spawn", "tool": "spawnAgent", "status": status,
           "senderThreadId": THREAD, "receiverThreadIds": receivers, "prompt": "look", "model": null,
           "reasoningEffort": null, "agentsStates": {}})
}

impl Peer {
    /// `turn/started` of `turn` on `thread`, naming its root turn where Codex does.
    async fn turn_started(&mut self, thread: &str, turn: &str, root: Option<&str>) {
        let mut started = json!({"id": turn, "status": "inProgress", "items": []});
        if let Some(root) = root {
            started["rootTurnId"] = json!(root);
        }
        self.notify("turn/started", json!({"threadId": thread, "turn": started})).await;
    }

    /// `turn/completed` of `turn` on `thread` with `status`.
    async fn turn_completed(&mut self, thread: &str, turn: &str, status: &str) {
        self.notify("turn/completed", json!({"threadId": thread, "turn": {"id": turn, "status": status, "items": []}}))
            .await;
    }

    /// The parent spawns a child whose first frame (`thread/status/changed`) comes before the
    /// spawn names it; the child works one turn with a message and its usage.
    pub(super) async fn spawn_child(&mut self, child_completes: bool) {
        self.notify("item/started", json!({"threadId": THREAD, "turnId": TURN, "item": spawn_item("inProgress", &[])}))
            .await;
        self.notify("thread/status/changed", json!({"threadId": CHILD, "status": {"type": "active"}})).await;
        self.notify(
            "item/completed",
            json!({"threadId": THREAD, "turnId": TURN, "item": spawn_item("completed", &[CHILD])}),
        )
        .await;
        self.turn_started(CHILD, CHILD_TURN, Some(TURN)).await;
        let item = json!({"type": "agentMessage", "id": "child_msg", "text": "found it", "phase": null});
        self.notify("item/completed", json!({"threadId": CHILD, "turnId": CHILD_TURN, "item": item})).await;
        self.notify("thread/tokenUsage/updated", usage_of(CHILD, CHILD_TURN, 40)).await;
        if child_completes {
            self.child_completes().await;
        }
    }

    pub(super) async fn child_completes(&mut self) {
        self.turn_completed(CHILD, CHILD_TURN, "completed").await;
    }
}

#[tokio::test]
async fn a_sub_agent_belongs_to_the_turn_its_usage_counts_and_its_end_is_named() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.spawn_child(false).await;
        p.notify("thread/tokenUsage/updated", usage(100)).await;
        p.message("msg_1", "done").await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    // Nothing of the child is passthrough: its frames are agent events, the held one included.
    assert!(r.of_type("passthrough").is_empty(), "{:#?}", r.events);
    let agent = r.of_type("agent");
    let inner: Vec<&str> = agent.iter().map(|e| e["event"]["type"].as_str().unwrap()).collect();
    // The child's message came whole (no delta): it also goes out as one delta.
    assert_eq!(inner, ["native", "turnStarted", "messageDelta", "itemCompleted", "usage"]);
    assert_eq!(agent[0]["agent"], json!({"threadId": CHILD, "nickname": null, "path": null, "depth": 1}));
    assert_eq!(agent[0]["event"]["method"], "thread/status/changed");
    let t = &r.terminal;
    assert_eq!(t["status"], "completed");
    assert_eq!(t["usage"]["total"], 100);
    assert_eq!(t["totalUsage"]["total"], 140);
    assert_eq!(
        t["agents"],
        json!([{"threadId": CHILD, "nickname": null, "status": "cutOff", "usage": {"input": 40, "cacheRead": 0, "output": 0, "reasoning": 0, "total": 40}}])
    );
    assert_eq!(t["cutOff"], json!([{"kind": "agent", "threadId": CHILD, "nickname": null, "reason": "turnCompleted"}]));
}

#[tokio::test]
async fn until_idle_waits_for_the_sub_agent() {
    let r = run(json!({"until": "idle"}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.spawn_child(false).await;
        p.message("msg_1", "waiting for the child").await;
        p.complete("completed").await;
        // The parent's turn is done; the child still works, and the run waits for it.
        tokio::time::sleep(Duration::from_millis(50)).await;
        p.child_completes().await;
        p.until_stdin_closed().await;
    })
    .await;
    let t = &r.terminal;
    assert_eq!(t["status"], "completed");
    assert_eq!(t["agents"][0]["status"], "completed");
    assert_eq!(t["cutOff"], json!([]));
    let completed = r.of_type("agent").into_iter().find(|e| e["event"]["type"] == "turnCompleted").unwrap().clone();
    assert_eq!(completed["event"]["finalMessage"], "found it");
    assert_eq!(completed["event"]["threadId"], CHILD);
    // The child's end came before the terminal: the child was not cut off.
    let at = |kind: &str| r.events.iter().position(|e| e["type"] == kind).unwrap();
    assert!(r.events.iter().position(|e| e == &completed).unwrap() < at("terminal"));
}

#[tokio::test]
async fn an_abort_interrupts_the_sub_agents_turns_too() {
    let r = run(json!({"interruptGraceMs": 2000}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.spawn_child(false).await;
        p.abort_after_pending_frames().await;
        let mut interrupted = Vec::new();
        for _ in 0..2 {
            let interrupt = p.expect("turn/interrupt").await;
            interrupted.push(interrupt["params"].clone());
            p.respond(&interrupt, json!({})).await;
        }
        assert!(interrupted.contains(&json!({"threadId": THREAD, "turnId": TURN})), "{interrupted:?}");
        assert!(interrupted.contains(&json!({"threadId": CHILD, "turnId": CHILD_TURN})), "{interrupted:?}");
        p.turn_completed(CHILD, CHILD_TURN, "interrupted").await;
        p.complete("interrupted").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "cancelled");
    assert_eq!(r.terminal["cancellation"], "interrupted");
    assert_eq!(r.terminal["agents"][0]["status"], "interrupted");
}

fn goal(status: &str) -> Value {
    json!({"threadId": THREAD, "objective": "make the tests pass", "status": status, "tokenBudget": null,
           "tokensUsed": 10, "timeUsedSeconds": 1, "createdAt": 1, "updatedAt": 1})
}

#[tokio::test]
async fn an_active_goal_at_the_end_is_named_when_the_run_ends_with_the_turn() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.notify("thread/goal/updated", json!({"threadId": THREAD, "turnId": TURN, "goal": goal("active")})).await;
        p.message("msg_1", "on it").await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.of_type("goal")[0]["goal"], goal("active"));
    assert_eq!(
        r.terminal["cutOff"],
        json!([{"kind": "goal", "objective": "make the tests pass", "status": "active", "reason": "turnCompleted"}])
    );
}

#[tokio::test]
async fn until_idle_the_goal_continuations_are_the_turns_own() {
    const NEXT: &str = "turn-2";
    let r = run(json!({"until": "idle"}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.notify("thread/goal/updated", json!({"threadId": THREAD, "turnId": TURN, "goal": goal("active")})).await;
        p.notify("thread/tokenUsage/updated", usage(100)).await;
        p.message("msg_1", "first step").await;
        p.complete("completed").await;
        // Codex goes on by itself, on behalf of the user's turn.
        tokio::time::sleep(Duration::from_millis(20)).await;
        p.turn_started(THREAD, NEXT, Some(TURN)).await;
        let item = json!({"type": "agentMessage", "id": "msg_2", "text": "all green", "phase": "final_answer"});
        p.notify("item/completed", json!({"threadId": THREAD, "turnId": NEXT, "item": item})).await;
        let mut u = usage(130);
        u["turnId"] = json!(NEXT);
        p.notify("thread/tokenUsage/updated", u).await;
        p.notify("thread/goal/updated", json!({"threadId": THREAD, "turnId": NEXT, "goal": goal("complete")})).await;
        p.turn_completed(THREAD, NEXT, "completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert!(r.of_type("passthrough").is_empty(), "{:#?}", r.events);
    let t = &r.terminal;
    assert_eq!((t["status"].as_str(), t["turnId"].as_str()), (Some("completed"), Some(TURN)));
    assert_eq!(t["finalMessage"], "all green");
    assert_eq!(t["usage"]["total"], 130);
    assert_eq!(t["cutOff"], json!([]));
    let started: Vec<&Value> = r.of_type("turnStarted").into_iter().map(|e| &e["turnId"]).collect();
    assert_eq!(started, [&json!(TURN), &json!(NEXT)]);
}

#[tokio::test]
async fn a_terminal_session_left_open_is_named_and_closed_for_the_app() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        let item = json!({"type": "commandExecution", "id": "call_tty", "command": "python3 -i", "processId": "71",
                          "cwd": CWD, "status": "inProgress", "commandActions": [], "aggregatedOutput": null,
                          "exitCode": null, "durationMs": null, "source": "agent"});
        p.notify("item/started", json!({"threadId": THREAD, "turnId": TURN, "item": item})).await;
        // A response dropped for a steer: started, never completed.
        let dropped = json!({"type": "agentMessage", "id": "msg_dropped", "text": "", "phase": null});
        p.notify("item/started", json!({"threadId": THREAD, "turnId": TURN, "item": dropped})).await;
        p.message("msg_1", "started a session").await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(
        r.terminal["cutOff"],
        json!([{"kind": "backgroundTerminal", "itemId": "call_tty", "processId": "71", "command": "python3 -i"}])
    );
    let dropped: Vec<&Value> = r.of_type("itemDropped").into_iter().map(|e| &e["itemId"]).collect();
    assert_eq!(dropped, [&json!("msg_dropped"), &json!("call_tty")]);
    // Closed no later than the turn's end.
    let last_dropped = r.events.iter().rposition(|e| e["type"] == "itemDropped").unwrap();
    assert!(last_dropped < r.events.iter().position(|e| e["type"] == "turnCompleted").unwrap());
}

/// What the app's handler was handed, and a way to answer it.
pub(super) fn app_handler(p: &Peer) -> Arc<Mutex<Vec<Value>>> {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    p.control
        .controls
        .set_app_handler(Box::new(move |request| seen.lock().unwrap().push(serde_json::from_str(&request).unwrap())));
    asked
}

impl Peer {
    /// Sends server request `id` and waits until the app's handler has it: its key, to answer by.
    async fn asked_of_the_app(&mut self, asked: &Arc<Mutex<Vec<Value>>>, id: i64, method: &str, params: &Value) -> u64 {
        self.send(json!({"id": id, "method": method, "params": params})).await;
        next_asked(asked).await["key"].as_u64().unwrap()
    }
}

pub(super) async fn next_asked(asked: &Arc<Mutex<Vec<Value>>>) -> Value {
    for _ in 0..500 {
        if let Some(request) = asked.lock().unwrap().pop() {
            return request;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("nothing was handed to the app");
}

#[tokio::test]
async fn the_app_answers_server_requests_in_time_else_the_policy_does() {
    let r = run(json!({"access": "ask", "onServerRequest": true, "serverRequestTimeoutMs": 200}), |mut p| async move {
        let asked = app_handler(&p);
        p.handshake().await;
        let turn = p.start_turn().await;
        assert_eq!(turn["params"]["approvalPolicy"], "on-request");
        // No `sandbox_workspace_write` in the configuration: Codex's defaults, every one named.
        assert_eq!(turn["params"]["sandboxPolicy"], DEFAULT_WORKSPACE_WRITE.clone());
        let params = json!({"threadId": THREAD, "turnId": TURN, "itemId": "call_1", "command": "rm -rf build"});
        // 1: answered by the app.
        p.send(json!({"id": 1, "method": "item/commandExecution/requestApproval", "params": params})).await;
        let request = next_asked(&asked).await;
        assert_eq!(
            (request["method"].as_str(), request["id"].as_i64()),
            (Some("item/commandExecution/requestApproval"), Some(1))
        );
        assert_eq!(request["params"], params);
        assert_eq!(request["agent"], Value::Null);
        p.control.controls.answer(request["key"].as_u64().unwrap(), AppAnswer::Reply(json!({"decision": "accept"})));
        assert_eq!(p.recv().await, json!({"id": 1, "result": {"decision": "accept"}}));
        // 2: no answer in time: the fixed policy's (declined under ask); the late answer is dropped.
        p.send(json!({"id": 2, "method": "item/commandExecution/requestApproval", "params": params})).await;
        let request = next_asked(&asked).await;
        assert_eq!(p.recv().await, json!({"id": 2, "result": {"decision": "decline"}}));
        p.control.controls.answer(request["key"].as_u64().unwrap(), AppAnswer::Reply(json!({"decision": "accept"})));
        // 3: an answer that does not fit: never sent; the method's refusal goes, and the event says why.
        p.send(json!({"id": 3, "method": "item/commandExecution/requestApproval", "params": params})).await;
        let request = next_asked(&asked).await;
        p.control
            .controls
            .answer(request["key"].as_u64().unwrap(), AppAnswer::Unfit("decision: must be one of …".into()));
        assert_eq!(p.recv().await, json!({"id": 3, "result": {"decision": "decline"}}));
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    let replies: Vec<&str> = r.of_type("serverRequest").iter().map(|e| e["reply"].as_str().unwrap()).collect();
    assert_eq!(replies, ["app", "timedOut", "unfit"]);
    let unfit = r.of_type("serverRequest")[2]["unfit"].as_str().unwrap().to_string();
    assert!(unfit.contains("does not fit") && unfit.contains("decision: must be one of …"), "{unfit}");
    // Only the unfit answer's event has the field.
    assert!(r.of_type("serverRequest")[..2].iter().all(|e| e.get("unfit").is_none()));
    assert_eq!(r.of_type("serverRequest")[0]["params"]["command"], "rm -rf build");
}

#[tokio::test]
async fn an_unfit_answer_is_refused_under_full_access_too() {
    // Full access would accept an approval the app leaves unanswered; an answer that does not
    // fit is not "no answer": the app meant something, so the request gets the method's refusal.
    let r = run(json!({"access": "full", "onServerRequest": true}), |mut p| async move {
        let asked = app_handler(&p);
        p.handshake().await;
        p.start_turn().await;
        let approval = json!({"threadId": THREAD, "turnId": TURN, "itemId": "call_1", "command": "make"});
        const APPROVAL: &str = "item/commandExecution/requestApproval";
        let key = p.asked_of_the_app(&asked, 1, APPROVAL, &approval).await;
        let why = "answer must have required property 'decision'";
        p.control.controls.answer(key, AppAnswer::Unfit(why.into()));
        assert_eq!(p.recv().await, json!({"id": 1, "result": {"decision": "decline"}}));
        // A method whose refusal is a method error (a dynamic tool call) gets that.
        let call = json!({"threadId": THREAD, "turnId": TURN, "callId": "c", "tool": "t", "arguments": {}});
        let key = p.asked_of_the_app(&asked, 2, "item/tool/call", &call).await;
        p.control.controls.answer(key, AppAnswer::Unfit("not JSON".into()));
        let refused = p.recv().await;
        assert_eq!((refused["id"].as_i64(), refused["error"]["code"].as_i64()), (Some(2), Some(-32601)), "{refused}");
        // No answer at all is still the fixed policy's: full access accepts.
        let key = p.asked_of_the_app(&asked, 3, APPROVAL, &approval).await;
        p.control.controls.answer(key, AppAnswer::Pass);
        assert_eq!(p.recv().await, json!({"id": 3, "result": {"decision": "accept"}}));
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    let requests = r.of_type("serverRequest");
    let replies: Vec<&str> = requests.iter().map(|e| e["reply"].as_str().unwrap()).collect();
    assert_eq!(replies, ["unfit", "unfit", "accepted"]);
    let unfit = requests[0]["unfit"].as_str().unwrap();
    assert!(
        unfit.contains("item/commandExecution/requestApproval") && unfit.contains("required property 'decision'"),
        "{unfit}"
    );
    assert!(unfit.contains("declined"), "says what went instead: {unfit}");
    assert!(requests[1]["unfit"].as_str().unwrap().contains("methodError"), "{}", requests[1]);
    // Said on the event, not as a diagnostic line beside it.
    assert!(r.of_type("diagnostic").is_empty(), "{:?}", r.of_type("diagnostic"));
}

/// What `access: 'ask'` sends when the configuration has no `sandbox_workspace_write`: Codex's
/// own defaults, each named (never the bare `{type: "workspaceWrite"}`).
static DEFAULT_WORKSPACE_WRITE: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    json!({"type": "workspaceWrite", "writableRoots": [], "networkAccess": false,
           "excludeTmpdirEnvVar": false, "excludeSlashTmp": false})
});

/// An `ask` turn up to its `turn/start`: `config/read` for the cwd answered with `config`, the
/// thread still started read-only. Returns the `turn/start` request.
async fn ask_turn_start(p: &mut Peer, config: Value) -> Value {
    p.initialize().await;
    let read = p.expect("config/read").await;
    assert_eq!(read["params"]["cwd"], CWD);
    p.respond(&read, json!({"config": config, "origins": {}})).await;
    let thread = p.expect("thread/start").await;
    assert_eq!(thread["params"]["sandbox"], "read-only");
    assert_eq!(thread["params"]["approvalPolicy"], "never");
    p.respond(&thread, json!({"thread": {"id": THREAD}, "sandbox": {"type": "readOnly"}, "approvalPolicy": "never"}))
        .await;
    p.start_turn().await
}

#[tokio::test]
async fn ask_sends_the_users_effective_workspace_write_settings() {
    let r = run(json!({"access": "ask", "onServerRequest": true}), |mut p| async move {
        // As codex-cli 0.171.0 reports it: every key present, roots made absolute.
        let config = json!({"sandbox_mode": "workspace-write", "sandbox_workspace_write": {
            "writable_roots": ["/opt/cache", "/home/u/.codex/rel"], "network_access": true,
            "exclude_tmpdir_env_var": true, "exclude_slash_tmp": true}});
        let turn = ask_turn_start(&mut p, config).await;
        assert_eq!(turn["params"]["approvalPolicy"], "on-request");
        assert_eq!(
            turn["params"]["sandboxPolicy"],
            json!({"type": "workspaceWrite", "writableRoots": ["/opt/cache", "/home/u/.codex/rel"],
                   "networkAccess": true, "excludeTmpdirEnvVar": true, "excludeSlashTmp": true})
        );
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "completed");
}

#[tokio::test]
async fn ask_without_the_table_sends_codex_defaults_and_keeps_what_is_given() {
    // Absent (older Codex), null (0.171.0 without the table), and a table with some keys:
    // what is missing is Codex's default.
    for (config, want) in [
        (json!({"model": "m"}), DEFAULT_WORKSPACE_WRITE.clone()),
        (json!({"sandbox_workspace_write": null}), DEFAULT_WORKSPACE_WRITE.clone()),
        (
            json!({"sandbox_workspace_write": {"exclude_slash_tmp": true, "writable_roots": null}}),
            json!({"type": "workspaceWrite", "writableRoots": [], "networkAccess": false,
                   "excludeTmpdirEnvVar": false, "excludeSlashTmp": true}),
        ),
        // A setting this package does not know, left at a neutral value, carries nothing.
        (
            json!({"sandbox_workspace_write": {"network_access": false, "future_thing": false, "more": []}}),
            DEFAULT_WORKSPACE_WRITE.clone(),
        ),
    ] {
        let seen = Arc::new(Mutex::new(Value::Null));
        let keep = seen.clone();
        let r = run(json!({"access": "ask", "onServerRequest": true}), move |mut p| async move {
            let turn = ask_turn_start(&mut p, config).await;
            *keep.lock().unwrap() = turn["params"]["sandboxPolicy"].clone();
            p.complete("completed").await;
            p.until_stdin_closed().await;
        })
        .await;
        assert_eq!(r.terminal["status"], "completed");
        assert_eq!(*seen.lock().unwrap(), want);
    }
}

#[tokio::test]
async fn ask_fails_closed_when_the_settings_cannot_be_read() {
    // (what goes wrong, config/read's answer (None: none at all; a string: an error), the code)
    // → neither the thread nor the turn is started, and nothing but the offending part is shown.
    let secret = "sk-in-a-provider-7731";
    let providers = json!({"p": {"experimental_bearer_token": secret}});
    let cases: Vec<(&str, Option<Value>, &str)> = vec![
        ("an error", Some(json!("config broken")), "REQUEST_FAILED"),
        ("no answer", None, "REQUEST_TIMEOUT"),
        ("no config", Some(json!({"origins": {}})), "UNEXPECTED_RESPONSE"),
        ("a config that is not an object", Some(json!({"config": []})), "UNEXPECTED_RESPONSE"),
        (
            "a table that is not a table",
            Some(json!({"config": {"sandbox_workspace_write": "on", "model_providers": providers}})),
            "UNEXPECTED_RESPONSE",
        ),
        (
            "roots that are not a list",
            Some(
                json!({"config": {"sandbox_workspace_write": {"writable_roots": "/opt"}, "model_providers": providers}}),
            ),
            "UNEXPECTED_RESPONSE",
        ),
        (
            "a relative root",
            Some(json!({"config": {"sandbox_workspace_write": {"writable_roots": ["/opt", "rel"]}}})),
            "UNEXPECTED_RESPONSE",
        ),
        (
            "a root that is not a string",
            Some(json!({"config": {"sandbox_workspace_write": {"writable_roots": [7]}}})),
            "UNEXPECTED_RESPONSE",
        ),
        (
            "a flag that is not a boolean",
            Some(json!({"config": {"sandbox_workspace_write": {"exclude_slash_tmp": "yes"}}})),
            "UNEXPECTED_RESPONSE",
        ),
        (
            "a setting the turn's policy cannot carry",
            Some(json!({"config": {"sandbox_workspace_write": {"read_only_subpaths": ["/w/.git"]}}})),
            "UNEXPECTED_RESPONSE",
        ),
    ];
    for (what, answer, code) in cases {
        let r =
            run(json!({"access": "ask", "onServerRequest": true, "requestTimeoutMs": 300}), move |mut p| async move {
                p.initialize().await;
                let read = p.expect("config/read").await;
                match answer {
                    Some(Value::String(message)) => {
                        p.send(json!({"id": read["id"], "error": {"code": -32603, "message": message}})).await
                    }
                    Some(result) => p.respond(&read, result).await,
                    None => {}
                }
                p.until_stdin_closed().await;
            })
            .await;
        assert_eq!(r.terminal["status"], "failed", "{what}");
        assert_eq!(r.terminal["failure"]["code"], code, "{what}: {}", r.terminal);
        assert_eq!(r.terminal["failure"]["detail"]["method"], "config/read", "{what}: {}", r.terminal);
        assert!(r.sent("thread/start").is_empty(), "{what}: thread/start must not be sent");
        assert!(r.sent("turn/start").is_empty(), "{what}: turn/start must not be sent");
        assert!(!r.terminal.to_string().contains(secret), "{what}: {}", r.terminal);
    }
}

#[tokio::test]
async fn a_review_with_ask_reads_no_sandbox() {
    // review/start carries no sandbox: the thread's read-only one holds, nothing to read.
    let r = run(
        json!({"access": "ask", "onServerRequest": true, "review": true, "target": {"type": "uncommittedChanges"}}),
        |mut p| async move {
            p.handshake().await;
            let review = p.expect("review/start").await;
            p.respond(&review, json!({"turn": {"id": TURN, "status": "inProgress", "items": []}})).await;
            p.complete("completed").await;
            p.until_stdin_closed().await;
        },
    )
    .await;
    assert_eq!(r.terminal["status"], "completed");
    assert!(r.sent("config/read").is_empty());
}

#[tokio::test]
async fn a_pending_app_answer_never_holds_up_an_abort() {
    let r = run(json!({"access": "ask", "onServerRequest": true}), |mut p| async move {
        let asked = app_handler(&p);
        p.handshake().await;
        p.start_turn().await;
        let params = json!({"threadId": THREAD, "turnId": TURN, "itemId": "call_1"});
        p.send(json!({"id": 7, "method": "item/fileChange/requestApproval", "params": params})).await;
        let request = next_asked(&asked).await;
        p.control.request_abort();
        // Answered "cancel" first, then the interrupt.
        assert_eq!(p.recv().await, json!({"id": 7, "result": {"decision": "cancel"}}));
        let interrupt = p.expect("turn/interrupt").await;
        p.respond(&interrupt, json!({})).await;
        p.control.controls.answer(request["key"].as_u64().unwrap(), AppAnswer::Reply(json!({"decision": "accept"})));
        p.complete("interrupted").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.of_type("serverRequest")[0]["reply"], "cancelled");
    assert_eq!(r.terminal["status"], "cancelled");
}

#[tokio::test]
async fn a_sub_agents_request_names_it() {
    let r = run(json!({"onServerRequest": true}), |mut p| async move {
        let asked = app_handler(&p);
        p.handshake().await;
        p.start_turn().await;
        p.spawn_child(false).await;
        let params =
            json!({"threadId": CHILD, "turnId": CHILD_TURN, "itemId": "q", "questions": [], "isBlocking": true});
        p.send(json!({"id": "q1", "method": "item/tool/requestUserInput", "params": params})).await;
        let request = next_asked(&asked).await;
        assert_eq!(request["agent"]["threadId"], CHILD);
        let answers = json!({"answers": {"color": {"answers": ["Red"]}}});
        p.control.controls.answer(request["key"].as_u64().unwrap(), AppAnswer::Reply(answers.clone()));
        assert_eq!(p.recv().await, json!({"id": "q1", "result": answers}));
        p.child_completes().await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    let request = &r.of_type("serverRequest")[0];
    assert_eq!((request["reply"].as_str(), request["agent"]["depth"].as_u64()), (Some("app"), Some(1)));
}

#[tokio::test]
async fn plan_mode_asks_for_the_experimental_api_and_names_the_threads_model() {
    let r = run(json!({"mode": "plan"}), |mut p| async move {
        let init = p.expect("initialize").await;
        assert_eq!(init["params"]["capabilities"], json!({"experimentalApi": true}));
        p.respond(&init, json!({"userAgent": "rennet/0.171.0 (Test; x86_64) (rennet; 0.1.0)", "codexHome": "/h"})).await;
        p.expect("initialized").await;
        let account = p.expect("account/read").await;
        p.respond(&account, json!({"account": null, "requiresOpenaiAuth": false})).await;
        let thread = p.expect("thread/start").await;
        p.respond(&thread, json!({"thread": {"id": THREAD, "model": "gpt-thread"}, "sandbox": {"type": "readOnly"}, "approvalPolicy": "never"}))
            .await;
        let turn = p.start_turn().await;
        assert_eq!(
            turn["params"]["collaborationMode"],
            json!({"mode": "plan", "settings": {"model": "gpt-thread", "reasoning_effort": null, "developer_instructions": null}})
        );
        p.notify("item/plan/delta", json!({"threadId": THREAD, "turnId": TURN, "itemId": "plan_1", "delta": "1. read"})).await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.of_type("planDelta")[0], &json!({"type": "planDelta", "itemId": "plan_1", "delta": "1. read"}));
}

#[tokio::test]
async fn a_review_is_a_turn_whose_items_carry_the_reviews_id() {
    const REVIEW: &str = "turn-review";
    const INNER: &str = "turn-review-inner";
    let r = run(json!({"review": true, "target": {"type": "uncommittedChanges"}}), |mut p| async move {
        p.handshake().await;
        let review = p.expect("review/start").await;
        assert_eq!(
            review["params"],
            json!({"threadId": THREAD, "target": {"type": "uncommittedChanges"}, "delivery": "inline"})
        );
        p.turn_started(THREAD, INNER, Some(REVIEW)).await;
        p.respond(
            &review,
            json!({"turn": {"id": REVIEW, "status": "inProgress", "items": []}, "reviewThreadId": THREAD}),
        )
        .await;
        let entered = json!({"type": "enteredReviewMode", "id": "rv", "review": "current changes"});
        p.notify("item/completed", json!({"threadId": THREAD, "turnId": REVIEW, "item": entered})).await;
        let raw = json!({"type": "agentMessage", "id": "raw", "text": "", "phase": null});
        p.notify("item/started", json!({"threadId": THREAD, "turnId": REVIEW, "item": raw})).await;
        let exited = json!({"type": "exitedReviewMode", "id": "rv2", "review": "- fix x"});
        p.notify("item/completed", json!({"threadId": THREAD, "turnId": REVIEW, "item": exited})).await;
        let formatted = json!({"type": "agentMessage", "id": "final", "text": "Review: fix x", "phase": null});
        p.notify("item/completed", json!({"threadId": THREAD, "turnId": REVIEW, "item": formatted})).await;
        p.turn_completed(THREAD, REVIEW, "completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert!(r.of_type("passthrough").is_empty(), "{:#?}", r.events);
    assert_eq!((r.terminal["status"].as_str(), r.terminal["turnId"].as_str()), (Some("completed"), Some(REVIEW)));
    assert_eq!(r.terminal["finalMessage"], "Review: fix x");
    assert_eq!(r.of_type("itemDropped")[0]["itemId"], "raw");
    assert!(r.sent("turn/start").is_empty());
}

#[test]
fn options_of_the_agent_loop_fail_closed() {
    let parse = |json: Value| {
        let mut opts = json!({"prompt": "x", "cwd": CWD});
        opts.as_object_mut().unwrap().extend(json.as_object().unwrap().clone());
        crate::options::parse(&opts.to_string()).map(|_| ()).map_err(|e| e.0)
    };
    assert!(parse(json!({"access": "ask"}))
        .unwrap_err()
        .starts_with("options.onServerRequest is required with access 'ask'"));
    assert!(parse(json!({"access": "readOnly", "onServerRequest": true}))
        .unwrap_err()
        .starts_with("options.onServerRequest cannot be used"));
    assert!(parse(json!({"until": "forever"})).unwrap_err().starts_with("options.until:"));
    assert!(parse(json!({"mode": "yolo"})).unwrap_err().starts_with("options.mode:"));
    assert!(parse(json!({"target": {"type": "uncommittedChanges"}}))
        .unwrap_err()
        .starts_with("options.target belongs to runReview"));
    let review = |target: Value| {
        crate::options::parse_review(&json!({"cwd": CWD, "target": target}).to_string()).map(|_| ()).map_err(|e| e.0)
    };
    assert!(review(json!({"type": "baseBranch", "branch": "main"})).is_ok());
    assert!(review(json!({"type": "baseBranch"})).unwrap_err().starts_with("options.target"));
    assert_eq!(
        review(json!({"type": "custom", "instructions": " "})).unwrap_err(),
        "options.target.instructions must be a non-empty string"
    );
    assert!(review(json!({"type": "everything"})).unwrap_err().starts_with("options.target"));
    let with_prompt = crate::options::parse_review(
        &json!({"cwd": CWD, "prompt": "x", "target": {"type": "uncommittedChanges"}}).to_string(),
    );
    assert!(with_prompt.map(|_| ()).unwrap_err().0.starts_with("options.prompt is not an option of runReview"));
}

/// Codex before `rootTurnId` (0.150.0 seen): a goal continuation's `turn/started` names no root.
/// It starts on the turn's thread while a continuation is due, so it is the turn's own.
#[tokio::test]
async fn until_idle_a_continuation_without_root_turn_id_is_the_turns_own() {
    const NEXT: &str = "turn-2";
    let r = run(json!({"until": "idle"}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.notify("thread/goal/updated", json!({"threadId": THREAD, "turnId": TURN, "goal": goal("active")})).await;
        p.message("msg_1", "first step").await;
        p.complete("completed").await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        p.turn_started(THREAD, NEXT, None).await;
        p.notify("thread/goal/updated", json!({"threadId": THREAD, "turnId": NEXT, "goal": goal("complete")})).await;
        let item = json!({"type": "agentMessage", "id": "msg_2", "text": "all green", "phase": "final_answer"});
        p.notify("item/completed", json!({"threadId": THREAD, "turnId": NEXT, "item": item})).await;
        p.turn_completed(THREAD, NEXT, "completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert!(r.of_type("passthrough").is_empty(), "{:#?}", r.events);
    assert_eq!(r.terminal["finalMessage"], "all green");
    assert_eq!(r.terminal["cutOff"], json!([]));
    let goals: Vec<&Value> = r.of_type("goal").into_iter().map(|e| &e["goal"]["status"]).collect();
    assert_eq!(goals, [&json!("active"), &json!("complete")]);
}

/// Codex before `rootTurnId`: a review's inner turn starts on the thread while the review's turn
/// runs, naming no root; it is the review's, not a foreign turn.
#[tokio::test]
async fn a_reviews_inner_turn_without_root_turn_id_is_the_reviews() {
    const REVIEW: &str = "turn-review";
    const INNER: &str = "turn-review-inner";
    let r = run(json!({"review": true, "target": {"type": "uncommittedChanges"}}), |mut p| async move {
        p.handshake().await;
        let review = p.expect("review/start").await;
        p.respond(
            &review,
            json!({"turn": {"id": REVIEW, "status": "inProgress", "items": []}, "reviewThreadId": THREAD}),
        )
        .await;
        p.turn_started(THREAD, INNER, None).await;
        let formatted = json!({"type": "agentMessage", "id": "final", "text": "Review: fine", "phase": null});
        p.notify("item/completed", json!({"threadId": THREAD, "turnId": REVIEW, "item": formatted})).await;
        p.turn_completed(THREAD, REVIEW, "completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert!(r.of_type("passthrough").is_empty(), "{:#?}", r.events);
    assert_eq!((r.terminal["status"].as_str(), r.terminal["turnId"].as_str()), (Some("completed"), Some(REVIEW)));
    assert_eq!(r.terminal["finalMessage"], "Review: fine");
}

/// The user's turn's own `turnCompleted` events (a sub-agent's are nested in `agent` events).
fn own_completed(r: &super::Run) -> Vec<usize> {
    r.events.iter().enumerate().filter(|(_, e)| e["type"] == "turnCompleted").map(|(i, _)| i).collect()
}

/// Where the sub-agent's own `turnCompleted` (nested) is.
fn child_completed(r: &super::Run) -> usize {
    r.events
        .iter()
        .position(|e| e["type"] == "agent" && e["event"]["type"] == "turnCompleted")
        .expect("the child's end")
}

impl Peer {
    /// The parent spawns the child, whose turn has not started yet.
    async fn spawn_only(&mut self) {
        self.notify("item/started", json!({"threadId": THREAD, "turnId": TURN, "item": spawn_item("inProgress", &[])}))
            .await;
        self.notify(
            "item/completed",
            json!({"threadId": THREAD, "turnId": TURN, "item": spawn_item("completed", &[CHILD])}),
        )
        .await;
    }

    /// Answers the next `turn/interrupt`, which must be of `thread`'s `turn`.
    async fn interrupt_of(&mut self, thread: &str, turn: &str) {
        let interrupt = self.expect("turn/interrupt").await;
        assert_eq!(interrupt["params"], json!({"threadId": thread, "turnId": turn}));
        self.respond(&interrupt, json!({})).await;
    }
}

#[tokio::test]
async fn until_idle_turn_completed_goes_out_when_the_users_turn_completes() {
    let r = run(json!({"until": "idle"}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.spawn_child(false).await;
        p.notify("thread/tokenUsage/updated", usage(100)).await;
        p.message("msg_1", "waiting for the child").await;
        p.complete("completed").await;
        p.child_completes().await;
        p.until_stdin_closed().await;
    })
    .await;
    let own = own_completed(&r);
    assert_eq!(own.len(), 1, "{:#?}", r.events);
    // Out with the user's turn, before the child's end (the run still waited for it).
    assert!(own[0] < child_completed(&r), "{:#?}", r.events);
    let completed = &r.events[own[0]];
    assert_eq!((completed["status"].as_str(), completed["turnId"].as_str()), (Some("completed"), Some(TURN)));
    assert_eq!(completed["finalMessage"], "waiting for the child");
    assert_eq!(completed["usage"]["total"], 100);
    // The child still works: it is not cut off, and not counted yet.
    assert_eq!(completed["agents"], json!([]));
    assert_eq!(completed["totalUsage"]["total"], 100);
    assert_eq!(completed["cutOff"], json!([]));
    let t = &r.terminal;
    assert_eq!((t["status"].as_str(), t["agents"][0]["status"].as_str()), (Some("completed"), Some("completed")));
    assert_eq!(t["totalUsage"]["total"], 140);
}

#[tokio::test]
async fn until_idle_an_abort_in_the_wait_interrupts_what_runs_and_ends_cancelled() {
    let r = run(json!({"until": "idle", "interruptGraceMs": 5000}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.spawn_child(false).await;
        p.message("msg_1", "waiting for the child").await;
        p.complete("completed").await;
        p.abort_after_pending_frames().await;
        // The user's turn is over: only the child's is interrupted.
        p.interrupt_of(CHILD, CHILD_TURN).await;
        p.turn_completed(CHILD, CHILD_TURN, "interrupted").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.sent("turn/interrupt").len(), 1);
    assert_eq!(own_completed(&r).len(), 1);
    assert_eq!(r.events[own_completed(&r)[0]]["status"], "completed");
    let t = &r.terminal;
    assert_eq!((t["status"].as_str(), t["cancellation"].as_str()), (Some("cancelled"), Some("interrupted")));
    assert_eq!(t["failure"], Value::Null);
    assert_eq!(t["agents"][0]["status"], "interrupted");
    assert_eq!(t["cutOff"], json!([]));
    assert_eq!(r.ended, Some(crate::process::End::Polite(crate::process::EXIT_GRACE)));
}

#[tokio::test]
async fn until_idle_an_abort_with_nothing_running_ends_at_once_killed_naming_the_goal() {
    let r = run(json!({"until": "idle"}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.notify("thread/goal/updated", json!({"threadId": THREAD, "turnId": TURN, "goal": goal("active")})).await;
        p.message("msg_1", "first step").await;
        p.complete("completed").await;
        // Between the turn's end and the continuation Codex is about to start: nothing runs.
        p.abort_after_pending_frames().await;
        p.until_stdin_closed().await;
    })
    .await;
    assert!(r.sent("turn/interrupt").is_empty());
    assert_eq!(own_completed(&r).len(), 1);
    let t = &r.terminal;
    assert_eq!((t["status"].as_str(), t["cancellation"].as_str()), (Some("cancelled"), Some("killed")));
    assert_eq!(
        t["cutOff"],
        json!([{"kind": "goal", "objective": "make the tests pass", "status": "active", "reason": "abort"}])
    );
    assert_eq!(r.ended, Some(crate::process::End::Kill));
}

/// A continuation of the goal: started on the thread for the user's turn, a message, completed
/// with the goal still active.
async fn continuation(p: &mut Peer, turn: &str) {
    p.turn_started(THREAD, turn, Some(TURN)).await;
    let item = json!({"type": "agentMessage", "id": format!("msg_{turn}"), "text": "still going", "phase": null});
    p.notify("item/completed", json!({"threadId": THREAD, "turnId": turn, "item": item})).await;
    p.turn_completed(THREAD, turn, "completed").await;
}

#[tokio::test]
async fn max_continuations_bounds_a_goal_that_never_completes() {
    let r = run(json!({"until": "idle", "maxContinuations": 2}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.notify("thread/goal/updated", json!({"threadId": THREAD, "turnId": TURN, "goal": goal("active")})).await;
        p.message("msg_1", "first step").await;
        p.complete("completed").await;
        continuation(&mut p, "turn-2").await;
        continuation(&mut p, "turn-3").await;
        // A third would come: the run ends instead, and sends nothing more.
        p.until_stdin_closed().await;
    })
    .await;
    let started: Vec<&Value> = r.of_type("turnStarted").into_iter().map(|e| &e["turnId"]).collect();
    assert_eq!(started, [&json!(TURN), &json!("turn-2"), &json!("turn-3")]);
    assert!(r.sent("turn/interrupt").is_empty());
    assert_eq!(own_completed(&r).len(), 1);
    let t = &r.terminal;
    assert_eq!((t["status"].as_str(), t["turnId"].as_str()), (Some("completed"), Some(TURN)));
    assert_eq!(
        t["cutOff"],
        json!([{"kind": "goal", "objective": "make the tests pass", "status": "active", "reason": "maxContinuations"}])
    );
}

#[tokio::test]
async fn idle_wait_ms_interrupts_the_agents_still_running_and_ends_completed() {
    let r = run(json!({"until": "idle", "idleWaitMs": 100, "interruptGraceMs": 5000}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.spawn_child(false).await;
        p.message("msg_1", "waiting for the child").await;
        p.complete("completed").await;
        p.interrupt_of(CHILD, CHILD_TURN).await;
        p.turn_completed(CHILD, CHILD_TURN, "interrupted").await;
        p.until_stdin_closed().await;
    })
    .await;
    let t = &r.terminal;
    assert_eq!((t["status"].as_str(), t["finalMessage"].as_str()), (Some("completed"), Some("waiting for the child")));
    assert_eq!(t["cancellation"], Value::Null);
    assert_eq!(t["agents"][0]["status"], "interrupted");
    assert_eq!(t["cutOff"], json!([{"kind": "agent", "threadId": CHILD, "nickname": null, "reason": "idleWaitMs"}]));
    assert_eq!(r.ended, Some(crate::process::End::Polite(crate::process::EXIT_GRACE)));
}

#[tokio::test]
async fn idle_wait_ms_interrupts_a_running_continuation_and_the_run_still_completes() {
    let r = run(json!({"until": "idle", "idleWaitMs": 100, "interruptGraceMs": 5000}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.notify("thread/goal/updated", json!({"threadId": THREAD, "turnId": TURN, "goal": goal("active")})).await;
        p.message("msg_1", "first step").await;
        p.complete("completed").await;
        p.turn_started(THREAD, "turn-2", Some(TURN)).await;
        p.interrupt_of(THREAD, "turn-2").await;
        p.turn_completed(THREAD, "turn-2", "interrupted").await;
        p.until_stdin_closed().await;
    })
    .await;
    let t = &r.terminal;
    assert_eq!((t["status"].as_str(), t["turnId"].as_str()), (Some("completed"), Some(TURN)));
    assert_eq!(t["cancellation"], Value::Null);
    assert_eq!(
        t["cutOff"],
        json!([{"kind": "goal", "objective": "make the tests pass", "status": "active", "reason": "idleWaitMs"}])
    );
}

#[tokio::test]
async fn idle_wait_ms_kills_what_does_not_confirm_within_the_grace() {
    let r = run(json!({"until": "idle", "idleWaitMs": 100, "interruptGraceMs": 200}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.spawn_child(false).await;
        p.message("msg_1", "waiting for the child").await;
        p.complete("completed").await;
        // Answered, never honoured.
        p.interrupt_of(CHILD, CHILD_TURN).await;
        p.until_stdin_closed().await;
    })
    .await;
    let t = &r.terminal;
    assert_eq!(t["status"], "completed");
    assert_eq!(t["agents"][0]["status"], "cutOff");
    assert_eq!(t["cutOff"], json!([{"kind": "agent", "threadId": CHILD, "nickname": null, "reason": "idleWaitMs"}]));
    assert_eq!(r.ended, Some(crate::process::End::Kill));
}

#[tokio::test]
async fn after_an_abort_a_sub_agent_that_confirms_after_the_parent_is_waited_for() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.spawn_child(false).await;
        p.abort_after_pending_frames().await;
        for _ in 0..2 {
            let interrupt = p.expect("turn/interrupt").await;
            p.respond(&interrupt, json!({})).await;
        }
        // The parent confirms first; the child a moment later.
        p.complete("interrupted").await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        p.turn_completed(CHILD, CHILD_TURN, "interrupted").await;
        p.until_stdin_closed().await;
    })
    .await;
    let t = &r.terminal;
    assert_eq!((t["status"].as_str(), t["cancellation"].as_str()), (Some("cancelled"), Some("interrupted")));
    assert_eq!(t["agents"][0]["status"], "interrupted");
    assert_eq!(t["cutOff"], json!([]));
    // The user's turn's outcome went out with its end, once, before the child's.
    let own = own_completed(&r);
    assert_eq!(own.len(), 1);
    assert!(own[0] < child_completed(&r));
    assert_eq!(r.events[own[0]]["status"], "cancelled");
}

#[tokio::test]
async fn after_an_abort_a_sub_agent_that_never_confirms_is_cut_off_after_the_grace() {
    let r = run(json!({"interruptGraceMs": 200}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.spawn_child(false).await;
        p.abort_after_pending_frames().await;
        for _ in 0..2 {
            let interrupt = p.expect("turn/interrupt").await;
            p.respond(&interrupt, json!({})).await;
        }
        p.complete("interrupted").await;
        p.until_stdin_closed().await;
    })
    .await;
    let t = &r.terminal;
    assert_eq!((t["status"].as_str(), t["cancellation"].as_str()), (Some("cancelled"), Some("killed")));
    assert_eq!(t["agents"][0]["status"], "cutOff");
    assert_eq!(t["cutOff"], json!([{"kind": "agent", "threadId": CHILD, "nickname": null, "reason": "abort"}]));
    assert_eq!(own_completed(&r).len(), 1);
    assert_eq!(r.ended, Some(crate::process::End::Kill));
}

#[tokio::test]
async fn after_an_abort_a_sub_agent_whose_turn_starts_later_is_interrupted_then() {
    let r = run(json!({"interruptGraceMs": 5000}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.spawn_only().await;
        p.abort_after_pending_frames().await;
        // Only the parent's turn has an id yet.
        p.interrupt_of(THREAD, TURN).await;
        p.complete("interrupted").await;
        p.turn_started(CHILD, CHILD_TURN, Some(TURN)).await;
        p.interrupt_of(CHILD, CHILD_TURN).await;
        p.turn_completed(CHILD, CHILD_TURN, "interrupted").await;
        p.until_stdin_closed().await;
    })
    .await;
    let t = &r.terminal;
    assert_eq!((t["status"].as_str(), t["cancellation"].as_str()), (Some("cancelled"), Some("interrupted")));
    assert_eq!(t["agents"][0]["status"], "interrupted");
    assert_eq!(t["cutOff"], json!([]));
}

#[test]
fn the_bounds_of_the_idle_wait_are_options_of_until_idle() {
    let parse = |json: Value| {
        let mut opts = json!({"prompt": "x", "cwd": CWD});
        opts.as_object_mut().unwrap().extend(json.as_object().unwrap().clone());
        crate::options::parse(&opts.to_string()).map_err(|e| e.0)
    };
    assert!(parse(json!({"until": "idle", "maxContinuations": 0, "idleWaitMs": 1})).is_ok());
    for (json, name) in [
        (json!({"maxContinuations": 3}), "maxContinuations"),
        (json!({"until": "turnCompleted", "idleWaitMs": 10}), "idleWaitMs"),
        (json!({"until": "idle", "maxContinuations": -1}), "maxContinuations"),
        (json!({"until": "idle", "maxContinuations": 1.5}), "maxContinuations"),
        (json!({"until": "idle", "maxContinuations": "3"}), "maxContinuations"),
        (json!({"until": "idle", "maxContinuations": null}), "maxContinuations"),
        (json!({"until": "idle", "idleWaitMs": 0}), "idleWaitMs"),
        (json!({"until": "idle", "idleWaitMs": 2147483648u64}), "idleWaitMs"),
        (json!({"until": "idle", "idleWaitMs": "10"}), "idleWaitMs"),
        (json!({"until": "idle", "idleWaitMs": null}), "idleWaitMs"),
    ] {
        let error = parse(json.clone()).map(|_| ()).unwrap_err();
        assert!(error.starts_with(&format!("options.{name}")), "{json}: {error}");
    }
    assert!(parse(json!({"maxContinuations": 3})).map(|_| ()).unwrap_err().contains("until: 'idle'"));
}
