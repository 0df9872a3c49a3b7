//! What a turn's texts add up to, through the scripted peer: the deltas of an item against the
//! whole text its completion carries (a command's output, a message, a plan, reasoning — Codex
//! sends some of them only whole), and the terminal's final message and proposed plan for every
//! way a run can end.

use super::{run, Peer, Run, THREAD, TURN};
use crate::process::End;
use serde_json::{json, Value};

const CHILD: &str = "thr-child";
const CHILD_TURN: &str = "turn-child";

/// A `commandExecution` item as 0.171.0 sends it: in progress, or completed with `aggregated`.
fn command(id: &str, completed: bool, aggregated: Option<&str>) -> Value {
    json!({"type": "commandExecution", "id": id, "command": "/bin/bash -lc 'make'", "cwd": "/w", "processId": "7",
           "source": "unifiedExecStartup", "status": if completed { "completed" } else { "inProgress" },
           "commandActions": [], "aggregatedOutput": aggregated, "exitCode": completed.then_some(0),
           "durationMs": null})
}

impl Peer {
    async fn item(&mut self, method: &str, item: Value) {
        self.notify(method, json!({"threadId": THREAD, "turnId": TURN, "item": item})).await;
    }

    async fn delta(&mut self, method: &str, item_id: &str, delta: &str, extra: Value) {
        let mut params = json!({"threadId": THREAD, "turnId": TURN, "itemId": item_id, "delta": delta});
        params.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        self.notify(method, params).await;
    }

    /// A command started, its `streamed` output deltas, and its completion with `aggregated`.
    async fn command(&mut self, id: &str, streamed: &[&str], aggregated: Option<&str>) {
        self.item("item/started", command(id, false, None)).await;
        for delta in streamed {
            self.delta("item/commandExecution/outputDelta", id, delta, json!({})).await;
        }
        self.item("item/completed", command(id, true, aggregated)).await;
    }

    async fn turn_of(&mut self, method: &str, thread: &str, turn: &str, status: &str, root: Option<&str>) {
        let mut body = json!({"id": turn, "status": status, "items": []});
        if let Some(root) = root {
            body["rootTurnId"] = json!(root);
        }
        self.notify(method, json!({"threadId": thread, "turn": body})).await;
    }
}

/// The text an app builds from one item's delta events of `kind` (`replace`: the delta is the
/// whole text), as the adapter of docs/events.md does.
fn built(r: &Run, kind: &str, item_id: &str, selects: impl Fn(&Value) -> bool) -> String {
    let mut text = String::new();
    for event in r.of_type(kind).into_iter().filter(|e| e["itemId"] == item_id && selects(e)) {
        if event.get("replace") == Some(&json!(true)) {
            text.clear();
        } else {
            assert!(event.get("replace").is_none(), "replace is only ever true: {event}");
        }
        text.push_str(event["delta"].as_str().unwrap());
    }
    text
}

/// Every delta event of `item_id` comes before its `itemCompleted`.
fn before_completion(r: &Run, item_id: &str) {
    let completed = r.events.iter().position(|e| e["type"] == "itemCompleted" && e["item"]["id"] == item_id);
    let completed = completed.unwrap_or_else(|| panic!("{item_id} completed"));
    let last = r.events.iter().rposition(|e| e["itemId"] == item_id && e["delta"].is_string());
    assert!(last.is_none_or(|last| last < completed), "a delta of {item_id} after its completion: {:#?}", r.events);
}

fn deltas_of<'a>(r: &'a Run, kind: &str, item_id: &str) -> Vec<&'a Value> {
    r.of_type(kind).into_iter().filter(|e| e["itemId"] == item_id).collect()
}

