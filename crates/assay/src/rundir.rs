//! The run directory: `results.jsonl` appended as outcomes complete,
//! `summary.json` and `manifest.json` at the end.

use anyhow::{Context, Result};
use assay_core::OutcomeRecord;
use serde::Serialize;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub const RESULTS: &str = "results.jsonl";
pub const SUMMARY: &str = "summary.json";
pub const MANIFEST: &str = "manifest.json";

/// An open run directory.
pub struct RunDir {
    path: PathBuf,
    results: BufWriter<File>,
}

impl RunDir {
    /// Creates the directory. An existing `results.jsonl` there is refused
    /// rather than overwritten: it may hold paid-for work.
    pub fn create(path: &Path) -> Result<RunDir> {
        fs::create_dir_all(path)
            .with_context(|| format!("cannot create run directory {}", path.display()))?;
        let results_path = path.join(RESULTS);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&results_path)
            .with_context(|| {
                format!(
                    "cannot create {} (a run directory is never overwritten; choose another --out)",
                    results_path.display()
                )
            })?;
        Ok(RunDir {
            path: path.to_path_buf(),
            results: BufWriter::with_capacity(1 << 16, file),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn append(&mut self, record: &OutcomeRecord) -> Result<()> {
        serde_json::to_writer(&mut self.results, record)?;
        self.results.write_all(b"\n")?;
        Ok(())
    }

    /// Makes everything appended so far durable, whole lines only.
    pub fn flush(&mut self) -> Result<()> {
        self.results.flush().context("cannot write results.jsonl")
    }

    /// Writes a JSON file atomically (temporary file, then rename), so a
    /// reader never sees half of it.
    pub fn write_json(&self, name: &str, value: &impl Serialize) -> Result<()> {
        let tmp = self.path.join(format!(".{name}.tmp"));
        let mut text = serde_json::to_vec_pretty(value)?;
        text.push(b'\n');
        fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
        fs::rename(&tmp, self.path.join(name)).with_context(|| format!("cannot write {name}"))
    }
}
