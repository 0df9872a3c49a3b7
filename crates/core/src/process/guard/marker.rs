//! The value every tree child carries in its environment (`RENNET_CODEX_TREE`): the host's
//! part tells the guard what to end, the counter tells one child's tree from another's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// This host's part of every child's marker value: the guard ends what carries it.
pub fn host_marker() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        format!("{}-{nanos}", std::process::id())
    })
}

/// A marker value unique to one child: the host's, then a counter.
pub fn child_marker() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{}-{n}", host_marker())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_markers_share_the_host_prefix() {
        let (a, b) = (child_marker(), child_marker());
        assert_ne!(a, b);
        assert!(a.starts_with(&format!("{}-", host_marker())));
    }
}
