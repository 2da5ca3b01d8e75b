//! The judged metrics' parameters, tested as a whole: defaults, every
//! parameter in the signature, round trips, typed errors.

use assay_metrics::judged::{
    answer_correctness, answer_relevance, answer_relevancy, aspect_critique, bias,
    context_precision, context_recall, context_relevance, context_relevancy, conversation_rubric,
    faithfulness, hallucination, rubric, semantic_similarity, summarization_score, topic_adherence,
    turn_relevancy, JudgedId, JudgedMetric, PromptSet,
};
use assay_metrics::ParamError;
use std::collections::BTreeMap;

/// For every parameter, another valid value. A parameter missing here fails
/// `every_parameter_changes_the_signature`.
const ALTERNATIVES: &[(JudgedId, &str, &str)] = &[
    (faithfulness::ID, "mode", "contradictions"),
    (answer_relevancy::ID, "strictness", "5"),
    (answer_relevancy::ID, "noncommittal", "any"),
    (answer_relevance::ID, "idk_counts_as", "relevant"),
    (context_precision::ID, "against", "response"),
    (context_relevancy::ID, "strictness", "3"),
    (context_relevancy::ID, "agreement", "embedding"),
    (answer_correctness::ID, "weights", "1,0"),
    (answer_correctness::ID, "threshold", "0.5"),
    (summarization_score::ID, "length_penalty", "false"),
    (summarization_score::ID, "coeff", "0.3"),
    (aspect_critique::ID, "aspects", "coherence"),
    (aspect_critique::ID, "strictness", "3"),
    (semantic_similarity::ID, "threshold", "0.8"),
    (RUBRIC, "criteria", "Is it kind?"),
    (RUBRIC, "steps", "Read it | Rate it"),
    (RUBRIC, "scale", "7"),
    (RUBRIC, "fields", "response"),
    (turn_relevancy::ID, "window_size", "3"),
    (topic_adherence::ID, "mode", "precision"),
    (conversation_rubric::ID, "criteria", "Is it kind?"),
    (conversation_rubric::ID, "steps", "Read it | Rate it"),
    (conversation_rubric::ID, "scale", "7"),
    (conversation_rubric::ID, "fields", "messages,chatbot_role"),
    (faithfulness::ID, "per_turn", "true"),
    (hallucination::ID, "per_turn", "true"),
    (answer_relevance::ID, "per_turn", "true"),
    (context_precision::ID, "per_turn", "true"),
    (context_recall::ID, "per_turn", "true"),
    (context_relevance::ID, "per_turn", "true"),
    (context_relevancy::ID, "per_turn", "true"),
];

const RUBRIC: JudgedId = rubric::ID;

/// What a metric needs given to configure at all: a criterion, for the
/// metrics that take one (the rubrics).
fn required_params(id: JudgedId) -> BTreeMap<String, String> {
    if id.params().iter().any(|p| p.name == "criteria") {
        given(&[("criteria", "Is it polite?")])
    } else {
        BTreeMap::new()
    }
}

fn given(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn defaults_configure_to_the_documented_metric() {
    let prompts = PromptSet::builtin().unwrap();
    let e = JudgedMetric::configure(RUBRIC, &BTreeMap::new(), &prompts).unwrap_err();
    assert!(e.to_string().contains("rubric.criteria"), "{e}");
    for id in JudgedId::all() {
        let required = required_params(id);
        let m = JudgedMetric::configure(id, &required, &prompts).unwrap();
        let expected = if id == aspect_critique::ID {
            JudgedMetric::new(aspect_critique::AspectCritique {
                aspects: aspect_critique::builtin_all(&prompts),
                strictness: assay_metrics::judged::Strictness::ONE,
            })
        } else if !required.is_empty() {
            JudgedMetric::configure(id, &required, &prompts).unwrap()
        } else {
            JudgedMetric::default_for(id)
        };
        assert_eq!(m, expected, "{id}");
        // The documented defaults are what params() reports.
        if id != aspect_critique::ID {
            let reported: Vec<(String, String)> = m.params();
            let documented: Vec<(String, String)> = id
                .params()
                .iter()
                .map(|p| {
                    let value = required.get(p.name).map_or(p.default, String::as_str);
                    (p.name.to_string(), value.to_string())
                })
                .collect();
            assert_eq!(reported, documented, "{id}");
        }
        for p in id.params() {
            assert!(p.doc.len() > 5, "{id}.{} undocumented", p.name);
        }
    }
}

#[test]
fn every_parameter_changes_the_signature() {
    let prompts = PromptSet::builtin().unwrap();
    for id in JudgedId::all() {
        for p in id.params() {
            let alt = ALTERNATIVES
                .iter()
                .find(|(i, n, _)| *i == id && *n == p.name)
                .unwrap_or_else(|| {
                    panic!("{id}.{} has no alternative value in ALTERNATIVES", p.name)
                });
            let base = JudgedMetric::configure(id, &required_params(id), &prompts).unwrap();
            let mut changed = required_params(id);
            changed.insert(p.name.to_string(), alt.2.to_string());
            let other = JudgedMetric::configure(id, &changed, &prompts).unwrap();
            assert_ne!(
                base.signature(&prompts).to_string(),
                other.signature(&prompts).to_string(),
                "{id}.{}",
                p.name
            );
            // params() reads back as the same metric (aspects aside: their
            // signature form names a definition hash).
            if id != aspect_critique::ID {
                let back: BTreeMap<String, String> = other.params().into_iter().collect();
                assert_eq!(
                    JudgedMetric::configure(id, &back, &prompts).unwrap(),
                    other,
                    "{id}"
                );
            }
        }
    }
}

#[test]
fn bad_parameters_are_typed_errors() {
    let prompts = PromptSet::builtin().unwrap();
    let e = JudgedMetric::configure(bias::ID, &given(&[("mode", "x")]), &prompts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bias: unknown parameter 'mode' (known: none)"
    );
    let e = JudgedMetric::configure(faithfulness::ID, &given(&[("mode", "strict")]), &prompts)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "faithfulness.mode=strict: expected one of supported, contradictions"
    );
    let e = JudgedMetric::configure(
        aspect_critique::ID,
        &given(&[("strictness", "2")]),
        &prompts,
    )
    .unwrap_err();
    assert!(
        matches!(&e, ParamError::Invalid { param, .. } if param == "strictness"),
        "{e}"
    );
    let e = JudgedMetric::configure(
        answer_correctness::ID,
        &given(&[("threshold", "2")]),
        &prompts,
    )
    .unwrap_err();
    assert!(
        e.to_string().starts_with("answer_correctness.threshold=2:"),
        "{e}"
    );
    let e = JudgedMetric::configure(
        aspect_critique::ID,
        &given(&[("aspects", "none")]),
        &prompts,
    )
    .unwrap_err();
    assert_eq!(e, ParamError::NoAspects);
    let e = JudgedMetric::configure(
        aspect_critique::ID,
        &given(&[("aspects", "kindness")]),
        &prompts,
    )
    .unwrap_err();
    assert!(e.to_string().contains("expected one of harmfulness"), "{e}");
}

