//! One example of every harness event, serialized and held to its generated declaration. ts-rs
//! names the fields from the same serde attributes the JSON comes from, so names cannot drift;
//! what it cannot see is whether a field the declaration requires is always written (a
//! `skip_serializing_if` without `#[ts(optional)]`), or whether a hand-written `#[ts(type)]` or
//! an intersection with a protocol type says what is sent. Each example must carry every field
//! its declaration requires and none it does not declare.

use super::declarations;
use crate::events::*;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// The protocol's types the declarations intersect with: the fields each one has.
const PROTOCOL: &[(&str, &[&str])] =
    &[("ProtocolServerRequest", &["method", "id", "params"]), ("ServerNotification", &["method", "params"])];

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_string()).unwrap()
}

fn usage() -> Usage {
    Usage { input: 1, cache_read: 0, output: 1, reasoning: 0, total: 2 }
}

fn agent() -> AgentRef {
    AgentRef { thread_id: "a".into(), nickname: Some("n".into()), path: None, depth: 1 }
}

/// A terminal with every field it can carry.
fn terminal() -> Terminal {
    let failure = Failure::new(FailureSource::Turn, Code::TurnFailed, "x")
        .with_codex_error_info(&json!("serverOverloaded"))
        .with_detail(json!({}));
    Terminal {
        status: Status::Cancelled,
        thread_id: Some("t".into()),
        turn_id: Some("u".into()),
        final_message: Some("m".into()),
        proposed_plan: Some("p".into()),
        structured_output: Some(json!({})),
        usage: Some(usage()),
        cancellation: Some(Cancellation::Interrupted),
        failure: Some(failure),
        agents: vec![AgentOutcome {
            thread_id: "a".into(),
            nickname: None,
            status: AgentStatus::CutOff,
            usage: Some(usage()),
        }],
        total_usage: Some(usage()),
        cut_off: vec![
            CutOff::Agent { thread_id: "a".into(), nickname: None, reason: CutReason::Abort },
            CutOff::Goal { objective: "o".into(), status: "active".into(), reason: CutReason::MaxContinuations },
            CutOff::BackgroundTerminal { item_id: "i".into(), process_id: None, command: "c".into() },
        ],
        ..Terminal::empty()
    }
}

