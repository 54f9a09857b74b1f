//! Files named on the command line: anything but a regular file is refused before it is opened.
//!
//! Opening a FIFO that has no writer blocks forever, a character device such as `/dev/zero`
//! reads without end, and a directory or a socket is not a file to read; so every path the CLI
//! reads (`crashlab db FILE`, the case of `repro`, `shrink` and `check --case`) or writes over
//! (`--save-image`, a saved case) is first looked up by its metadata — which follows symlinks,
//! so a link to a regular file is fine and a link to a FIFO is not — and refused with a message
//! naming what it is. A file swapped for a FIFO between the look-up and the open is not guarded
//! against: the check is for mistakes, not for an adversary racing the tool.

use std::fmt;
use std::fs::{FileType, Metadata};
use std::io::{self, Read};
use std::path::Path;

/// Why a path cannot be read as a regular file.
#[derive(Debug)]
pub enum Refusal {
    /// Nothing at the path.
    Missing,
    /// Something that is not a regular file: what it is, e.g. "a FIFO (named pipe)".
    NotRegular(&'static str),
    /// The metadata could not be read (permissions, a dangling symlink's loop, ...).
    Unreadable(io::Error),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Missing => f.write_str("no such file"),
            Refusal::NotRegular(what) => write!(f, "is {what}"),
            Refusal::Unreadable(e) => write!(f, "cannot open: {e}"),
        }
    }
}

/// What `t` is, in words, when it is not a regular file.
pub fn irregular_kind(t: &FileType) -> Option<&'static str> {
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// The metadata of `path` when it names a regular file (after symlinks), without opening it.
pub fn regular_file(path: &Path) -> Result<Metadata, Refusal> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Refusal::Missing,
        _ => Refusal::Unreadable(e),
    })?;
    match irregular_kind(&meta.file_type()) {
        None => Ok(meta),
        Some(what) => Err(Refusal::NotRegular(what)),
    }
}

/// `Err` with a sentence when `path` exists and is not a regular file: a path the CLI is about to
/// create or overwrite (writing to a FIFO with no reader blocks, as reading from one does).
pub fn writable_target(path: &Path) -> Result<(), String> {
    match regular_file(path) {
        Ok(_) | Err(Refusal::Missing) => Ok(()),
        Err(Refusal::NotRegular(what)) => Err(format!(
            "{}: is {what}, not a regular file to write",
            path.display()
        )),
        Err(Refusal::Unreadable(e)) => Err(format!("{}: cannot open: {e}", path.display())),
    }
}

/// Why a text file could not be read: `line` is 0 for the file as a whole.
#[derive(Debug, PartialEq, Eq)]
pub struct TextError {
    pub line: usize,
    pub message: String,
}

/// The whole of regular file `path` as UTF-8 text, refused unread when it is not a regular file
/// or is larger than `max_bytes`, and never reading more than that even if the file grows.
pub fn read_text(path: &Path, max_bytes: u64, what: &str) -> Result<String, TextError> {
    let whole = |message: String| TextError { line: 0, message };
    let meta = regular_file(path).map_err(|r| match r {
        Refusal::NotRegular(kind) => whole(format!("is {kind}, not {what}")),
        r => whole(r.to_string()),
    })?;
    let too_large = |len: u64| {
        whole(format!(
            "the file is {len} bytes, more than the limit of {max_bytes} for {what}"
        ))
    };
    if meta.len() > max_bytes {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes))
        .map_err(|e| whole(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..at];
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let column = 1 + before.iter().rev().take_while(|&&b| b != b'\n').count();
        TextError {
            line,
            message: format!("invalid UTF-8 at byte {column} of the line: {what} is text"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_pass_and_everything_else_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        assert!(regular_file(&file).is_ok());
        assert!(matches!(
            regular_file(&dir.path().join("nope")),
            Err(Refusal::Missing)
        ));
        let e = regular_file(dir.path()).unwrap_err();
        assert_eq!(e.to_string(), "is a directory");
        #[cfg(unix)]
        {
            let e = regular_file(Path::new("/dev/null")).unwrap_err();
            assert_eq!(e.to_string(), "is a character device");
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            assert!(regular_file(&link).is_ok(), "a link to a file is that file");
        }
        assert!(writable_target(&dir.path().join("new")).is_ok());
        assert!(writable_target(&file).is_ok());
        let e = writable_target(dir.path()).unwrap_err();
        assert!(
            e.ends_with("is a directory, not a regular file to write"),
            "{e}"
        );
    }

    #[test]
    fn text_is_bounded_and_bad_utf8_is_placed_on_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t");
        std::fs::write(&file, b"seed = 1\nops = 2\n# caf\xc3\xa9 \xff\n").unwrap();
        let e = read_text(&file, 1000, "a case file").unwrap_err();
        assert_eq!(e.line, 3, "{e:?}");
        assert!(e.message.contains("byte 9 of the line"), "{e:?}");
        std::fs::write(&file, b"seed = 1\n").unwrap();
        assert_eq!(read_text(&file, 1000, "x").unwrap(), "seed = 1\n");
        let e = read_text(&file, 4, "a case file").unwrap_err();
        assert_eq!(e.line, 0);
        assert_eq!(
            e.message,
            "the file is 9 bytes, more than the limit of 4 for a case file"
        );
        let e = read_text(dir.path(), 1000, "a case file").unwrap_err();
        assert_eq!(e.message, "is a directory, not a case file");
    }
}
