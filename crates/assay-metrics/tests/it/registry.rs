use assay_metrics::lexical::LEXICAL;
use assay_metrics::{Metric, MetricId};
use std::collections::{BTreeMap, HashSet};

/// For every parameter, another valid value. A parameter missing here fails
/// `every_parameter_is_covered`, so a new one cannot skip the signature check.
const ALTERNATIVES: &[(MetricId, &str, &str)] = &[
    (assay_metrics::lexical::rouge::ID, "types", "rouge1,rouge3"),
    (assay_metrics::lexical::rouge::ID, "use_stemmer", "true"),
    (assay_metrics::lexical::rouge::ID, "tokenizer", "unicode"),
    (assay_metrics::lexical::sacrebleu::ID, "tokenize", "zh"),
    (assay_metrics::lexical::sacrebleu::ID, "lowercase", "true"),
    (assay_metrics::lexical::chrf::CHRF_ID, "word_order", "2"),
    (assay_metrics::lexical::chrf::CHRF_ID, "whitespace", "true"),
    (assay_metrics::lexical::chrf::CHRF_ID, "lowercase", "true"),
    (assay_metrics::lexical::chrf::CHRFPP_ID, "word_order", "1"),
    (
        assay_metrics::lexical::chrf::CHRFPP_ID,
        "whitespace",
        "true",
    ),
    (assay_metrics::lexical::chrf::CHRFPP_ID, "lowercase", "true"),
    (assay_metrics::lexical::bleu::ID, "weights", "0.5,0.5"),
    (assay_metrics::lexical::bleu::ID, "smoothing", "method4"),
    (assay_metrics::lexical::bleu::ID, "tokenizer", "whitespace"),
    (
        assay_metrics::lexical::string_similarity::ID,
        "distance",
        "jaro_winkler",
    ),
    (
        assay_metrics::tools::tool_call_accuracy::ID,
        "strict_order",
        "false",
    ),
    (
        assay_metrics::tools::tool_correctness::ID,
        "consider_ordering",
        "true",
    ),
    (
        assay_metrics::tools::tool_correctness::ID,
        "exact_match",
        "true",
    ),
    (
        assay_metrics::tools::tool_correctness::ID,
        "input_parameters",
        "true",
    ),
];

/// Parameters that select outputs without changing any output's numbers.
const OUTPUT_SELECTORS: &[(MetricId, &str)] = &[(assay_metrics::lexical::rouge::ID, "types")];

#[test]
fn ids_are_unique_round_trip_and_match_their_specs() {
    let mut seen = HashSet::new();
    let mut previous: Option<MetricId> = None;
    for (i, id) in MetricId::all().enumerate() {
        assert!(seen.insert(id.name()), "{id} twice");
        assert_eq!(id.name().parse::<MetricId>().unwrap(), id);
        assert_eq!(LEXICAL[i].name, id.name(), "in LEXICAL order");
        assert!(previous < Some(id), "ids order as the registry lists them");
        previous = Some(id);
    }
    assert_eq!(LEXICAL.len(), MetricId::all().count());
}

#[test]
fn every_metric_is_documented() {
    for s in LEXICAL {
        for (what, text) in [
            ("summary", s.summary),
            ("definition", s.definition),
            ("empty_inputs", s.empty_inputs),
            ("outputs", s.outputs),
        ] {
            assert!(text.len() > 3, "{} lacks {what}", s.name);
        }
        assert!(!s.required.is_empty(), "{} requires nothing?", s.name);
        for p in s.params {
            assert!(!p.doc.is_empty(), "{}.{} undocumented", s.name, p.name);
        }
    }
}

#[test]
fn defaults_configure_and_outputs_follow() {
    for id in MetricId::all() {
        let m = Metric::configure(id, &BTreeMap::new()).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert!(!m.outputs().is_empty());
        assert!(m.signature().to_string().starts_with(&format!("{id}|v")));
    }
    let rouge = Metric::configure(
        assay_metrics::lexical::rouge::ID,
        &BTreeMap::from([("types".into(), "rouge3,rougeLsum".into())]),
    )
    .unwrap();
    assert_eq!(rouge.outputs(), ["rouge3", "rougeLsum"]);
}

#[test]
fn every_parameter_is_covered() {
    for s in LEXICAL {
        for p in s.params {
            assert!(
                ALTERNATIVES
                    .iter()
                    .any(|(m, n, _)| m.name() == s.name && *n == p.name),
                "{}.{} has no alternative value in this test",
                s.name,
                p.name
            );
        }
    }
}

