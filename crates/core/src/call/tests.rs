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

/// Plays call `name` (with its `args`, if it takes any) against `script`, under `control`.
async fn call_with<F, Fut>(
    control: Arc<Control>,
    name: &str,
    thread: Option<&str>,
    args: Option<Value>,
    options: Value,
    script: F,
) -> Called
where
    F: FnOnce(Peer) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Wiring { peer, process, reader, writer, ended, received } =
        wiring(Arc::new(EventStream::new()), control.clone());
    // The thread calls' thread is their first argument, by name as the others.
    let mut args = args.unwrap_or_else(|| json!({}));
    if let Some(thread) = thread {
        args["threadId"] = json!(thread);
    }
    let options = parse(name, Some(&args.to_string()), Some(&options.to_string())).unwrap();
    let script = tokio::spawn(script(peer));
    let outcome =
        tokio::time::timeout(Duration::from_secs(10), drive(reader, writer, process, &options, &control.cancel, None))
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
    call_with(Arc::new(Control::new()), name, thread, None, options, script).await
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
                "rateLimits": expected, "auth": {"ready": true, "via": "account"}})
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
    // The child's environment has no API key variable (the peer's process is this test's: the
    // check reads the target's environment, which the test sets empty).
    assert_eq!(c.answer()["rateLimits"], Value::Null);
    assert_eq!(c.answer()["account"], Value::Null);
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
    call_with(control, name, None, None, json!({}), move |peer| script(peer, aborter)).await
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
    let call = super::Calling { options, login: None };
    assert_cancelled(&crate::run::start_and_drive(call, &control.cancel).await);
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

// ---------------------------------------------------------------------------------------------
// Logging in and out, the thread verbs, goals, skills, MCP status and any method

