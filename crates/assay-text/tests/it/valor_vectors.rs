//! valor-lite's sentence BLEU (`calculate_sentence_bleu`): nltk
//! `RegexpTokenizer(r"\w+|\$[\d]+|[^\s\.]+")`, the case's weights, no
//! smoothing, values below 1e-9 reported as 0.

use crate::common::{self, assert_close};
use assay_text::bleu::{self, BleuConfig, Smoothing};
use assay_text::tokenize::BleuTokenizer;
use serde_json::Value;

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|s| s.as_str().expect("string"))
        .collect()
}

#[test]
fn valor_bleu_vectors() {
    let file = common::read_json("valor_textgen_lexical_vectors.json");
    let mut checked = 0;
    for list in ["rag_cases", "unit_cases", "extra_cases_computed_here"] {
        let cases = file[list].as_array().expect(list);
        assert!(!cases.is_empty(), "{list}");
        for (i, case) in cases.iter().enumerate() {
            let what = format!("{list}[{i}]");
            let prediction = case["prediction"].as_str().expect("prediction");
            let references = strings(&case["references"]);
            let weights: Vec<f64> = case["bleu_weights"]
                .as_array()
                .expect("weights")
                .iter()
                .map(|w| w.as_f64().expect("weight"))
                .collect();
            let config = BleuConfig {
                weights,
                smoothing: Smoothing::Method0,
                tokenizer: BleuTokenizer::Regex,
            };
            let got = bleu::zero_below_1e9(
                bleu::sentence_bleu(prediction, &references, &config).expect("bleu"),
            );
            assert_close(got, case["bleu"].as_f64().expect("bleu"), &what);
            if let Some(tokens) = case.get("bleu_tokens_prediction") {
                assert_eq!(
                    BleuTokenizer::Regex.tokenize(prediction),
                    strings(tokens),
                    "{what} tokens"
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 3 + 12 + 6);
}
