//! Reading `results.jsonl` back: for resuming a run, merging shards,
//! comparing runs and rendering reports.
//!
//! The file is append-only and written in whole lines, but a process killed
//! mid-write can leave a last line without its newline. That torn tail is
//! not an error: it is reported so that a resumed run can cut it off and
//! redo its sample. A complete line that does not parse is an error naming
//! the line, because something other than assay wrote it.

use crate::outcome::{OutcomeRecord, Status};
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

/// The whole lines of a results file, parsed.
#[derive(Debug, Default)]
pub struct ResultsLog {
    pub records: Vec<OutcomeRecord>,
    /// Bytes of the file that hold whole lines; a torn tail starts here.
    pub valid_len: u64,
    /// Bytes after `valid_len` (a last line without its newline).
    pub torn_bytes: u64,
}

/// Why a results file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}:{line}: not a results record: {message}")]
    Parse {
        path: PathBuf,
        line: u64,
        message: String,
    },
}

/// Reads every whole line of the results file at `path`.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("results.jsonl");
/// std::fs::write(&path, concat!(
///     r#"{"format_version":1,"sample_id":"a","row":1,"metric":"bleu","status":"scored","value":0.5}"#, "\n",
///     r#"{"format_version":1,"sample_id":"b","#,
/// )).unwrap();
/// let log = assay_core::results::read_results(&path).unwrap();
/// assert_eq!(log.records.len(), 1);
/// assert_eq!(log.torn_bytes, 36);
/// ```
pub fn read_results(path: &Path) -> Result<ResultsLog, ResultsError> {
    let mut records = Vec::new();
    let mut log = visit_results(path, |r| records.push(r))?;
    log.records = records;
    Ok(log)
}

/// Like [`read_results`], but hands each record to `each` in file order
/// instead of keeping them, so a run of millions of outcomes can be read in
/// flat memory; the returned log has no records.
pub fn visit_results(
    path: &Path,
    mut each: impl FnMut(OutcomeRecord),
) -> Result<ResultsLog, ResultsError> {
    let io_err = |source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io_err)?;
    let mut reader = io::BufReader::new(file);
    let mut log = ResultsLog::default();
    let mut line = Vec::new();
    let mut line_no = 0u64;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(io_err)?;
        if n == 0 {
            break;
        }
        if line.last() != Some(&b'\n') {
            log.torn_bytes = n as u64;
            break;
        }
        line_no += 1;
        let parse_error = |message: String| ResultsError::Parse {
            path: path.to_path_buf(),
            line: line_no,
            message,
        };
        let record: OutcomeRecord =
            serde_json::from_slice(&line).map_err(|e| parse_error(e.to_string()))?;
        match (record.status, &record.value, &record.error) {
            (Status::Scored, None, _) => return Err(parse_error("scored without a value".into())),
            (Status::Failed, _, None) => return Err(parse_error("failed without an error".into())),
            _ => {}
        }
        each(record);
        log.valid_len += n as u64;
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Outcome;
    use serde_json::json;

    fn line(id: &str) -> String {
        let rec = OutcomeRecord::new(id, 1, "rouge1", Outcome::scored(0.25, json!({})));
        serde_json::to_string(&rec).unwrap() + "\n"
    }

    #[test]
    fn whole_lines_are_read_and_a_torn_tail_is_measured() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let (a, b) = (line("a"), line("b"));
        std::fs::write(&path, format!("{a}{b}{}", &a[..10])).unwrap();
        let log = read_results(&path).unwrap();
        assert_eq!(log.records.len(), 2);
        assert_eq!(log.records[1].sample_id, "b");
        assert_eq!(log.records[0].status, Status::Scored);
        assert_eq!(log.valid_len, (a.len() + b.len()) as u64);
        assert_eq!(log.torn_bytes, 10);
    }

    #[test]
    fn a_bad_whole_line_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        std::fs::write(&path, format!("{}{{\"oops\": 1}}\n", line("a"))).unwrap();
        let err = read_results(&path).unwrap_err().to_string();
        assert!(err.contains("results.jsonl:2:"), "{err}");
        let inconsistent =
            r#"{"format_version":1,"sample_id":"a","row":1,"metric":"m","status":"failed"}"#;
        std::fs::write(&path, format!("{inconsistent}\n")).unwrap();
        let err = read_results(&path).unwrap_err().to_string();
        assert!(
            err.contains(":1: not a results record: failed without an error"),
            "{err}"
        );
    }
}
