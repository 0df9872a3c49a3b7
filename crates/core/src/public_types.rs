//! The public types of `index.d.ts` held to what the core produces, field by field: every
//! harness event (by its `type`), the terminal event, a failure, the usage, a sub-agent and what
//! is cut off (the options are generated from the core: types/surface.d.ts). An event serialized
//! here with a field the types do not name — or a type naming a field the core never sends —
//! fails with both lists.

use crate::events::{
    AgentOutcome, AgentRef, AgentStatus, Cancellation, CutOff, CutReason, DiagnosticSource, HarnessEvent,
    PassthroughReason, ReasoningPart, ReplyKind, Status, Terminal, Usage,
};
use crate::failure::{Code, Failure, FailureSource};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

const TYPES: &str = include_str!("../../../index.d.ts");

/// Fields the JavaScript layer adds itself (the abort's reason, as the caller gave it).
const JS_ONLY: [&str; 1] = ["abortReason"];

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_string()).unwrap()
}

fn usage() -> Usage {
    Usage { input: 1, cache_read: 0, output: 1, reasoning: 0, total: 2 }
}

fn failure() -> Failure {
    Failure::new(FailureSource::Turn, Code::TurnFailed, "x")
        .with_codex_error_info(&json!("serverOverloaded"))
        .with_detail(json!({}))
}

/// A terminal with every field it can carry.
fn terminal() -> Terminal {
    Terminal {
        status: Status::Cancelled,
        thread_id: Some("t".into()),
        turn_id: Some("u".into()),
        final_message: Some("m".into()),
        proposed_plan: Some("p".into()),
        structured_output: Some(json!({})),
        usage: Some(usage()),
        cancellation: Some(Cancellation::Interrupted),
        failure: Some(failure()),
        agents: vec![AgentOutcome { thread_id: "a".into(), nickname: None, status: AgentStatus::CutOff, usage: None }],
        total_usage: Some(usage()),
        cut_off: vec![],
    }
}

fn agent() -> AgentRef {
    AgentRef { thread_id: "a".into(), nickname: None, path: None, depth: 1 }
}

