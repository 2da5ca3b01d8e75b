use assay_core::{Field, Outcome, Sample, SkipReason};
use assay_metrics::{Metric, MetricId};
use serde_json::json;
use std::collections::BTreeMap;

fn sample(v: serde_json::Value) -> Sample {
    Sample::from_json(1, v.as_object().unwrap()).unwrap()
}

fn metric(id: MetricId, params: &[(&str, &str)]) -> Metric {
    let given = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect::<BTreeMap<_, _>>();
    Metric::configure(id, &given).unwrap()
}

fn value(o: &Outcome) -> f64 {
    match o {
        Outcome::Scored { value, .. } => *value,
        other => panic!("not scored: {other:?}"),
    }
}

#[test]
fn missing_fields_skip_every_output_naming_the_field() {
    let mut s = metric(assay_metrics::lexical::rouge::ID, &[]).scorer();
    let out = s.score(&sample(json!({"response": "x"})));
    assert_eq!(
        out,
        vec![Outcome::Skipped(SkipReason::MissingField(Field::References)); 4]
    );
    let out = metric(assay_metrics::lexical::bleu::ID, &[])
        .scorer()
        .score(&sample(json!({"reference": "x"})));
    assert_eq!(
        out,
        vec![Outcome::Skipped(SkipReason::MissingField(Field::Response))]
    );
}

#[test]
fn string_metrics_take_the_best_reference() {
    let s = sample(json!({"response": "the cat", "references": ["dog", "the cat", "the cats"]}));
    let em = metric(assay_metrics::lexical::exact_match::ID, &[])
        .scorer()
        .score(&s);
    assert_eq!(em[0], Outcome::scored(1.0, json!({"matched_reference": 1})));
    let sim = metric(assay_metrics::lexical::string_similarity::ID, &[])
        .scorer()
        .score(&s);
    assert_eq!(sim[0], Outcome::scored(1.0, json!({"best_reference": 1})));
    let pres = metric(assay_metrics::lexical::string_presence::ID, &[])
        .scorer()
        .score(&sample(
            json!({"response": "a cat sat", "reference": "dog"}),
        ));
    assert_eq!(value(&pres[0]), 0.0);
}

#[test]
fn empty_inputs_follow_the_documented_rules() {
    let s = sample(json!({"response": "", "reference": ""}));
    assert_eq!(
        value(
            &metric(assay_metrics::lexical::exact_match::ID, &[])
                .scorer()
                .score(&s)[0]
        ),
        1.0
    );
    assert_eq!(
        value(
            &metric(assay_metrics::lexical::string_similarity::ID, &[])
                .scorer()
                .score(&s)[0]
        ),
        1.0
    );
    for id in [
        assay_metrics::lexical::rouge::ID,
        assay_metrics::lexical::bleu::ID,
        assay_metrics::lexical::sacrebleu::ID,
        assay_metrics::lexical::chrf::CHRF_ID,
    ] {
        for o in metric(id, &[]).scorer().score(&s) {
            assert_eq!(value(&o), 0.0, "{id}");
        }
    }
}

#[test]
fn valor_tiny_bleu_is_reported_as_zero() {
    // No 4-gram match: nltk gives ~1e-78 without smoothing; valor reports 0.
    let s = sample(json!({"response": "Mary loves Joe", "reference": "Mary loves Joe"}));
    let out = metric(assay_metrics::lexical::bleu::ID, &[])
        .scorer()
        .score(&s);
    assert_eq!(value(&out[0]), 0.0);
    let out = metric(assay_metrics::lexical::bleu::ID, &[("weights", "1")])
        .scorer()
        .score(&s);
    assert_eq!(value(&out[0]), 1.0);
}

#[test]
fn undefined_bleu_is_a_typed_failure_not_nan() {
    // nltk's method6 asserts on a hypothesis without trigram matches.
    let s = sample(json!({"response": "a b c d", "reference": "a b x y"}));
    let out = metric(
        assay_metrics::lexical::bleu::ID,
        &[("smoothing", "method6"), ("tokenizer", "whitespace")],
    )
    .scorer()
    .score(&s);
    match &out[0] {
        Outcome::Failed(f) => assert_eq!(f.kind, assay_core::FailureKind::Undefined),
        other => panic!("{other:?}"),
    }
}

#[test]
fn corpus_statistics_merge_across_scorers() {
    let m = metric(assay_metrics::lexical::sacrebleu::ID, &[]);
    let rows = [
        ("the cat sat on the mat today", "the cat sat on a mat today"),
        (
            "a dog barked at the mailman loudly",
            "the dog barked loudly at the mailman",
        ),
        ("hello world , how are you", "hello world , how are you"),
    ];
    let mut one = m.scorer();
    let (mut a, mut b) = (m.scorer(), m.scorer());
    for (i, (hyp, r)) in rows.iter().enumerate() {
        let s = Sample::from_json(
            i as u64 + 1,
            json!({"response": hyp, "reference": r})
                .as_object()
                .unwrap(),
        )
        .unwrap();
        one.score(&s);
        if i % 2 == 0 {
            a.score(&s)
        } else {
            b.score(&s)
        };
    }
    let whole = one.into_corpus().finalize().unwrap();
    let mut split = a.into_corpus();
    split.merge(b.into_corpus());
    let merged = split.finalize().unwrap();
    assert_eq!(whole.value, merged.value);
    assert!(whole.value > 0.0 && whole.value < 1.0);
}

/// Text without ASCII letters scores 0 with the defaults that reproduce
/// rouge-score and sacreBLEU's 13a, and is scored with the tokenizers
/// made for it; the corpus signature names the tokenizer.
#[test]
fn tokenizers_for_other_scripts() {
    let s = sample(json!({"response": "猫坐在垫子上。", "reference": "猫在垫子上。"}));
    let rouge1 = |params: &[(&str, &str)]| {
        value(
            &metric(assay_metrics::lexical::rouge::ID, params)
                .scorer()
                .score(&s)[0],
        )
    };
    assert_eq!(rouge1(&[]), 0.0);
    // Five of the six characters match, in order: F = 2 * 5/6 / (1 + 5/6).
    let f = 2.0 * (5.0 / 6.0) / (1.0 + 5.0 / 6.0);
    assert_eq!(rouge1(&[("tokenizer", "unicode")]), f);
    assert_eq!(rouge1(&[("tokenizer", "char")]), f);

    // 13a sees one token each, and they differ.
    let bleu = |params: &[(&str, &str)]| {
        let m = metric(assay_metrics::lexical::sacrebleu::ID, params);
        let mut scorer = m.scorer();
        let v = value(&scorer.score(&s)[0]);
        (
            v,
            scorer.into_corpus().finalize().unwrap().signature.unwrap(),
        )
    };
    assert_eq!(bleu(&[]).0, 0.0);
    let (zh, signature) = bleu(&[("tokenize", "zh")]);
    assert!(zh > 0.5, "{zh}");
    assert_eq!(
        signature,
        "nrefs:1|case:mixed|eff:no|tok:zh|smooth:exp|version:2.6.0"
    );

    let chrf = metric(
        assay_metrics::lexical::chrf::CHRF_ID,
        &[("whitespace", "true"), ("word_order", "2")],
    );
    let mut scorer = chrf.scorer();
    assert!(value(&scorer.score(&s)[0]) > 0.5);
    assert_eq!(
        scorer.into_corpus().finalize().unwrap().signature.unwrap(),
        "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:yes|version:2.6.0"
    );
}