#[tokio::test]
async fn a_commands_output_deltas_add_up_to_its_aggregated_output() {
    let cases: [(&str, &[&str], Option<&str>); 9] = [
        // A fast command: 0.171.0 streams nothing of it.
        ("fast", &[], Some("out\nerr\n")),
        // Streamed in part: the rest follows as one more delta.
        ("part", &["a\n"], Some("a\nb\n")),
        // Streamed whole: nothing more.
        ("whole", &["a\n", "b\n"], Some("a\nb\n")),
        // What the command wrote before Codex started streaming never streamed: the aggregate
        // is not a continuation of the deltas, so it replaces them.
        ("late", &["line-3\n", "line-4\n"], Some("line-1\nline-2\nline-3\nline-4\n")),
        // Codex keeps the head and the tail of a long output: the aggregate replaces the stream.
        ("cut", &["0123", "456789"], Some("01\n... 6 bytes omitted ...\n89")),
        // A different interleaving of stdout and stderr.
        ("order", &["out\n", "err\n"], Some("err\nout\n")),
        // Text beyond ASCII: the rest starts after the streamed bytes.
        ("bytes", &["\u{e9}t\u{e9} "], Some("\u{e9}t\u{e9} d\u{e9}j\u{e0}")),
        // Nothing said of the output (a declined command): nothing added.
        ("none", &["x"], None),
        // An empty output.
        ("empty", &[], Some("")),
    ];
    let r = run(json!({}), move |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        for (id, streamed, aggregated) in cases {
            p.command(id, streamed, aggregated).await;
        }
        // A delta that comes before its item's start counts as streamed.
        p.delta("item/commandExecution/outputDelta", "early", "one\n", json!({})).await;
        p.command("early", &["two\n"], Some("one\ntwo\nthree\n")).await;
        p.message("msg_1", "done").await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "completed");
    for (id, streamed, aggregated) in
        cases.into_iter().chain([("early", &["one\n", "two\n"][..], Some("one\ntwo\nthree\n"))])
    {
        before_completion(&r, id);
        let expected = aggregated.map(str::to_string).unwrap_or_else(|| streamed.concat());
        assert_eq!(
            built(&r, "commandOutput", id, |_| true),
            expected,
            "{id}: {:#?}",
            deltas_of(&r, "commandOutput", id)
        );
    }
    let plain = |id: &str| -> Vec<Value> {
        deltas_of(&r, "commandOutput", id).into_iter().map(|e| e["delta"].clone()).collect::<Vec<_>>()
    };
    // The rest is one more delta; a stream that already adds up gets nothing more.
    assert_eq!(plain("fast"), [json!("out\nerr\n")]);
    assert_eq!(plain("part"), [json!("a\n"), json!("b\n")]);
    assert_eq!(plain("whole"), [json!("a\n"), json!("b\n")]);
    assert_eq!(plain("early"), [json!("one\n"), json!("two\n"), json!("three\n")]);
    assert_eq!(plain("bytes"), [json!("\u{e9}t\u{e9} "), json!("d\u{e9}j\u{e0}")]);
    assert!(plain("empty").is_empty());
    // A correction is the last delta, whole, and says so.
    let late = deltas_of(&r, "commandOutput", "late");
    assert_eq!(
        late.last().unwrap(),
        &&json!({"type": "commandOutput", "itemId": "late", "delta": "line-1\nline-2\nline-3\nline-4\n", "replace": true})
    );
    assert_eq!(late.len(), 3);
}

#[tokio::test]
async fn a_sub_agents_command_output_adds_up_too() {
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.turn_of("turn/started", CHILD, CHILD_TURN, "inProgress", Some(TURN)).await;
        let started = json!({"threadId": CHILD, "turnId": CHILD_TURN, "item": command("c", false, None)});
        p.notify("item/started", started).await;
        let completed =
            json!({"threadId": CHILD, "turnId": CHILD_TURN, "item": command("c", true, Some("from the child\n"))});
        p.notify("item/completed", completed).await;
        p.turn_of("turn/completed", CHILD, CHILD_TURN, "completed", None).await;
        p.message("msg_1", "done").await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    let inner: Vec<&Value> = r.of_type("agent").into_iter().map(|e| &e["event"]).collect();
    let output: Vec<&&Value> = inner.iter().filter(|e| e["type"] == "commandOutput").collect();
    assert_eq!(output, [&&json!({"type": "commandOutput", "itemId": "c", "delta": "from the child\n"})]);
    let at = |kind: &str| inner.iter().position(|e| e["type"] == kind).unwrap();
    assert!(at("commandOutput") < at("itemCompleted"));
}

