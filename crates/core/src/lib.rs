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
pub mod input;
pub mod isolation;
pub mod locus;
pub mod mcp_policy;
pub mod options;
pub mod process;
pub mod protocol;
#[cfg(test)]
mod public_types;
pub mod rpc;
pub mod stream;
pub mod supervise;
pub mod target;
pub mod text;
pub mod transport;
pub mod turn;
pub mod user_input;
