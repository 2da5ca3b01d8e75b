//! Sentence embedders against `transformers`: tiny random
//! sentence-transformers folders (`tests/fixtures/embed-*`, made by
//! scripts/fixtures/grounding-models.py), an XLM-RoBERTa with a unigram
//! (SentencePiece) tokenizer pooled by the mean, and a BERT pooled by its
//! first token; the ids must be equal and each unit vector within 1e-5,
//! the texts multilingual, emoji and past the window.

use assay_classifier::embed::SentenceEncoder;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn check(name: &str) {
    let dir = fixture(name);
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let model = SentenceEncoder::load(&dir, 2).unwrap();
    let cases = expected["cases"].as_array().unwrap();
    let texts: Vec<String> = cases
        .iter()
        .map(|c| c["text"].as_str().unwrap().to_string())
        .collect();
    for (case, text) in cases.iter().zip(&texts) {
        let ids: Vec<u32> = serde_json::from_value(case["ids"].clone()).unwrap();
        assert_eq!(model.ids(text).unwrap(), ids, "{name}: ids of {text:?}");
    }
    // Batched and padded, as a run embeds them.
    let (vectors, tokens) = model.embed(&texts).unwrap();
    assert!(tokens > 0);
    let mut worst = 0f32;
    for (case, got) in cases.iter().zip(&vectors) {
        let want: Vec<f32> = serde_json::from_value(case["vector"].clone()).unwrap();
        assert_eq!(want.len(), got.len());
        for (w, g) in want.iter().zip(got) {
            worst = worst.max((w - g).abs());
        }
        let norm: f32 = got.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{name}: norm {norm}");
    }
    assert!(worst < 1e-5, "{name}: largest difference {worst:e}");
    eprintln!(
        "{name}: {} texts, largest difference {worst:.2e}",
        cases.len()
    );
}

#[test]
fn an_xlm_roberta_embedder_with_mean_pooling_matches_transformers() {
    check("embed-xlm-roberta");
}

#[test]
fn a_bert_embedder_with_first_token_pooling_matches_transformers() {
    check("embed-bert");
}

#[test]
fn the_identity_names_the_pooling() {
    let model = SentenceEncoder::load(&fixture("embed-bert"), 1).unwrap();
    assert!(model.identity().starts_with("embed-bert@sha256:"));
    assert!(model.identity().ends_with("/pool=first"));
}
