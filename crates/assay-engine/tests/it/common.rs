use assay_core::{read_results, OutcomeRecord, Source};
use assay_engine::{Existing, Observer, RunOptions, Shard, Strictness};
use assay_metrics::Metric;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Lexical options over `data` into `out`: ROUGE (four outputs) and BLEU.
pub fn lexical(data: &Path, out: &Path) -> RunOptions {
    RunOptions {
        source: Source::Path(data.to_path_buf()),
        input_format: None,
        input: Default::default(),
        metrics: vec![
            Metric::configure(assay_metrics::lexical::rouge::ID, &BTreeMap::new()).unwrap(),
            Metric::configure(assay_metrics::lexical::bleu::ID, &BTreeMap::new()).unwrap(),
        ],
        judged: None,
        out: out.to_path_buf(),
        strict: Strictness::RecordAndContinue,
        threads: 2,
        existing: Existing::Resume,
        shard: None,
    }
}

pub fn with_shard(mut options: RunOptions, shard: &str) -> RunOptions {
    options.shard = Some(shard.parse::<Shard>().unwrap());
    options
}

/// `n` rows with distinct ids, responses and references.
pub fn write_rows(path: &Path, n: usize) -> PathBuf {
    let mut text = String::new();
    for i in 0..n {
        text.push_str(
            &serde_json::json!({
                "id": format!("r{i}"),
                "response": format!("the cat number {i} sat on the mat"),
                "reference": format!("a cat numbered {} sat on a mat", i % 7),
            })
            .to_string(),
        );
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

pub fn records(dir: &Path) -> Vec<OutcomeRecord> {
    read_results(&dir.join("results.jsonl")).unwrap().records
}

/// (sample id, output) of every record, asserting each is there once.
pub fn keys(dir: &Path) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = records(dir)
        .into_iter()
        .map(|r| (r.sample_id, r.metric))
        .collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n, "an outcome was written twice");
    keys
}

/// Keeps the notes a run sends, and can cancel the run at its first
/// progress report.
#[derive(Default)]
pub struct Notes {
    pub notes: Vec<String>,
    pub cancel_at_progress: Option<assay_engine::CancelToken>,
    pub progress_calls: usize,
}

impl Observer for Notes {
    fn progress(&mut self, _p: &assay_engine::Progress<'_>) {
        self.progress_calls += 1;
        if let Some(token) = &self.cancel_at_progress {
            token.cancel();
        }
    }

    fn note(&mut self, message: &str) {
        self.notes.push(message.to_string());
    }
}
