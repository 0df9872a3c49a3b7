//! Where discovery and the child run: on this machine, or inside a WSL distribution (reached
//! from Windows through `wsl.exe`), and how a Windows path reads there.

use serde::Deserialize;
use ts_rs::TS;

/// Where discovery and the child run: `{ wsl: { distro } }`, inside that WSL distribution
/// (reached from Windows through `wsl.exe`).
#[derive(Deserialize, TS, Clone, Debug, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct Locus {
    /// The WSL distribution.
    #[ts(inline)]
    pub wsl: Wsl,
}

#[derive(Deserialize, TS, Clone, Debug, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct Wsl {
    /// Its name, as `wsl.exe -l` lists it (`Ubuntu`, `Debian`, …).
    pub distro: String,
}

/// The path inside `distro` of a Windows path: `C:\Users\a\repo` → `/mnt/c/Users/a/repo`,
/// `\\wsl$\<distro>\home\a` and `\\wsl.localhost\<distro>\home\a` → `/home/a`. A path that is
/// already a distribution path (`/home/a`) is returned as is. `None` for a relative path, a
/// drive-relative one (`C:repo`), another distribution's share, any other UNC share or a
/// device path. `.` and `..` are resolved lexically; `\\?\` prefixes are understood.
pub fn wsl_path(windows_path: &str, distro: &str) -> Option<String> {
    if windows_path.starts_with('/') && !windows_path.starts_with("//") {
        return Some(windows_path.to_string());
    }
    let path = windows_path.replace('/', "\\");
    let path = if let Some(rest) = path.strip_prefix("\\\\?\\UNC\\") {
        format!("\\\\{rest}")
    } else if let Some(rest) = path.strip_prefix("\\\\?\\") {
        rest.to_string()
    } else {
        path
    };
    if let Some(unc) = path.strip_prefix("\\\\") {
        let mut parts = unc.split('\\');
        let host = parts.next()?;
        if !(host.eq_ignore_ascii_case("wsl$") || host.eq_ignore_ascii_case("wsl.localhost")) {
            return None;
        }
        let share = parts.next()?;
        if share.is_empty() || !share.eq_ignore_ascii_case(distro) {
            return None;
        }
        return Some(absolute("", parts));
    }
    let bytes = path.as_bytes();
    if bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'\\' {
        let drive = (bytes[0] as char).to_ascii_lowercase();
        return Some(absolute(&format!("/mnt/{drive}"), path[3..].split('\\')));
    }
    None
}

/// `root` followed by the components, with `.`/`..` resolved (never above `root`).
fn absolute<'a>(root: &str, components: impl Iterator<Item = &'a str>) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in components {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        return if root.is_empty() { "/".to_string() } else { root.to_string() };
    }
    format!("{root}/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drive_paths() {
        let d = "Ubuntu";
        assert_eq!(wsl_path("C:\\Users\\a\\repo", d).as_deref(), Some("/mnt/c/Users/a/repo"));
        assert_eq!(wsl_path("c:\\Users\\a\\repo\\", d).as_deref(), Some("/mnt/c/Users/a/repo"));
        assert_eq!(wsl_path("D:/work/x y/z", d).as_deref(), Some("/mnt/d/work/x y/z"));
        assert_eq!(wsl_path("C:\\", d).as_deref(), Some("/mnt/c"));
        assert_eq!(wsl_path("C:/", d).as_deref(), Some("/mnt/c"));
        assert_eq!(wsl_path("C:\\a\\.\\b\\..\\c", d).as_deref(), Some("/mnt/c/a/c"));
        assert_eq!(wsl_path("C:\\..\\..\\a", d).as_deref(), Some("/mnt/c/a"));
        assert_eq!(wsl_path("C:\\a\\\\b", d).as_deref(), Some("/mnt/c/a/b"));
        assert_eq!(wsl_path("Z:\\Ünïcødé\\dir", d).as_deref(), Some("/mnt/z/Ünïcødé/dir"));
        assert_eq!(wsl_path("\\\\?\\C:\\Users\\a", d).as_deref(), Some("/mnt/c/Users/a"));
    }

    #[test]
    fn distribution_shares() {
        let d = "Ubuntu";
        assert_eq!(wsl_path("\\\\wsl$\\Ubuntu\\home\\a\\repo", d).as_deref(), Some("/home/a/repo"));
        assert_eq!(wsl_path("\\\\wsl.localhost\\Ubuntu\\home\\a\\repo", d).as_deref(), Some("/home/a/repo"));
        assert_eq!(wsl_path("\\\\WSL.LOCALHOST\\ubuntu\\home\\a", d).as_deref(), Some("/home/a"));
        assert_eq!(wsl_path("//wsl$/Ubuntu/home/a/", d).as_deref(), Some("/home/a"));
        assert_eq!(wsl_path("\\\\wsl$\\Ubuntu", d).as_deref(), Some("/"));
        assert_eq!(wsl_path("\\\\wsl$\\Ubuntu\\", d).as_deref(), Some("/"));
        assert_eq!(wsl_path("\\\\wsl$\\Ubuntu\\home\\..\\..\\etc", d).as_deref(), Some("/etc"));
        assert_eq!(wsl_path("\\\\?\\UNC\\wsl.localhost\\Ubuntu\\home\\a", d).as_deref(), Some("/home/a"));
        assert_eq!(wsl_path("\\\\wsl$\\Ubuntu-22.04\\home\\a", "Ubuntu-22.04").as_deref(), Some("/home/a"));
    }

    #[test]
    fn linux_paths_pass_through() {
        assert_eq!(wsl_path("/home/a/repo", "Ubuntu").as_deref(), Some("/home/a/repo"));
        assert_eq!(wsl_path("/mnt/c/x", "Ubuntu").as_deref(), Some("/mnt/c/x"));
    }

    #[test]
    fn untranslatable_paths() {
        let d = "Ubuntu";
        for path in [
            "",
            "repo",
            "repo\\sub",
            ".\\repo",
            "C:",
            "C:repo",
            "1:\\x",
            "\\\\wsl$\\Debian\\home\\a",
            "\\\\wsl$\\\\home",
            "\\\\wsl.localhost",
            "\\\\server\\share\\a",
            "\\\\.\\pipe\\x",
            "\\\\?\\Volume{abc}\\x",
            "\\Users\\a",
        ] {
            assert_eq!(wsl_path(path, d), None, "{path:?}");
        }
    }
}
