//! The run directory: `manifest.json` first, `results.jsonl` appended as
//! outcomes complete, `summary.json` at the end.
//!
//! A directory that already holds a run with the same manifest is resumed:
//! its whole result lines are kept (a torn last line, left by a killed
//! process, is cut off) and the run appends after them. A run with another
//! manifest is refused, or with `--force-new` moved aside, never deleted.
//!
//! One process at a time: opening a run directory takes an exclusive lock
//! on its `.lock` file (an OS file lock, so the kernel releases it when
//! the holder dies, even by `kill -9`, and nothing stale is left). A
//! second process is refused with [`EngineError::Locked`], naming the
//! holder's pid, which the holder writes into the file.

use crate::error::{EngineError, OutputContext, Result};
use crate::log::RunManifest;
use crate::observer::Observer;
use assay_core::{visit_results, OutcomeRecord};
use serde::Serialize;
use serde_json::Value;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const RESULTS: &str = "results.jsonl";
pub const SUMMARY: &str = "summary.json";
pub const MANIFEST: &str = "manifest.json";
/// The lock file; it stays in the directory, unlocked, after the run.
pub const LOCK: &str = ".lock";

/// Version of `summary.json` and `manifest.json`.
pub const FORMAT_VERSION: u32 = 1;

/// What to do when the directory already holds a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Go on with it if its manifest is the same; refuse otherwise.
    Resume,
    /// Move its files into `superseded-N/` and start a new run (`--force-new`).
    StartOver,
}

/// An open run directory, held by this process until it is dropped.
pub struct RunDir {
    path: PathBuf,
    results: File,
    /// Lines appended since the last flush: written in one call, whole
    /// lines only, so a crash between flushes never tears a line.
    pending: Vec<u8>,
    /// Holds the lock: closing the file releases it.
    _lock: File,
}

impl RunDir {
    /// Opens `path` for the run `manifest` describes, handing each record
    /// an earlier run with the same manifest left there to `kept`, in file
    /// order (none for a new run), without holding them: resuming takes
    /// the same memory however many outcomes are done. What it did to an
    /// existing run goes to `observer`.
    pub fn open(
        path: &Path,
        manifest: &RunManifest,
        existing: Existing,
        observer: &mut dyn Observer,
        kept: &mut dyn FnMut(OutcomeRecord),
    ) -> Result<RunDir> {
        fs::create_dir_all(path)
            .with_context(|| format!("cannot create run directory {}", path.display()))?;
        let lock = lock(path)?;
        let results_path = path.join(RESULTS);
        match (results_path.exists(), existing) {
            (true, Existing::Resume) => resume(path, manifest, observer, kept)?,
            (exists, _) => {
                if exists {
                    let aside = supersede(path)?;
                    observer.note(&format!(
                        "--force-new: moved the earlier run's files to {} (nothing deleted; judge calls stay in the cache)",
                        aside.display()
                    ));
                }
                // The manifest goes first: results without one cannot be
                // resumed safely.
                crate::log::write_json(&path.join(MANIFEST), manifest)?;
            }
        }
        Ok(RunDir {
            path: path.to_path_buf(),
            results: OpenOptions::new()
                .create(true)
                .append(true)
                .open(&results_path)
                .with_context(|| format!("cannot open {}", results_path.display()))?,
            pending: Vec::new(),
            _lock: lock,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn append(&mut self, record: &OutcomeRecord) -> Result<()> {
        record.write_line(&mut self.pending)?;
        Ok(())
    }

    /// Makes everything appended so far durable, whole lines only.
    pub fn flush(&mut self) -> Result<()> {
        self.results
            .write_all(&self.pending)
            .with_context(|| format!("cannot write {}", self.path.join(RESULTS).display()))?;
        self.pending.clear();
        Ok(())
    }

    /// Writes a JSON file atomically (temporary file, then rename), so a
    /// reader never sees half of it.
    pub fn write_json(&self, name: &str, value: &impl Serialize) -> Result<()> {
        crate::log::write_json(&self.path.join(name), value)
    }
}

/// Lines appended but not flushed are outcomes already paid for: a run
/// that stops on an error still keeps them.
impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = self.results.write_all(&self.pending);
    }
}

/// Takes the directory's lock, or says who holds it.
fn lock(dir: &Path) -> Result<File> {
    let path = dir.join(LOCK);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {
            // The pid is for the message a second process shows; the lock,
            // not the pid, decides who holds the directory.
            file.set_len(0)
                .and_then(|()| file.write_all(std::process::id().to_string().as_bytes()))
                .and_then(|()| file.flush())
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(file)
        }
        Err(fs::TryLockError::WouldBlock) => {
            let pid = fs::read_to_string(&path).unwrap_or_default();
            let pid = pid.trim();
            Err(EngineError::Locked {
                dir: dir.to_path_buf(),
                pid: if pid.is_empty() {
                    "unknown".into()
                } else {
                    pid.to_string()
                },
            })
        }
        Err(fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("cannot lock {}", path.display()))
        }
    }
}

