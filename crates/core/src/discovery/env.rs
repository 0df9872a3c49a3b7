//! The inputs discovery reads: the environment (the caller's `env` merged over the process
//! environment) and the platform whose path conventions apply. Paths are kept as strings in
//! the notation of the machine they belong to, so that a Windows process can reason about
//! paths inside a WSL distribution without `PathBuf` rewriting their separators.

/// Whose conventions a path or a lookup follows. `Unix` is every Unix but macOS (Linux, the
/// BSDs, a WSL distribution).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Os {
    Unix,
    MacOs,
    Windows,
}

impl Os {
    pub fn current() -> Os {
        if cfg!(windows) {
            Os::Windows
        } else if cfg!(target_os = "macos") {
            Os::MacOs
        } else {
            Os::Unix
        }
    }

    pub fn is_windows(self) -> bool {
        self == Os::Windows
    }

    /// The separator between `PATH` entries.
    pub fn list_separator(self) -> char {
        if self.is_windows() {
            ';'
        } else {
            ':'
        }
    }

    fn is_separator(self, c: char) -> bool {
        c == '/' || (self.is_windows() && c == '\\')
    }

    /// `dir` joined with `name`, with the platform's separator.
    pub fn join(self, dir: &str, name: &str) -> String {
        let sep = if self.is_windows() { '\\' } else { '/' };
        let trimmed = dir.trim_end_matches(|c| self.is_separator(c));
        if trimmed.is_empty() && !dir.is_empty() {
            // The root itself.
            return format!("{sep}{name}");
        }
        format!("{trimmed}{sep}{name}")
    }

    /// The directory part of `path` (`None` for a bare name).
    pub fn parent(self, path: &str) -> Option<String> {
        let trimmed = path.trim_end_matches(|c| self.is_separator(c));
        let cut = trimmed.rfind(|c| self.is_separator(c))?;
        let parent = &trimmed[..cut];
        if parent.is_empty() {
            return Some(path[..1].to_string());
        }
        Some(parent.to_string())
    }

    /// The last component of `path`.
    pub fn file_name(self, path: &str) -> &str {
        let trimmed = path.trim_end_matches(|c| self.is_separator(c));
        match trimmed.rfind(|c| self.is_separator(c)) {
            Some(cut) => &trimmed[cut + 1..],
            None => trimmed,
        }
    }

    pub fn is_absolute(self, path: &str) -> bool {
        if self.is_windows() {
            let b = path.as_bytes();
            (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/'))
                || path.starts_with("\\\\")
        } else {
            path.starts_with('/')
        }
    }

    /// The comparison key of a path: Windows file names are case-insensitive.
    pub fn path_key(self, path: &str) -> String {
        if self.is_windows() {
            path.replace('/', "\\").to_lowercase()
        } else {
            path.to_string()
        }
    }
}

/// An environment: ordered by name, case-insensitive names on Windows (`Path` is `PATH`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Env {
    vars: Vec<(String, String)>,
    case_insensitive: bool,
}