#[tokio::test]
async fn messages_plans_and_reasoning_sent_whole_go_out_as_deltas_too() {
    let message = |id: &str, text: &str| json!({"type": "agentMessage", "id": id, "text": text, "phase": null});
    let reasoning = |summary: Value, content: Value| json!({"type": "reasoning", "id": "rs", "summary": summary, "content": content});
    let r = run(json!({}), move |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        // A message Codex completes without a delta (a model response that was not streamed).
        p.item("item/started", message("whole", "")).await;
        p.item("item/completed", message("whole", "whole message")).await;
        // One completed without even a start (a review's formatted message).
        p.item("item/completed", message("bare", "Review: fix x")).await;
        // Streamed in part.
        p.item("item/started", message("part", "")).await;
        p.delta("item/agentMessage/delta", "part", "Hel", json!({})).await;
        p.item("item/completed", message("part", "Hello")).await;
        // Streamed, then completed with another text.
        p.item("item/started", message("other", "")).await;
        p.delta("item/agentMessage/delta", "other", "draft", json!({})).await;
        p.item("item/completed", message("other", "final")).await;
        // A plan streamed in part.
        p.item("item/started", json!({"type": "plan", "id": "plan", "text": ""})).await;
        p.delta("item/plan/delta", "plan", "1. Paint", json!({})).await;
        p.item("item/completed", json!({"type": "plan", "id": "plan", "text": "1. Paint it red.\n"})).await;
        // Reasoning: one summary part streamed in part, one whole, raw text whole.
        p.item("item/started", reasoning(json!([]), json!([]))).await;
        p.delta("item/reasoning/summaryTextDelta", "rs", "Look", json!({"summaryIndex": 0})).await;
        p.item("item/completed", reasoning(json!(["Looking", "Then write"]), json!(["raw thought"]))).await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    for id in ["whole", "bare", "part", "other", "plan", "rs"] {
        before_completion(&r, id);
    }
    assert_eq!(built(&r, "messageDelta", "whole", |_| true), "whole message");
    assert_eq!(built(&r, "messageDelta", "bare", |_| true), "Review: fix x");
    assert_eq!(built(&r, "messageDelta", "part", |_| true), "Hello");
    assert_eq!(deltas_of(&r, "messageDelta", "part").last().unwrap()["delta"], "lo");
    assert_eq!(built(&r, "messageDelta", "other", |_| true), "final");
    assert_eq!(deltas_of(&r, "messageDelta", "other").last().unwrap()["replace"], true);
    assert_eq!(built(&r, "planDelta", "plan", |_| true), "1. Paint it red.\n");
    assert_eq!(deltas_of(&r, "planDelta", "plan").last().unwrap()["delta"], " it red.\n");
    let part = |part: &'static str, index: i64| move |e: &Value| e["part"] == part && e["index"] == index;
    assert_eq!(built(&r, "reasoningDelta", "rs", part("summary", 0)), "Looking");
    assert_eq!(built(&r, "reasoningDelta", "rs", part("summary", 1)), "Then write");
    assert_eq!(built(&r, "reasoningDelta", "rs", part("text", 0)), "raw thought");
    assert_eq!(deltas_of(&r, "reasoningDelta", "rs").len(), 4);
    assert_eq!(r.terminal["finalMessage"], "final");
}

/// A turn of `status` after a completed message and a plan, and a message started and never
/// completed: what the terminal says of them.
async fn ended(options: Value, status: &'static str) -> Run {
    run(options, move |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.message("msg_1", "Looked at it.").await;
        p.item("item/completed", json!({"type": "plan", "id": "plan", "text": "1. Fix it."})).await;
        p.item("item/started", json!({"type": "agentMessage", "id": "msg_2", "text": "", "phase": null})).await;
        p.delta("item/agentMessage/delta", "msg_2", "Now I", json!({})).await;
        match status {
            "interrupted" => {
                p.abort_after_pending_frames().await;
                let interrupt = p.expect("turn/interrupt").await;
                p.respond(&interrupt, json!({})).await;
                p.complete("interrupted").await;
            }
            "killed" => {
                p.abort_after_pending_frames().await;
                p.expect("turn/interrupt").await;
            }
            "exited" => {
                p.exit(1);
                return;
            }
            status => p.complete(status).await,
        }
        p.until_stdin_closed().await;
    })
    .await
}

