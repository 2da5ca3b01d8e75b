//! Loads the parity set (`tests/data/parity`) once per test binary.

use serde_json::Value;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Values must agree with the Python references to this absolute tolerance.
pub const TOL: f64 = 1e-9;

pub struct Pair {
    pub id: String,
    pub prediction: String,
    pub references: Vec<String>,
    /// This pair's element of `public.expected.json`'s `pairs`.
    pub expected: Value,
}

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Reads a file under `tests/data` as JSON.
pub fn read_json(relative: &str) -> Value {
    let path = data_dir().join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `corpus` object of `public.expected.json`.
pub fn expected_corpus() -> &'static Value {
    &expected_file()["corpus"]
}

fn expected_file() -> &'static Value {
    static EXPECTED: OnceLock<Value> = OnceLock::new();
    EXPECTED.get_or_init(|| read_json("parity/public.expected.json"))
}

/// Every pair of `public.jsonl`, joined with its expected values by id.
pub fn pairs() -> &'static [Pair] {
    static PAIRS: OnceLock<Vec<Pair>> = OnceLock::new();
    PAIRS.get_or_init(|| {
        let expected: std::collections::HashMap<&str, &Value> = expected_file()["pairs"]
            .as_array()
            .expect("pairs array")
            .iter()
            .map(|p| (p["id"].as_str().expect("id"), p))
            .collect();
        let text =
            std::fs::read_to_string(data_dir().join("parity/public.jsonl")).expect("public.jsonl");
        text.lines()
            .map(|line| {
                let row: Value = serde_json::from_str(line).expect("jsonl row");
                let id = row["id"].as_str().expect("id").to_string();
                let references = row["references"]
                    .as_array()
                    .expect("references")
                    .iter()
                    .map(|r| r.as_str().expect("reference string").to_string())
                    .collect();
                let expected = (*expected.get(id.as_str()).expect("expected for id")).clone();
                Pair {
                    prediction: row["prediction"].as_str().expect("prediction").to_string(),
                    references,
                    expected,
                    id,
                }
            })
            .collect()
    })
}

/// Asserts `|got - want| <= TOL`, naming the pair and the quantity.
pub fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= TOL && got.is_finite(),
        "{what}: got {got:?}, want {want:?} (diff {:e})",
        (got - want).abs()
    );
}