#[test]
fn every_number_changing_parameter_changes_the_signature() {
    for (id, name, value) in ALTERNATIVES {
        let base = Metric::configure(*id, &BTreeMap::new()).unwrap();
        let other = Metric::configure(
            *id,
            &BTreeMap::from([(name.to_string(), value.to_string())]),
        )
        .unwrap_or_else(|e| panic!("{id}.{name}={value}: {e}"));
        assert_ne!(
            base.params_json(),
            other.params_json(),
            "{id}.{name} not in the manifest params"
        );
        if OUTPUT_SELECTORS.contains(&(*id, *name)) {
            assert_eq!(base.signature(), other.signature());
        } else {
            assert_ne!(
                base.signature(),
                other.signature(),
                "{id}.{name}={value} leaves the signature unchanged"
            );
        }
    }
}

#[test]
fn signatures_are_golden() {
    let v = env!("CARGO_PKG_VERSION");
    let sig = |id| {
        Metric::configure(id, &BTreeMap::new())
            .unwrap()
            .signature()
            .to_string()
    };
    assert_eq!(
        sig(assay_metrics::lexical::rouge::ID),
        format!("rouge|v1|stem:no|tok:rouge-score|multiref:max|assay:{v}")
    );
    assert_eq!(
        sig(assay_metrics::lexical::sacrebleu::ID),
        format!(
            "sacrebleu|v1|nrefs:var|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0|assay:{v}"
        )
    );
    assert_eq!(sig(assay_metrics::lexical::chrf::CHRFPP_ID), format!("chrfpp|v1|nrefs:var|case:mixed|eff:yes|nc:6|nw:2|beta:2|space:no|version:2.6.0|assay:{v}"));
    assert_eq!(
        sig(assay_metrics::lexical::string_similarity::ID),
        format!("string_similarity|v1|distance:levenshtein|multiref:max|assay:{v}")
    );
    assert_eq!(
        sig(assay_metrics::tools::tool_call_accuracy::ID),
        format!("tool_call_accuracy|v2|order:strict|args:py-str|ref:ragas-0.4.3|assay:{v}")
    );
    assert_eq!(
        sig(assay_metrics::tools::tool_call_f1::ID),
        format!("tool_call_f1|v1|match:py-eq-set|round:4|ref:ragas-0.4.3|assay:{v}")
    );
    assert_eq!(
        sig(assay_metrics::tools::tool_correctness::ID),
        format!("tool_correctness|v2|pairing:any-order|args:ignored|ref:deepeval-4.3.1|assay:{v}")
    );
}

/// The lexical options name themselves in the signature as sacreBLEU
/// does (`tok:`, `case:`, `space:`, `nw:`), and a bad value names the
/// accepted ones.
#[test]
fn lexical_options_in_signatures_and_errors() {
    let v = env!("CARGO_PKG_VERSION");
    let sig = |id, params: &[(&str, &str)]| {
        let given = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Metric::configure(id, &given)
            .unwrap()
            .signature()
            .to_string()
    };
    assert_eq!(
        sig(
            assay_metrics::lexical::sacrebleu::ID,
            &[("tokenize", "intl"), ("lowercase", "true")]
        ),
        format!(
            "sacrebleu|v1|nrefs:var|case:lc|eff:yes|tok:intl|smooth:exp|version:2.6.0|assay:{v}"
        )
    );
    assert_eq!(
        sig(assay_metrics::lexical::chrf::CHRF_ID, &[("word_order", "2"), ("whitespace", "true")]),
        format!("chrf|v1|nrefs:var|case:mixed|eff:yes|nc:6|nw:2|beta:2|space:yes|version:2.6.0|assay:{v}")
    );
    assert_eq!(
        sig(assay_metrics::lexical::rouge::ID, &[("tokenizer", "char")]),
        format!("rouge|v1|stem:no|tok:char|multiref:max|assay:{v}")
    );
    for (id, param, value, accepted) in [
        (
            assay_metrics::lexical::sacrebleu::ID,
            "tokenize",
            "ja-mecab",
            "none, 13a, intl, zh, char",
        ),
        (
            assay_metrics::lexical::rouge::ID,
            "tokenizer",
            "jieba",
            "default, unicode, whitespace, char",
        ),
        (
            assay_metrics::lexical::chrf::CHRF_ID,
            "word_order",
            "10",
            "0 to 9",
        ),
        (
            assay_metrics::lexical::chrf::CHRFPP_ID,
            "whitespace",
            "maybe",
            "true or false",
        ),
    ] {
        let given = BTreeMap::from([(param.to_string(), value.to_string())]);
        let err = Metric::configure(id, &given).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{id}.{param}={value}: ")) && err.contains(accepted),
            "{err}"
        );
    }
}

