//! App tools (`tools`) through the scripted peer: what the handshake and `thread/start` carry,
//! where a tool call goes, its deadline, the abort, a stored tool the turn was not given, and a
//! Codex that refuses the tools.

use super::agent_loop::{app_handler, next_asked, CHILD, CHILD_TURN};
use super::{run, Peer, THREAD, TURN};
use crate::events::ReplyKind;
use crate::turn::AppAnswer;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn weather(timeout_ms: Option<u64>) -> Value {
    let mut tool = json!({"description": "Weather for a city", "execute": true,
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}});
    if let Some(ms) = timeout_ms {
        tool["timeoutMs"] = json!(ms);
    }
    tool
}

fn tool_call(thread: &str, turn: &str, tool: &str, call: &str) -> Value {
    json!({"threadId": thread, "turnId": turn, "callId": call, "namespace": null, "tool": tool, "arguments": {"city": "Oslo"}})
}

fn text(result: &Value) -> &str {
    result["contentItems"][0]["text"].as_str().unwrap_or_default()
}

/// Everything handed to the app, in order (the handler's record, drained).
async fn asked_until(asked: &Arc<Mutex<Vec<Value>>>, n: usize) -> Vec<Value> {
    for _ in 0..1000 {
        if asked.lock().unwrap().len() >= n {
            return std::mem::take(&mut *asked.lock().unwrap());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the app was handed fewer than {n} messages: {:?}", asked.lock().unwrap());
}

impl Peer {
    /// `initialize` (returned, answered), `initialized`, `account/read`.
    async fn initialize_seen(&mut self) -> Value {
        let init = self.expect("initialize").await;
        self.respond(&init, json!({"userAgent": "rennet/0.171.0 (Test; x86_64) (rennet; 0.1.0)", "codexHome": "/h"}))
            .await;
        self.expect("initialized").await;
        let account = self.expect("account/read").await;
        self.respond(&account, json!({"account": null, "requiresOpenaiAuth": false})).await;
        init
    }
}

#[tokio::test]
async fn a_turn_without_tools_sends_what_it_sent_before() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    // Byte for byte the frames of a turn before app tools: no capability, no dynamicTools.
    let init = &r.sent("initialize")[0];
    assert_eq!(
        init["params"],
        json!({"clientInfo": {"name": "rennet", "title": null, "version": env!("CARGO_PKG_VERSION")}})
    );
    let thread = &r.sent("thread/start")[0];
    let keys: Vec<&str> = thread["params"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["approvalPolicy", "cwd", "sandbox"], "{thread}");
}

#[tokio::test]
async fn tools_ask_for_the_experimental_api_and_start_the_thread_with_them() {
    let r = run(json!({"tools": {"get_weather": weather(None)}}), |mut p| async move {
        let init = p.initialize_seen().await;
        assert_eq!(init["params"]["capabilities"], json!({"experimentalApi": true}));
        let thread = p.expect("thread/start").await;
        assert_eq!(
            thread["params"]["dynamicTools"],
            json!([{"type": "function", "name": "get_weather", "description": "Weather for a city",
                "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}])
        );
        p.respond(
            &thread,
            json!({"thread": {"id": THREAD}, "sandbox": {"type": "readOnly"}, "approvalPolicy": "never"}),
        )
        .await;
        p.start_turn().await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "completed");
}

#[tokio::test]
async fn a_resumed_thread_keeps_its_tools_and_is_sent_none() {
    let r = run(json!({"threadId": THREAD, "tools": {"get_weather": weather(None)}}), |mut p| async move {
        let init = p.initialize_seen().await;
        assert_eq!(init["params"]["capabilities"], json!({"experimentalApi": true}));
        let resume = p.expect("thread/resume").await;
        assert!(resume["params"].get("dynamicTools").is_none(), "{resume}");
        p.respond(
            &resume,
            json!({"thread": {"id": THREAD}, "sandbox": {"type": "readOnly"}, "approvalPolicy": "never"}),
        )
        .await;
        p.start_turn().await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "completed");
}

#[tokio::test]
async fn a_call_of_an_app_tool_goes_to_the_app_with_its_deadline_without_a_handler() {
    // No onServerRequest: the tool's call goes to the app all the same; an approval does not.
    let r = run(json!({"tools": {"get_weather": weather(Some(60_000))}}), |mut p| async move {
        let asked = app_handler(&p);
        p.handshake().await;
        p.start_turn().await;
        let call = tool_call(THREAD, TURN, "get_weather", "call_w");
        p.send(json!({"id": 0, "method": "item/tool/call", "params": call})).await;
        let request = next_asked(&asked).await;
        assert_eq!(request["tool"], true);
        assert_eq!(request["timeoutMs"], 60_000);
        assert_eq!(request["method"], "item/tool/call");
        assert_eq!(request["params"], call);
        assert_eq!(request["agent"], Value::Null);
        let answer = json!({"contentItems": [{"type": "inputText", "text": "Sunny, 21C"}], "success": true});
        p.control.controls.answer(request["key"].as_u64().unwrap(), AppAnswer::Tool(answer.clone(), ReplyKind::App));
        assert_eq!(p.recv().await, json!({"id": 0, "result": answer}));
        // Arguments the app's check refused: its answer goes, with its kind.
        p.send(json!({"id": 1, "method": "item/tool/call", "params": tool_call(THREAD, TURN, "get_weather", "c2")}))
            .await;
        let request = next_asked(&asked).await;
        let refused = json!({"contentItems": [{"type": "inputText", "text": "invalid arguments"}], "success": false});
        let key = request["key"].as_u64().unwrap();
        p.control.controls.answer(key, AppAnswer::Tool(refused.clone(), ReplyKind::InvalidArguments));
        assert_eq!(p.recv().await, json!({"id": 1, "result": refused}));
        // Not the app's to answer: the fixed policy's, at once.
        let approval = json!({"threadId": THREAD, "turnId": TURN, "itemId": "x", "command": "make"});
        p.send(json!({"id": 2, "method": "item/commandExecution/requestApproval", "params": approval})).await;
        assert_eq!(p.recv().await, json!({"id": 2, "result": {"decision": "accept"}}));
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    let replies: Vec<&str> = r.of_type("serverRequest").iter().map(|e| e["reply"].as_str().unwrap()).collect();
    assert_eq!(replies, ["app", "invalidArguments", "accepted"]);
}

#[tokio::test]
async fn past_its_deadline_a_call_is_answered_timed_out_and_its_execute_aborted() {
    let r = run(json!({"tools": {"slow": weather(Some(50))}}), |mut p| async move {
        let asked = app_handler(&p);
        p.handshake().await;
        p.start_turn().await;
        p.send(json!({"id": 0, "method": "item/tool/call", "params": tool_call(THREAD, TURN, "slow", "c")})).await;
        let answer = p.recv().await;
        assert_eq!(answer["id"], 0);
        assert_eq!(answer["result"]["success"], false);
        assert_eq!(text(&answer["result"]), "the app's tool slow timed out after 50 ms and was stopped");
        let told = asked_until(&asked, 2).await;
        let key = told[0]["key"].as_u64().unwrap();
        assert_eq!(told[1], json!({"cancel": key, "why": "timedOut"}));
        // Its result, later, is dropped.
        let late = json!({"contentItems": [{"type": "inputText", "text": "late"}], "success": true});
        p.control.controls.answer(key, AppAnswer::Tool(late, ReplyKind::App));
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.of_type("serverRequest").len(), 1);
    assert_eq!(r.of_type("serverRequest")[0]["reply"], "timedOut");
    // Nothing but the one answer went to id 0.
    assert_eq!(r.received.iter().filter(|m| m["id"] == 0 && m.get("method").is_none()).count(), 1);
}

#[tokio::test]
async fn an_abort_answers_every_running_call_before_the_interrupt() {
    let r = run(json!({"tools": {"a": weather(None), "b": weather(None)}}), |mut p| async move {
        let asked = app_handler(&p);
        p.handshake().await;
        p.start_turn().await;
        p.send(json!({"id": 0, "method": "item/tool/call", "params": tool_call(THREAD, TURN, "a", "c1")})).await;
        p.send(json!({"id": 1, "method": "item/tool/call", "params": tool_call(THREAD, TURN, "b", "c2")})).await;
        let calls = asked_until(&asked, 2).await;
        p.control.request_abort();
        for (id, tool) in [(0, "a"), (1, "b")] {
            let answer = p.recv().await;
            assert_eq!(answer["id"], id);
            assert_eq!(answer["result"]["success"], false);
            assert!(text(&answer["result"]).starts_with("the turn was stopped before the app's tool answered"));
            assert!(text(&answer["result"]).ends_with(tool));
        }
        let interrupt = p.expect("turn/interrupt").await;
        let cancels = asked_until(&asked, 2).await;
        for (call, cancel) in calls.iter().zip(&cancels) {
            assert_eq!(cancel, &json!({"cancel": call["key"], "why": "aborted"}));
        }
        // A result after the abort is dropped.
        let late = json!({"contentItems": [], "success": true});
        p.control.controls.answer(calls[0]["key"].as_u64().unwrap(), AppAnswer::Tool(late, ReplyKind::App));
        p.respond(&interrupt, json!({})).await;
        p.complete("interrupted").await;
        p.until_stdin_closed().await;
    })
    .await;
    let replies: Vec<&str> = r.of_type("serverRequest").iter().map(|e| e["reply"].as_str().unwrap()).collect();
    assert_eq!(replies, ["cancelled", "cancelled"]);
    assert_eq!(r.terminal["status"], "cancelled");
}

#[tokio::test]
async fn a_stored_tool_the_turn_was_not_given_gets_a_failure_text() {
    // A resumed thread offers the tool it was started with; this turn gives another one.
    let r = run(json!({"threadId": THREAD, "tools": {"get_weather": weather(None)}}), |mut p| async move {
        let asked = app_handler(&p);
        p.handshake().await;
        p.start_turn().await;
        p.send(json!({"id": 0, "method": "item/tool/call", "params": tool_call(THREAD, TURN, "old_tool", "c")})).await;
        let answer = p.recv().await;
        assert_eq!(answer["result"]["success"], false, "{answer}");
        assert!(text(&answer["result"]).starts_with("the app does not offer the tool old_tool now"), "{answer}");
        // A namespaced call is never one of the app's (its tools are top-level functions).
        let mut namespaced = tool_call(THREAD, TURN, "get_weather", "c2");
        namespaced["namespace"] = json!("crm");
        p.send(json!({"id": 1, "method": "item/tool/call", "params": namespaced})).await;
        let answer = p.recv().await;
        assert!(text(&answer["result"]).starts_with("the app does not offer the tool crm.get_weather now"), "{answer}");
        assert!(asked.lock().unwrap().is_empty());
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    let replies: Vec<&str> = r.of_type("serverRequest").iter().map(|e| e["reply"].as_str().unwrap()).collect();
    assert_eq!(replies, ["failed", "failed"]);
}

#[tokio::test]
async fn with_a_handler_a_stored_tools_call_is_the_handlers_and_its_pass_a_failure_text() {
    let r = run(json!({"onServerRequest": true, "tools": {"get_weather": weather(None)}}), |mut p| async move {
        let asked = app_handler(&p);
        p.handshake().await;
        p.start_turn().await;
        p.send(json!({"id": 0, "method": "item/tool/call", "params": tool_call(THREAD, TURN, "old_tool", "c")})).await;
        let request = next_asked(&asked).await;
        assert!(request.get("tool").is_none(), "{request}");
        p.control.controls.answer(request["key"].as_u64().unwrap(), AppAnswer::Pass);
        let answer = p.recv().await;
        assert!(text(&answer["result"]).starts_with("the app does not offer the tool old_tool now"), "{answer}");
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.of_type("serverRequest")[0]["reply"], "failed");
}

#[tokio::test]
async fn without_tools_a_tool_call_is_answered_as_before() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.send(json!({"id": 0, "method": "item/tool/call", "params": tool_call(THREAD, TURN, "get_weather", "c")}))
            .await;
        let answer = p.recv().await;
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.of_type("serverRequest")[0]["reply"], "methodError");
}

#[tokio::test]
async fn a_codex_that_refuses_the_tools_fails_the_turn_before_any_model_request() {
    let r = run(json!({"tools": {"get_weather": weather(None)}}), |mut p| async move {
        p.initialize_seen().await;
        let thread = p.expect("thread/start").await;
        let message = "thread/start.dynamicTools requires experimentalApi capability";
        p.send(json!({"id": thread["id"], "error": {"code": -32600, "message": message}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "failed");
    let failure = &r.terminal["failure"];
    assert_eq!((failure["source"].as_str(), failure["code"].as_str()), (Some("jsonrpc"), Some("APP_TOOLS_REFUSED")));
    assert_eq!(failure["message"], "thread/start.dynamicTools requires experimentalApi capability");
    // Never retried without the tools, and no turn.
    assert_eq!(r.sent("thread/start").len(), 1);
    assert!(r.sent("turn/start").is_empty());
}

#[tokio::test]
async fn another_thread_start_error_reads_as_before() {
    let r = run(json!({"tools": {"get_weather": weather(None)}}), |mut p| async move {
        p.initialize_seen().await;
        let thread = p.expect("thread/start").await;
        p.send(json!({"id": thread["id"], "error": {"code": -32000, "message": "disk full"}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["failure"]["code"], "REQUEST_FAILED");
}

#[tokio::test]
async fn a_forked_sub_agents_call_names_the_agent() {
    let r = run(json!({"tools": {"get_weather": weather(None)}}), |mut p| async move {
        let asked = app_handler(&p);
        p.handshake().await;
        p.start_turn().await;
        p.spawn_child(false).await;
        let call = tool_call(CHILD, CHILD_TURN, "get_weather", "child_call");
        p.send(json!({"id": "k", "method": "item/tool/call", "params": call})).await;
        let request = next_asked(&asked).await;
        assert_eq!(request["agent"]["threadId"], CHILD);
        assert_eq!(request["params"]["threadId"], CHILD);
        let answer = json!({"contentItems": [{"type": "inputText", "text": "ok"}], "success": true});
        p.control.controls.answer(request["key"].as_u64().unwrap(), AppAnswer::Tool(answer.clone(), ReplyKind::App));
        assert_eq!(p.recv().await, json!({"id": "k", "result": answer}));
        p.child_completes().await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    let request = &r.of_type("serverRequest")[0];
    assert_eq!((request["reply"].as_str(), request["agent"]["depth"].as_u64()), (Some("app"), Some(1)));
}

#[test]
fn tools_are_options_of_run_turn_prepare_turn_and_conversations_only() {
    let cwd = super::CWD.replace('\\', "\\\\");
    let with = |extra: &str| format!(r#"{{"cwd":"{cwd}","prompt":"x"{extra}}}"#);
    let tools = r#","tools":{"t":{"description":"d","inputSchema":{"type":"object"},"execute":true}}"#;
    assert!(crate::options::parse(&with(tools)).is_ok());
    let read_only = crate::options::parse(&with(&format!(r#"{tools},"access":"readOnly""#))).unwrap_err().0;
    assert!(read_only.starts_with("options.tools cannot be used with access 'readOnly'"), "{read_only}");
    let prepared = format!(r#"{{"cwd":"{cwd}"{tools}}}"#);
    assert_eq!(crate::options::parse_prepared(&prepared).unwrap().tools.unwrap()[0].name, "t");
    let review = format!(r#"{{"cwd":"{cwd}","target":{{"type":"uncommittedChanges"}}{tools}}}"#);
    assert!(crate::options::parse_review(&review)
        .unwrap_err()
        .0
        .starts_with("options.tools is not an option of runReview"));
    let open = format!(r#"{{"cwd":"{cwd}"{tools}}}"#);
    assert!(crate::options::conversation::check("openConversation", &open).is_ok());
    let bad = format!(
        r#"{{"cwd":"{cwd}","tools":{{"exec_command":{{"description":"d","inputSchema":{{"type":"object"}},"execute":true}}}}}}"#
    );
    let e = crate::options::conversation::check("openConversation", &bad).unwrap_err().0;
    assert!(e.starts_with("options.tools.exec_command: exec_command is the name of one of Codex's own tools"), "{e}");
}

#[tokio::test]
async fn a_call_still_running_when_the_run_ends_otherwise_is_told_it_ended() {
    // The child exits while the app's tool runs: its execute is aborted, not as if the turn
    // had been aborted.
    let r = run(json!({"tools": {"get_weather": weather(None)}}), |mut p| async move {
        let asked = app_handler(&p);
        p.handshake().await;
        p.start_turn().await;
        p.send(json!({"id": 0, "method": "item/tool/call", "params": tool_call(THREAD, TURN, "get_weather", "c")}))
            .await;
        let call = next_asked(&asked).await;
        p.exit(1);
        let told = asked_until(&asked, 1).await;
        assert_eq!(told[0], json!({"cancel": call["key"], "why": "ended"}));
    })
    .await;
    assert_eq!(r.terminal["status"], "failed");
    assert_eq!(r.of_type("serverRequest")[0]["reply"], "cancelled");
}