#[tokio::test]
async fn read_account_says_how_the_child_authenticates() {
    let blank = json!({"env": {"OPENAI_API_KEY": "", "CODEX_API_KEY": ""}});
    let c = call("readAccount", None, blank, |mut p| async move {
        hello(&mut p).await;
        answer(&mut p, "account/read", json!({"account": null, "requiresOpenaiAuth": true})).await;
        answer(&mut p, "account/rateLimits/read", json!({"rateLimits": null})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer()["auth"], json!({"ready": false, "via": null}));
    // An API key in the child's environment is what a turn authenticates with.
    let keyed = json!({"env": {"OPENAI_API_KEY": "sk-in-the-environment", "CODEX_API_KEY": ""}});
    let c = call("readAccount", None, keyed, |mut p| async move {
        hello(&mut p).await;
        answer(&mut p, "account/read", json!({"account": null, "requiresOpenaiAuth": true})).await;
        answer(&mut p, "account/rateLimits/read", json!({"rateLimits": null})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer()["auth"], json!({"ready": true, "via": "apiKeyEnv"}));
}

/// A call with arguments besides its thread and options (`name`, `goal`, `apiKey`, `method`…).
async fn call_args<F, Fut>(name: &str, thread: Option<&str>, args: Value, options: Value, script: F) -> Called
where
    F: FnOnce(Peer) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    call_with(Arc::new(Control::new()), name, thread, Some(args), options, script).await
}

const KEY: &str = "sk-proj-test-0123456789";

#[tokio::test]
async fn login_with_an_api_key_sends_it_in_the_params_only_and_reads_the_account() {
    let c = call_args("loginWithApiKey", None, json!({"apiKey": KEY}), json!({}), |mut p| async move {
        hello(&mut p).await;
        let start = p.expect("account/login/start").await;
        assert_eq!(start["params"], json!({"type": "apiKey", "apiKey": KEY}));
        p.respond(&start, json!({"type": "apiKey"})).await;
        p.notify("account/login/completed", json!({"loginId": null, "success": true, "error": null})).await;
        p.notify("account/updated", json!({"authMode": "apikey", "planType": null})).await;
        answer(&mut p, "account/read", json!({"account": {"type": "apiKey"}, "requiresOpenaiAuth": true})).await;
        let limits = p.expect("account/rateLimits/read").await;
        p.send(json!({"id": limits["id"], "error": {"code": -32600, "message": "no plan"}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(
        c.answer(),
        &json!({"account": {"type": "apiKey"}, "requiresOpenaiAuth": true, "rateLimits": null,
                "auth": {"ready": true, "via": "account"}})
    );
    assert_eq!(c.ended, Some(End::Polite(crate::process::EXIT_GRACE)));
}

#[tokio::test]
async fn a_refused_api_key_is_login_failed_without_the_key() {
    let c = call_args("loginWithApiKey", None, json!({"apiKey": KEY}), json!({}), |mut p| async move {
        hello(&mut p).await;
        let start = p.expect("account/login/start").await;
        let message = format!("failed to save api key {KEY}: permission denied");
        p.send(json!({"id": start["id"], "error": {"code": -32603, "message": message, "data": {"key": KEY}}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    let failure = c.failure();
    assert_eq!(failure["code"], "LOGIN_FAILED");
    assert_eq!(failure["message"], "failed to save api key <redacted>: permission denied");
    assert!(!failure.to_string().contains(KEY), "{failure}");
    // Completed unsuccessfully after the answer: the same.
    let c = call_args("loginWithApiKey", None, json!({"apiKey": KEY}), json!({}), |mut p| async move {
        hello(&mut p).await;
        answer(&mut p, "account/login/start", json!({"type": "apiKey"})).await;
        p.notify("account/login/completed", json!({"loginId": null, "success": false, "error": "disk full"})).await;
        answer(&mut p, "account/read", json!({"account": null, "requiresOpenaiAuth": true})).await;
        answer(&mut p, "account/rateLimits/read", json!({"rateLimits": null})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.failure()["code"], "LOGIN_FAILED");
    assert_eq!(c.failure()["message"], "disk full");
}

#[tokio::test]
async fn logout_and_the_thread_verbs_send_their_one_request() {
    let verbs: [(&str, Value, &str, Value); 5] = [
        ("logout", json!({}), "account/logout", json!({})),
        (
            "renameThread",
            json!({"name": "Fix the build"}),
            "thread/name/set",
            json!({"threadId": "t1", "name": "Fix the build"}),
        ),
        ("archiveThread", json!({}), "thread/archive", json!({"threadId": "t1"})),
        ("unarchiveThread", json!({}), "thread/unarchive", json!({"threadId": "t1"})),
        ("deleteThread", json!({}), "thread/delete", json!({"threadId": "t1"})),
    ];
    for (name, args, method, params) in verbs {
        let thread = (name != "logout").then_some("t1");
        let method = method.to_string();
        let c = call_args(name, thread, args, json!({}), move |mut p| async move {
            // Without the experimental surface.
            let init = p.expect("initialize").await;
            assert!(init["params"].get("capabilities").is_none(), "{init}");
            p.respond(&init, json!({"userAgent": "rennet/0.171.0 (Test; x86_64) (rennet; 0.1.0)", "codexHome": "/h"}))
                .await;
            p.expect("initialized").await;
            let sent = answer(&mut p, &method, json!({"thread": {"id": "t1"}})).await;
            assert_eq!(sent, params, "{method}");
            p.until_stdin_closed().await;
        })
        .await;
        assert_eq!(c.answer(), &Value::Null, "{name}");
        // One request besides the handshake; the thread is never loaded for these.
        assert_eq!(c.received.len(), 3, "{name}: {:?}", c.received);
    }
}

#[tokio::test]
async fn revert_loads_the_thread_read_only_in_its_own_directory_first() {
    let c = call_args("revertThread", Some("t1"), json!({}), json!({"beforeTurnId": "u2"}), |mut p| async move {
        // With the experimental surface: Codex 0.150.0 has `thread/revert` only there.
        let init = p.expect("initialize").await;
        assert_eq!(init["params"]["capabilities"], json!({"experimentalApi": true}));
        p.respond(&init, json!({"userAgent": "rennet/0.150.0 (Test; x86_64) (rennet; 0.1.0)", "codexHome": "/h"}))
            .await;
        p.expect("initialized").await;
        let resume = answer(&mut p, "thread/resume", json!({"thread": {"id": "t1"}})).await;
        assert_eq!(resume, json!({"threadId": "t1", "approvalPolicy": "never", "sandbox": "read-only"}));
        let revert =
            answer(&mut p, "thread/revert", json!({"thread": {"id": "t1"}, "turnsBackwardsCursor": null})).await;
        assert_eq!(revert, json!({"threadId": "t1", "beforeTurnId": "u2"}));
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &Value::Null);
    let c = call_args("revertThread", Some("t1"), json!({}), json!({"beforeTurnId": "nope"}), |mut p| async move {
        hello(&mut p).await;
        answer(&mut p, "thread/resume", json!({"thread": {"id": "t1"}})).await;
        let revert = p.expect("thread/revert").await;
        p.send(json!({"id": revert["id"], "error": {"code": -32600, "message": "turn not found: nope"}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.failure()["code"], "REQUEST_FAILED");
    assert_eq!(c.failure()["message"], "turn not found: nope");
}

fn usage(input: i64, output: i64) -> Value {
    json!({"totalTokens": input + output, "inputTokens": input, "cachedInputTokens": 0, "outputTokens": output,
           "reasoningOutputTokens": 0})
}

#[tokio::test]
async fn compaction_ends_at_its_turn_completed_with_its_usage() {
    let c = call("compactThread", Some("t1"), json!({}), |mut p| async move {
        hello(&mut p).await;
        answer(&mut p, "thread/resume", json!({"thread": {"id": "t1"}})).await;
        let start = p.expect("thread/compact/start").await;
        assert_eq!(start["params"], json!({"threadId": "t1"}));
        // The turn may announce itself before the acknowledgement.
        p.notify("turn/started", json!({"threadId": "t1", "turn": {"id": "c1", "status": "inProgress"}})).await;
        p.respond(&start, json!({})).await;
        p.notify(
            "item/started",
            json!({"threadId": "t1", "turnId": "c1", "item": {"type": "contextCompaction", "id": "x"}}),
        )
        .await;
        // Another thread's turn ends: not this call's.
        p.notify("turn/completed", json!({"threadId": "t9", "turn": {"id": "o1", "status": "completed", "items": []}}))
            .await;
        // As Codex 0.171.0 sends them: the total so far again, the total after the compaction's
        // model request, and the same total with an estimate of the compacted context as `last`.
        let updates = [(usage(50, 5), usage(50, 5)), (usage(155, 26), usage(105, 21)), (usage(155, 26), usage(0, 0))];
        for (total, last) in updates {
            let tokens = json!({"total": total, "last": last, "modelContextWindow": 1000});
            p.notify("thread/tokenUsage/updated", json!({"threadId": "t1", "turnId": "c1", "tokenUsage": tokens}))
                .await;
        }
        p.notify("turn/completed", json!({"threadId": "t1", "turn": {"id": "c1", "status": "completed", "items": []}}))
            .await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(
        c.answer(),
        &json!({"usage": {"input": 105, "cacheRead": 0, "output": 21, "reasoning": 0, "total": 126}})
    );
}

#[tokio::test]
async fn a_compaction_without_a_replayed_total_counts_its_response() {
    let c = call("compactThread", Some("t1"), json!({}), |mut p| async move {
        hello(&mut p).await;
        answer(&mut p, "thread/resume", json!({"thread": {"id": "t1"}})).await;
        answer(&mut p, "thread/compact/start", json!({})).await;
        p.notify("turn/started", json!({"threadId": "t1", "turn": {"id": "c1", "status": "inProgress"}})).await;
        let tokens = json!({"total": usage(155, 26), "last": usage(105, 21)});
        p.notify("thread/tokenUsage/updated", json!({"threadId": "t1", "turnId": "c1", "tokenUsage": tokens})).await;
        p.notify("turn/completed", json!({"threadId": "t1", "turn": {"id": "c1", "status": "completed", "items": []}}))
            .await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer()["usage"]["total"], 126);
    let c = call("compactThread", Some("t1"), json!({}), |mut p| async move {
        hello(&mut p).await;
        answer(&mut p, "thread/resume", json!({"thread": {"id": "t1"}})).await;
        answer(&mut p, "thread/compact/start", json!({})).await;
        p.notify("turn/completed", json!({"threadId": "t1", "turn": {"id": "c1", "status": "completed", "items": []}}))
            .await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &json!({"usage": null}));
}

#[tokio::test]
async fn a_compaction_that_fails_is_turn_failed_in_codex_words() {
    let c = call("compactThread", Some("t1"), json!({}), |mut p| async move {
        hello(&mut p).await;
        answer(&mut p, "thread/resume", json!({"thread": {"id": "t1"}})).await;
        answer(&mut p, "thread/compact/start", json!({})).await;
        p.notify("turn/started", json!({"threadId": "t1", "turn": {"id": "c1", "status": "inProgress"}})).await;
        let error = json!({"message": "stream disconnected", "codexErrorInfo": "serverOverloaded"});
        p.notify("turn/completed", json!({"threadId": "t1", "turn": {"id": "c1", "status": "failed", "error": error}}))
            .await;
        p.until_stdin_closed().await;
    })
    .await;
    let failure = c.failure();
    assert_eq!(failure["source"], "turn");
    assert_eq!(failure["code"], "TURN_FAILED");
    assert_eq!(failure["message"], "stream disconnected");
    assert_eq!(failure["retryable"], true);
    assert_eq!(failure["detail"]["turnId"], "c1");
}

#[tokio::test]
async fn goals_are_read_set_and_cleared_without_loading_the_thread() {
    let goal = json!({"threadId": "t1", "objective": "Ship it", "status": "active", "tokenBudget": null,
                      "tokensUsed": 0, "timeUsedSeconds": 0, "createdAt": 1, "updatedAt": 1});
    let read = goal.clone();
    let c = call("readGoal", Some("t1"), json!({}), |mut p| async move {
        hello(&mut p).await;
        assert_eq!(answer(&mut p, "thread/goal/get", json!({"goal": read})).await, json!({"threadId": "t1"}));
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &goal);
    let c = call("readGoal", Some("t1"), json!({}), |mut p| async move {
        hello(&mut p).await;
        answer(&mut p, "thread/goal/get", json!({"goal": null})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &Value::Null);
    let set = goal.clone();
    let args = json!({"goal": {"objective": "Ship it", "tokenBudget": null}});
    let c = call_args("setGoal", Some("t1"), args, json!({}), |mut p| async move {
        hello(&mut p).await;
        let params = answer(&mut p, "thread/goal/set", json!({"goal": set})).await;
        assert_eq!(params, json!({"threadId": "t1", "objective": "Ship it", "tokenBudget": null}));
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &goal);
    assert!(c.sent("thread/resume").is_empty());
    let c = call("clearGoal", Some("t1"), json!({}), |mut p| async move {
        hello(&mut p).await;
        answer(&mut p, "thread/goal/clear", json!({"cleared": true})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &Value::Null);
    assert!(c.sent("thread/resume").is_empty());
}

#[tokio::test]
async fn skills_are_the_directory_s_each_as_codex_sent_it() {
    let cwd = if cfg!(windows) { r"C:\work" } else { "/work" };
    let skill = json!({"name": "deploy", "description": "Deploys", "path": "/work/.agents/skills/deploy/SKILL.md",
                       "scope": "repo", "enabled": true, "extra": 1});
    let sent = skill.clone();
    let c = call("listSkills", None, json!({"cwd": cwd}), move |mut p| async move {
        hello(&mut p).await;
        let entry =
            json!({"cwd": cwd, "skills": [sent], "errors": [{"path": "/work/.codex/skills/bad", "message": "x"}]});
        assert_eq!(answer(&mut p, "skills/list", json!({"data": [entry]})).await, json!({"cwds": [cwd]}));
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &json!([skill]));
}

#[tokio::test]
async fn mcp_servers_are_listed_without_starting_any() {
    let cwd = if cfg!(windows) { r"C:\work" } else { "/work" };
    let c = call("listMcpServers", None, json!({"cwd": cwd}), move |mut p| async move {
        hello(&mut p).await;
        let config = json!({"config": {"mcp_servers": {
            "docs": {"command": "docs-server", "env": {"TOKEN": "secret"}},
            "off": {"url": "http://127.0.0.1:9/mcp", "enabled": false}}}, "origins": {}});
        assert_eq!(answer(&mut p, "config/read", config).await, json!({"cwd": cwd}));
        let thread = p.expect("thread/start").await;
        assert_eq!(
            thread["params"],
            json!({"cwd": cwd, "approvalPolicy": "never", "sandbox": "read-only", "ephemeral": true,
                   "config": {"mcp_servers": {"docs": {"enabled": false}, "off": {"enabled": false}}}})
        );
        p.respond(&thread, json!({"thread": {"id": "status-thread"}})).await;
        let status =
            |name: &str| json!({"name": name, "runtimeStatus": "disabled", "tools": {}, "authStatus": "unsupported"});
        let first = answer(&mut p, "mcpServerStatus/list", json!({"data": [status("docs")], "nextCursor": "2"})).await;
        assert_eq!(first, json!({"threadId": "status-thread", "detail": "toolsAndAuthOnly"}));
        let second = answer(&mut p, "mcpServerStatus/list", json!({"data": [status("off")], "nextCursor": null})).await;
        assert_eq!(second["cursor"], "2");
        p.until_stdin_closed().await;
    })
    .await;
    let servers: Vec<(&str, &str)> = c
        .answer()
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["runtimeStatus"].as_str().unwrap()))
        .collect();
    assert_eq!(servers, [("docs", "notStarted"), ("off", "disabled")]);
    // With `connect`, as Codex asks without a thread (the servers start).
    let c = call("listMcpServers", None, json!({"connect": true}), |mut p| async move {
        hello(&mut p).await;
        let params =
            answer(&mut p, "mcpServerStatus/list", json!({"data": [{"name": "docs"}], "nextCursor": null})).await;
        assert_eq!(params, json!({}));
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &json!([{"name": "docs"}]));
    assert!(c.sent("thread/start").is_empty());
}

#[tokio::test]
async fn request_sends_any_method_with_its_params_and_hands_back_the_result() {
    let args = json!({"method": "thread/loaded/list", "params": {"limit": 3}});
    let c = call_args("request", None, args, json!({}), |mut p| async move {
        hello(&mut p).await;
        let params = answer(&mut p, "thread/loaded/list", json!({"data": ["t1"], "nextCursor": null})).await;
        assert_eq!(params, json!({"limit": 3}));
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(c.answer(), &json!({"data": ["t1"], "nextCursor": null}));
    let args = json!({"method": "modelProvider/list"});
    let c = call_args("request", None, args, json!({}), |mut p| async move {
        hello(&mut p).await;
        let ask = p.expect("modelProvider/list").await;
        assert_eq!(ask["params"], json!({}));
        let message = "Invalid request: unknown variant `modelProvider/list`, expected one of `initialize`";
        p.send(json!({"id": ask["id"], "error": {"code": -32600, "message": message}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    let failure = c.failure();
    assert_eq!(failure["code"], "METHOD_UNSUPPORTED");
    assert_eq!(failure["detail"]["method"], "modelProvider/list");
    assert_eq!(failure["detail"]["codexVersion"], "0.171.0");
}

#[tokio::test]
async fn update_thread_metadata_patches_the_git_facts_without_loading_the_thread() {
    let metadata = json!({"gitInfo": {"branch": "release", "sha": null}});
    let c =
        call_args("updateThreadMetadata", Some("t1"), json!({"metadata": metadata}), json!({}), |mut p| async move {
            hello(&mut p).await;
            let sent = answer(
                &mut p,
                "thread/metadata/update",
                json!({"thread": {"id": "t1", "gitInfo": {"branch": "release"}}}),
            )
            .await;
            // As given: `null` clears a fact, what is absent stays.
            assert_eq!(sent, json!({"threadId": "t1", "gitInfo": {"branch": "release", "sha": null}}));
            p.until_stdin_closed().await;
        })
        .await;
    assert_eq!(c.answer(), &json!({"id": "t1", "gitInfo": {"branch": "release"}}));
    assert_eq!(c.received.len(), 3, "{:?}", c.received);
    let refused = |args: Value| parse("updateThreadMetadata", Some(&args.to_string()), None).unwrap_err().0;
    assert_eq!(
        refused(json!({"threadId": "t1", "metadata": {}})),
        "updateThreadMetadata: metadata must set gitInfo (null clears it)"
    );
    assert_eq!(refused(json!({"threadId": "t1"})), "updateThreadMetadata: metadata must be an object { gitInfo }");
    assert!(refused(json!({"threadId": "t1", "metadata": {"title": "x"}})).contains("unknown field `title`"));
    assert_eq!(
        refused(json!({"threadId": "t1", "metadata": {"gitInfo": {}}})),
        "updateThreadMetadata: metadata.gitInfo must set at least one of sha, branch and originUrl (null clears one; gitInfo: null clears them all)"
    );
    // `gitInfo: null` clears them all: Codex refuses it as such, so each fact goes as `null`.
    let all = parse("updateThreadMetadata", Some(r#"{"threadId":"t1","metadata":{"gitInfo":null}}"#), None).unwrap();
    let super::Call::UpdateThreadMetadata { metadata, .. } = &all.call else { panic!("{:?}", all.call) };
    assert_eq!(metadata.0, json!({"gitInfo": {"sha": null, "branch": null, "originUrl": null}}));
    assert_eq!(
        refused(json!({"threadId": "t1", "metadata": {"gitInfo": {"branch": ""}}})),
        "updateThreadMetadata: metadata.gitInfo.branch must be a non-empty string"
    );
}

#[tokio::test]
async fn every_call_reads_a_method_the_server_lacks_as_method_unsupported() {
    let calls: [(&str, Option<&str>, Value, Value, &str); 6] = [
        ("logout", None, json!({}), json!({}), "account/logout"),
        ("renameThread", Some("t"), json!({"name": "n"}), json!({}), "thread/name/set"),
        ("readGoal", Some("t"), json!({}), json!({}), "thread/goal/get"),
        ("listSkills", None, json!({}), json!({}), "skills/list"),
        ("listMcpServers", None, json!({}), json!({"connect": true}), "mcpServerStatus/list"),
        ("loginWithApiKey", None, json!({"apiKey": KEY}), json!({}), "account/login/start"),
    ];
    for (name, thread, args, options, method) in calls {
        let expected = method.to_string();
        let c = call_args(name, thread, args, options, move |mut p| async move {
            hello(&mut p).await;
            let ask = p.expect(&expected).await;
            p.send(json!({"id": ask["id"], "error": {"code": -32601, "message": "Method not found"}})).await;
            p.until_stdin_closed().await;
        })
        .await;
        let failure = c.failure();
        assert_eq!(failure["code"], "METHOD_UNSUPPORTED", "{name}: {failure}");
        assert_eq!(failure["detail"]["method"], method, "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// A ChatGPT login's handle

struct LoggedIn {
    outcome: Outcome,
    started: Option<String>,
    received: Vec<Value>,
    ended: Option<End>,
}

async fn login_with<F, Fut>(options: Value, control: Arc<Control>, script: F) -> LoggedIn
where
    F: FnOnce(Peer) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Wiring { peer, process, reader, writer, ended, received } =
        wiring(Arc::new(EventStream::new()), control.clone());
    let options = parse("startLogin", None, Some(&options.to_string())).unwrap();
    let started = tokio::sync::watch::channel(None).0;
    let script = tokio::spawn(script(peer));
    let outcome = tokio::time::timeout(
        Duration::from_secs(10),
        drive(reader, writer, process, &options, &control.cancel, Some(&started)),
    )
    .await
    .expect("the login ended");
    finished(script).await;
    let received = received.lock().unwrap().clone();
    let ended = *ended.lock().unwrap();
    let started = started.borrow().clone();
    LoggedIn { outcome, started, received, ended }
}

const AUTH_URL: &str =
    "https://auth.openai.com/oauth/authorize?redirect_uri=http%3A%2F%2F127.0.0.1%3A1455%2Fauth%2Fcallback";

/// The browser login started: `account/login/start` answered with login `l1`.
async fn login_started(p: &mut Peer, kind: &str) {
    hello(p).await;
    let start = p.expect("account/login/start").await;
    assert_eq!(start["params"], json!({"type": kind}));
    match kind {
        "chatgpt" => p.respond(&start, json!({"type": "chatgpt", "loginId": "l1", "authUrl": AUTH_URL})).await,
        _ => {
            let code = json!({"type": "chatgptDeviceCode", "loginId": "l1", "verificationUrl": "https://auth.openai.com/codex/device",
                              "userCode": "ABCD-1234"});
            p.respond(&start, code).await
        }
    }
}

fn started_value(logged: &LoggedIn) -> Value {
    let envelope: Value = serde_json::from_str(logged.started.as_deref().expect("started was told")).unwrap();
    envelope["ok"].clone()
}

#[tokio::test]
async fn a_browser_login_shows_the_url_then_completes_with_the_account() {
    let logged = login_with(json!({}), Arc::new(Control::new()), |mut p| async move {
        login_started(&mut p, "chatgpt").await;
        // Another login's end (one this child replaced) is not this one's.
        p.notify("account/login/completed", json!({"loginId": "old", "success": false, "error": "Login cancelled"}))
            .await;
        p.notify("account/login/completed", json!({"loginId": "l1", "success": true, "error": null})).await;
        let account =
            json!({"account": {"type": "chatgpt", "email": "a@b.c", "planType": "plus"}, "requiresOpenaiAuth": true});
        answer(&mut p, "account/read", account).await;
        answer(&mut p, "account/rateLimits/read", json!({"rateLimits": {"limitId": "codex"}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(
        started_value(&logged),
        json!({"loginId": "l1", "authUrl": AUTH_URL, "verificationUrl": null, "userCode": null})
    );
    let account = logged.outcome.as_ref().expect("logged in");
    assert_eq!(account["account"]["email"], "a@b.c");
    assert_eq!(account["auth"], json!({"ready": true, "via": "account"}));
    assert_eq!(logged.ended, Some(End::Polite(crate::process::EXIT_GRACE)));
}

#[tokio::test]
async fn a_device_code_login_shows_the_code() {
    let logged = login_with(json!({"type": "chatgptDeviceCode"}), Arc::new(Control::new()), |mut p| async move {
        login_started(&mut p, "chatgptDeviceCode").await;
        p.notify("account/login/completed", json!({"loginId": "l1", "success": false, "error": "expired"})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(started_value(&logged)["userCode"], "ABCD-1234");
    assert_eq!(started_value(&logged)["authUrl"], Value::Null);
    let failure = logged.outcome.unwrap_err();
    assert_eq!((failure.code, failure.message.as_str()), (Code::LoginFailed, "expired"));
}

#[tokio::test]
async fn a_cancelled_login_asks_codex_to_cancel_it_before_the_child_ends() {
    let control = Arc::new(Control::new());
    let canceller = control.clone();
    let logged = login_with(json!({}), control, move |mut p| async move {
        login_started(&mut p, "chatgpt").await;
        // Once the client has read the answer (it answers a server request after it).
        p.send(json!({"id": "sync", "method": "item/tool/requestUserInput", "params": {}})).await;
        while p.recv().await["id"] != "sync" {}
        canceller.request_abort();
        let cancel = p.expect("account/login/cancel").await;
        assert_eq!(cancel["params"], json!({"loginId": "l1"}));
        p.notify(
            "account/login/completed",
            json!({"loginId": "l1", "success": false, "error": "Login server error: Login was not completed"}),
        )
        .await;
        p.respond(&cancel, json!({"status": "canceled"})).await;
        p.until_stdin_closed().await;
    })
    .await;
    let failure = logged.outcome.unwrap_err();
    assert_eq!(failure.code, Code::Cancelled, "{failure:?}");
    assert_eq!(failure.message, "startLogin was cancelled");
    // Ended politely: Codex had ended the login already.
    assert_eq!(logged.ended, Some(End::Polite(crate::process::EXIT_GRACE)));
    assert_eq!(logged.received.iter().filter(|m| m["method"] == "account/login/cancel").count(), 1);
}

#[tokio::test]
async fn a_login_past_its_time_is_cancelled_and_times_out() {
    let logged = login_with(json!({"timeoutMs": 50}), Arc::new(Control::new()), |mut p| async move {
        login_started(&mut p, "chatgpt").await;
        let cancel = p.expect("account/login/cancel").await;
        p.respond(&cancel, json!({"status": "canceled"})).await;
        p.notify("account/login/completed", json!({"loginId": "l1", "success": false, "error": "cancelled"})).await;
        p.until_stdin_closed().await;
    })
    .await;
    let failure = logged.outcome.unwrap_err();
    assert_eq!(failure.code, Code::RequestTimeout, "{failure:?}");
    assert_eq!(failure.message, "the login did not complete within 50 ms");
    assert_eq!(failure.detail["loginId"], "l1");
}

#[tokio::test]
async fn a_login_s_time_starts_when_the_user_is_shown_what_to_do() {
    // Codex takes longer to start the login than the user is given: that time is not theirs.
    let logged = login_with(json!({"timeoutMs": 200}), Arc::new(Control::new()), |mut p| async move {
        hello(&mut p).await;
        let start = p.expect("account/login/start").await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        p.respond(&start, json!({"type": "chatgpt", "loginId": "l1", "authUrl": AUTH_URL})).await;
        p.notify("account/login/completed", json!({"loginId": "l1", "success": true, "error": null})).await;
        answer(&mut p, "account/read", json!({"account": null, "requiresOpenaiAuth": true})).await;
        answer(&mut p, "account/rateLimits/read", json!({"rateLimits": {"limitId": "codex"}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert!(logged.outcome.is_ok(), "{:?}", logged.outcome);
    assert!(!logged.received.iter().any(|m| m["method"] == "account/login/cancel"));
}

#[tokio::test]
async fn a_refused_login_start_is_login_failed_in_codex_words() {
    let logged = login_with(json!({"type": "chatgptDeviceCode"}), Arc::new(Control::new()), |mut p| async move {
        hello(&mut p).await;
        let start = p.expect("account/login/start").await;
        let message = "failed to request device code: error sending request for url (https://auth.openai.com/api/accounts/deviceauth/usercode)";
        p.send(json!({"id": start["id"], "error": {"code": -32603, "message": message}})).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert!(logged.started.is_none(), "drive leaves `started` to the handle's work");
    let failure = logged.outcome.unwrap_err();
    assert_eq!(failure.code, Code::LoginFailed);
    assert!(failure.message.starts_with("failed to request device code: "), "{failure:?}");
    assert_eq!(failure.detail["code"], -32603);
}

#[tokio::test]
async fn an_abort_before_codex_named_the_login_kills_at_once() {
    let control = Arc::new(Control::new());
    let aborter = control.clone();
    let logged = login_with(json!({}), control, move |mut p| async move {
        hello(&mut p).await;
        p.expect("account/login/start").await;
        aborter.request_abort();
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(logged.outcome.unwrap_err().code, Code::Cancelled);
    assert_eq!(logged.ended, Some(End::Kill));
    assert!(logged.received.iter().all(|m| m["method"] != "account/login/cancel"));
}

/// The browser login is one per process: the tests that take it take turns.
static BROWSER_LOGIN_TESTS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test]
async fn one_browser_login_at_a_time_and_the_second_says_so_at_once() {
    let _turn = BROWSER_LOGIN_TESTS.lock().await;
    let options = || parse("startLogin", None, Some(r#"{"codexPath":"/nonexistent/codex"}"#)).unwrap();
    let (_first, running) = super::login::start(options(), false);
    let (second, refused) = super::login::start(options(), false);
    refused.await;
    let started: Value = serde_json::from_str(&second.started().await).unwrap();
    assert_eq!(started["failure"]["code"], "LOGIN_IN_PROGRESS", "{started}");
    let completed: Value = serde_json::from_str(&second.completed().await).unwrap();
    assert_eq!(completed["failure"]["code"], "LOGIN_IN_PROGRESS");
    // The first one's end frees the port for the next.
    drop(running);
    let (third, work) = super::login::start(options(), false);
    work.await;
    let completed: Value = serde_json::from_str(&third.completed().await).unwrap();
    assert_eq!(completed["failure"]["code"], "CODEX_NOT_FOUND", "{completed}");
    // A device-code login needs no port.
    let device = parse("startLogin", None, Some(r#"{"type":"chatgptDeviceCode","codexPath":"/nonexistent/codex"}"#));
    let (_held, _running) = super::login::start(options(), false);
    let (code, work) = super::login::start(device.unwrap(), false);
    work.await;
    let started: Value = serde_json::from_str(&code.started().await).unwrap();
    assert_eq!(started["failure"]["code"], "CODEX_NOT_FOUND", "{started}");
}

#[tokio::test]
async fn a_browser_login_after_a_cancel_waits_for_the_cancelled_one_to_end() {
    let _turn = BROWSER_LOGIN_TESTS.lock().await;
    let options = || parse("startLogin", None, Some(r#"{"codexPath":"/nonexistent/codex"}"#)).unwrap();
    let (first, ending) = super::login::start(options(), false);
    first.cancel();
    let (second, waiting) = super::login::start(options(), false);
    let mut waiting = Box::pin(waiting);
    // It waits while the cancelled one's child is still ending (here: its work has not run).
    tokio::select! {
        biased;
        () = &mut waiting => panic!("the second login ran beside the first"),
        () = tokio::task::yield_now() => {}
    }
    // Waiting, it is the one that runs next: a third is refused at once.
    let (third, refused) = super::login::start(options(), false);
    refused.await;
    let completed: Value = serde_json::from_str(&third.completed().await).unwrap();
    assert_eq!(completed["failure"]["code"], "LOGIN_IN_PROGRESS", "{completed}");
    ending.await;
    let completed: Value = serde_json::from_str(&first.completed().await).unwrap();
    assert_eq!(completed["failure"]["code"], "CANCELLED", "{completed}");
    // Once the first is gone, the second runs (and finds no Codex here).
    waiting.await;
    let completed: Value = serde_json::from_str(&second.completed().await).unwrap();
    assert_eq!(completed["failure"]["code"], "CODEX_NOT_FOUND", "{completed}");

    // Cancelled while it waits, a login starts nothing; the one after it waits for both.
    let (held, running) = super::login::start(options(), false);
    held.cancel();
    let (cancelled, cancelled_work) = super::login::start(options(), false);
    cancelled.cancel();
    let (next, next_work) = super::login::start(options(), false);
    let mut next_work = Box::pin(next_work);
    let mut cancelled_work = Box::pin(cancelled_work);
    tokio::select! {
        biased;
        () = &mut cancelled_work => panic!("the cancelled login ended before the one it waits for"),
        () = &mut next_work => panic!("a login ran beside a cancelled one still ending"),
        () = tokio::task::yield_now() => {}
    }
    running.await;
    cancelled_work.await;
    let completed: Value = serde_json::from_str(&cancelled.completed().await).unwrap();
    assert_eq!(completed["failure"]["code"], "CANCELLED", "{completed}");
    next_work.await;
    let completed: Value = serde_json::from_str(&next.completed().await).unwrap();
    assert_eq!(completed["failure"]["code"], "CODEX_NOT_FOUND", "{completed}");
}

#[test]
fn credentials_in_request_params_are_kept_out_of_the_logged_stderr() {
    let mut found = Vec::new();
    let params = json!({"type": "amazonBedrockAccessKeys", "accessKeyId": "AKIA", "secretAccessKey": "s3cr3t-value",
                        "sessionToken": "tok-123456", "region": "eu", "nested": [{"apiKey": "sk-nested-123"}]});
    super::credentials_in(&params, &mut found);
    found.sort();
    assert_eq!(found, ["AKIA", "s3cr3t-value", "sk-nested-123", "tok-123456"]);
}
