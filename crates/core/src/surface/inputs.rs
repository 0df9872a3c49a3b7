//! What goes in, written out: the options of every entry point and the types they hold (into
//! `types/surface.d.ts`), each call's declaration from the call table (`types/calls.d.ts`), and
//! the data `lib/` reads instead of keeping copies (`lib/surface.js`: the call rows, the options
//! every call shares, the events a prepared turn holds back, the failure codes).

use super::{declaration, HEADER};
use crate::call::table::{self, JsRow};
use crate::failure::Code;
use crate::options::call::{
    CallOptions, ForkThreadOptions, GoalChange, ListMcpServersOptions, ListModelsOptions, ListThreadsOptions,
    ReadThreadOptions, RevertThreadOptions, StartLoginOptions, SHARED,
};
use crate::options::conversation::{ConversationForkOptions, ConversationOptions, SendOptions};
use crate::options::discover::DiscoverCodexOptions;
use crate::options::input::{ImageDetail, InputItem};
use crate::options::logger::LoggerOptions;
use crate::options::TurnStartFields;
use crate::options::{Locus, McpPolicy, McpServer, PrepareTurnOptions, ReviewOptions, ReviewTarget, RunTurnOptions};
use ts_rs::Config;

/// The protocol's types the options name (`#[ts(type = "…")]`), from `types/codex/`.
pub(super) const PROTOCOL_TYPES: &[(&str, &str)] = &[
    ("ThreadSortKey", "v2/ThreadSortKey"),
    ("ThreadSourceKind", "v2/ThreadSourceKind"),
    ("ThreadGoalStatus", "v2/ThreadGoalStatus"),
];

/// What only JavaScript has that the options name (a callback's type, the `Turn`), from
/// `index.d.ts`.
pub(super) const JS_TYPES: &[&str] = &["OnServerRequest", "Turn", "AppTool"];

/// The options of every entry point, in the order a reader meets them.
pub(super) fn declarations(cfg: &Config) -> Vec<String> {
    vec![
        declaration::<Locus>(cfg),
        declaration::<McpServer>(cfg),
        declaration::<McpPolicy>(cfg),
        declaration::<ImageDetail>(cfg),
        declaration::<InputItem>(cfg),
        declaration::<RunTurnOptions>(cfg),
        declaration::<PrepareTurnOptions>(cfg),
        declaration::<TurnStartFields>(cfg),
        declaration::<ReviewTarget>(cfg),
        declaration::<ReviewOptions>(cfg),
        declaration::<ConversationOptions>(cfg),
        declaration::<SendOptions>(cfg),
        declaration::<ConversationForkOptions>(cfg),
        declaration::<CallOptions>(cfg),
        declaration::<ListModelsOptions>(cfg),
        declaration::<ListThreadsOptions>(cfg),
        declaration::<ReadThreadOptions>(cfg),
        declaration::<ForkThreadOptions>(cfg),
        declaration::<RevertThreadOptions>(cfg),
        declaration::<ListMcpServersOptions>(cfg),
        declaration::<StartLoginOptions>(cfg),
        declaration::<GoalChange>(cfg),
        declaration::<DiscoverCodexOptions>(cfg),
        declaration::<LoggerOptions>(cfg),
    ]
}

/// Names TypeScript itself has, or a declaration's own type parameters: nothing to import.
const GLOBAL: &[&str] = &["Promise", "Record", "Array", "Omit", "Pick", "Partial", "Exclude", "AbortSignal", "M"];

/// The capitalised names a declaration's text mentions (its types), outside its doc comment.
fn names(text: &str, out: &mut Vec<String>) {
    let code: String = text.lines().filter(|l| !l.trim_start().starts_with(['/', '*'])).collect::<Vec<_>>().join("\n");
    for word in code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let is_type = word.starts_with(|c: char| c.is_ascii_uppercase());
        if is_type && !GLOBAL.contains(&word) && !out.iter().any(|known| known == word) {
            out.push(word.to_string());
        }
    }
}

/// `types/calls.d.ts`: the function of each call, as the call table declares it.
pub(super) fn calls_typescript(cfg: &Config) -> String {
    let rows = table::typescript(cfg);
    let mut used = Vec::new();
    for row in &rows {
        names(&row.declaration, &mut used);
    }
    used.sort();
    let mut out = String::from(HEADER);
    out.push_str(&format!("import type {{ {} }} from '../index.js'\n\n", used.join(", ")));
    for row in rows {
        out.push_str(&row.declaration);
        out.push('\n');
    }
    out
}

/// `lib/surface.js`: the data `lib/` reads from the core (CommonJS, data only).
pub(super) fn javascript() -> String {
    let quoted = |names: &[&str]| names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
    let row = |row: &JsRow| {
        format!("{{ name: '{}', args: [{}], resolves: '{}' }}", row.name, quoted(&row.args), row.resolves)
    };
    let rows: Vec<String> = table::js_rows().iter().map(row).collect();
    let codes: Vec<String> = Code::ALL.iter().map(|code| format!("{0}: '{0}'", code.as_str())).collect();
    let mut out = HEADER.to_string();
    out.push_str("'use strict'\n\n");
    out.push_str("module.exports = {\n");
    out.push_str("  /** Every call around turns, as `lib/calls.js` builds its function: its arguments before the options, and what it resolves with. */\n");
    out.push_str(&format!("  calls: [{}],\n", rows.join(", ")));
    out.push_str("  /** The options every call takes (a conversation's fork passes them on). */\n");
    out.push_str(&format!("  callOptions: [{}],\n", quoted(SHARED)));
    out.push_str("  /** The events a prepared turn yields before its turn starts. */\n");
    out.push_str(&format!("  prelude: [{}],\n", quoted(crate::turn::PRELUDE)));
    out.push_str("  /** Every failure code, by name: what JavaScript reports itself is one of them. */\n");
    out.push_str(&format!("  codes: {{ {} }},\n", codes.join(", ")));
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declaration_imports_the_types_it_names() {
        let mut found = Vec::new();
        let declaration = "/**\n * See `Thread` and More.\n */\nexport function f<M extends X>(a: M, o?: CallOptions): Promise<Omit<Record<string, Y[]>, 'k'>>\n";
        names(declaration, &mut found);
        assert_eq!(found, ["X", "CallOptions", "Y"]);
    }

    #[test]
    fn the_data_lib_reads_is_the_cores() {
        let js = javascript();
        assert!(js.contains("{ name: 'renameThread', args: ['threadId', 'name'], resolves: 'void' }"), "{js}");
        assert!(js.contains("{ name: 'startLogin', args: [], resolves: 'handle' }"), "{js}");
        assert!(js.contains("TURN_RUNNING: 'TURN_RUNNING'"), "{js}");
        assert!(js.contains("callOptions: ['cwd', 'codexPath', 'locus', 'env', 'requestTimeoutMs']"), "{js}");
    }
}
