//! The Node-free core of @rennet/codex: runs one Codex turn through `codex app-server`.
//!
//! Nothing here knows of Node: the napi binding (the workspace's top-level crate) is a thin
//! layer over this crate, and `cargo test -p rennet_codex` drives it directly.

pub mod account;
pub mod app_server;
pub mod batch;
pub mod call;
pub mod cancel;
pub mod discovery;
pub mod envelope;
pub mod events;
pub mod exchange;
pub mod failure;
pub mod isolation;
pub mod mcp_policy;
pub mod options;
pub mod process;
pub mod protocol;
pub mod resolve;
#[cfg(test)]
mod rooms;
pub mod rpc;
pub mod run;
pub mod sandbox;
pub mod stream;
pub mod supervise;
pub mod surface;
pub mod text;
pub mod transport;
pub mod turn;

/// ARCHITECTURE.md names every module of this crate, so that its map of the rooms cannot fall
/// behind the tree: each module under `src/` by its path from there, in backticks — a file as
/// `turn/session.rs`, a directory as `discovery/launch/` (its `mod.rs` is the directory).
#[cfg(test)]
mod architecture {
    use std::path::Path;

    const DOCUMENT: &str = include_str!("../../../ARCHITECTURE.md");

    /// Every module under `dir` as ARCHITECTURE.md writes it, `prefix` being `dir`'s own path.
    fn modules(dir: &Path, prefix: &str, found: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().and_then(|n| n.to_str()).expect("a file name in UTF-8");
            if path.is_dir() {
                let dir_name = format!("{prefix}{name}/");
                found.push(dir_name.clone());
                modules(&path, &dir_name, found);
            } else if name.ends_with(".rs") && name != "mod.rs" && !(prefix.is_empty() && name == "lib.rs") {
                found.push(format!("{prefix}{name}"));
            }
        }
    }

    #[test]
    fn architecture_md_names_every_module() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        modules(&src, "", &mut found);
        assert!(found.iter().any(|m| m == "turn/"), "the walk found the crate's modules: {found:?}");
        let missing: Vec<&String> = found.iter().filter(|m| !DOCUMENT.contains(&format!("`{m}`"))).collect();
        assert!(
            missing.is_empty(),
            "ARCHITECTURE.md does not name {} module(s) of crates/core/src; add each, as written here in backticks, \
             to the table of its room: {}",
            missing.len(),
            missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
        );
    }
}
