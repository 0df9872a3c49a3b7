//! A Unix other than Linux and macOS: no process table is read and there is no subreaper, so a
//! tree is its process groups only (descendants that leave them are not found).

use super::super::table::{Entry, EnvironLayout};
use process_wrap::tokio::CommandWrap;

pub const TABLE: bool = false;
pub const SUBREAPER: bool = false;
pub const ENVIRON_LAYOUT: EnvironLayout = EnvironLayout::Plain;

pub fn snapshot() -> Vec<Entry> {
    Vec::new()
}

pub fn entry(_pid: i32) -> Option<Entry> {
    None
}

pub fn environ(_pid: i32) -> Option<Vec<u8>> {
    None
}

/// Never asked for here ([`SUBREAPER`] is false): there is no child subreaper.
pub fn make_subreaper(_command: &mut CommandWrap) {}
