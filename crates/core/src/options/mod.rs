//! Every option a caller gives, checked here — the front door's other half (JavaScript's
//! `lib/plain.js` reads the options as given and refuses what JSON would drop or change; this
//! room reads the JSON into what the runs use). Every error names the option it is about
//! (`options.env.A: …`) and never shows a value.
//!
//! - [`json`]: reading the JSON text (errors with the option's path), milliseconds, `env`;
//! - [`turn`]: `runTurn`, `prepareTurn`, `runReview` and a prepared turn's `start()`;
//! - [`input`]: a turn's input items and a steer's;
//! - [`call`]: the calls around turns, their arguments and options;
//! - [`target`]: `cwd`, `codexPath`, `locus` and `env`, which every entry point shares;
//! - [`locus`]: a WSL distribution, and a Windows path inside it;
//! - [`mcp`]: the MCP policy, and the options of the policy's own entry points;
//! - [`discover`]: the options of `discoverCodex`.

pub mod call;
pub mod discover;
pub mod input;
pub mod json;
pub mod locus;
pub mod mcp;
pub mod target;
pub mod turn;

pub use json::OptionsError;
pub use locus::Locus;
pub use mcp::{McpPolicy, McpServer};
pub use turn::*;
