use crate::common::{keys, lexical, records, with_shard, write_rows, Notes};
use assay_engine::rundir::{RunDir, LOCK};
use assay_engine::{run_blocking, CancelToken, EngineError, Existing, RunManifest, Silent};

fn means(summary: &assay_engine::RunSummary) -> Vec<(String, Option<f64>)> {
    summary
        .outputs
        .iter()
        .map(|o| (o.name.clone(), o.summary.stats.as_ref().map(|s| s.mean)))
        .collect()
}

#[test]
fn a_torn_last_line_is_cut_and_its_sample_redone() {
    let tmp = tempfile::tempdir().unwrap();
    let data = write_rows(&tmp.path().join("d.jsonl"), 40);
    let out = tmp.path().join("run");
    let options = lexical(&data, &out);
    let whole = run_blocking(&options, &mut Silent, &CancelToken::new()).unwrap();
    let full_keys = keys(&out);
    assert_eq!(full_keys.len(), 40 * 5);

    // A crash mid-write: the last record loses its tail and newline.
    let results = out.join("results.jsonl");
    let text = std::fs::read_to_string(&results).unwrap();
    let last_start = text[..text.len() - 1].rfind('\n').unwrap() + 1;
    std::fs::write(&results, &text[..last_start + 20]).unwrap();

    let mut notes = Notes::default();
    let resumed = run_blocking(&options, &mut notes, &CancelToken::new()).unwrap();
    assert!(
        notes
            .notes
            .iter()
            .any(|n| n.contains("cut a torn last line (20 bytes)")),
        "{:?}",
        notes.notes
    );
    assert!(notes.notes.iter().any(|n| n.contains("outcomes kept")));
    assert_eq!(keys(&out), full_keys);
    assert_eq!(std::fs::read_to_string(&results).unwrap(), text);
    assert_eq!(means(&resumed), means(&whole));
    assert_eq!(resumed.corpus.len(), whole.corpus.len());
    assert!(resumed.complete);
}

#[test]
fn a_cancelled_run_keeps_what_is_done_and_the_same_run_finishes_it() {
    let tmp = tempfile::tempdir().unwrap();
    // More rows than one lexical batch (1024), so the cancel lands between
    // batches.
    let data = write_rows(&tmp.path().join("d.jsonl"), 3000);
    let out = tmp.path().join("run");
    let options = lexical(&data, &out);
    let token = CancelToken::new();
    let mut cancelling = Notes {
        cancel_at_progress: Some(token.clone()),
        ..Notes::default()
    };
    let partial = run_blocking(&options, &mut cancelling, &token).unwrap();
    assert!(!partial.complete);
    assert_eq!(cancelling.progress_calls, 1);
    assert_eq!(partial.rows, 1024);
    assert_eq!(keys(&out).len(), 1024 * 5);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["complete"], false);

    let done = run_blocking(&options, &mut Silent, &CancelToken::new()).unwrap();
    assert!(done.complete);
    assert_eq!(keys(&out).len(), 3000 * 5);
    let fresh_out = tmp.path().join("fresh");
    let fresh = run_blocking(
        &lexical(&data, &fresh_out),
        &mut Silent,
        &CancelToken::new(),
    )
    .unwrap();
    assert_eq!(means(&done), means(&fresh));
}

#[test]
fn a_held_run_directory_is_refused_with_the_holders_pid() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let manifest: RunManifest = serde_json::from_slice(
        &std::fs::read("tests/fixtures/format1/lexical/manifest.json").unwrap(),
    )
    .unwrap();
    let held = RunDir::open(&out, &manifest, Existing::Resume, &mut Silent, &mut |_| {}).unwrap();
    let err = match RunDir::open(&out, &manifest, Existing::Resume, &mut Silent, &mut |_| {}) {
        Err(e) => e,
        Ok(_) => panic!("a second open of a held directory succeeded"),
    };
    match &err {
        EngineError::Locked { dir, pid } => {
            assert_eq!(dir, &out);
            assert_eq!(pid, &std::process::id().to_string());
        }
        other => panic!("expected Locked, got {other:?}"),
    }
    assert!(err.is_usage());
    // A run over the held directory is refused before it writes anything.
    let data = write_rows(&tmp.path().join("d.jsonl"), 3);
    let refused = run_blocking(&lexical(&data, &out), &mut Silent, &CancelToken::new());
    assert!(matches!(refused, Err(EngineError::Locked { .. })));
    assert!(records(&out).is_empty());

    drop(held);
    assert!(out.join(LOCK).exists(), "the lock file stays, unlocked");
    let _again = RunDir::open(&out, &manifest, Existing::Resume, &mut Silent, &mut |_| {}).unwrap();
}

#[test]
fn shards_merge_into_the_run_of_the_whole_input() {
    let tmp = tempfile::tempdir().unwrap();
    let data = write_rows(&tmp.path().join("d.jsonl"), 60);
    let whole = run_blocking(
        &lexical(&data, &tmp.path().join("whole")),
        &mut Silent,
        &CancelToken::new(),
    )
    .unwrap();
    let mut dirs = Vec::new();
    let mut rows = 0;
    for shard in ["1/3", "2/3", "3/3"] {
        let dir = tmp.path().join(format!("shard{}", &shard[..1]));
        let s = run_blocking(
            &with_shard(lexical(&data, &dir), shard),
            &mut Silent,
            &CancelToken::new(),
        )
        .unwrap();
        assert!(s.rows > 0 && s.rows < 60, "shard {shard}: {} rows", s.rows);
        rows += s.rows;
        dirs.push(dir);
    }
    assert_eq!(rows, 60, "every row in exactly one shard");
    let merged = tmp.path().join("merged");
    let line = assay_engine::merge::merge(&dirs, &merged, None).unwrap();
    assert!(
        line.contains("merged 3 shards (300 outcomes of 60 rows)"),
        "{line}"
    );
    assert_eq!(keys(&merged), keys(&tmp.path().join("whole")));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(merged.join("summary.json")).unwrap()).unwrap();
    for (name, mean) in means(&whole) {
        let m = summary["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == name.as_str())
            .unwrap();
        let got = m["mean"].as_f64();
        assert!(
            (got.unwrap() - mean.unwrap()).abs() < 1e-12,
            "{name}: {got:?} vs {mean:?}"
        );
    }
    let corpus_bleu = whole.corpus.iter().find(|c| c.name == "bleu").unwrap();
    let merged_bleu = summary["corpus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "bleu")
        .unwrap();
    assert_eq!(merged_bleu["value"].as_f64(), Some(corpus_bleu.value));

    // A shard given twice is refused, naming the shard.
    let twice = assay_engine::merge::merge(
        &[dirs[0].clone(), dirs[0].clone(), dirs[1].clone()],
        &tmp.path().join("bad"),
        None,
    );
    match twice {
        Err(EngineError::Usage(m)) => assert!(m.contains("shard 1/3 is given twice"), "{m}"),
        other => panic!("{other:?}"),
    }
}
