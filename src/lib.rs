//! @rennet/codex: runs one Codex turn through `codex app-server`.
//!
//! The core (`protocol`, `transport`, `process`, `turn`, `events`, `stream`, `batch`,
//! `options`) knows nothing of Node; `binding` is the thin N-API layer over it.

pub mod batch;
pub mod discovery;
pub mod events;
pub mod isolation;
pub mod mcp_policy;
pub mod options;
pub mod process;
pub mod protocol;
pub mod stream;
pub mod transport;
pub mod turn;

pub mod binding;
