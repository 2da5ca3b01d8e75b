//! sacreBLEU 2.6.0 chrF and chrF++ parity over every public pair and over
//! the whole set.

use crate::common::{self, assert_close};
use assay_text::chrf::{self, ChrfConfig};
use assay_text::sacrebleu::NRefs;

const CASES: [(ChrfConfig, &str, &str); 2] = [
    (ChrfConfig::CHRF, "sacrebleu_chrf", "sacrebleu_corpus_chrf"),
    (
        ChrfConfig::CHRF_PP,
        "sacrebleu_chrfpp",
        "sacrebleu_corpus_chrfpp",
    ),
];

#[test]
fn sentence_chrf_every_pair() {
    for (config, key, _) in CASES {
        for pair in common::pairs() {
            let got = chrf::sentence_chrf(&pair.prediction, &pair.references, &config)
                .expect("sentence_chrf");
            let want = pair.expected[key].as_f64().expect(key);
            assert_close(got, want, &format!("{} {key}", pair.id));
        }
    }
}

#[test]
fn corpus_chrf_and_signatures() {
    let pairs = common::pairs();
    let hyps: Vec<&str> = pairs.iter().map(|p| p.prediction.as_str()).collect();
    let refs: Vec<&[String]> = pairs.iter().map(|p| p.references.as_slice()).collect();
    let nrefs = NRefs::of(refs.iter().map(|r| r.len()));
    for (config, _, key) in CASES {
        let want = &common::expected_corpus()[key];
        let got = chrf::corpus_chrf(&hyps, &refs, &config).expect("corpus_chrf");
        assert_close(got, want["score"].as_f64().expect("score"), key);
        assert_eq!(
            config.signature(nrefs),
            want["signature"].as_str().expect("signature"),
            "{key}"
        );
        let mut total = chrf::ChrfStats::default();
        for p in pairs {
            total += &chrf::segment_stats(&p.prediction, &p.references, &config).expect("stats");
        }
        assert_close(chrf::finalize(&total, &config), got, "summed stats");
    }
}
