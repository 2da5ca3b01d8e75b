//! ROUGE and the Porter stemmer against rouge-score 0.1.2 / nltk 3.10.4:
//! every pair of the public parity set (best-of-references and
//! per-reference, stemmer off and on), the valor vectors, and the
//! nltk-generated stem vectors.

use crate::common::{self, Pair};
use assay_text::porter;
use assay_text::rouge::{self, Prf, RougeScorer, RougeType, Stemming, Tokenized};
use serde_json::Value;

/// Collects every disagreement so one run shows them all.
#[derive(Default)]
struct Check {
    compared: usize,
    max_diff: f64,
    failures: Vec<String>,
}

impl Check {
    fn value(&mut self, got: f64, want: &Value, what: impl FnOnce() -> String) {
        self.compared += 1;
        let Some(want) = want.as_f64() else {
            self.failures
                .push(format!("{}: expected value missing", what()));
            return;
        };
        let diff = (got - want).abs();
        if diff > common::TOL || !got.is_finite() {
            self.failures
                .push(format!("{}: got {got:?}, want {want:?}", what()));
        }
        if diff > self.max_diff {
            self.max_diff = diff;
        }
    }

    fn prf(&mut self, got: Prf, want: [&Value; 3], what: &dyn Fn() -> String) {
        self.value(got.precision, want[0], || format!("{} precision", what()));
        self.value(got.recall, want[1], || format!("{} recall", what()));
        self.value(got.fmeasure, want[2], || format!("{} fmeasure", what()));
    }

    fn finish(self, name: &str) {
        eprintln!(
            "{name}: {} values compared, max abs diff {:e}",
            self.compared, self.max_diff
        );
        assert!(self.compared > 0, "{name}: nothing compared");
        assert!(
            self.failures.is_empty(),
            "{name}: {} of {} values differ; first ones:\n{}",
            self.failures.len(),
            self.compared,
            self.failures[..self.failures.len().min(20)].join("\n")
        );
    }
}

fn refs(pair: &Pair) -> Vec<&str> {
    pair.references.iter().map(String::as_str).collect()
}

fn best_of_references(stemming: Stemming, key: &str) {
    let scorer = RougeScorer::new(&RougeType::DEFAULT, stemming).expect("valid types");
    let mut check = Check::default();
    for pair in common::pairs() {
        let got = scorer.score_multi(&refs(pair), &pair.prediction);
        for (t, prf) in RougeType::DEFAULT.iter().zip(got) {
            let want = &pair.expected[key][t.to_string()];
            check.prf(
                prf,
                [&want["precision"], &want["recall"], &want["fmeasure"]],
                &|| format!("{} {key} {t}", pair.id),
            );
        }
    }
    check.finish(key);
}

fn per_reference(stemming: Stemming, key: &str) {
    let scorer = RougeScorer::new(&RougeType::DEFAULT, stemming).expect("valid types");
    let mut check = Check::default();
    for pair in common::pairs() {
        for (i, reference) in pair.references.iter().enumerate() {
            let got = scorer.score(reference, &pair.prediction);
            for (t, prf) in RougeType::DEFAULT.iter().zip(got) {
                let want = &pair.expected[key][t.to_string()][i];
                check.prf(prf, [&want[0], &want[1], &want[2]], &|| {
                    format!("{} {key} {t} reference {i}", pair.id)
                });
            }
        }
    }
    check.finish(key);
}

/// rouge-score's own tokens handed over as a caller's tokenizer's: the
/// tokens path gives the same numbers as the text path, every type.
fn caller_tokens(stemming: Stemming, key: &str) {
    let tokenized = |text: &str| Tokenized {
        tokens: rouge::tokenize(text, stemming),
        sentences: text
            .split('\n')
            .filter(|line| !line.is_empty())
            .map(|line| rouge::tokenize(line, stemming))
            .collect(),
    };
    // The scorer's own stemming is ignored on this path.
    let scorer = RougeScorer::new(&RougeType::DEFAULT, Stemming::Off).expect("valid types");
    let mut check = Check::default();
    for pair in common::pairs() {
        let references: Vec<Tokenized<String>> =
            pair.references.iter().map(|r| tokenized(r)).collect();
        let got = scorer.score_multi_tokens(&references, &tokenized(&pair.prediction));
        for (t, prf) in RougeType::DEFAULT.iter().zip(got) {
            let want = &pair.expected[key][t.to_string()];
            check.prf(
                prf,
                [&want["precision"], &want["recall"], &want["fmeasure"]],
                &|| format!("{} {key} {t} (tokens)", pair.id),
            );
        }
    }
    check.finish(key);
}

