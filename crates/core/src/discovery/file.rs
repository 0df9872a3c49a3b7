//! What discovery asks about candidate files, and the facts it gathers about each, on this
//! machine or inside a WSL distribution alike: what ranking, de-duplication and the launch plan
//! read.

use super::env::Os;

/// One thing to look at.
#[derive(Clone, Debug)]
pub enum Request {
    /// This file, reported even when it does not exist.
    File(String),
    /// This file, only if it exists.
    OptionalFile(String),
    /// `codex` in this directory (every directory, if the pattern has a `*` component).
    Dir(String),
}

/// What a candidate file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileState {
    Missing,
    NotFile,
    File { executable: bool },
}

/// The facts discovery needs about one candidate file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileInfo {
    /// As found (not canonicalised): what the report shows.
    pub path: String,
    pub state: FileState,
    /// The file with every symbolic link resolved; duplicates are detected on it.
    pub canonical: Option<String>,
    /// The start of the file (its first line on Unix, the whole of a small `.cmd` shim on
    /// Windows), lossily decoded.
    pub head: String,
    /// An executable `node` beside the file as found or beside the file it links to
    /// (`node.exe` beside a Windows shim).
    pub node_beside: Option<String>,
}

impl FileInfo {
    /// The key under which two paths are the same file.
    pub fn key(&self, os: Os) -> String {
        os.path_key(self.canonical.as_deref().unwrap_or(&self.path))
    }
}