#[tokio::test]
async fn the_final_message_and_the_plan_are_the_last_completed_whatever_the_outcome() {
    for (options, status, expected) in [
        (json!({}), "completed", (Some("completed"), None)),
        (json!({}), "failed", (Some("failed"), Some("TURN_FAILED"))),
        (json!({}), "interrupted", (Some("cancelled"), None)),
        (json!({"interruptGraceMs": 100}), "killed", (Some("cancelled"), None)),
        (json!({}), "exited", (Some("failed"), Some("PROCESS_EXITED"))),
    ] {
        let r = ended(options, status).await;
        let t = &r.terminal;
        assert_eq!((t["status"].as_str(), t["failure"]["code"].as_str()), expected, "{status}: {t}");
        // The message being streamed never completed: it is not the final message.
        assert_eq!(t["finalMessage"], "Looked at it.", "{status}: {t}");
        assert_eq!(t["proposedPlan"], "1. Fix it.", "{status}: {t}");
        if let Some(completed) = r.of_type("turnCompleted").first() {
            assert_eq!(
                (completed["finalMessage"].as_str(), completed["proposedPlan"].as_str()),
                (Some("Looked at it."), Some("1. Fix it."))
            );
        }
        if status == "killed" {
            assert_eq!((t["cancellation"].as_str(), r.ended), (Some("killed"), Some(End::Kill)));
        }
    }
}

#[tokio::test]
async fn a_plan_only_answer_is_the_terminals_proposed_plan() {
    let r = run(json!({"mode": "plan"}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.item("item/started", json!({"type": "plan", "id": "plan", "text": ""})).await;
        p.delta("item/plan/delta", "plan", "1. Paint", json!({})).await;
        p.delta("item/plan/delta", "plan", " it red.\n", json!({})).await;
        p.item("item/completed", json!({"type": "plan", "id": "plan", "text": "1. Paint it red.\n"})).await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    let t = &r.terminal;
    assert_eq!(t["status"], "completed");
    assert_eq!(t["finalMessage"], Value::Null);
    assert_eq!(t["proposedPlan"], "1. Paint it red.\n");
    // Without a plan item, no plan: a plan is never read out of a message.
    let r = ended(json!({}), "completed").await;
    assert_eq!(r.terminal["proposedPlan"], "1. Fix it.");
    let r = run(json!({}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        p.message("msg_1", "<proposed_plan>\n1. no\n</proposed_plan>").await;
        p.complete("completed").await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["proposedPlan"], Value::Null);
}

/// With `until: 'idle'`: the turn completes with a message while a sub-agent still works, then
/// the run ends as `how` says.
async fn idle_wait(options: Value, how: &'static str) -> Run {
    run(options, move |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        // A sub-agent of the turn (its turn names ours as its root), still working.
        p.turn_of("turn/started", CHILD, CHILD_TURN, "inProgress", Some(TURN)).await;
        p.message("msg_1", "Waiting for the helper.").await;
        p.complete("completed").await;
        match how {
            "exited" => {
                p.exit(1);
                return;
            }
            "killed" => {
                p.abort_after_pending_frames().await;
                p.expect("turn/interrupt").await;
            }
            _ => unreachable!(),
        }
        p.until_stdin_closed().await;
    })
    .await
}

#[tokio::test]
async fn until_idle_the_final_message_survives_a_wait_that_ends_failed_or_cancelled() {
    let r = idle_wait(json!({"until": "idle"}), "exited").await;
    assert_eq!(
        (r.terminal["status"].as_str(), r.terminal["failure"]["code"].as_str()),
        (Some("failed"), Some("PROCESS_EXITED"))
    );
    assert_eq!(r.terminal["finalMessage"], "Waiting for the helper.");
    let r = idle_wait(json!({"until": "idle", "interruptGraceMs": 100}), "killed").await;
    assert_eq!(
        (r.terminal["status"].as_str(), r.terminal["cancellation"].as_str()),
        (Some("cancelled"), Some("killed"))
    );
    assert_eq!(r.terminal["finalMessage"], "Waiting for the helper.");

    // A goal continuation that fails: the message of the user's turn is still the thread's last.
    const NEXT: &str = "turn-2";
    let r = run(json!({"until": "idle"}), |mut p| async move {
        p.handshake().await;
        p.start_turn().await;
        let goal = json!({"threadId": THREAD, "objective": "green", "status": "active", "tokenBudget": null,
                          "tokensUsed": 1, "timeUsedSeconds": 1, "createdAt": 1, "updatedAt": 1});
        p.notify("thread/goal/updated", json!({"threadId": THREAD, "turnId": TURN, "goal": goal})).await;
        p.message("msg_1", "First step done.").await;
        p.complete("completed").await;
        p.turn_of("turn/started", THREAD, NEXT, "inProgress", Some(TURN)).await;
        p.turn_of("turn/completed", THREAD, NEXT, "failed", None).await;
        p.until_stdin_closed().await;
    })
    .await;
    assert_eq!(r.terminal["status"], "failed", "{}", r.terminal);
    assert_eq!(r.terminal["finalMessage"], "First step done.");
}
