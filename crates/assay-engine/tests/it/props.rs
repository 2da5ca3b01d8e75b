//! Property tests of resume: a run whose results file is torn at any byte
//! finishes, when resumed, with exactly the outcomes of an uninterrupted run.
//!
//! `cargo test` runs a few cases; `scripts/fuzz.sh` sets `PROPTEST_CASES`
//! for long runs. Failures found are replayed from `proptest-regressions/`
//! before any new case.

use crate::common::{lexical, records, write_rows, Notes};
use assay_core::OutcomeRecord;
use assay_engine::{run_blocking, CancelToken, Silent};
use proptest::prelude::*;

/// `default_cases` cases, or as many as `PROPTEST_CASES` says.
fn config(default_cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok());
    ProptestConfig::with_cases(cases.unwrap_or(default_cases))
}

/// The records of a run, in one order (the run's threads write in any).
fn sorted(mut records: Vec<OutcomeRecord>) -> Vec<OutcomeRecord> {
    records.sort_by(|a, b| (a.row, &a.metric).cmp(&(b.row, &b.metric)));
    records
}

proptest! {
    #![proptest_config(config(16))]

    #[test]
    fn resume_after_a_tear_at_any_byte_gives_the_uninterrupted_outcomes(
        rows in 1usize..8,
        tear in any::<prop::sample::Index>(),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let data = write_rows(&tmp.path().join("d.jsonl"), rows);
        let out = tmp.path().join("run");
        let options = lexical(&data, &out);
        let whole = run_blocking(&options, &mut Silent, &CancelToken::new()).unwrap();
        let want = sorted(records(&out));
        prop_assert_eq!(want.len(), rows * 5);

        let results = out.join("results.jsonl");
        let text = std::fs::read(&results).unwrap();
        let cut = tear.index(text.len() + 1);
        std::fs::write(&results, &text[..cut]).unwrap();
        let whole_lines = text[..cut].iter().filter(|&&b| b == b'\n').count();

        let mut notes = Notes::default();
        let resumed = run_blocking(&options, &mut notes, &CancelToken::new()).unwrap();
        let kept = format!("{whole_lines} outcomes kept");
        prop_assert!(notes.notes.iter().any(|n| n.contains(&kept)), "{:?}", notes.notes);
        let torn = text[..cut].len() - text[..cut].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let cut_note = notes.notes.iter().any(|n| n.contains(&format!("cut a torn last line ({torn} bytes)")));
        prop_assert_eq!(cut_note, torn > 0, "{:?}", notes.notes);
        prop_assert_eq!(sorted(records(&out)), want);
        prop_assert_eq!(
            serde_json::to_value(&resumed.outputs).unwrap(),
            serde_json::to_value(&whole.outputs).unwrap()
        );
        prop_assert!(resumed.complete);
    }
}