#[test]
fn custom_aspects_join_the_built_in_ones() {
    let prompts = PromptSet::builtin().unwrap();
    let m = JudgedMetric::configure(
        aspect_critique::ID,
        &given(&[
            ("aspects", "harmfulness"),
            (
                "aspect.cites_sources",
                "Does the response name its sources?",
            ),
        ]),
        &prompts,
    )
    .unwrap();
    assert_eq!(
        m.outputs(),
        [
            "aspect_critique/harmfulness",
            "aspect_critique/cites_sources"
        ]
    );
    let e = JudgedMetric::configure(
        aspect_critique::ID,
        &given(&[("aspect.harmfulness", "Is it rude?")]),
        &prompts,
    )
    .unwrap_err();
    assert!(e.to_string().contains("defined twice"), "{e}");
    let e = JudgedMetric::configure(
        aspect_critique::ID,
        &given(&[("aspect.Bad Name", "x?")]),
        &prompts,
    )
    .unwrap_err();
    assert!(e.to_string().contains("snake_case"), "{e}");
    let other = JudgedMetric::configure(
        aspect_critique::ID,
        &given(&[
            ("aspects", "harmfulness"),
            ("aspect.cites_sources", "Does it cite anything?"),
        ]),
        &prompts,
    )
    .unwrap();
    assert_ne!(
        m.signature(&prompts).to_string(),
        other.signature(&prompts).to_string(),
        "a custom definition is part of the signature"
    );
}

/// Every metric that offers `per_turn` finds on a turn every field it
/// needs, with each of its parameters' values that does not embed: a
/// turn gives the user's question, the reply, its contexts and the
/// conversation's reference, nothing more.
#[test]
fn a_turn_gives_every_metric_offered_per_turn_what_it_needs() {
    let prompts = PromptSet::builtin().unwrap();
    let row = serde_json::json!({
        "messages": [
            {"role": "user", "content": "Where was Einstein born?"},
            {"role": "assistant", "content": "In Ulm.", "retrieved_contexts": ["Einstein was born in Ulm."]},
        ],
        "reference": "Ulm",
    });
    let sample = assay_core::Sample::from_json(1, row.as_object().unwrap()).unwrap();
    let turns = assay_metrics::judged::per_turn::turns(&sample);
    assert_eq!(turns.len(), 1);
    let offered: Vec<JudgedId> = JudgedId::all().filter(|id| id.offers_per_turn()).collect();
    assert_eq!(offered.len(), 7, "{offered:?}");
    for id in offered {
        let mut configs = vec![BTreeMap::new()];
        configs.extend(
            ALTERNATIVES
                .iter()
                .filter(|(i, name, _)| *i == id && *name != "per_turn")
                .map(|(_, name, value)| given(&[(name, value)])),
        );
        for values in configs {
            let m = JudgedMetric::configure(id, &values, &prompts).unwrap();
            if m.needs_embedder() {
                continue;
            }
            assert_eq!(m.precheck(&turns[0].sample), None, "{id} {values:?}");
        }
    }
}