/// One of every event. Adding a variant to `HarnessEvent`: add it here (the match in
/// `covers_every_variant` does not compile until it is named there too).
fn examples() -> Vec<HarnessEvent> {
    let item = || raw(r#"{"type":"agentMessage","id":"i","text":""}"#);
    vec![
        HarnessEvent::Started {
            turn_key: "t1".into(),
            pid: 1,
            codex_path: "/c".into(),
            codex_version: None,
            user_agent: "u".into(),
        },
        HarnessEvent::ThreadStarted { thread_id: "t".into(), resumed: false },
        HarnessEvent::TurnStarted { thread_id: "t".into(), turn_id: "u".into() },
        HarnessEvent::ItemStarted { item: item() },
        HarnessEvent::ItemCompleted { item: item() },
        HarnessEvent::MessageDelta { item_id: "i".into(), delta: "d".into(), replace: false },
        HarnessEvent::MessageDelta { item_id: "i".into(), delta: "d".into(), replace: true },
        HarnessEvent::ReasoningDelta {
            item_id: "i".into(),
            delta: "d".into(),
            part: ReasoningPart::Summary,
            index: 0,
            replace: false,
        },
        HarnessEvent::ReasoningDelta {
            item_id: "i".into(),
            delta: "d".into(),
            part: ReasoningPart::Summary,
            index: 0,
            replace: true,
        },
        HarnessEvent::CommandOutput { item_id: "i".into(), delta: "d".into(), replace: false },
        HarnessEvent::CommandOutput { item_id: "i".into(), delta: "d".into(), replace: true },
        HarnessEvent::Usage { turn: usage(), thread: usage(), context_window: None },
        HarnessEvent::Retrying { message: "m".into(), codex_error_info: Value::Null },
        HarnessEvent::Plan { explanation: None, plan: raw("[]") },
        HarnessEvent::Diff { diff: "d".into() },
        HarnessEvent::RateLimits { rate_limits: raw("{}") },
        HarnessEvent::ServerRequest {
            method: "m".into(),
            id: json!(1),
            params: raw("{}"),
            agent: None,
            reply: ReplyKind::App,
        },
        HarnessEvent::Native { method: "m".into(), params: raw("{}") },
        HarnessEvent::Passthrough { reason: PassthroughReason::ForeignThread, message: raw("{}") },
        HarnessEvent::Diagnostic { source: DiagnosticSource::Stderr, line: "l".into() },
        HarnessEvent::Agent { agent: agent(), event: Box::new(HarnessEvent::Diff { diff: "d".into() }) },
        HarnessEvent::Goal { goal: raw("{}") },
        HarnessEvent::PlanDelta { item_id: "i".into(), delta: "d".into(), replace: false },
        HarnessEvent::PlanDelta { item_id: "i".into(), delta: "d".into(), replace: true },
        HarnessEvent::ItemDropped { item_id: "i".into() },
        HarnessEvent::TurnCompleted(terminal()),
        HarnessEvent::Terminal(terminal()),
    ]
}

#[allow(dead_code)]
fn covers_every_variant(event: &HarnessEvent) {
    match event {
        HarnessEvent::Started { .. }
        | HarnessEvent::ThreadStarted { .. }
        | HarnessEvent::TurnStarted { .. }
        | HarnessEvent::ItemStarted { .. }
        | HarnessEvent::ItemCompleted { .. }
        | HarnessEvent::MessageDelta { .. }
        | HarnessEvent::ReasoningDelta { .. }
        | HarnessEvent::CommandOutput { .. }
        | HarnessEvent::Usage { .. }
        | HarnessEvent::Retrying { .. }
        | HarnessEvent::Plan { .. }
        | HarnessEvent::Diff { .. }
        | HarnessEvent::RateLimits { .. }
        | HarnessEvent::ServerRequest { .. }
        | HarnessEvent::Native { .. }
        | HarnessEvent::Passthrough { .. }
        | HarnessEvent::Diagnostic { .. }
        | HarnessEvent::Agent { .. }
        | HarnessEvent::Goal { .. }
        | HarnessEvent::PlanDelta { .. }
        | HarnessEvent::ItemDropped { .. }
        | HarnessEvent::TurnCompleted(_)
        | HarnessEvent::Terminal(_) => {}
    }
}

/// The field names of a JSON object.
fn keys(value: &Value) -> BTreeSet<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

/// The text of `export <kind> <name>` up to the end of its block (a blank line).
fn block(kind: &str, name: &str) -> String {
    let start = format!("export {kind} {name}");
    let at = TYPES.find(&start).unwrap_or_else(|| panic!("index.d.ts declares no `{start}`"));
    let rest = &TYPES[at..];
    rest[..rest.find("\n\n").unwrap_or(rest.len())].to_string()
}

/// Text without comments and string literals, so that only declarations are left.
fn declarations(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("/**") || line.starts_with('*') || line.starts_with("//") {
            continue;
        }
        let mut in_string = false;
        for c in line.chars() {
            match c {
                '\'' => in_string = !in_string,
                _ if in_string => {}
                c => out.push(c),
            }
        }
        out.push('\n');
    }
    out
}

/// The property names declared in a type's text (top level of its braces).
fn properties(text: &str) -> BTreeSet<String> {
    declared(text).into_iter().map(|(name, _)| name).collect()
}

/// The property names declared in a type's text (top level of its braces), each with whether
/// it is optional (`name?:`).
fn declared(text: &str) -> BTreeSet<(String, bool)> {
    let text = declarations(text);
    let mut found = BTreeSet::new();
    // Braces open a type's body; parentheses a function's parameters, which are no properties.
    let (mut depth, mut parens) = (0i32, 0i32);
    let mut word = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            '(' => parens += 1,
            ')' => parens -= 1,
            _ => {}
        }
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        let optional = c == '?' && chars.get(i + 1) == Some(&':');
        if depth == 1 && parens == 0 && (c == ':' || optional) && !word.is_empty() {
            found.insert((std::mem::take(&mut word), optional));
        }
        word.clear();
    }
    found
}

/// The fields of an interface, with those of the interface it extends through `Omit<…>`.
fn interface(name: &str) -> BTreeSet<String> {
    let text = block("interface", name);
    let mut fields = properties(&text);
    if let Some(base) = text.split("extends Omit<").nth(1).and_then(|rest| rest.split(',').next()) {
        fields.extend(interface(base.trim()));
    }
    fields
}

/// A member of a union: its field names, and which of them are optional.
#[derive(Debug)]
struct Member {
    fields: BTreeSet<String>,
    optional: BTreeSet<String>,
}

impl Member {
    /// An event with exactly `fields` is of this member: it has every field the member requires
    /// and none the member does not declare.
    fn admits(&self, fields: &BTreeSet<String>) -> bool {
        fields.is_subset(&self.fields) && self.fields.difference(&self.optional).all(|f| fields.contains(f))
    }
}

