//! A run directory written by assay before the engine was a library
//! (format 1, `tests/fixtures/format1/`, made by the release of 0e807d4):
//! it still resumes, and the summary it gets is the one it had.

use crate::common::{lexical, records, Notes};
use assay_engine::{run_blocking, CancelToken};
use std::path::{Path, PathBuf};

const FIXTURE: &str = "tests/fixtures/format1";

/// A copy of fixture run `name`, so the test can write to it.
fn copy_run(name: &str, to: &Path) -> PathBuf {
    let from = Path::new(FIXTURE).join(name);
    let dest = to.join(name);
    std::fs::create_dir_all(&dest).unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dest.join(entry.file_name())).unwrap();
    }
    dest
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_format_1_run_resumes_with_nothing_to_do_and_the_same_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_run("lexical", tmp.path());
    let before = std::fs::read(dir.join("results.jsonl")).unwrap();
    // The input path as the fixture's run was given it, relative to this
    // crate, where cargo runs its tests.
    let options = lexical(&Path::new(FIXTURE).join("data.jsonl"), &dir);
    let mut notes = Notes::default();
    let summary = run_blocking(&options, &mut notes, &CancelToken::new()).unwrap();
    assert!(summary.complete);
    assert!(
        notes.notes.iter().any(|n| n.contains("resuming the run")),
        "{:?}",
        notes.notes
    );
    assert_eq!(std::fs::read(dir.join("results.jsonl")).unwrap(), before);
    assert_eq!(
        json(&dir.join("summary.json")),
        json(&Path::new(FIXTURE).join("lexical/summary.json"))
    );
    assert_eq!(records(&dir).len(), 10 * 5);
}

#[test]
fn format_1_shards_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = vec![
        copy_run("shard-1", tmp.path()),
        copy_run("shard-2", tmp.path()),
    ];
    let merged = tmp.path().join("merged");
    assay_engine::merge::merge(&dirs, &merged, None).unwrap();
    let whole = json(&Path::new(FIXTURE).join("lexical/summary.json"));
    let got = json(&merged.join("summary.json"));
    assert_eq!(got["rows"], whole["rows"]);
    assert_eq!(got["corpus"], whole["corpus"]);
    for (a, b) in got["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(whole["outputs"].as_array().unwrap())
    {
        assert_eq!(a["name"], b["name"]);
        let (x, y) = (a["mean"].as_f64().unwrap(), b["mean"].as_f64().unwrap());
        assert!((x - y).abs() < 1e-12, "{}: {x} vs {y}", a["name"]);
    }
}

#[test]
fn format_1_manifests_and_summaries_read_as_the_run_log_types_and_write_back_the_same() {
    use assay_engine::{RunManifest, RunSummary};
    for run in ["lexical", "shard-1", "shard-2", "judged"] {
        let dir = Path::new(FIXTURE).join(run);
        let manifest: RunManifest =
            serde_json::from_value(json(&dir.join("manifest.json"))).unwrap();
        assert_eq!(
            serde_json::to_value(&manifest).unwrap(),
            json(&dir.join("manifest.json")),
            "{run}: manifest"
        );
        let summary: RunSummary = serde_json::from_value(json(&dir.join("summary.json"))).unwrap();
        assert_eq!(
            serde_json::to_value(&summary).unwrap(),
            json(&dir.join("summary.json")),
            "{run}: summary"
        );
        assert_eq!(manifest.input.format, None, "format 1 did not record it");
    }
    let judged: RunManifest =
        serde_json::from_value(json(&Path::new(FIXTURE).join("judged/manifest.json"))).unwrap();
    let judge = judged.judge.unwrap();
    assert_eq!(judge.spec, "local:smollm2-135m");
    assert_eq!(judge.sampling.repeats, 1);
    assert!(judge.embedder.is_some());
}
