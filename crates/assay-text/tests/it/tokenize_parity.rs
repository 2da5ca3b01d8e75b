//! sacreBLEU 2.6.0 with every tokenizer that needs no external model, and
//! chrF / chrF++ with `whitespace` and `lowercase`, against
//! `tests/data/parity/tokenize_parity.json` (written by
//! `gen_tokenize_parity.py` beside it): pairs in Chinese, Japanese, Arabic,
//! Russian, Hindi and English with punctuation, numbers, symbols and emoji.
//! Scores to 1e-12; counts, totals, lengths, tokenized text and signatures
//! exactly.

use crate::common::read_json;
use assay_text::chrf::{self, ChrfConfig, Whitespace};
use assay_text::sacrebleu::{
    BleuScore, Case, EffectiveOrder, NRefs, SacreBleuConfig, SacreTokenizer,
};
use assay_text::tokenize::python_lower;
use serde_json::Value;
use std::sync::OnceLock;

const TOL: f64 = 1e-12;

fn fixture() -> &'static Value {
    static FIXTURE: OnceLock<Value> = OnceLock::new();
    FIXTURE.get_or_init(|| read_json("parity/tokenize_parity.json"))
}

fn close(got: f64, want: &Value, what: &str) {
    let want = want
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not a number"));
    assert!(
        (got - want).abs() <= TOL,
        "{what}: got {got:?}, want {want:?} (diff {:e})",
        (got - want).abs()
    );
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_u64().expect("integer"))
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_str().expect("string").to_string())
        .collect()
}

fn flag(v: &Value) -> bool {
    v.as_bool().expect("bool")
}

fn assert_bleu(got: &BleuScore, want: &Value, what: &str) {
    close(got.score, &want["score"], &format!("{what} score"));
    close(got.bp, &want["bp"], &format!("{what} bp"));
    assert_eq!(got.counts.to_vec(), u64s(&want["counts"]), "{what} counts");
    assert_eq!(got.totals.to_vec(), u64s(&want["totals"]), "{what} totals");
    assert_eq!(
        Some(got.sys_len),
        want["sys_len"].as_u64(),
        "{what} sys_len"
    );
    assert_eq!(
        Some(got.ref_len),
        want["ref_len"].as_u64(),
        "{what} ref_len"
    );
    let precisions = want["precisions"].as_array().expect("precisions");
    for (g, w) in got.precisions.iter().zip(precisions) {
        close(*g, w, &format!("{what} precision"));
    }
}

fn case(lowercase: bool) -> Case {
    if lowercase {
        Case::Lower
    } else {
        Case::Mixed
    }
}

/// Every BLEU setting of the fixture, by key.
fn bleu_configs() -> Vec<(String, SacreBleuConfig)> {
    fixture()["bleu_configs"]
        .as_object()
        .expect("bleu_configs")
        .iter()
        .map(|(key, c)| {
            let tokenizer = c["tokenize"]
                .as_str()
                .expect("tokenize")
                .parse()
                .expect("known tokenizer");
            let config = SacreBleuConfig {
                tokenizer,
                case: case(flag(&c["lowercase"])),
            };
            (key.clone(), config)
        })
        .collect()
}

/// Every chrF setting of the fixture, by key.
fn chrf_configs() -> Vec<(String, ChrfConfig)> {
    fixture()["chrf_configs"]
        .as_object()
        .expect("chrf_configs")
        .iter()
        .map(|(key, c)| {
            let config = ChrfConfig {
                word_order: c["word_order"].as_u64().expect("word_order") as usize,
                case: case(flag(&c["lowercase"])),
                whitespace: if flag(&c["whitespace"]) {
                    Whitespace::Included
                } else {
                    Whitespace::Excluded
                },
                ..ChrfConfig::CHRF
            };
            (key.clone(), config)
        })
        .collect()
}

struct Pair<'a> {
    id: &'a str,
    lang: &'a str,
    prediction: &'a str,
    references: Vec<String>,
    row: &'a Value,
}

fn pairs() -> Vec<Pair<'static>> {
    fixture()["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .map(|row| Pair {
            id: row["id"].as_str().expect("id"),
            lang: row["lang"].as_str().expect("lang"),
            prediction: row["prediction"].as_str().expect("prediction"),
            references: strings(&row["references"]),
            row,
        })
        .collect()
}