#[test]
fn parity_caller_tokens() {
    caller_tokens(Stemming::Off, "rouge");
    caller_tokens(Stemming::Porter, "rouge_stem");
}

#[test]
fn parity_score_multi_no_stemmer() {
    best_of_references(Stemming::Off, "rouge");
}

#[test]
fn parity_score_multi_porter() {
    best_of_references(Stemming::Porter, "rouge_stem");
}

#[test]
fn parity_per_reference_no_stemmer() {
    per_reference(Stemming::Off, "rouge_per_ref");
}

#[test]
fn parity_per_reference_porter() {
    per_reference(Stemming::Porter, "rouge_stem_per_ref");
}

#[test]
fn parity_corpus_mean_f() {
    let corpus = common::expected_corpus();
    for (stemming, key) in [(Stemming::Off, "rouge"), (Stemming::Porter, "rouge_stem")] {
        let scorer = RougeScorer::new(&RougeType::DEFAULT, stemming).expect("valid types");
        let mut sums = [0.0; 4];
        for pair in common::pairs() {
            let got = scorer.score_multi(&refs(pair), &pair.prediction);
            for (sum, prf) in sums.iter_mut().zip(got) {
                *sum += prf.fmeasure;
            }
        }
        let n = common::pairs().len() as f64;
        for (t, sum) in RougeType::DEFAULT.iter().zip(sums) {
            let want = corpus["rouge_mean_f"][key][t.to_string()]
                .as_f64()
                .expect("mean F");
            common::assert_close(sum / n, want, &format!("mean F {key} {t}"));
        }
    }
}

#[test]
fn valor_vectors() {
    let data = common::read_json("valor_textgen_lexical_vectors.json");
    let mut check = Check::default();
    for group in ["rag_cases", "unit_cases", "extra_cases_computed_here"] {
        let cases = data[group].as_array().expect("case list");
        for (i, case) in cases.iter().enumerate() {
            let stemming = if case["use_stemmer"].as_bool().expect("use_stemmer") {
                Stemming::Porter
            } else {
                Stemming::Off
            };
            let expected = case["rouge"].as_object().expect("rouge object");
            let types: Vec<RougeType> = expected
                .keys()
                .map(|k| k.parse().expect("rouge type name"))
                .collect();
            let references: Vec<&str> = case["references"]
                .as_array()
                .expect("references")
                .iter()
                .map(|r| r.as_str().expect("reference string"))
                .collect();
            let prediction = case["prediction"].as_str().expect("prediction");
            let scorer = RougeScorer::new(&types, stemming).expect("valid types");
            let got = scorer.score_multi(&references, prediction);
            for (t, prf) in types.iter().zip(got) {
                check.value(prf.fmeasure, &case["rouge"][t.to_string()], || {
                    format!("{group}[{i}] {t}")
                });
            }
        }
    }
    check.finish("valor vectors");
}

#[test]
fn porter_vectors() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/porter_vectors.tsv");
    let text = std::fs::read_to_string(path).expect("porter_vectors.tsv");
    let mut compared = 0;
    let mut failures = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (word, want) = line.split_once('\t').expect("word<TAB>stem");
        compared += 1;
        let got = porter::stem(word);
        if got != want {
            failures.push(format!("{word:?}: got {got:?}, want {want:?}"));
        }
    }
    assert!(compared > 3000, "only {compared} vectors");
    assert!(
        failures.is_empty(),
        "{} of {compared} stems differ:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// The same scorer, reused across pairs and stemming settings in any
/// order, gives what a fresh scorer gives: the caches never leak state.
#[test]
fn reused_scorer_matches_fresh_scorer() {
    let scorer = RougeScorer::new(&RougeType::DEFAULT, Stemming::Porter).expect("valid types");
    for pair in common::pairs().iter().rev().take(200) {
        let fresh = RougeScorer::new(&RougeType::DEFAULT, Stemming::Porter).expect("valid types");
        let refs = refs(pair);
        assert_eq!(
            scorer.score_multi(&refs, &pair.prediction),
            fresh.score_multi(&refs, &pair.prediction),
            "{}",
            pair.id
        );
    }
}