/// At their defaults, the parameters added after run format 1 stay out of
/// the manifest, so that a run from before them still resumes; set, they
/// are in it.
#[test]
fn parameters_added_later_are_in_the_manifest_only_when_set() {
    let params = |id, given: &[(&str, &str)]| {
        let given = given
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Metric::configure(id, &given).unwrap().params_json()
    };
    assert_eq!(
        params(assay_metrics::lexical::rouge::ID, &[]),
        serde_json::json!({"types": ["rouge1", "rouge2", "rougeL", "rougeLsum"], "use_stemmer": false})
    );
    for id in [
        assay_metrics::lexical::sacrebleu::ID,
        assay_metrics::lexical::chrf::CHRF_ID,
        assay_metrics::lexical::chrf::CHRFPP_ID,
    ] {
        assert_eq!(params(id, &[]), serde_json::json!({}), "{id}");
    }
    assert_eq!(
        params(
            assay_metrics::lexical::chrf::CHRFPP_ID,
            &[("word_order", "2"), ("lowercase", "true")]
        ),
        serde_json::json!({"lowercase": true})
    );
    assert_eq!(
        params(
            assay_metrics::lexical::sacrebleu::ID,
            &[("tokenize", "char")]
        ),
        serde_json::json!({"tokenize": "char"})
    );
    assert_eq!(
        params(
            assay_metrics::lexical::rouge::ID,
            &[("tokenizer", "unicode")]
        )["tokenizer"],
        "unicode"
    );
}

/// The registry users see: lexical and judged ids together, unique,
/// round-tripping, each documented, each judged metric's prompt file
/// present. (Judged parameters and signatures: `judged_params.rs`.)
#[test]
fn the_whole_registry_is_unique_and_documented() {
    use assay_metrics::judged::JudgedId;
    use assay_metrics::AnyId;
    let all: Vec<AnyId> = AnyId::all().collect();
    assert_eq!(all.len(), MetricId::all().count() + JudgedId::all().count());
    let mut seen = HashSet::new();
    for id in &all {
        assert!(seen.insert(id.name()), "{id} twice");
        assert_eq!(id.name().parse::<AnyId>().unwrap(), *id);
        let doc = id.doc();
        for (what, text) in [
            ("summary", doc.summary),
            ("definition", doc.definition.as_str()),
            ("empty_inputs", doc.empty_inputs),
            ("outputs", doc.outputs.as_str()),
            ("direction", doc.direction.as_str()),
        ] {
            assert!(text.len() > 3, "{id} lacks {what}");
        }
        assert!(!doc.required.is_empty(), "{id} requires nothing?");
        for p in doc.params {
            assert!(p.doc.len() > 5, "{id}.{} undocumented", p.name);
        }
        if let AnyId::Judged(j) = id {
            assert_eq!(
                j.def().name,
                j.name(),
                "{id}: its table entry describes another metric"
            );
            for prompt in j.prompts() {
                let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(prompt.path());
                assert!(path.is_file(), "{id}: {} missing", path.display());
            }
        }
    }
    for harmful in ["bias", "toxicity", "hallucination"] {
        assert_eq!(
            harmful.parse::<AnyId>().unwrap().doc().direction,
            "lower is better"
        );
    }
    let unknown = "nope".parse::<AnyId>().unwrap_err().to_string();
    assert!(
        unknown.contains("faithfulness") && unknown.contains("rouge"),
        "{unknown}"
    );
}

/// A metric module is its definition, steps and score: what metrics share
/// lives in a step (`judged/steps/`) or a shape (`judged/share.rs`,
/// `judged/rubrics.rs`), never
/// in another metric, so that no metric module imports another.
#[test]
fn no_judged_metric_module_imports_another() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/judged");
    let ids: Vec<String> = assay_metrics::judged::JudgedId::all()
        .map(|id| id.name().to_string())
        .collect();
    let mut leaks = Vec::new();
    for id in &ids {
        let text = std::fs::read_to_string(dir.join(format!("{id}.rs"))).unwrap();
        // Doc links name other metrics freely; code paths do not.
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for other in ids.iter().filter(|o| *o != id) {
            for path in [
                format!("judged::{other}::"),
                format!("judged::{other};"),
                format!("super::{other}::"),
            ] {
                if code.contains(&path) {
                    leaks.push(format!("{id}.rs uses {path}"));
                }
            }
        }
    }
    assert!(leaks.len() < ids.len(), "every metric module was read");
    assert_eq!(leaks, Vec::<String>::new());
}
