//! Showing arbitrary bytes (keys, values, bucket names) in a page: printable ASCII as text, which
//! the template escapes, anything else as hex. Long values are cut, with their length shown.

/// Bytes of printable text shown before a value is cut.
const TEXT_SHOWN_MAX: usize = 48;
/// Bytes shown as hex before a value is cut.
const HEX_SHOWN_MAX: usize = 16;

/// How `b` reads: text when every byte is printable ASCII, else `0x` and hex digits; cut (to
/// [`TEXT_SHOWN_MAX`] or [`HEX_SHOWN_MAX`] bytes) with the full length after an ellipsis.
pub fn show(b: &[u8]) -> String {
    let text = b.iter().all(|c| (0x20..0x7f).contains(c));
    let max = if text { TEXT_SHOWN_MAX } else { HEX_SHOWN_MAX };
    let cut = &b[..b.len().min(max)];
    let mut s = if text {
        String::from_utf8_lossy(cut).into_owned()
    } else {
        format!("0x{}", crashlab_format::inspect::hex(cut))
    };
    if b.len() > max {
        s.push_str(&format!("… ({} bytes)", b.len()));
    }
    s
}

/// A bucket path as `a/b/c` (each name shown as [`show`] does), `/` for the root.
pub fn path(names: &[Vec<u8>]) -> String {
    if names.is_empty() {
        return "/".into();
    }
    let shown: Vec<String> = names.iter().map(|n| show(n)).collect();
    shown.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_bytes_read_as_text_and_others_as_hex() {
        assert_eq!(show(b"k17"), "k17");
        assert_eq!(show(&[0, 0xff, b'<']), "0x00ff3c");
        assert_eq!(show(b""), "");
        let long = vec![b'a'; 100];
        assert_eq!(show(&long), format!("{}… (100 bytes)", "a".repeat(48)));
        let raw = vec![0u8; 20];
        assert_eq!(show(&raw), format!("0x{}… (20 bytes)", "00".repeat(16)));
        assert_eq!(path(&[]), "/");
        assert_eq!(path(&[b"a".to_vec(), vec![1]]), "a/0x01");
    }
}
