//! What `index.d.ts` still declares by hand, held to what the core reads: the options `runTurn`
//! takes. (The events, the terminal, failures and usage are generated from the core's own
//! declarations into `types/surface.d.ts`; `surface/examples.rs` holds each event to its
//! declaration.)

use std::collections::BTreeSet;

const TYPES: &str = include_str!("../../../index.d.ts");

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

#[test]
fn the_options_runturn_takes_are_declared() {
    // The options the core reads, from its own refusal of an unknown one.
    let message = crate::options::parse(r#"{"cwd":"/","prompt":"x","zzz":1}"#).err().unwrap().0;
    let expected = message.split("expected one of ").nth(1).unwrap_or_else(|| panic!("{message}"));
    let mut read: BTreeSet<String> = expected.split(", ").map(|f| f.trim_matches('`').to_string()).collect();
    // `target` is runReview's (ReviewOptions); everything else is RunTurnOptions'.
    assert!(read.remove("target"), "{read:?}");
    assert!(properties(&block("type", "ReviewOptions")).contains("target"));
    let mut declared = interface("RunTurnOptions");
    // Kept in JavaScript: the signal (the core gets `aborted`), the handler (the core gets `true`).
    assert!(declared.remove("signal"));
    assert_eq!(declared, read, "RunTurnOptions in index.d.ts (left) against the options the core reads (right)");
}
