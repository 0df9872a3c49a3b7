//! The public surface as TypeScript, declared once: every type the package hands across the
//! boundary (events, failures, options, the calls' signatures) is a Rust declaration of the core
//! with its doc comments, and this room writes them out as `types/surface.d.ts`, beside the data
//! `lib/` reads (`lib/surface.js`). Both are checked in; `pnpm surface:generate` writes them
//! (formatted by prettier) and `pnpm surface:check`, in CI, fails when they differ from what the
//! declarations here say. `index.d.ts` re-exports the generated types and adds only what exists
//! in JavaScript alone (the `Turn`, the classes of the error family, callbacks).

mod inputs;

use ts_rs::{Config, TS};

/// One generated file: its path from the package root and its text (before formatting).
pub struct File {
    pub path: &'static str,
    pub text: String,
}

/// The header of every generated file.
const HEADER: &str = "// Generated from the declarations of crates/core (crates/core/src/surface/): \
`pnpm surface:generate` writes it, `pnpm surface:check` holds it to them. Do not edit.\n";

/// The protocol's own types the declarations name (`#[ts(type = "…")]`), from the pinned CLI's
/// generated TypeScript (`types/codex/`, `pnpm types:generate`): what is imported (`Name`, or
/// `Name as Local`) and from where.
const PROTOCOL_TYPES: &[(&str, &str)] = &[
    ("ThreadItem", "v2/ThreadItem"),
    ("TurnPlanStep", "v2/TurnPlanStep"),
    ("RateLimitSnapshot", "v2/RateLimitSnapshot"),
    ("ThreadGoal", "v2/ThreadGoal"),
    ("CodexErrorInfo", "v2/CodexErrorInfo"),
    ("ServerNotification", "ServerNotification"),
    ("ServerRequest as ProtocolServerRequest", "ServerRequest"),
];

/// The two events that carry a turn's outcome, by name (`Terminal` is what they carry).
const OUTCOME_EVENTS: &str = "\
/**
 * The one event that ends every turn: last, once the child and everything it started are gone.
 */
export type TerminalEvent = { type: 'terminal' } & Terminal

/**
 * The server completed the turn: what the terminal event will say, sent as soon as Codex
 * reports it. The `terminal` event follows once the child and everything it started are gone
 * (tens of milliseconds later: Codex's own shutdown). Only a turn the server completed has one
 * (not a failure of the process, a kill or a failure before the turn). When the run goes on
 * after the user's turn (`until: 'idle'`, or an abort waiting for the sub-agents it
 * interrupted), it carries that turn's outcome as it was then: `agents` lists the sub-agents
 * whose work had ended, `cutOff` is empty, and the terminal says how the rest ended.
 */
export type TurnCompletedEvent = { type: 'turnCompleted' } & Terminal
";

#[cfg(test)]
mod examples;

/// Every generated file.
pub fn files() -> Vec<File> {
    vec![
        File { path: "types/surface.d.ts", text: typescript() },
        File { path: "types/calls.d.ts", text: inputs::calls_typescript(&config()) },
        File { path: "lib/surface.js", text: inputs::javascript() },
    ]
}

/// How the declarations are written: 64-bit integers are JavaScript numbers (what `JSON.parse`
/// gives).
fn config() -> Config {
    Config::default().with_large_int("number")
}

/// `export type …` of `T`, with its doc comment.
fn declaration<T: TS>(cfg: &Config) -> String {
    let mut out = T::docs().unwrap_or_default();
    out.push_str("export ");
    out.push_str(&T::decl(cfg));
    out.push('\n');
    out
}

/// Every declaration of `types/surface.d.ts`, in the order a reader meets them: its TypeScript
/// name and its text.
pub(crate) fn declarations() -> Vec<(String, String)> {
    use crate::events::*;
    use crate::failure::Reason;
    let cfg = config();
    macro_rules! each {
        ($($t:ty),* $(,)?) => { vec![$((<$t as TS>::ident(&cfg), declaration::<$t>(&cfg))),*] };
    }
    each![
        // The events and what ends a turn.
        HarnessEvent,
        StartedEvent,
        ThreadStartedEvent,
        TurnStartedEvent,
        ItemEvent,
        DeltaEvent,
        ReasoningDeltaEvent,
        ReasoningPart,
        UsageEvent,
        RetryingEvent,
        PlanEvent,
        DiffEvent,
        RateLimitsEvent,
        ServerRequestEvent,
        ReplyKind,
        AgentEvent,
        AgentRef,
        GoalEvent,
        ItemDroppedEvent,
        NativeEvent,
        UnknownNotificationEvent,
        PassthroughEvent,
        PassthroughReason,
        DiagnosticEvent,
        DiagnosticSource,
        Terminal,
        Status,
        Cancellation,
        AgentOutcome,
        AgentStatus,
        CutOff,
        CutReason,
        // Usage and failures.
        Usage,
        FailureSource,
        Code,
        Reason,
        Failure,
    ]
}

/// `types/surface.d.ts`: the declarations, in the order a reader meets them.
fn typescript() -> String {
    let mut out = String::from(HEADER);
    for (name, path) in PROTOCOL_TYPES.iter().chain(inputs::PROTOCOL_TYPES) {
        out.push_str(&format!("import type {{ {name} }} from './codex/{path}.js'\n"));
    }
    out.push_str(&format!("import type {{ {} }} from '../index.js'\n", inputs::JS_TYPES.join(", ")));
    out.push('\n');
    let inputs = inputs::declarations(&config()).into_iter().map(|decl| (String::new(), decl));
    for (name, decl) in declarations().into_iter().chain(inputs) {
        out.push_str(&decl);
        out.push('\n');
        if name == "HarnessEvent" {
            out.push_str(OUTCOME_EVENTS);
            out.push('\n');
        }
    }
    out
}
