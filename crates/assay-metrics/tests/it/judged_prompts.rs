//! The prompt files: they parse, carry a version, use the schema subset,
//! their examples fit their schemas, the embedded copies are the files on
//! disk, and `--prompts DIR` overrides behave.

use assay_core::schema::validate;
use assay_metrics::judged::prompt::{canonical_json, Origin, Prompt};
use assay_metrics::judged::schema::check_subset;
use assay_metrics::judged::{
    faithfulness, likelihood, render, steps, Inputs, JudgedMetric, Outputs, PromptError, PromptId,
    PromptSet, Request,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn prompts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("assay-prompts-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn every_prompt_file_parses_and_is_the_embedded_one() {
    let builtin = PromptSet::builtin().unwrap();
    let mut files: Vec<String> = std::fs::read_dir(prompts_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut expected: Vec<String> = PromptId::all().map(|id| format!("{id}.json")).collect();
    expected.sort();
    assert_eq!(files, expected, "one file per prompt id, nothing else");
    for id in PromptId::all() {
        let text = std::fs::read_to_string(prompts_dir().join(format!("{id}.json"))).unwrap();
        let p = Prompt::parse(&Origin::Builtin(id), id, &text).unwrap();
        assert_eq!(&p, builtin.get(id), "{id}: the embedded copy is the file");
        assert_eq!(p.id, id);
        assert!(p.version >= 1, "{id}");
        // A reply the judge scores is read as its first answer: an
        // example before it would change what is measured.
        let scored = [likelihood::GROUNDED_REPLY, likelihood::OPEN_REPLY].contains(&id);
        assert_eq!(p.examples.is_empty(), scored, "{id}: few-shot examples");
        assert_eq!(p.hash.len(), 64);
        assert!(p.hash.bytes().all(|b| b.is_ascii_hexdigit()));
        check_subset(&p.output_schema).unwrap_or_else(|e| panic!("{id}: {e}"));
        for ex in &p.examples {
            validate(&ex.output, &p.output_schema).unwrap_or_else(|e| panic!("{id}: {e}"));
        }
    }
    let mut hashes: Vec<&str> = builtin.iter().map(|p| p.hash.as_str()).collect();
    hashes.sort_unstable();
    hashes.dedup();
    assert_eq!(hashes.len(), PromptId::all().count(), "hashes are distinct");
}

/// The loopback judge answers a prompt it has no rule for with a value its
/// schema accepts: a new metric's prompt needs no rule to run against it.
#[test]
fn the_loopback_judge_answers_any_prompt_in_its_schema() {
    for p in PromptSet::builtin().unwrap().iter() {
        let answer = assay_test_server::judge::satisfying(&p.output_schema);
        validate(&answer, &p.output_schema).unwrap_or_else(|e| panic!("{}: {e}: {answer}", p.id));
    }
}

/// The labels a verdict schema offers are the labels validation accepts.
#[test]
fn schema_labels_match_the_steps() {
    let prompts = PromptSet::builtin().unwrap();
    let steps = [
        steps::statement_verdicts(),
        steps::relevance_verdicts(),
        steps::context_relevance(),
        steps::contradictions(),
        steps::summary_answers(),
        steps::bias_verdicts(),
        steps::toxicity_verdicts(),
        steps::reference_attribution(0),
        steps::reference_recall(0),
    ];
    for step in steps {
        let p = prompts.get(step.prompt().unwrap());
        let list = p.output_schema["properties"]
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap();
        let offered: Vec<&str> = list["items"]["properties"]["verdict"]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("{step}: no verdict enum"))
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let accepted: Vec<&str> = step.labels().iter().map(|l| l.name()).collect();
        assert_eq!(offered, accepted, "{step}");
    }
}

#[test]
fn the_hash_covers_content_not_layout() {
    let text = std::fs::read_to_string(prompts_dir().join("statements.json")).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    let compact = Prompt::parse(
        &Origin::File("compact".into()),
        steps::STATEMENTS,
        &canonical_json(&value),
    )
    .unwrap();
    let original =
        Prompt::parse(&Origin::File("original".into()), steps::STATEMENTS, &text).unwrap();
    assert_eq!(compact.hash, original.hash);
    let mut edited = value.clone();
    edited["examples"][0]["output"]["statements"][0] = json!("Something else.");
    assert_ne!(
        Prompt::parse(
            &Origin::File("edited".into()),
            steps::STATEMENTS,
            &canonical_json(&edited)
        )
        .unwrap()
        .hash,
        original.hash
    );
}

#[test]
fn a_prompts_dir_overrides_version_and_text() {
    let dir = temp_dir("override");
    let mut value: Value = serde_json::from_str(
        &std::fs::read_to_string(prompts_dir().join("faithfulness_verdicts.json")).unwrap(),
    )
    .unwrap();
    value["version"] = json!(7);
    value["instruction"] = json!("OVERRIDDEN: judge each statement against the contexts.");
    std::fs::write(dir.join("faithfulness_verdicts.json"), value.to_string()).unwrap();
    std::fs::write(dir.join("notes.txt"), "ignored: not a .json file").unwrap();
    let set = PromptSet::load_dir(&dir).unwrap();
    let builtin = PromptSet::builtin().unwrap();
    let p = set.get(steps::FAITHFULNESS_VERDICTS);
    assert_eq!(p.version, 7);
    assert_ne!(p.hash, builtin.get(steps::FAITHFULNESS_VERDICTS).hash);
    assert_eq!(set.get(steps::STATEMENTS), builtin.get(steps::STATEMENTS));

    let sample = assay_core::Sample::from_json(
        1,
        json!({"response": "r", "retrieved_contexts": ["c"]})
            .as_object()
            .unwrap(),
    )
    .unwrap();
    let outputs = Outputs::from([(
        steps::response_statements(),
        assay_metrics::judged::StepOutput::Texts(vec!["s".into()]),
    )]);
    let Request::Judge(req) = render(
        &set,
        &steps::statement_verdicts(),
        &Inputs::new(&sample, &outputs),
    )
    .unwrap() else {
        panic!()
    };
    assert!(req.messages[0].content.starts_with("OVERRIDDEN"));
    assert_eq!(req.prompt_version, 7);
    let faithfulness = JudgedMetric::default_for(faithfulness::ID);
    let sig = faithfulness.signature(&set).to_string();
    assert!(sig.contains("|prompt.faithfulness_verdicts:v7-"), "{sig}");
    assert_ne!(sig, faithfulness.signature(&builtin).to_string());
    std::fs::remove_dir_all(&dir).unwrap();
}

fn load_with(name: &str, file: &str, content: &str) -> PromptError {
    let dir = temp_dir(name);
    std::fs::write(dir.join(file), content).unwrap();
    let e = PromptSet::load_dir(&dir).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    e
}

#[test]
fn bad_overrides_are_typed_errors() {
    let text = std::fs::read_to_string(prompts_dir().join("opinions.json")).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();

    let e = load_with("typo", "opinion.json", &text);
    assert!(e.to_string().contains("unknown prompt 'opinion'"), "{e}");

    let e = load_with("json", "opinions.json", "{not json");
    assert!(matches!(e, PromptError::Json { .. }), "{e}");

    let mut schema = value.clone();
    schema["output_schema"]["properties"]["opinions"]["maxItems"] = json!(3);
    let e = load_with("schema", "opinions.json", &schema.to_string());
    assert!(e.to_string().contains("output_schema differs"), "{e}");

    let mut slot = value.clone();
    slot["slots"][0]["name"] = json!("answer");
    let e = load_with("slot", "opinions.json", &slot.to_string());
    assert!(e.to_string().contains("unknown slot 'answer'"), "{e}");

    let mut version = value.clone();
    version["version"] = json!(0);
    let e = load_with("version", "opinions.json", &version.to_string());
    assert!(e.to_string().contains("version must be at least 1"), "{e}");

    let mut id = value.clone();
    id["id"] = json!("keyphrases");
    let e = load_with("id", "opinions.json", &id.to_string());
    assert!(e.to_string().contains("declares id 'keyphrases'"), "{e}");

    let mut example = value.clone();
    example["examples"][0]["output"] = json!({"opinions": "not a list"});
    let e = load_with("example", "opinions.json", &example.to_string());
    assert!(
        e.to_string()
            .contains("example 0: output does not fit the schema"),
        "{e}"
    );

    assert!(matches!(
        PromptSet::load_dir(Path::new("/nonexistent/assay/prompts")),
        Err(PromptError::Io { .. })
    ));
}

/// Few-shot examples must show the exact counts they ask for: one verdict
/// per listed item, the requested number of questions.
#[test]
fn examples_answer_one_entry_per_item() {
    let prompts = PromptSet::builtin().unwrap();
    let pairs: &[(PromptId, &str, &str)] = &[
        (steps::FAITHFULNESS_VERDICTS, "verdicts", "statements"),
        (steps::RELEVANCE_VERDICTS, "verdicts", "statements"),
        (steps::REFERENCE_ATTRIBUTION, "verdicts", "statements"),
        (steps::CONTEXT_USEFULNESS, "verdicts", "contexts"),
        (steps::CONTEXT_RELEVANCE, "verdicts", "contexts"),
        (steps::CONTRADICTIONS, "verdicts", "contexts"),
        (steps::SUMMARY_ANSWERS, "verdicts", "questions"),
        (steps::BIAS_VERDICTS, "verdicts", "opinions"),
        (steps::TOXICITY_VERDICTS, "verdicts", "opinions"),
        (
            steps::CORRECTNESS_CLASSIFICATION,
            "response",
            "response_statements",
        ),
        (
            steps::CORRECTNESS_CLASSIFICATION,
            "reference",
            "reference_statements",
        ),
    ];
    for (id, answer, slot) in pairs {
        for (i, ex) in prompts.get(*id).examples.iter().enumerate() {
            let given = match &ex.input[*slot] {
                assay_metrics::judged::prompt::SlotValue::List(items) => items.len(),
                other => panic!("{id} example {i}: {slot} is {other:?}"),
            };
            let got = ex.output[*answer].as_array().map_or(0, Vec::len);
            assert_eq!(got, given, "{id} example {i}: {answer} vs {slot}");
        }
    }
    for ex in &prompts.get(steps::GENERATED_QUESTIONS).examples {
        let assay_metrics::judged::prompt::SlotValue::Text(count) = &ex.input["count"] else {
            panic!("count is text")
        };
        let n: usize = count.parse().unwrap();
        assert_eq!(ex.output["questions"].as_array().unwrap().len(), n);
    }
}