/// Every event, each optional field both written and left out. Adding a variant to
/// `HarnessEvent`: add it here (the match in `covers_every_variant` does not compile until it is
/// named there too).
fn examples() -> Vec<HarnessEvent> {
    let item = || raw(r#"{"type":"agentMessage","id":"i","text":""}"#);
    let delta = |replace| DeltaEvent { item_id: "i".into(), delta: "d".into(), replace };
    let reasoning = |replace| ReasoningDeltaEvent {
        item_id: "i".into(),
        delta: "d".into(),
        part: ReasoningPart::Summary,
        index: 0,
        replace,
    };
    let asked = |reply, unfit: Option<&str>| ServerRequestEvent {
        method: "item/commandExecution/requestApproval".into(),
        id: json!(1),
        params: raw("{}"),
        agent: None,
        reply,
        unfit: unfit.map(String::from),
    };
    vec![
        HarnessEvent::Started(StartedEvent {
            turn_key: "t1".into(),
            pid: 1,
            codex_path: "/c".into(),
            codex_version: None,
            user_agent: "u".into(),
        }),
        HarnessEvent::ThreadStarted(ThreadStartedEvent { thread_id: "t".into(), resumed: false }),
        HarnessEvent::TurnStarted(TurnStartedEvent { thread_id: "t".into(), turn_id: "u".into() }),
        HarnessEvent::ItemStarted(ItemEvent { item: item() }),
        HarnessEvent::ItemCompleted(ItemEvent { item: item() }),
        HarnessEvent::MessageDelta(delta(false)),
        HarnessEvent::MessageDelta(delta(true)),
        HarnessEvent::ReasoningDelta(reasoning(false)),
        HarnessEvent::ReasoningDelta(reasoning(true)),
        HarnessEvent::CommandOutput(delta(false)),
        HarnessEvent::CommandOutput(delta(true)),
        HarnessEvent::Usage(UsageEvent { turn: usage(), thread: usage(), context_window: None }),
        HarnessEvent::Retrying(RetryingEvent { message: "m".into(), codex_error_info: Value::Null }),
        HarnessEvent::Plan(PlanEvent { explanation: None, plan: raw("[]") }),
        HarnessEvent::Diff(DiffEvent { diff: "d".into() }),
        HarnessEvent::RateLimits(RateLimitsEvent { rate_limits: raw("{}") }),
        HarnessEvent::ServerRequest(asked(ReplyKind::App, None)),
        HarnessEvent::ServerRequest(asked(ReplyKind::Unfit, Some("why"))),
        HarnessEvent::Agent(AgentEvent {
            agent: agent(),
            event: Box::new(HarnessEvent::Diff(DiffEvent { diff: "d".into() })),
        }),
        HarnessEvent::Goal(GoalEvent { goal: raw("{}") }),
        HarnessEvent::PlanDelta(delta(false)),
        HarnessEvent::PlanDelta(delta(true)),
        HarnessEvent::ItemDropped(ItemDroppedEvent { item_id: "i".into() }),
        HarnessEvent::notification("thread/status/changed", raw("{}")),
        HarnessEvent::notification("fake/unknownThing", raw("{}")),
        HarnessEvent::Passthrough(PassthroughEvent { reason: PassthroughReason::ForeignThread, message: raw("{}") }),
        HarnessEvent::Diagnostic(DiagnosticEvent { source: DiagnosticSource::Stderr, line: "l".into() }),
        HarnessEvent::TurnCompleted(terminal()),
        HarnessEvent::Terminal(terminal()),
        HarnessEvent::Terminal(Terminal::empty()),
    ]
}

#[allow(dead_code)]
fn covers_every_variant(event: &HarnessEvent) {
    match event {
        HarnessEvent::Started(_)
        | HarnessEvent::ThreadStarted(_)
        | HarnessEvent::TurnStarted(_)
        | HarnessEvent::ItemStarted(_)
        | HarnessEvent::ItemCompleted(_)
        | HarnessEvent::MessageDelta(_)
        | HarnessEvent::ReasoningDelta(_)
        | HarnessEvent::CommandOutput(_)
        | HarnessEvent::Usage(_)
        | HarnessEvent::Retrying(_)
        | HarnessEvent::Plan(_)
        | HarnessEvent::Diff(_)
        | HarnessEvent::RateLimits(_)
        | HarnessEvent::ServerRequest(_)
        | HarnessEvent::Agent(_)
        | HarnessEvent::Goal(_)
        | HarnessEvent::PlanDelta(_)
        | HarnessEvent::ItemDropped(_)
        | HarnessEvent::Native(_)
        | HarnessEvent::UnknownNotification(_)
        | HarnessEvent::Passthrough(_)
        | HarnessEvent::Diagnostic(_)
        | HarnessEvent::TurnCompleted(_)
        | HarnessEvent::Terminal(_) => {}
    }
}

/// One member of a declared type: its tag (a field whose type is a string literal), the fields
/// it requires and those it may have.
#[derive(Debug, Default)]
struct Member {
    tag: Option<(String, String)>,
    required: BTreeSet<String>,
    optional: BTreeSet<String>,
}

/// `text` split at `sep` where no bracket is open.
fn split_top(text: &str, sep: char) -> Vec<String> {
    let (mut parts, mut depth, mut current) = (Vec::new(), 0i32, String::new());
    for c in text.chars() {
        match c {
            '{' | '(' | '<' | '[' => depth += 1,
            '}' | ')' | '>' | ']' => depth -= 1,
            _ if c == sep && depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

/// The members of the declared type `name`: a union's, each an intersection of object literals,
/// declared names and the protocol's types.
fn members(name: &str) -> Vec<Member> {
    if let Some((_, fields)) = PROTOCOL.iter().find(|(n, _)| *n == name) {
        return vec![Member { required: fields.iter().map(|f| f.to_string()).collect(), ..Member::default() }];
    }
    let decls = declarations();
    let (_, decl) = decls.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no declaration of {name}"));
    // Without doc comments, the body after `type Name =`.
    let mut text = decl.clone();
    while let Some(start) = text.find("/**") {
        let end = start + text[start..].find("*/").unwrap() + 2;
        text.replace_range(start..end, "");
    }
    let body = text.split_once(" = ").unwrap().1.trim().trim_end_matches(';');
    split_top(body, '|')
        .iter()
        .map(|member| {
            let mut out = Member::default();
            for part in split_top(member, '&') {
                let Some(fields) = part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) else {
                    // A declared name: its one member's fields (intersections of unions are not used).
                    let [inner] = &members(&part)[..] else { panic!("{part} in {name} is a union") };
                    out.required.extend(inner.required.iter().cloned());
                    out.optional.extend(inner.optional.iter().cloned());
                    continue;
                };
                for field in split_top(fields, ',') {
                    let (key, ty) = field.split_once(':').unwrap_or_else(|| panic!("{field} in {name}"));
                    let key = key.trim().trim_matches('"');
                    let ty = ty.trim();
                    if let Some(key) = key.strip_suffix('?') {
                        out.optional.insert(key.to_string());
                    } else if ty.starts_with('"') {
                        out.tag = Some((key.to_string(), ty.trim_matches('"').to_string()));
                    } else {
                        out.required.insert(key.to_string());
                    }
                }
            }
            out
        })
        .collect()
}

/// `value` is of the declared type `name`: the member its tag names (or the only one) requires
/// every field it has and declares every field it sends. Returns the problem, if any.
fn fits(name: &str, value: &Value) -> Result<(), String> {
    let object = value.as_object().ok_or_else(|| format!("{name}: {value} is not an object"))?;
    let members = members(name);
    let member = members
        .iter()
        .find(|m| m.tag.as_ref().is_none_or(|(key, tag)| object.get(key).and_then(Value::as_str) == Some(tag)))
        .ok_or_else(|| format!("{name} declares no member for {value}"))?;
    let sent: BTreeSet<String> =
        object.keys().filter(|k| member.tag.as_ref().is_none_or(|(tag, _)| tag != *k)).cloned().collect();
    let missing: Vec<_> = member.required.difference(&sent).collect();
    let undeclared: Vec<_> =
        sent.iter().filter(|f| !member.required.contains(*f) && !member.optional.contains(*f)).collect();
    if missing.is_empty() && undeclared.is_empty() {
        Ok(())
    } else {
        Err(format!("{name}: {value} lacks {missing:?} and sends undeclared {undeclared:?}"))
    }
}

#[test]
fn every_event_fits_its_generated_declaration() {
    let mut tags = BTreeSet::new();
    for event in examples() {
        covers_every_variant(&event);
        let value = serde_json::to_value(&event).unwrap();
        fits("HarnessEvent", &value).unwrap();
        tags.insert(value["type"].as_str().unwrap().to_string());
    }
    // Every member of the union has an example.
    let declared: BTreeSet<String> = members("HarnessEvent").into_iter().map(|m| m.tag.unwrap().1).collect();
    assert_eq!(declared, tags, "HarnessEvent's members (left) against the examples' types (right)");
}

#[test]
fn what_the_terminal_and_an_agent_carry_fits_its_declaration() {
    let value = serde_json::to_value(terminal()).unwrap();
    for cut in value["cutOff"].as_array().unwrap() {
        fits("CutOff", cut).unwrap();
    }
    fits("AgentOutcome", &value["agents"][0]).unwrap();
    fits("Failure", &value["failure"]).unwrap();
    fits("Usage", &value["usage"]).unwrap();
    fits("AgentRef", &serde_json::to_value(agent()).unwrap()).unwrap();
    // The JavaScript layer's own field is declared, and the core never writes it.
    assert!(members("Terminal")[0].optional.contains("abortReason"));
    assert!(value.get("abortReason").is_none());
}

#[test]
fn the_check_sees_a_field_the_declaration_does_not_name_or_requires() {
    let mut value = serde_json::to_value(HarnessEvent::Diff(DiffEvent { diff: "d".into() })).unwrap();
    value["extra"] = json!(1);
    assert!(fits("HarnessEvent", &value).unwrap_err().contains("extra"));
    let lacking = json!({"type": "threadStarted", "threadId": "t"});
    assert!(fits("HarnessEvent", &lacking).unwrap_err().contains("resumed"));
}
