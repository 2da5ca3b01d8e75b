//! sacreBLEU 2.6.0 BLEU parity over every public pair (sentence level,
//! effective order on) and over the whole set (corpus level).

use crate::common::{self, assert_close};
use assay_text::sacrebleu::{self, BleuScore, EffectiveOrder, NRefs};
use serde_json::Value;

fn u64s(v: &Value, what: &str) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("{what}"))
        .iter()
        .map(|x| x.as_u64().expect("integer"))
        .collect()
}

fn assert_score(got: &BleuScore, want: &Value, what: &str) {
    assert_close(
        got.score,
        want["score"].as_f64().expect("score"),
        &format!("{what} score"),
    );
    assert_close(
        got.bp,
        want["bp"].as_f64().expect("bp"),
        &format!("{what} bp"),
    );
    assert_eq!(
        got.counts.to_vec(),
        u64s(&want["counts"], "counts"),
        "{what} counts"
    );
    assert_eq!(
        got.totals.to_vec(),
        u64s(&want["totals"], "totals"),
        "{what} totals"
    );
    assert_eq!(
        got.sys_len,
        want["sys_len"].as_u64().expect("sys_len"),
        "{what} sys_len"
    );
    assert_eq!(
        got.ref_len,
        want["ref_len"].as_u64().expect("ref_len"),
        "{what} ref_len"
    );
    let precisions = want["precisions"].as_array().expect("precisions");
    assert_eq!(precisions.len(), got.precisions.len(), "{what} precisions");
    for (g, w) in got.precisions.iter().zip(precisions) {
        assert_close(
            *g,
            w.as_f64().expect("precision"),
            &format!("{what} precision"),
        );
    }
}

#[test]
fn sentence_bleu_every_pair() {
    for pair in common::pairs() {
        let got =
            sacrebleu::sentence_bleu(&pair.prediction, &pair.references).expect("sentence_bleu");
        assert_score(&got, &pair.expected["sacrebleu_bleu"], &pair.id);
    }
}

#[test]
fn corpus_bleu_and_signatures() {
    let pairs = common::pairs();
    let hyps: Vec<&str> = pairs.iter().map(|p| p.prediction.as_str()).collect();
    let refs: Vec<&[String]> = pairs.iter().map(|p| p.references.as_slice()).collect();
    let corpus = common::expected_corpus();
    let want = &corpus["sacrebleu_corpus_bleu"];
    let got = sacrebleu::corpus_bleu(&hyps, &refs).expect("corpus_bleu");
    assert_score(&got, want, "corpus");
    let nrefs = NRefs::of(refs.iter().map(|r| r.len()));
    assert_eq!(
        sacrebleu::bleu_signature(nrefs, EffectiveOrder::Off),
        want["signature"].as_str().expect("signature")
    );
    assert_eq!(
        sacrebleu::bleu_signature(NRefs::PerPair, EffectiveOrder::On),
        corpus["sacrebleu_sentence_bleu_signature"]
            .as_str()
            .expect("sentence signature")
    );
    // Summing per-segment statistics gives the corpus statistics.
    let mut total = sacrebleu::SacreBleuStats::default();
    for p in pairs {
        total += &sacrebleu::segment_stats(&p.prediction, &p.references).expect("stats");
    }
    assert_eq!(
        total,
        sacrebleu::corpus_stats(&hyps, &refs).expect("corpus stats")
    );
}
