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
/// generated TypeScript (`types/codex/`, `pnpm types:generate`).
const PROTOCOL_TYPES: &[(&str, &str)] = &[];

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

/// `types/surface.d.ts`: the declarations, in the order a reader meets them.
fn typescript() -> String {
    use crate::events::Usage;
    use crate::failure::{Code, Failure, FailureSource, Reason};
    let cfg = config();
    let mut out = String::from(HEADER);
    for (name, path) in PROTOCOL_TYPES.iter().chain(inputs::PROTOCOL_TYPES) {
        out.push_str(&format!("import type {{ {name} }} from './codex/{path}.js'\n"));
    }
    out.push_str(&format!("import type {{ {} }} from '../index.js'\n", inputs::JS_TYPES.join(", ")));
    out.push('\n');
    for decl in [
        declaration::<Usage>(&cfg),
        declaration::<FailureSource>(&cfg),
        declaration::<Code>(&cfg),
        declaration::<Reason>(&cfg),
        declaration::<Failure>(&cfg),
    ]
    .into_iter()
    .chain(inputs::declarations(&cfg))
    {
        out.push_str(&decl);
        out.push('\n');
    }
    out
}
