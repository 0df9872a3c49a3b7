//! Calls driven through in-memory pipes by a scripted peer (the turn's): no processes.

use super::{drive, parse, Outcome};
use crate::failure::Code;
use crate::process::End;
use crate::stream::EventStream;
use crate::turn::tests::Control;
use crate::turn::tests::{finished, wiring, Peer, Wiring};
use serde_json::{json, Value};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

struct Called {
    outcome: Outcome,
    /// Every message the client sent, in order.
    received: Vec<Value>,
    ended: Option<End>,
}

impl Called {
    fn answer(&self) -> &Value {
        match &self.outcome {
            Ok(value) => value,
            other => panic!("not answered: {other:?}"),
        }
    }

    fn failure(&self) -> Value {
        match &self.outcome {
            Err(failure) => serde_json::to_value(failure).unwrap(),
            other => panic!("not failed: {other:?}"),
        }
    }

    fn sent(&self, method: &str) -> Vec<&Value> {
        self.received.iter().filter(|m| m["method"] == method).collect()
    }
}

async fn call_with<F, Fut>(control: Arc<Control>, name: &str, thread: Option<&str>, options: Value, script: F) -> Called
where
    F: FnOnce(Peer) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Wiring { peer, process, reader, writer, ended, received } =
        wiring(Arc::new(EventStream::new()), control.clone());
    let options = parse(name, thread.map(str::to_string), Some(&options.to_string())).unwrap();
    let script = tokio::spawn(script(peer));
    let outcome =
        tokio::time::timeout(Duration::from_secs(10), drive(reader, writer, process, &options, &control.cancel))
            .await
            .expect("the call ended");
    finished(script).await;
    let received = received.lock().unwrap().clone();
    let ended = *ended.lock().unwrap();
    Called { outcome, received, ended }
}

async fn call<F, Fut>(name: &str, thread: Option<&str>, options: Value, script: F) -> Called
where
    F: FnOnce(Peer) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    call_with(Arc::new(Control::new()), name, thread, options, script).await
}

/// `initialize` answered, `initialized` received.
async fn hello(p: &mut Peer) {
    let init = p.expect("initialize").await;
    assert_eq!(init["params"]["clientInfo"]["name"], "rennet");
    p.respond(&init, json!({"userAgent": "rennet/0.171.0 (Test; x86_64) (rennet; 0.1.0)", "codexHome": "/h"})).await;
    assert!(p.expect("initialized").await.get("id").is_none());
}

/// The request `method` answered with `result`; its params are returned.
async fn answer(p: &mut Peer, method: &str, result: Value) -> Value {
    let request = p.expect(method).await;
    p.respond(&request, result).await;
    request["params"].clone()
}

