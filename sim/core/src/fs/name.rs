//! File names: untrusted input (an engine or a VFS passes whatever it was given), checked before
//! they reach the directory.

use std::io;

/// Longest file name accepted, in bytes: ext4's, XFS's and most file systems' `NAME_MAX`.
pub const NAME_LEN_MAX: usize = 255;

/// `Ok` when `name` can name a file of the directory; otherwise an `InvalidInput` error saying
/// what is wrong and the limit. There is one directory and no hierarchy: a `/` is refused, not
/// followed.
pub fn check(name: &str) -> io::Result<()> {
    let why = if name.is_empty() {
        "is empty".to_string()
    } else if name.len() > NAME_LEN_MAX {
        format!(
            "is {} bytes long, above the limit of {NAME_LEN_MAX}",
            name.len()
        )
    } else if name == "." || name == ".." {
        "names the directory itself".to_string()
    } else if name.contains('/') {
        "contains `/` (SimFs is one directory, without subdirectories)".to_string()
    } else if name.contains('\0') {
        "contains a NUL byte".to_string()
    } else {
        return Ok(());
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("simfs: file name {:?} {why}", clip(name)),
    ))
}

/// A name as a message shows it: at most 40 characters, so a 10 MB name does not become a 10 MB
/// message.
fn clip(name: &str) -> String {
    match name.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &name[..i]),
        None => name.to_string(),
    }
}
