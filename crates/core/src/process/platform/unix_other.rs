//! A Unix other than Linux and macOS: no process table is read and there is no subreaper, so a
//! tree is its process groups only (descendants that leave them are not found).

use process_wrap::tokio::CommandWrap;

pub const SUBREAPER: bool = false;

/// Never asked for here ([`SUBREAPER`] is false): there is no child subreaper.
pub fn make_subreaper(_command: &mut CommandWrap) {}