#[tokio::test]
async fn read_account_reports_the_login_and_the_rate_limits() {
    let limits =
        json!({"rateLimits": {"limitId": "codex", "primary": {"usedPercent": 12}}, "rateLimitsByLimitId": null});
    let expected = limits.clone();
    let c = call("readAccount", None, json!({}), |mut p| async move {
        hello(&mut p).await;
        let read = p.expect("account/read").await;
        assert_eq!(read["params"], json!({}));
        // A notification and a server request on the way change nothing and get nothing.
        p.notify("remoteControl/status/changed", json!({"status": "off"})).await;
        p.send(json!({"id": 77, "method": "account/chatgptAuthTokens/refresh", "params": {}})).await;
        let refused = p.recv().await;
        assert_eq!(refused["id"], 77);
        assert_eq!(refused["error"]["code"], -32601);
        let account =
            json!({"account": {"type": "chatgpt", "email": "a@b.c", "planType": "plus"}, "requiresOpenaiAuth": true});
        p.respond(&read, account).await;
        answer(&mut p, "account/rateLimits/read", limits).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(
        c.answer(),
        &json!({"account": {"type": "chatgpt", "email": "a@b.c", "planType": "plus"}, "requiresOpenaiAuth": true,
                "rateLimits": expected})
    );
    assert_eq!(c.ended, Some(End::Polite(crate::process::EXIT_GRACE)));
}

#[tokio::test]
async fn read_account_without_a_login_has_no_rate_limits() {
    let c = call("readAccount", None, json!({}), |mut p| async move {
        hello(&mut p).await;
        answer(&mut p, "account/read", json!({"account": null, "requiresOpenaiAuth": true})).await;
        let limits = p.expect("account/rateLimits/read").await;
        p.send(json!({"id": limits["id"], "error": {"code": -32600,
            "message": "codex account authentication required to read rate limits"}}))
            .await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &json!({"account": null, "requiresOpenaiAuth": true, "rateLimits": null}));
}

#[tokio::test]
async fn an_account_report_of_another_shape_is_unexpected() {
    let c = call("readAccount", None, json!({}), |mut p| async move {
        hello(&mut p).await;
        answer(&mut p, "account/read", json!({"account": null})).await;
        p.until_stdin_closed().await;
    })
    .await;
    let failure = c.failure();
    assert_eq!(failure["code"], "UNEXPECTED_RESPONSE");
    assert_eq!(failure["detail"]["method"], "account/read");
}

fn model(id: &str, hidden: bool) -> Value {
    json!({"id": id, "model": id, "displayName": id.to_uppercase(), "hidden": hidden, "isDefault": false})
}

#[tokio::test]
async fn list_models_reads_every_page_and_leaves_hidden_models_out() {
    let c = call("listModels", None, json!({}), |mut p| async move {
        hello(&mut p).await;
        let first =
            answer(&mut p, "model/list", json!({"data": [model("a", false), model("h", true)], "nextCursor": "2"}))
                .await;
        assert_eq!(first, json!({}));
        let second = answer(&mut p, "model/list", json!({"data": [model("b", false)], "nextCursor": null})).await;
        assert_eq!(second, json!({"cursor": "2"}));
        p.until_stdin_closed().await;
    })
    .await;
    let ids: Vec<&str> = c.answer().as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "b"]);
    // Verbatim: every field as the server sent it.
    assert_eq!(c.answer()[0], model("a", false));
}

#[tokio::test]
async fn list_models_with_hidden_ones_asks_for_them() {
    let c = call("listModels", None, json!({"includeHidden": true}), |mut p| async move {
        hello(&mut p).await;
        let params = answer(&mut p, "model/list", json!({"data": [model("a", false), model("h", true)]})).await;
        assert_eq!(params, json!({"includeHidden": true}));
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer().as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn an_endless_model_list_is_cut_off() {
    let c = call("listModels", None, json!({}), |mut p| async move {
        hello(&mut p).await;
        for page in 0..crate::exchange::MAX_PAGES {
            answer(&mut p, "model/list", json!({"data": [], "nextCursor": page.to_string()})).await;
        }
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.failure()["message"], "model/list did not end after 100 pages");
}

#[tokio::test]
async fn list_threads_is_one_page_filtered_as_asked() {
    let cwd = if cfg!(windows) { r"C:\work" } else { "/work" };
    let options = json!({"cwd": cwd, "limit": 2, "cursor": "c1", "archived": false});
    let c = call("listThreads", None, options, move |mut p| async move {
        hello(&mut p).await;
        let page = json!({"data": [{"id": "t1", "turns": []}], "nextCursor": "c2", "backwardsCursor": null});
        let params = answer(&mut p, "thread/list", page).await;
        assert_eq!(params, json!({"limit": 2, "cursor": "c1", "archived": false, "cwd": cwd}));
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &json!({"threads": [{"id": "t1", "turns": []}], "nextCursor": "c2"}));
    let c = call("listThreads", None, json!({}), |mut p| async move {
        hello(&mut p).await;
        assert_eq!(answer(&mut p, "thread/list", json!({"data": []})).await, json!({}));
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &json!({"threads": [], "nextCursor": null}));
}

#[tokio::test]
async fn read_thread_hands_the_thread_on_verbatim() {
    let thread = json!({"id": "t1", "preview": "hi", "turns": [{"id": "u1", "items": []}], "extra": {"new": 1}});
    let expected = thread.clone();
    let c = call("readThread", Some("t1"), json!({"includeTurns": true}), |mut p| async move {
        hello(&mut p).await;
        let params = answer(&mut p, "thread/read", json!({"thread": thread})).await;
        assert_eq!(params, json!({"threadId": "t1", "includeTurns": true}));
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &expected);
}

#[tokio::test]
async fn fork_thread_starts_the_fork_read_only_and_names_it() {
    let c = call("forkThread", Some("t1"), json!({"lastTurnId": "u1"}), |mut p| async move {
        hello(&mut p).await;
        let fork = json!({"thread": {"id": "t2"}, "sandbox": {"type": "readOnly"}, "approvalPolicy": "never"});
        let params = answer(&mut p, "thread/fork", fork).await;
        assert_eq!(
            params,
            json!({"threadId": "t1", "lastTurnId": "u1", "approvalPolicy": "never", "sandbox": "read-only"})
        );
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &json!({"threadId": "t2"}));
}

#[tokio::test]
async fn a_server_error_is_request_failed_with_its_message_verbatim() {
    let c = call("readThread", Some("nope"), json!({}), |mut p| async move {
        hello(&mut p).await;
        let read = p.expect("thread/read").await;
        p.send(json!({"id": read["id"], "error": {"code": -32600, "message": "no rollout found for thread id nope",
            "data": {"x": 1}}}))
            .await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(
        c.failure(),
        json!({"source": "jsonrpc", "code": "REQUEST_FAILED", "message": "no rollout found for thread id nope",
               "detail": {"method": "thread/read", "code": -32600, "data": {"x": 1}}, "retryable": false})
    );
}

#[tokio::test]
async fn a_request_without_an_answer_times_out() {
    let c = call("listModels", None, json!({"requestTimeoutMs": 50}), |mut p| async move {
        hello(&mut p).await;
        p.expect("model/list").await;
        p.until_stdin_closed().await;
    })
    .await;
    let failure = c.failure();
    assert_eq!(failure["code"], "REQUEST_TIMEOUT");
    assert_eq!(failure["message"], "model/list got no response within 50 ms");
    assert_eq!(failure["detail"], json!({"method": "model/list", "timeoutMs": 50}));
}

/// A call whose control the peer's `script` aborts (or kills) when it chooses.
async fn call_aborted<F, Fut>(name: &str, script: F) -> Called
where
    F: FnOnce(Peer, Arc<Control>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let control = Arc::new(Control::new());
    let aborter = control.clone();
    call_with(control, name, None, json!({}), move |peer| script(peer, aborter)).await
}

#[tokio::test]
async fn an_abort_ends_the_call_at_once() {
    let c = call_aborted("readAccount", |mut p, control| async move {
        hello(&mut p).await;
        p.expect("account/read").await;
        control.request_kill();
        p.until_stdin_closed().await;
    })
    .await;
    assert_cancelled(&c.outcome);
    assert_eq!(c.ended, Some(End::Kill));
    assert!(c.sent("account/rateLimits/read").is_empty());
    // An abort while the child is being ended, after the answer, still cancels.
    let c = call_aborted("listThreads", |mut p, control| async move {
        hello(&mut p).await;
        answer(&mut p, "thread/list", json!({"data": []})).await;
        control.request_abort();
        p.until_stdin_closed().await;
    })
    .await;
    assert_cancelled(&c.outcome);
}

#[tokio::test]
async fn a_server_that_exits_before_answering_is_process_exited() {
    let c = call("listModels", None, json!({}), |mut p| async move {
        hello(&mut p).await;
        p.expect("model/list").await;
        p.exit(3);
    })
    .await;
    let failure = c.failure();
    assert_eq!(failure["source"], "exit");
    assert_eq!(failure["code"], "PROCESS_EXITED");
    assert_eq!(failure["message"], "codex app-server exited with code 3 before it answered model/list");
    assert_eq!(failure["detail"]["stderrTail"], json!(["last stderr line"]));
    assert_eq!(failure["detail"]["exitedByItself"], true);
}

#[tokio::test]
async fn a_line_that_is_not_the_protocol_is_a_parse_failure() {
    let c = call("readAccount", None, json!({}), |mut p| async move {
        hello(&mut p).await;
        p.expect("account/read").await;
        p.raw("{not json").await;
        p.until_stdin_closed().await;
    })
    .await;
    let failure = c.failure();
    assert_eq!(failure["source"], "parse");
    assert_eq!(failure["code"], Code::MalformedFrame.as_str());
    assert_eq!(failure["detail"]["stderrTail"], json!(["last stderr line"]));
}

#[tokio::test]
async fn an_aborted_call_starts_nothing() {
    let control = Control::new();
    control.request_abort();
    let options = parse("readAccount", None, Some(r#"{"codexPath":"/nonexistent/codex"}"#)).unwrap();
    assert_cancelled(&super::start_and_drive(&options, &control.cancel).await);
}

/// A cancelled call: `CANCELLED`, naming the call.
fn assert_cancelled(outcome: &Outcome) {
    let failure = outcome.as_ref().expect_err("cancelled");
    assert_eq!(failure.code, crate::failure::Code::Cancelled, "{failure:?}");
    assert!(failure.message.ends_with("was cancelled"), "{failure:?}");
}

#[tokio::test]
async fn a_defect_in_a_call_still_settles_its_outcome() {
    let options = parse("readAccount", None, None).unwrap();
    let (running, work) = super::start_with(options, false, |_, _| async { panic!("defect in a call") });
    work.await;
    let outcome: Value = serde_json::from_str(&running.outcome().await).unwrap();
    assert_eq!(outcome["failure"]["code"], "INTERNAL_ERROR", "{outcome}");
    assert_eq!(outcome["failure"]["source"], "internal", "{outcome}");
    assert_eq!(outcome["failure"]["message"], "defect in a call", "{outcome}");
    // Asked again: said plainly, not a hang.
    let again: Value = serde_json::from_str(&running.outcome().await).unwrap();
    assert_eq!(again["failure"]["message"], "the call's outcome was already taken");
}

#[tokio::test]
async fn a_method_this_codex_lacks_is_method_unsupported() {
    let c = call("readThread", Some("t"), json!({}), |mut p| async move {
        hello(&mut p).await;
        let read = p.expect("thread/read").await;
        let message = "Invalid request: unknown variant `thread/read`, expected one of `initialize`, `thread/start`";
        p.send(json!({"id": read["id"], "error": {"code": -32600, "message": message}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    let failure = c.failure();
    assert_eq!(failure["code"], "METHOD_UNSUPPORTED", "{failure}");
    assert_eq!(failure["detail"]["method"], "thread/read");
    assert_eq!(failure["detail"]["codexVersion"], "0.171.0");
    assert!(failure["message"].as_str().unwrap().starts_with("Invalid request: unknown variant `thread/read`"));
}