impl Env {
    /// Exactly these variables (tests, and the environment reported from inside WSL).
    pub fn from_pairs<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>, os: Os) -> Env {
        let mut env = Env { vars: Vec::new(), case_insensitive: os.is_windows() };
        for (k, v) in pairs {
            env.set(k.into(), v.into());
        }
        env
    }

    /// The process environment with `overrides` merged over it.
    pub fn from_process(overrides: &[(String, String)], os: Os) -> Env {
        let process =
            std::env::vars_os().map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()));
        let mut env = Env::from_pairs(process, os);
        for (k, v) in overrides {
            env.set(k.clone(), v.clone());
        }
        env
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        if self.case_insensitive {
            let wanted = key.to_ascii_uppercase();
            self.vars.binary_search_by(|(k, _)| k.to_ascii_uppercase().cmp(&wanted))
        } else {
            self.vars.binary_search_by(|(k, _)| k.as_str().cmp(key))
        }
    }

    pub fn set(&mut self, key: String, value: String) {
        match self.position(&key) {
            Ok(i) => self.vars[i] = (key, value),
            Err(i) => self.vars.insert(i, (key, value)),
        }
    }

    /// The value of `key`; an empty value counts as unset.
    pub fn get(&self, key: &str) -> Option<&str> {
        let i = self.position(key).ok()?;
        let value = self.vars[i].1.as_str();
        (!value.is_empty()).then_some(value)
    }

    pub fn pairs(&self) -> &[(String, String)] {
        &self.vars
    }

    /// The home directory: `HOME`, or `USERPROFILE` on Windows.
    pub fn home(&self, os: Os) -> Option<&str> {
        if os.is_windows() {
            self.get("USERPROFILE").or_else(|| self.get("HOME"))
        } else {
            self.get("HOME")
        }
    }

    /// The absolute entries of `PATH`, in order, without duplicates. Relative entries (an
    /// empty one means the current directory) are skipped: they would make discovery depend
    /// on wherever the process happens to run.
    pub fn path_dirs(&self, os: Os) -> Vec<String> {
        self.get("PATH").map(|p| split_path_list(p, os)).unwrap_or_default()
    }
}

/// The absolute entries of a `PATH`-style list, in order, without duplicates.
pub fn split_path_list(list: &str, os: Os) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for entry in list.split(os.list_separator()) {
        let entry = entry.trim();
        // Windows lets a PATH entry be quoted.
        let entry = if os.is_windows() { entry.trim_matches('"') } else { entry };
        if entry.is_empty() || !os.is_absolute(entry) {
            continue;
        }
        if !out.iter().any(|seen| os.path_key(seen) == os.path_key(entry)) {
            out.push(entry.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_names_are_case_insensitive() {
        let mut env = Env::from_pairs([("Path", "C:\\a"), ("HOME", "")], Os::Windows);
        assert_eq!(env.get("PATH"), Some("C:\\a"));
        env.set("PATH".into(), "C:\\b".into());
        assert_eq!(env.get("path"), Some("C:\\b"));
        assert_eq!(env.pairs().len(), 2);
        assert_eq!(env.get("HOME"), None, "empty counts as unset");
        let env = Env::from_pairs([("Path", "x")], Os::Unix);
        assert_eq!(env.get("PATH"), None);
    }

    #[test]
    fn overrides_win_over_the_process_environment() {
        let env = Env::from_process(&[("PATH".into(), "/only/here".into())], Os::Unix);
        assert_eq!(env.get("PATH"), Some("/only/here"));
    }

    #[test]
    fn path_lists() {
        assert_eq!(split_path_list("/a::/b:rel:/a:.:/c/", Os::Unix), vec!["/a", "/b", "/c/"]);
        assert_eq!(
            split_path_list("C:\\A;;\"C:\\B c\";c:\\a;rel;\\\\srv\\share", Os::Windows),
            vec!["C:\\A", "C:\\B c", "\\\\srv\\share"]
        );
    }

    #[test]
    fn joins_and_parents() {
        assert_eq!(Os::Unix.join("/a/b/", "codex"), "/a/b/codex");
        assert_eq!(Os::Unix.join("/", "codex"), "/codex");
        assert_eq!(Os::Windows.join("C:\\npm\\", "codex.cmd"), "C:\\npm\\codex.cmd");
        assert_eq!(Os::Unix.parent("/a/b/codex").as_deref(), Some("/a/b"));
        assert_eq!(Os::Unix.parent("/codex").as_deref(), Some("/"));
        assert_eq!(Os::Unix.parent("codex"), None);
        assert_eq!(Os::Windows.parent("C:\\npm\\codex.cmd").as_deref(), Some("C:\\npm"));
        assert_eq!(Os::Windows.file_name("C:\\npm\\codex.cmd"), "codex.cmd");
        assert!(Os::Windows.is_absolute("c:/x"));
        assert!(!Os::Windows.is_absolute("c:x"));
        assert!(!Os::Unix.is_absolute("x/y"));
    }
}
