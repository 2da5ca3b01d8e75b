//! ragas string metrics against vectors generated with rapidfuzz
//! (`tests/data/gen_string_similarity_vectors.py`).

use crate::common;
use assay_text::string::{exact_match, similarity, string_presence, StringDistance};
use serde_json::Value;

fn cases() -> Vec<Value> {
    let doc = common::read_json("string_similarity_vectors.json");
    assert!(
        doc["rapidfuzz_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.")),
        "vectors must come from rapidfuzz 3.x"
    );
    doc["cases"].as_array().expect("cases array").clone()
}

fn text<'a>(case: &'a Value, key: &str) -> &'a str {
    case[key].as_str().unwrap_or_else(|| panic!("{key} string"))
}

#[test]
fn similarity_matches_rapidfuzz_for_every_measure() {
    let cases = cases();
    assert!(cases.len() >= 300, "only {} cases", cases.len());
    for (i, case) in cases.iter().enumerate() {
        let (reference, response) = (text(case, "reference"), text(case, "response"));
        for distance in StringDistance::ALL {
            let want = case[distance.as_str()].as_f64().expect("expected value");
            let got = similarity(reference, response, distance);
            common::assert_close(
                got,
                want,
                &format!("case {i} ({}) {distance}", case["source"]),
            );
            assert!((0.0..=1.0).contains(&got));
        }
    }
}

#[test]
fn exact_match_and_presence_match_python() {
    for (i, case) in cases().iter().enumerate() {
        let (reference, response) = (text(case, "reference"), text(case, "response"));
        assert_eq!(
            exact_match(reference, response),
            case["exact_match"].as_bool().expect("bool"),
            "case {i} exact_match"
        );
        assert_eq!(
            string_presence(reference, response),
            case["string_presence"].as_bool().expect("bool"),
            "case {i} string_presence"
        );
    }
}

#[test]
fn parity_pairs_are_covered() {
    let parity = cases()
        .iter()
        .filter(|c| c["source"].as_str().is_some_and(|s| s.starts_with("pub-")))
        .count();
    assert_eq!(parity, 200);
}

#[test]
fn identical_and_empty_strings() {
    for distance in StringDistance::ALL {
        assert_eq!(similarity("", "", distance), 1.0, "{distance}");
        assert_eq!(similarity("", "abc", distance), 0.0, "{distance}");
        assert_eq!(similarity("été", "été", distance), 1.0, "{distance}");
    }
}
