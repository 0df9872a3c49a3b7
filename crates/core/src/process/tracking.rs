//! How the descendants of a tree child stay in sight once they leave its process group, so
//! that the child's end — and the guard's, when the host dies — still finds them.
//!
//! Two ways, one per kind of system:
//!
//! - [`Tracking::Subreaper`], Linux's: each tree child is a child subreaper, so a process
//!   orphaned below it is re-parented to it rather than to init. Parent links lead from the
//!   child to every descendant for as long as the child lives; one look when it ends finds
//!   them all.
//! - [`Tracking::Poll`], macOS's (there is no subreaper there): an orphan goes to launchd at
//!   once and its parent link is gone. The guard notes the descendants of its children every
//!   [`TRACK_EVERY`] while the host lives, so that one that is orphaned later is still known;
//!   the tree marker finds the orphans no look saw. What neither finds: a process that leaves
//!   the tree and drops the marker (`env -i`) between two looks.
//!
//! [`SWITCH_VAR`]`=poll` picks the poll on Linux too: the children are no subreapers and the
//! guard looks every [`TRACK_EVERY`], exactly as on macOS, with only the process table read
//! differently (`/proc` rather than `proc_pidinfo`). That is how the macOS logic runs in the
//! tests here. The variable is read once, when the first child starts: every child of the
//! process and every guard it starts (the guard is told on its command line) follow the same
//! way for the life of the process.

use super::platform;
use std::ffi::OsStr;
use std::sync::OnceLock;
use std::time::Duration;

/// `poll`: descendants are tracked by looking, as on macOS; unset or empty: the platform's way.
pub const SWITCH_VAR: &str = "RENNET_GUARD_TRACKING";

/// How often, in [`Tracking::Poll`], the guard notes the descendants of its children while the
/// host lives: a descendant orphaned later than this after it started is still found.
pub const TRACK_EVERY: Duration = Duration::from_millis(500);

/// How a tree child's orphaned descendants stay in sight; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracking {
    /// The child is a child subreaper (Linux).
    Subreaper,
    /// The guard looks every [`TRACK_EVERY`] (macOS; Linux with [`SWITCH_VAR`]`=poll`).
    Poll,
}

impl Tracking {
    /// The platform's own way: the subreaper where there is one. (Windows has neither: a Job
    /// Object holds every descendant, and the value is not used there.)
    pub const PLATFORM: Tracking = if platform::SUBREAPER { Tracking::Subreaper } else { Tracking::Poll };

    /// This process's way: what [`SWITCH_VAR`] said when it was first asked, else the
    /// platform's.
    pub fn current() -> Tracking {
        static CURRENT: OnceLock<Tracking> = OnceLock::new();
        *CURRENT.get_or_init(|| {
            let (tracking, warning) = Tracking::from_switch(std::env::var_os(SWITCH_VAR).as_deref());
            if let Some(warning) = warning {
                tracing::warn!("{warning}");
            }
            tracking
        })
    }

    /// What a value of [`SWITCH_VAR`] asks for, and what to say of a value that asks for nothing
    /// known: then the platform's way, the one that finds the most, is kept.
    pub fn from_switch(value: Option<&OsStr>) -> (Tracking, Option<String>) {
        // An emptied variable unsets it, as environments often do.
        match value.filter(|value| !value.is_empty()) {
            None => (Tracking::PLATFORM, None),
            Some(value) if value == "poll" => (Tracking::Poll, None),
            Some(value) => (
                Tracking::PLATFORM,
                Some(format!(
                    "{SWITCH_VAR} must be \"poll\" or unset, not {value:?}: descendants are tracked the platform's way \
                     ({})",
                    Tracking::PLATFORM.word()
                )),
            ),
        }
    }

    /// Its word on the guard's command line.
    pub fn word(self) -> &'static str {
        match self {
            Tracking::Subreaper => "subreaper",
            Tracking::Poll => "poll",
        }
    }

    /// The way a word on the guard's command line names.
    pub fn from_word(word: &str) -> Option<Tracking> {
        [Tracking::Subreaper, Tracking::Poll].into_iter().find(|t| t.word() == word)
    }

    /// How often the guard looks at its children's descendants while the host lives: only
    /// where no subreaper keeps the orphans below them.
    pub fn look_every(self) -> Option<Duration> {
        match self {
            Tracking::Subreaper => None,
            Tracking::Poll => Some(TRACK_EVERY),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_is_asked_for_by_name_and_anything_else_keeps_the_platform_s_way() {
        let value = |v: &str| Tracking::from_switch(Some(OsStr::new(v)));
        assert_eq!(Tracking::from_switch(None), (Tracking::PLATFORM, None));
        assert_eq!(value(""), (Tracking::PLATFORM, None));
        assert_eq!(value("poll"), (Tracking::Poll, None));
        for other in ["Poll", "subreaper", "pol", "poll "] {
            let (tracking, warning) = value(other);
            assert_eq!(tracking, Tracking::PLATFORM, "{other:?}");
            let warning = warning.unwrap_or_default();
            assert!(warning.starts_with("RENNET_GUARD_TRACKING must be \"poll\" or unset, not "), "{warning}");
            assert!(warning.contains(&format!("{other:?}")), "{warning}");
        }
    }

    #[test]
    fn the_platform_s_way_is_the_subreaper_where_there_is_one() {
        assert_eq!(Tracking::PLATFORM == Tracking::Subreaper, cfg!(target_os = "linux"));
    }

    #[test]
    fn words_name_each_way_and_only_the_poll_looks() {
        for tracking in [Tracking::Subreaper, Tracking::Poll] {
            assert_eq!(Tracking::from_word(tracking.word()), Some(tracking));
        }
        assert_eq!(Tracking::from_word("t"), None);
        assert_eq!(Tracking::Subreaper.look_every(), None);
        assert_eq!(Tracking::Poll.look_every(), Some(Duration::from_millis(500)));
    }
}
