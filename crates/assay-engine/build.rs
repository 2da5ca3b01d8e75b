//! Records the git revision of a build from a checkout, for the manifest
//! (`ASSAY_GIT_REVISION`). Without `.git` or without git nothing is set,
//! and the build never fails for it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dot_git = root.join(".git");
    if !dot_git.exists() {
        return;
    }
    // Watched before git is asked: should the call fail (a lock held by a
    // commit in progress), the next build after a commit or checkout tries
    // again instead of keeping a build without its revision. A worktree's
    // `.git` is a file naming its git dir.
    let early = if dot_git.is_dir() {
        vec![dot_git.join("HEAD"), dot_git.join("refs/heads")]
    } else {
        vec![dot_git]
    };
    for path in early.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
    };
    let Some(rev) = git(&["rev-parse", "HEAD"]) else {
        return;
    };
    println!("cargo:rustc-env=ASSAY_GIT_REVISION={rev}");
    // HEAD moves on checkout, the branch's ref on commit (a loose file, or
    // packed-refs once packed). A worktree keeps HEAD in its own git dir.
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
            let path = root.join(PathBuf::from(path));
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
}