#[test]
fn fixture_covers_every_script_and_tokenizer() {
    let pairs = pairs();
    for lang in ["zh", "ja", "ar", "ru", "hi", "en"] {
        let n = pairs.iter().filter(|p| p.lang == lang).count();
        assert!(n >= 20, "{lang}: {n} pairs");
    }
    let tokenizers: Vec<SacreTokenizer> = bleu_configs().iter().map(|(_, c)| c.tokenizer).collect();
    for t in SacreTokenizer::ALL {
        assert!(tokenizers.contains(&t), "{t}");
    }
}

#[test]
fn tokenizers_give_sacrebleus_text() {
    for pair in pairs() {
        for t in SacreTokenizer::ALL {
            let want = &pair.row["tokens"][t.name()];
            // sacreBLEU tokenizes each segment after `rstrip()`.
            let tok = |s: &str| {
                t.tokenize(s.trim_end_matches(assay_text::tokenize::is_python_whitespace))
            };
            assert_eq!(
                tok(pair.prediction),
                want["prediction"].as_str().expect("prediction"),
                "{} {t} prediction",
                pair.id
            );
            let refs: Vec<String> = pair.references.iter().map(|r| tok(r)).collect();
            assert_eq!(
                refs,
                strings(&want["references"]),
                "{} {t} references",
                pair.id
            );
        }
    }
}

#[test]
fn sentence_bleu_every_pair_and_setting() {
    for (key, config) in bleu_configs() {
        for pair in pairs() {
            let got = config
                .sentence_bleu(pair.prediction, &pair.references)
                .expect("sentence_bleu");
            assert_bleu(&got, &pair.row["bleu"][&key], &format!("{} {key}", pair.id));
        }
    }
}

#[test]
fn sentence_chrf_every_pair_and_setting() {
    for (key, config) in chrf_configs() {
        for pair in pairs() {
            let got = chrf::sentence_chrf(pair.prediction, &pair.references, &config)
                .expect("sentence_chrf");
            close(got, &pair.row["chrf"][&key], &format!("{} {key}", pair.id));
        }
    }
}

#[test]
fn corpus_scores_and_signatures_per_group() {
    let pairs = pairs();
    let corpus = fixture()["corpus"].as_object().expect("corpus");
    for (group, want) in corpus {
        let members: Vec<&Pair> = pairs
            .iter()
            .filter(|p| group == "all" || p.lang == group)
            .collect();
        assert!(!members.is_empty(), "{group}");
        let hyps: Vec<&str> = members.iter().map(|p| p.prediction).collect();
        let refs: Vec<&[String]> = members.iter().map(|p| p.references.as_slice()).collect();
        let nrefs = NRefs::of(refs.iter().map(|r| r.len()));
        for (key, config) in bleu_configs() {
            let what = format!("{group} {key}");
            let want = &want["bleu"][&key];
            let got = config.corpus_bleu(&hyps, &refs).expect("corpus_bleu");
            assert_bleu(&got, want, &what);
            assert_eq!(
                config.signature(nrefs, EffectiveOrder::Off),
                want["signature"].as_str().expect("signature"),
                "{what}"
            );
        }
        for (key, config) in chrf_configs() {
            let what = format!("{group} {key}");
            let want = &want["chrf"][&key];
            let got = chrf::corpus_chrf(&hyps, &refs, &config).expect("corpus_chrf");
            close(got, &want["score"], &what);
            assert_eq!(
                config.signature(nrefs),
                want["signature"].as_str().expect("signature"),
                "{what}"
            );
        }
    }
}

/// Python 3.11's `str.lower()` of every code point, one at a time.
#[test]
fn python_lower_of_every_code_point() {
    let table: std::collections::HashMap<u32, &str> = fixture()["tables"]["python_lower"]
        .as_array()
        .expect("python_lower")
        .iter()
        .map(|e| {
            let e = e.as_array().expect("pair");
            (
                e[0].as_u64().expect("code point") as u32,
                e[1].as_str().expect("lower"),
            )
        })
        .collect();
    let mut buf = [0u8; 4];
    for c in (0..=0x10FFFF).filter_map(char::from_u32) {
        let s: &str = c.encode_utf8(&mut buf);
        let want = table.get(&u32::from(c)).copied().unwrap_or(s);
        assert_eq!(python_lower(s), want, "U+{:04X}", u32::from(c));
    }
    // The final-sigma rule, in context.
    assert_eq!(python_lower("ΣΟΦΟΣ, ΟΔΥΣΣΕΥΣ"), "σοφος, οδυσσευς");
    assert_eq!(python_lower("Σ ΑΣ\u{a7cb}Σ"), "σ ας\u{a7cb}σ");
}
