//! Where the guard executable is — named by [`SWITCH_VAR`], else beside the addon (the binding
//! says where) — and whether it may run.

use super::unavailable::Unavailable;
use super::{EXECUTABLE_NAME, SWITCH_VAR};
use crate::process::platform;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static EXECUTABLE: OnceLock<PathBuf> = OnceLock::new();

/// Where the guard executable is, when [`SWITCH_VAR`] does not say: set once by the binding.
pub fn set_executable(path: PathBuf) {
    let _ = EXECUTABLE.set(path);
}

#[derive(Clone, Debug)]
pub(crate) enum Located {
    At(PathBuf),
    Unknown,
    /// No guard: only the core's own tests, which have no binding to say where it is.
    #[cfg_attr(not(test), allow(dead_code))]
    Off,
}

/// Where the binding said the guard is. The core's own tests start their fakes without one, as
/// with `RENNET_HOST_GUARD=off` (host death is tested through the addon, `__test__/lifecycle`),
/// unless a test puts a location in place for its thread ([`testing::using`]).
pub(super) fn located() -> Located {
    if let Some(located) = testing::located() {
        return located;
    }
    match EXECUTABLE.get() {
        Some(path) => Located::At(path.clone()),
        None => testing::UNSET,
    }
}

/// The guard executable to start: `None` when switched off. [`SWITCH_VAR`] wins over where the
/// binding found it.
pub(super) fn resolve(switch: Option<&std::ffi::OsStr>, located: Located) -> Result<Option<PathBuf>, Unavailable> {
    // An emptied variable (`RENNET_HOST_GUARD=`) unsets it, as environments often do.
    match switch.filter(|value| !value.is_empty()) {
        Some(value) if value == "off" => Ok(None),
        Some(value) if Path::new(value).is_absolute() => Ok(Some(PathBuf::from(value))),
        Some(value) => {
            Err(Unavailable::new(None, format!("{SWITCH_VAR} must be \"off\" or an absolute path, not {value:?}")))
        }
        None => match located {
            Located::At(path) => Ok(Some(path)),
            Located::Off => Ok(None),
            Located::Unknown => Err(Unavailable::new(
                None,
                format!(
                    "the location of {EXECUTABLE_NAME} is unknown (it belongs next to the native addon, whose own path \
                     could not be read); {SWITCH_VAR} may name it"
                ),
            )),
        },
    }
}

/// The guard executable to start, checked to be one this process may run: `None` when switched
/// off.
pub(super) fn program() -> Result<Option<PathBuf>, Unavailable> {
    match resolve(std::env::var_os(SWITCH_VAR).as_deref(), located())? {
        Some(program) => check_executable(&program).map(|()| Some(program)),
        None => Ok(None),
    }
}

/// Whether `program` is a file this process may run.
pub(super) fn check_executable(program: &Path) -> Result<(), Unavailable> {
    let origin = if std::env::var_os(SWITCH_VAR).is_some_and(|v| !v.is_empty()) {
        format!("named by {SWITCH_VAR}")
    } else {
        "next to the native addon".to_string()
    };
    let missing =
        |what: &str| Unavailable::new(Some(program.to_path_buf()), format!("{} ({origin}) {what}", program.display()));
    match std::fs::metadata(program) {
        Ok(meta) if meta.is_file() && platform::is_executable(&meta) => Ok(()),
        Ok(meta) if meta.is_file() => Err(missing("is not executable")),
        Ok(_) => Err(missing("is not a file")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(missing("does not exist")),
        Err(e) => Err(missing(&format!("cannot be read: {e}"))),
    }
}

/// A location a test puts in place for its thread; none outside the core's own tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::Located;
    use std::cell::RefCell;

    /// Without the binding, the core's tests run their fakes unguarded.
    pub(super) const UNSET: Located = Located::Off;

    thread_local! {
        static LOCATED: RefCell<Option<Located>> = const { RefCell::new(None) };
    }

    pub(super) fn located() -> Option<Located> {
        LOCATED.with(|l| l.borrow().clone())
    }

    /// Where this thread's tickets look for the guard until dropped (a current-thread runtime
    /// runs a test's tasks on its own thread). Only Unix has a guard to test.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub struct Using(());

    #[cfg_attr(not(unix), allow(dead_code))]
    pub fn using(located: Located) -> Using {
        LOCATED.with(|l| *l.borrow_mut() = Some(located));
        Using(())
    }

    impl Drop for Using {
        fn drop(&mut self) {
            LOCATED.with(|l| *l.borrow_mut() = None);
        }
    }
}

/// Outside the core's own tests, only the binding says where the guard is.
#[cfg(not(test))]
mod testing {
    use super::Located;

    pub(super) const UNSET: Located = Located::Unknown;

    pub(super) fn located() -> Option<Located> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_wins_over_the_location_and_an_unknown_location_is_no_guard() {
        let at = || Located::At(PathBuf::from("/pkg/rennet-codex-guard"));
        let off = std::ffi::OsStr::new("off");
        // Absolute on this platform.
        let elsewhere = if cfg!(windows) { r"C:\elsewhere\guard" } else { "/elsewhere/guard" };
        let named = std::ffi::OsStr::new(elsewhere);
        assert_eq!(resolve(Some(off), at()), Ok(None));
        assert_eq!(resolve(Some(named), at()), Ok(Some(PathBuf::from(elsewhere))));
        assert_eq!(resolve(Some(named), Located::Unknown), Ok(Some(PathBuf::from(elsewhere))));
        assert_eq!(resolve(None, at()), Ok(Some(PathBuf::from("/pkg/rennet-codex-guard"))));
        assert_eq!(resolve(None, Located::Off), Ok(None));
        assert_eq!(resolve(Some(std::ffi::OsStr::new("")), at()), Ok(Some(PathBuf::from("/pkg/rennet-codex-guard"))));
        let relative = resolve(Some(std::ffi::OsStr::new("guard")), at()).unwrap_err();
        assert!(relative.reason.contains("must be \"off\" or an absolute path"), "{relative:?}");
        let unknown = resolve(None, Located::Unknown).unwrap_err();
        assert_eq!(unknown.path, None);
        assert!(unknown.reason.contains("location of rennet-codex-guard is unknown"), "{unknown:?}");
        assert!(unknown.message().contains("RENNET_HOST_GUARD=off runs without host-death protection"));
    }

    // Permission bits are a Unix idea: Windows runs what it recognises as a program.
    #[cfg(unix)]
    #[test]
    fn only_an_executable_file_is_a_guard() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("rennet-guard-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("rennet-codex-guard");
        std::fs::write(&file, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let reason = |p: &std::path::Path| check_executable(p).unwrap_err().reason;
        assert!(reason(&file).ends_with("is not executable"), "{}", reason(&file));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(check_executable(&file), Ok(()));
        assert!(reason(&dir).ends_with("is not a file"), "{}", reason(&dir));
        let missing = dir.join("absent");
        let why = check_executable(&missing).unwrap_err();
        assert_eq!(why.path.as_deref(), Some(missing.as_path()));
        assert!(why.reason.starts_with(&format!("{} (", missing.display())), "{why:?}");
        assert!(why.reason.ends_with("does not exist"), "{why:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
