//! Linux: the process table is `/proc`, and a child can be made a child subreaper.

use super::super::table::{self, Entry, EnvironLayout};
use process_wrap::tokio::{CommandWrap, CommandWrapper};

pub const TABLE: bool = true;
/// Linux has the child subreaper (`PR_SET_CHILD_SUBREAPER`), its way of tracking.
pub const SUBREAPER: bool = true;
/// `/proc/<pid>/environ`: `NAME=value\0…`.
pub const ENVIRON_LAYOUT: EnvironLayout = EnvironLayout::Plain;

pub fn snapshot() -> Vec<Entry> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten().filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<i32>().ok())).filter_map(entry).collect()
}

pub fn entry(pid: i32) -> Option<Entry> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    table::parse_stat(pid, &stat)
}

pub fn environ(pid: i32) -> Option<Vec<u8>> {
    std::fs::read(format!("/proc/{pid}/environ")).ok()
}

/// Makes the child a child subreaper: orphans below it are re-parented to it rather than to
/// init, so the parent links still lead to it while it lives (see `tree`).
pub fn make_subreaper(command: &mut CommandWrap) {
    command.wrap(Subreaper);
}

#[derive(Debug)]
struct Subreaper;

impl CommandWrapper for Subreaper {
    fn pre_spawn(&mut self, command: &mut tokio::process::Command, _core: &CommandWrap) -> std::io::Result<()> {
        // SAFETY: prctl is async-signal-safe and touches nothing of the parent's state.
        unsafe {
            command.pre_exec(|| {
                // Kept across exec.
                if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok(())
    }
}