/// Checks that the run in `path` has `manifest`, hands its records to
/// `kept` one by one, and cuts a torn last line off its results.
fn resume(
    path: &Path,
    manifest: &RunManifest,
    observer: &mut dyn Observer,
    kept: &mut dyn FnMut(OutcomeRecord),
) -> Result<()> {
    let manifest_path = path.join(MANIFEST);
    let old: Value = fs::read(&manifest_path)
        .ok()
        .and_then(|text| serde_json::from_slice(&text).ok())
        .ok_or_else(|| {
            EngineError::Usage(format!(
                "{} holds results but no readable {MANIFEST}, so it cannot be resumed safely \
                 (--force-new moves it aside and starts over)",
                path.display()
            ))
        })?;
    let new = serde_json::to_value(manifest)?;
    let mut differences = Vec::new();
    diff(
        &definition(&old, &old),
        &definition(&new, &old),
        &mut String::new(),
        &mut differences,
    );
    if !differences.is_empty() {
        return Err(EngineError::Usage(format!(
            "{} holds a run with another manifest, so it cannot be resumed:\n  {}\n\
             (use another --out, or --force-new to move that run aside and start over)",
            path.display(),
            differences.join("\n  ")
        )));
    }
    let results_path = path.join(RESULTS);
    let mut n_kept = 0u64;
    let log = visit_results(&results_path, |record| {
        n_kept += 1;
        kept(record);
    })
    .map_err(|e| EngineError::Usage(e.to_string()))?;
    if log.torn_bytes > 0 {
        // A process killed mid-write left half a line: its sample is redone.
        OpenOptions::new()
            .write(true)
            .open(&results_path)
            .and_then(|f| f.set_len(log.valid_len))
            .with_context(|| format!("cannot cut the torn tail of {}", results_path.display()))?;
        observer.note(&format!(
            "cut a torn last line ({} bytes) off {}",
            log.torn_bytes,
            results_path.display()
        ));
    }
    observer.note(&format!(
        "resuming the run in {}: {n_kept} outcomes kept",
        path.display(),
    ));
    Ok(())
}

/// What decides a run's numbers: the manifest without the build that
/// wrote it. A newer build resumes a run when the input, metrics (whose
/// signatures change with anything that changes a number), judge and
/// prompts are the same; the manifest keeps the build that started it.
/// A field recorded only since (`input.format`) is compared only when
/// the `old` manifest has it.
fn definition(manifest: &Value, old: &Value) -> Value {
    let mut m = manifest.clone();
    if let Some(obj) = m.as_object_mut() {
        obj.remove("git_revision");
        obj.remove("assay_version");
    }
    if old.pointer("/input/format").is_none() {
        if let Some(input) = m.get_mut("input").and_then(Value::as_object_mut) {
            input.remove("format");
        }
    }
    m
}

/// Moves the run's files into the first free `superseded-N/`.
fn supersede(path: &Path) -> Result<PathBuf> {
    let aside = (1u32..)
        .map(|n| path.join(format!("superseded-{n}")))
        .find(|p| !p.exists())
        .unwrap_or_else(|| path.join("superseded"));
    fs::create_dir(&aside).with_context(|| format!("cannot create {}", aside.display()))?;
    for name in [RESULTS, SUMMARY, MANIFEST] {
        let from = path.join(name);
        if from.exists() {
            fs::rename(&from, aside.join(name))
                .with_context(|| format!("cannot move {} aside", from.display()))?;
        }
    }
    Ok(aside)
}

/// Appends `key.path: old -> new` for every leaf where `old` and `new`
/// differ; arrays of one length are compared item by item.
fn diff(old: &Value, new: &Value, at: &mut String, out: &mut Vec<String>) {
    let len = at.len();
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let absent = Value::Null;
                if !at.is_empty() {
                    at.push('.');
                }
                at.push_str(key);
                diff(
                    a.get(key).unwrap_or(&absent),
                    b.get(key).unwrap_or(&absent),
                    at,
                    out,
                );
                at.truncate(len);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                at.push_str(&format!("[{i}]"));
                diff(x, y, at, out);
                at.truncate(len);
            }
        }
        _ if old != new => out.push(format!("{at}: {old} -> {new}")),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_are_named_by_key_path() {
        let old = json!({"a": 1, "m": [{"id": "x", "p": {"k": "v"}}], "gone": true});
        let new = json!({"a": 1, "m": [{"id": "x", "p": {"k": "w"}}], "added": 2});
        let mut out = Vec::new();
        diff(&old, &new, &mut String::new(), &mut out);
        assert_eq!(
            out,
            [
                "added: null -> 2",
                "gone: true -> null",
                r#"m[0].p.k: "v" -> "w""#
            ]
        );
        out.clear();
        diff(&old, &old, &mut String::new(), &mut out);
        assert!(out.is_empty());
    }
}