/// The members of `export type HarnessEvent`: each one's `type` and field names (a member may
/// be declared twice, e.g. `native` typed by method and as any method).
fn event_members() -> BTreeMap<String, Vec<Member>> {
    // Types of the protocol (generated from the pinned CLI) a member is intersected with.
    let protocol: [(&str, &[&str]); 2] =
        [("ServerRequest &", &["method", "id", "params", "agent"]), ("ServerNotification &", &["method", "params"])];
    let mut members: BTreeMap<String, Vec<Member>> = BTreeMap::new();
    for member in block("type", "HarnessEvent =").split("\n  |").skip(1) {
        let member = member.trim();
        let mut optional = BTreeSet::new();
        let (tag, fields) = match member.split("type: '").nth(1) {
            Some(rest) => {
                let tag = rest.split('\'').next().unwrap().to_string();
                let found = declared(&member.replace(['(', ')', '&'], " "));
                optional.extend(found.iter().filter(|(_, opt)| *opt).map(|(name, _)| name.clone()));
                let mut fields: BTreeSet<String> = found.into_iter().map(|(name, _)| name).collect();
                for (intersected, extra) in protocol {
                    if member.contains(intersected) {
                        fields.extend(extra.iter().map(|f| f.to_string()));
                    }
                }
                (tag, fields)
            }
            None => {
                let name = member.split_whitespace().next().unwrap();
                let tag = match name {
                    "TurnCompletedEvent" => "turnCompleted",
                    "TerminalEvent" => "terminal",
                    other => panic!("HarnessEvent member {other} is neither inline nor a known interface"),
                };
                (tag.to_string(), interface(name))
            }
        };
        let fields = fields.into_iter().filter(|f| !JS_ONLY.contains(&f.as_str())).collect();
        members.entry(tag).or_default().push(Member { fields, optional });
    }
    members
}

#[test]
fn every_event_is_declared_with_exactly_its_fields() {
    let declared = event_members();
    let mut produced: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for event in examples() {
        covers_every_variant(&event);
        let value = serde_json::to_value(&event).unwrap();
        let tag = value["type"].as_str().unwrap().to_string();
        let fields = keys(&value);
        let candidates = declared.get(&tag).unwrap_or_else(|| panic!("index.d.ts has no HarnessEvent of type '{tag}'"));
        assert!(
            candidates.iter().any(|member| member.admits(&fields)),
            "event '{tag}': the core sends {fields:?}; index.d.ts declares {candidates:?}"
        );
        produced.entry(tag).or_default().extend(fields);
    }
    // Every field declared, optional ones included, is one the core sends.
    for (tag, members) in &declared {
        let fields: BTreeSet<String> = members.iter().flat_map(|m| m.fields.iter().cloned()).collect();
        if let Some(sent) = produced.get(tag) {
            assert_eq!(&fields, sent, "event '{tag}': index.d.ts (left) against the core's fields (right)");
        }
    }
    let declared: BTreeSet<&String> = declared.keys().collect();
    assert_eq!(declared, produced.keys().collect(), "HarnessEvent types: index.d.ts (left) against the core's (right)");
}

#[test]
fn agents_and_cut_offs_are_declared_with_exactly_their_fields() {
    // (Failure, Usage and their unions are generated from the core: types/surface.d.ts.)
    let cases: [(&str, Value); 2] = [
        ("AgentRef", serde_json::to_value(agent()).unwrap()),
        (
            "AgentOutcome",
            serde_json::to_value(AgentOutcome {
                thread_id: "a".into(),
                nickname: None,
                status: AgentStatus::Completed,
                usage: None,
            })
            .unwrap(),
        ),
    ];
    for (name, value) in cases {
        assert_eq!(interface(name), keys(&value), "{name}: index.d.ts (left) against the core (right)");
    }
    // Every cut-off kind.
    let cut = [
        CutOff::Agent { thread_id: "a".into(), nickname: None, reason: CutReason::Abort },
        CutOff::Goal { objective: "o".into(), status: "active".into(), reason: CutReason::MaxContinuations },
        CutOff::BackgroundTerminal { item_id: "i".into(), process_id: None, command: "c".into() },
    ];
    let declared = block("type", "CutOff =");
    for cut in cut {
        let value = serde_json::to_value(cut).unwrap();
        let kind = value["kind"].as_str().unwrap();
        let member = declared
            .split("\n  |")
            .find(|m| m.contains(&format!("kind: '{kind}'")))
            .unwrap_or_else(|| panic!("index.d.ts has no CutOff of kind '{kind}'"));
        assert_eq!(properties(member), keys(&value), "CutOff '{kind}': index.d.ts (left) against the core (right)");
    }
}
