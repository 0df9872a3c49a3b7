//! A system whose process table is not read (Windows, where the Job Object holds the whole tree;
//! a Unix other than Linux and macOS, where the tree is its process groups only): the table's
//! queries find nothing, so the parsing in [`super::super::table`] is never asked for.

use super::super::table::{Entry, EnvironLayout};

pub const TABLE: bool = false;
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
