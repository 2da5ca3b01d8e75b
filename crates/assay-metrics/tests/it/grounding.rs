//! The default grounding verdicts (`Protocol::Grounding`) through the
//! metrics: a plain swap is unfaithful and hallucinated even where the
//! wrong word is named elsewhere in the question or the contexts (issue
//! 43, item 7), and its correct twin is faithful.

use assay_core::{Outcome, Sample};
use assay_metrics::judged::{
    faithfulness, hallucination, plan, render, Inputs, JudgedMetric, Outputs, PromptSet, Protocol,
    Request,
};
use serde_json::json;
use std::collections::BTreeMap;

/// Faithfulness and hallucination of a row under the grounding protocol,
/// which answers every step without a judge.
fn scores(question: &str, response: &str, contexts: &[&str]) -> BTreeMap<String, f64> {
    let row = json!({"user_input": question, "response": response, "retrieved_contexts": contexts});
    let sample = Sample::from_json(1, row.as_object().unwrap()).unwrap();
    let prompts = PromptSet::builtin()
        .unwrap()
        .with_protocol(Protocol::Grounding);
    let metrics = [
        JudgedMetric::default_for(faithfulness::ID),
        JudgedMetric::default_for(hallucination::ID),
    ];
    let p = plan(&metrics, &sample, prompts.protocol());
    let mut outputs = Outputs::new();
    for step in &p.steps {
        let output = match render(&prompts, &step.key, &Inputs::new(&sample, &outputs)).unwrap() {
            Request::Resolved(output) => output,
            other => panic!("{}: asked a judge: {other:?}", step.key),
        };
        outputs.insert(step.key.clone(), output);
    }
    let mut all = BTreeMap::new();
    for m in &metrics {
        for (name, outcome) in m.score(&sample, &outputs).unwrap() {
            match outcome {
                Outcome::Scored { value, .. } => all.insert(name, value),
                other => panic!("{name}: {other:?}"),
            };
        }
    }
    all
}

#[test]
fn a_swapped_capital_is_unfaithful_whatever_else_names_it() {
    // The question names the wrong city.
    let s = scores(
        "Is Sydney the capital of Australia?",
        "Sydney is the capital of Australia.",
        &["Canberra is the capital city of Australia."],
    );
    assert_eq!(s["faithfulness"], 0.0, "{s:?}");
    assert!(s["hallucination"] >= 0.9, "{s:?}");
    // Another sentence of the context names it.
    let s = scores(
        "What is the capital of Australia?",
        "The capital of Australia is Sydney.",
        &["Canberra is the capital city of Australia. Sydney is its largest city."],
    );
    assert_eq!(s["faithfulness"], 0.0, "{s:?}");
    assert!(s["hallucination"] >= 0.9, "{s:?}");
}

#[test]
fn the_right_capital_stays_faithful() {
    for (question, response) in [
        (
            "Is Sydney the capital of Australia?",
            "Canberra is the capital of Australia.",
        ),
        (
            "What is the capital of Australia?",
            "The capital of Australia is Canberra.",
        ),
    ] {
        let s = scores(
            question,
            response,
            &["Canberra is the capital city of Australia. Sydney is its largest city."],
        );
        assert_eq!(s["faithfulness"], 1.0, "{response}: {s:?}");
        assert!(s["hallucination"] <= 0.1, "{response}: {s:?}");
    }
}
