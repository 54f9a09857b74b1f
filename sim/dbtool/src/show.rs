//! Bytes and names for people. Every form is unambiguous, and bucket names have no spaces, so
//! the columns of `pages` and `stats` split on whitespace.

use crashlab_engine::PageId;
use crashlab_format::inspect::hex;

/// A key or value: `"text"` when every byte is printable ASCII other than `"` and `\`, else
/// `0x` and hex; at most `max` bytes, then `…` when some were left out.
pub fn bytes(b: &[u8], max: usize) -> String {
    let shown = &b[..b.len().min(max)];
    let quotable = |c: &u8| (0x20..=0x7e).contains(c) && *c != b'"' && *c != b'\\';
    let text = if shown.iter().all(quotable) {
        format!("\"{}\"", String::from_utf8_lossy(shown))
    } else {
        format!("0x{}", hex(shown))
    };
    if shown.len() < b.len() {
        text + "…"
    } else {
        text
    }
}

/// A bucket name in a path: as it is when printable with no `/`, quote or space and not
/// starting `0x`, else `0x` and hex.
pub fn name(b: &[u8]) -> String {
    if is_plain(b) && !b.contains(&b'/') && !b.contains(&b'"') && !b.starts_with(b"0x") {
        String::from_utf8_lossy(b).into_owned()
    } else {
        format!("0x{}", hex(b))
    }
}

/// A bucket path from the top level down, `/`-separated; `(root)` for the root bucket.
pub fn path(names: &[&[u8]]) -> String {
    if names.is_empty() {
        return "(root)".into();
    }
    let parts: Vec<String> = names.iter().map(|n| name(n)).collect();
    parts.join("/")
}

/// A page id, or the no-freelist sentinel in words.
pub fn freelist(page: PageId) -> String {
    if page == PageId::NO_FREELIST {
        "none (not persisted: open rebuilds it)".into()
    } else {
        page.to_string()
    }
}

/// `a` or `a-b` for a run of `pages` pages from `start`.
pub fn run(start: PageId, pages: u64) -> String {
    if pages <= 1 {
        start.to_string()
    } else {
        format!("{start}-{}", start.0 + pages - 1)
    }
}

fn is_plain(b: &[u8]) -> bool {
    !b.is_empty() && b.iter().all(|c| (0x21..=0x7e).contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(bytes(b"alice", 32), "\"alice\"");
        assert_eq!(bytes(b"", 32), "\"\"");
        assert_eq!(bytes(b"a b", 32), "\"a b\"");
        assert_eq!(bytes(b"a\"b", 32), "0x612262");
        assert_eq!(bytes(&[0, 255], 32), "0x00ff");
        assert_eq!(bytes(b"abcdef", 2), "\"ab\"…");
        assert_eq!(name(b"users"), "users");
        assert_eq!(name(b"a/b"), "0x612f62");
        assert_eq!(name(b"0x1"), "0x307831");
        assert_eq!(path(&[b"a", &[0xff]]), "a/0xff");
        assert_eq!(path(&[]), "(root)");
        assert_eq!(run(PageId(4), 3), "4-6");
    }
}
