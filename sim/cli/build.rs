//! The git commit the binary is built from, for the header of `explore --report`:
//! `CRASHLAB_GIT_COMMIT` from the build's environment when set (a build from a source archive,
//! or a CI that knows its commit), else `git rev-parse HEAD`, else "unknown".

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=CRASHLAB_GIT_COMMIT");
    let commit = std::env::var("CRASHLAB_GIT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(git_head)
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=CRASHLAB_BUILD_COMMIT={commit}");
}

/// HEAD's commit, and a rerun of this script when HEAD or the branch it names moves.
fn git_head() -> Option<String> {
    let out = |args: &[&str]| -> Option<String> {
        let o = Command::new("git").args(args).output().ok()?;
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = out(&["rev-parse", "HEAD"])?;
    if let Some(head) = out(&["rev-parse", "--git-path", "HEAD"]) {
        println!("cargo:rerun-if-changed={head}");
    }
    if let Some(branch) = out(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(r) = out(&["rev-parse", "--git-path", &branch]) {
            if Path::new(&r).exists() {
                println!("cargo:rerun-if-changed={r}");
            }
        }
    }
    Some(commit)
}
