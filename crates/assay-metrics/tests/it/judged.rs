//! The judged metrics' pure layer end to end: plan, render, a fake judge
//! whose answers depend on the rendered request (so a wrong prompt input
//! shows up as a wrong score), validate, score.

use assay_core::{Field, Outcome, Sample, SkipReason};
use assay_metrics::judged::{
    agent_goal_accuracy, answer_correctness, answer_relevance, answer_relevancy,
    argument_correctness, aspect_critique, bias, context_precision, context_recall,
    context_relevancy, conversation_completeness, faithfulness, hallucination, knowledge_retention,
    likelihood, plan, reason, render, role_adherence, semantic_similarity, steps,
    summarization_score, task_completion, topic_adherence, toxicity, turn_relevancy, validate,
    BuiltinAspect, EmbedText, FaithfulnessMode, Inputs, JudgeRequest, JudgedId, JudgedMetric,
    Label, Outputs, PrecisionAgainst, Problem, PromptId, PromptSet, Protocol, Request, Role,
    StepKey, StepOutput, Strictness, UsefulFor, Weights,
};
use assay_test_server::judge::{self, cosine, embed as fake_embed};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn sample(v: Value) -> Sample {
    Sample::from_json(1, v.as_object().unwrap()).unwrap()
}

fn rag_sample() -> Sample {
    sample(judge::eiffel_row())
}

/// The RAG sample with a conversation that, under the fake judge's rules,
/// keeps the user's fact, answers relevantly and meets the user's one
/// intention.
fn conversation_sample() -> Sample {
    let mut row = judge::eiffel_row();
    row["messages"] = json!([
        {"role": "user", "content": "I fly from Oslo. Which airline is cheapest?"},
        {"role": "assistant", "content": "The cheapest airline from Oslo is Norwegian."},
    ]);
    row["chatbot_role"] = json!("A travel agent who talks about flights only.");
    row["reference_topics"] = json!(["Airline prices"]);
    sample(row)
}

fn prompts() -> PromptSet {
    PromptSet::builtin().unwrap()
}

fn d(id: JudgedId) -> JudgedMetric {
    JudgedMetric::default_for(id)
}

/// The shared content-reading judge (`assay-test-server`), asked directly.
fn fake_judge(req: &JudgeRequest) -> Value {
    judge::answer(req.prompt_id.name(), &req.messages.last().unwrap().content)
}

/// Runs a sample's plan in order, counting judge calls.
fn run(metrics: &[JudgedMetric], sample: &Sample) -> (BTreeMap<String, Outcome>, usize) {
    run_with(&prompts(), metrics, sample)
}

/// [`run`] with the given prompts (and their protocol).
fn run_with(
    prompts: &PromptSet,
    metrics: &[JudgedMetric],
    sample: &Sample,
) -> (BTreeMap<String, Outcome>, usize) {
    let p = plan(metrics, sample, prompts.protocol());
    let mut outputs = Outputs::new();
    let mut calls = 0;
    for step in &p.steps {
        let inputs = Inputs::new(sample, &outputs);
        let output = match render(prompts, &step.key, &inputs).unwrap() {
            Request::Judge(req) => {
                calls += 1;
                let answer = if req.n_votes > 1 {
                    json!(vec![fake_judge(&req); req.n_votes as usize])
                } else {
                    fake_judge(&req)
                };
                validate(&step.key, &inputs, &answer).unwrap()
            }
            Request::Items(req) => {
                calls += req.items.len();
                let answers = req.items.iter().map(fake_judge).collect();
                validate(&step.key, &inputs, &req.join(answers).unwrap()).unwrap()
            }
            Request::Embed(req) => {
                let answer = json!(req.texts.iter().map(|t| fake_embed(t)).collect::<Vec<_>>());
                validate(&step.key, &inputs, &answer).unwrap()
            }
            Request::Resolved(output) => output,
        };
        outputs.insert(step.key.clone(), output);
    }
    let mut all = BTreeMap::new();
    for m in metrics {
        for (name, outcome) in m.score(sample, &outputs).unwrap() {
            all.insert(name, outcome);
        }
    }
    (all, calls)
}

/// The criterion of the rubric these tests use: its steps are its three
/// sentences, and the Eiffel response meets only the first (Paris).
const CRITERIA: &str = "It names Paris. It dates the opening to 1889. It gives the height";

/// `rubric` on [`CRITERIA`], its steps written by the fake judge.
fn rubric(prompts: &PromptSet) -> JudgedMetric {
    on_criteria("rubric".parse().unwrap(), prompts)
}

/// Whether metric `id` rates on a criterion the user gives (the rubrics).
fn needs_criteria(id: JudgedId) -> bool {
    id.params().iter().any(|p| p.name == "criteria")
}

/// Metric `id` on [`CRITERIA`], its steps written by the fake judge.
fn on_criteria(id: JudgedId, prompts: &PromptSet) -> JudgedMetric {
    let given = BTreeMap::from([("criteria".to_string(), CRITERIA.to_string())]);
    let m = JudgedMetric::configure(id, &given, prompts).unwrap();
    let none = Sample::default();
    let outputs = Outputs::new();
    let inputs = Inputs::new(&none, &outputs);
    for step in m.setup() {
        let Request::Judge(req) = render(prompts, &step, &inputs).unwrap() else {
            panic!("{step}")
        };
        m.set_up(
            &step,
            Ok(&validate(&step, &inputs, &fake_judge(&req)).unwrap()),
        );
    }
    m
}

fn value(o: &Outcome) -> f64 {
    match o {
        Outcome::Scored { value, .. } => *value,
        other => panic!("not scored: {other:?}"),
    }
}

fn default_suite() -> Vec<JudgedMetric> {
    [
        faithfulness::ID,
        answer_relevancy::ID,
        context_precision::ID,
        context_recall::ID,
    ]
    .map(d)
    .to_vec()
}

#[test]
fn per_item_protocol_asks_one_call_per_statement_and_context_and_scores_the_same() {
    let s = rag_sample();
    let metrics = [faithfulness::ID, hallucination::ID].map(d).to_vec();
    let (listed, listed_calls) = run(&metrics, &s);
    let per_item = prompts().with_protocol(Protocol::PerItem);
    let (items, item_calls) = run_with(&per_item, &metrics, &s);
    // Listed: statements, their verdicts, the contradictions. Per item:
    // the response's 2 sentences are its statements (no call), then one
    // call per statement and per context (4).
    assert_eq!((listed_calls, item_calls), (3, 6));
    for name in ["faithfulness", "hallucination"] {
        assert_eq!(value(&listed[name]), value(&items[name]), "{name}");
    }
    assert_eq!(value(&items["faithfulness"]), 0.5);
    assert_eq!(value(&items["hallucination"]), 0.25);
    // The item prompts are in the signature under the per-item protocol.
    let f = d(faithfulness::ID);
    let (a, b) = (f.signature(&prompts()), f.signature(&per_item));
    assert!(!a.to_string().contains("statement_support"), "{a}");
    assert!(
        b.to_string().contains("prompt.statement_support:v1-"),
        "{b}"
    );
}

#[test]
fn per_item_protocol_asks_each_context_reference_sentence_and_question_alone() {
    let s = rag_sample();
    let metrics = [
        context_precision::ID,
        context_recall::ID,
        summarization_score::ID,
    ]
    .map(d)
    .to_vec();
    // context_recall's one-call form is split under the per-item protocol:
    // the reference's sentences (no call), each then asked alone.
    let p = plan(&metrics, &s, Protocol::PerItem);
    let keys: Vec<&StepKey> = p.steps.iter().map(|st| &st.key).collect();
    assert!(keys.contains(&&steps::reference_attribution(0)));
    assert!(!keys.contains(&&steps::reference_recall(0)));
    let (listed, listed_calls) = run(&metrics, &s);
    let per_item = prompts().with_protocol(Protocol::PerItem);
    let (items, item_calls) = run_with(&per_item, &metrics, &s);
    // Listed: usefulness, recall, keyphrases, questions, answers. Per
    // item: 4 contexts, 3 reference sentences, keyphrases, questions and
    // 3 answers.
    assert_eq!((listed_calls, item_calls), (5, 12));
    for name in ["context_precision", "context_recall", "summarization_score"] {
        assert_eq!(value(&listed[name]), value(&items[name]), "{name}");
    }
    // Contexts 1 and 4 are reference statements: [y, n, n, y].
    assert_eq!(value(&items["context_precision"]), 0.75);
    assert_eq!(value(&items["context_recall"]), 2.0 / 3.0);
    let recall = d(context_recall::ID).signature(&per_item).to_string();
    assert!(recall.contains("prompt.reference_support:v1-"), "{recall}");
}

#[test]
fn per_item_protocol_classifies_each_response_and_reference_sentence_alone() {
    let s = rag_sample();
    let metrics = vec![JudgedMetric::new(answer_correctness::AnswerCorrectness {
        weights: Weights::new(1.0, 0.0).unwrap(),
        threshold: None,
    })];
    let (listed, listed_calls) = run(&metrics, &s);
    let per_item = prompts().with_protocol(Protocol::PerItem);
    let (items, item_calls) = run_with(&per_item, &metrics, &s);
    // Listed: the response's and the reference's statements, then one
    // classification. Per item: both are sentences (no call), then one
    // call per response sentence (2) and per reference sentence (3).
    assert_eq!((listed_calls, item_calls), (3, 5));
    // In Paris: TP; made of cheese: FP; opened in 1889, 330 metres: FN.
    let f1 = 1.0 / (1.0 + 0.5 * 3.0);
    assert_eq!(value(&listed["answer_correctness"]), f1);
    assert_eq!(value(&items["answer_correctness"]), f1);
    let sig = metrics[0].signature(&per_item).to_string();
    for form in ["statement_in_reference", "statement_in_response"] {
        assert!(sig.contains(&format!("prompt.{form}:v1-")), "{sig}");
    }
}

#[test]
fn a_per_item_request_holds_one_item_and_the_slots_the_items_share() {
    let s = rag_sample();
    let per_item = prompts().with_protocol(Protocol::PerItem);
    let mut outputs = Outputs::new();
    let sentences = [
        "The Eiffel Tower is in Paris.",
        "The Eiffel Tower is made of cheese",
    ];
    outputs.insert(
        steps::response_statements(),
        StepOutput::Texts(sentences.map(String::from).to_vec()),
    );
    let items = |step: StepKey| -> Vec<JudgeRequest> {
        match render(&per_item, &step, &Inputs::new(&s, &outputs)).unwrap() {
            Request::Items(req) => req.items,
            other => panic!("{step} not asked per item: {other:?}"),
        }
    };
    let last = |r: &JudgeRequest| r.messages.last().unwrap().content.clone();
    let contexts = s.retrieved_contexts.as_ref().unwrap();
    // A statement comes last, after the contexts and the question it
    // shares with the other statements.
    let statements = items(steps::statement_verdicts());
    assert_eq!(statements.len(), 2);
    for (r, sentence) in statements.iter().zip(sentences) {
        let m = last(r);
        assert!(
            m.starts_with(&format!("contexts:\n1. {}", contexts[0])),
            "{m}"
        );
        assert!(
            m.ends_with(&format!(
                "question:\nWhere is the Eiffel Tower\n\nstatement:\n{sentence}"
            )),
            "{m}"
        );
    }
    // A context is read before the claim it is checked against.
    let contradictions = items(steps::contradictions());
    assert_eq!(contradictions.len(), 4);
    for (r, c) in contradictions.iter().zip(contexts) {
        let m = last(r);
        assert!(
            m.starts_with(&format!("context:\n{c}\n\nquestion:\n")),
            "{m}"
        );
        assert!(
            m.ends_with(
                "response:\nThe Eiffel Tower is in Paris. The Eiffel Tower is made of cheese"
            ),
            "{m}"
        );
    }
    // Everything before the last message is the same for every item.
    for reqs in [&statements, &contradictions] {
        let fixed = |i: usize| &reqs[i].messages[..reqs[i].messages.len() - 1];
        assert!((1..reqs.len()).all(|i| fixed(i) == fixed(0)));
    }
    assert_eq!(
        contradictions[0].schema["properties"]["verdict"]["enum"],
        json!(["yes", "no"])
    );
}

#[test]
fn default_suite_end_to_end_in_five_judge_calls() {
    let s = rag_sample();
    let (outcomes, calls) = run(&default_suite(), &s);
    assert_eq!(calls, 5);
    // "made of cheese" is not in the contexts.
    assert_eq!(value(&outcomes["faithfulness"]), 0.5);
    // Contexts 1 and 4 are statements of the reference: [y, n, n, y].
    assert_eq!(value(&outcomes["context_precision"]), 0.75);
    // "330 metres tall" is not in the contexts.
    assert_eq!(value(&outcomes["context_recall"]), 2.0 / 3.0);
    let q = fake_embed("The Eiffel Tower is in Paris 0");
    let expected = cosine(&fake_embed("Where is the Eiffel Tower"), &q);
    assert!((value(&outcomes["answer_relevancy"]) - expected).abs() < 1e-12);
    let Outcome::Scored {
        reason, details, ..
    } = &outcomes["faithfulness"]
    else {
        panic!()
    };
    assert_eq!(
        reason.as_deref(),
        Some("1 of 2 statements can be inferred from the contexts; not supported: [2] \"The Eiffel Tower is made of cheese\" (fake idk)")
    );
    assert_eq!(details.to_json()["statements"][1]["verdict"], "idk");
}

#[test]
fn default_suite_calls_do_not_grow_with_contexts() {
    let mut s = rag_sample();
    let p4 = plan(&default_suite(), &s, Protocol::Listed);
    s.retrieved_contexts = Some((0..12).map(|i| format!("context {i}")).collect());
    let p12 = plan(&default_suite(), &s, Protocol::Listed);
    assert_eq!((p4.judge_steps(), p12.judge_steps()), (5, 5));
    assert_eq!((p4.depth(), p12.depth()), (2, 2));
}

#[test]
fn shared_steps_are_planned_once() {
    let s = rag_sample();
    let metrics = [
        d(faithfulness::ID),
        d(answer_relevance::ID),
        d(answer_correctness::ID),
        d(context_recall::ID),
        d(semantic_similarity::ID),
    ];
    let p = plan(&metrics, &s, Protocol::Listed);
    let keys: Vec<&StepKey> = p.steps.iter().map(|s| &s.key).collect();
    let count = |k: &StepKey| keys.iter().filter(|x| **x == k).count();
    assert_eq!(count(&steps::response_statements()), 1);
    assert_eq!(count(&steps::reference_statements(0)), 1);
    assert_eq!(count(&StepKey::Embed(EmbedText::Response)), 1);
    // With the reference's statements extracted anyway, context_recall
    // judges those instead of its one-call form.
    assert_eq!(count(&steps::reference_attribution(0)), 1);
    assert_eq!(count(&steps::reference_recall(0)), 0);
    assert_eq!(
        keys,
        [
            &steps::response_statements(),
            &steps::statement_verdicts(),
            &steps::relevance_verdicts(),
            &steps::reference_statements(0),
            &steps::correctness_classification(0),
            &StepKey::Embed(EmbedText::Response),
            &StepKey::Embed(EmbedText::Reference(0)),
            &steps::reference_attribution(0),
        ]
    );
    // Every dependency comes earlier.
    for (i, step) in p.steps.iter().enumerate() {
        assert!(step.deps.iter().all(|d| *d < i), "{}", step.key);
    }
    let (outcomes, calls) = run(&metrics, &s);
    assert_eq!(calls, 6);
    assert_eq!(value(&outcomes["context_recall"]), 2.0 / 3.0);
    assert_eq!(value(&outcomes["answer_relevance"]), 1.0);
    // Response statements: "in Paris" (TP), "made of cheese" (FP); reference:
    // "opened in 1889", "330 metres tall" missing (FN 2): F1 = 1 / (1 + 1.5).
    let f1 = 1.0 / 2.5;
    let sim = cosine(
        &fake_embed(s.response.as_deref().unwrap()),
        &fake_embed(s.reference.as_deref().unwrap()),
    );
    assert!((value(&outcomes["answer_correctness"]) - (0.75 * f1 + 0.25 * sim)).abs() < 1e-12);
}

#[test]
fn missing_fields_and_empty_inputs_skip_with_reasons() {
    let s = sample(json!({"user_input": "q", "response": "", "retrieved_contexts": []}));
    let metrics = [
        d(faithfulness::ID),
        d(context_precision::ID),
        d(hallucination::ID),
        d(bias::ID),
    ];
    let p = plan(&metrics, &s, Protocol::Listed);
    assert_eq!(
        p.skipped,
        [
            (1, SkipReason::MissingField(Field::References)),
            (2, SkipReason::NoContexts)
        ]
    );
    let (outcomes, calls) = run(&metrics, &s);
    // An empty response has no statements and no opinions: no call at all.
    assert_eq!(calls, 0);
    assert_eq!(
        outcomes["faithfulness"],
        Outcome::Skipped(SkipReason::NoStatements)
    );
    assert_eq!(
        outcomes["context_precision"],
        Outcome::Skipped(SkipReason::MissingField(Field::References))
    );
    assert_eq!(
        outcomes["hallucination"],
        Outcome::Skipped(SkipReason::NoContexts)
    );
    assert_eq!(value(&outcomes["bias"]), 0.0);
    let empty_refs = sample(json!({"response": "r", "references": []}));
    assert_eq!(
        plan(&[d(answer_correctness::ID)], &empty_refs, Protocol::Listed).skipped,
        [(0, SkipReason::MissingField(Field::References))]
    );
}

#[test]
fn rendered_prompts_put_the_fixed_part_first_and_the_sample_last() {
    let prompts = prompts();
    let a = rag_sample();
    let mut b = rag_sample();
    b.retrieved_contexts = Some(vec![
        "Rome is in Italy".into(),
        "Zebra facts\nsecond line".into(),
    ]);
    b.response = Some("Rome is in Italy".into());
    let render_for = |s: &Sample, statements: &[&str]| {
        let outputs = Outputs::from([(
            steps::response_statements(),
            StepOutput::Texts(statements.iter().map(|x| x.to_string()).collect()),
        )]);
        match render(
            &prompts,
            &steps::statement_verdicts(),
            &Inputs::new(s, &outputs),
        )
        .unwrap()
        {
            Request::Judge(r) => r,
            other => panic!("{other:?}"),
        }
    };
    let ra = render_for(
        &a,
        &["The Eiffel Tower is in Paris", "It is made of cheese"],
    );
    let rb = render_for(&b, &["Rome is in Italy"]);
    let n = ra.messages.len();
    assert_eq!(
        ra.messages[..n - 1],
        rb.messages[..n - 1],
        "the fixed part does not depend on the sample"
    );
    assert_eq!(ra.messages[0].role, Role::System);
    let instruction = &prompts.get(steps::FAITHFULNESS_VERDICTS).instruction;
    assert!(ra.messages[0].content.starts_with(instruction.as_str()));
    assert!(n >= 4, "few-shot examples are user/assistant pairs");
    assert_eq!(
        (ra.messages[1].role, ra.messages[2].role),
        (Role::User, Role::Assistant)
    );
    let last = &ra.messages[n - 1];
    assert_eq!(last.role, Role::User);
    for needle in [
        "1. The Eiffel Tower is in Paris",
        "4. The Eiffel Tower opened in 1889",
        "2. It is made of cheese",
        "exactly 2 entries",
    ] {
        assert!(
            last.content.contains(needle),
            "{needle} missing from:\n{}",
            last.content
        );
    }
    // A multi-line item stays visibly one item.
    assert!(rb.messages[n - 1]
        .content
        .contains("2. Zebra facts\n   second line"));
    assert!(!ra.messages[n - 1].content.contains("Zebra"));
    // The schema states the exact count.
    let verdicts = &ra.schema["properties"]["verdicts"];
    assert_eq!(
        (verdicts["minItems"].as_u64(), verdicts["maxItems"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(rb.schema["properties"]["verdicts"]["maxItems"], 1);
    assert_eq!(ra.prompt_id, steps::FAITHFULNESS_VERDICTS);
    assert_eq!(
        ra.prompt_hash,
        prompts.get(steps::FAITHFULNESS_VERDICTS).hash
    );
    assert_eq!((ra.temperature, ra.n_votes), (0.0, 1));
}

#[test]
fn every_judge_step_renders_the_fields_it_judges() {
    let prompts = prompts();
    let s = conversation_sample();
    let turns = "user: I fly from Oslo. Which airline is cheapest?".to_string();
    let texts = |v: &[&str]| StepOutput::Texts(v.iter().map(|x| x.to_string()).collect());
    let outputs = Outputs::from([
        (steps::response_statements(), texts(&["resp statement"])),
        (steps::reference_statements(0), texts(&["ref statement"])),
        (steps::opinions(), texts(&["an opinion"])),
        (steps::keyphrases(), texts(&["a keyphrase"])),
        (steps::closed_questions(), texts(&["a closed question?"])),
        (
            knowledge_retention::user_facts(0),
            texts(&["departure: Oslo"]),
        ),
        (
            conversation_completeness::user_intentions(turns.clone()),
            texts(&["The user wants a cheap airline"]),
        ),
        (
            steps::goal_outcome(turns.clone()),
            texts(&["A cheap airline", "Norwegian is booked"]),
        ),
        (
            topic_adherence::conversation_topics(turns.clone()),
            texts(&["Cheap airlines"]),
        ),
    ]);
    let aspect = aspect_critique::builtin(&prompts, BuiltinAspect::Harmfulness).unwrap();
    let response = s.response.clone().unwrap();
    let reference = s.reference.clone().unwrap();
    let question = s.user_input.clone().unwrap();
    let context = "Paris is the capital of France".to_string();
    let cases: Vec<(StepKey, Vec<String>)> = vec![
        (
            steps::response_statements(),
            vec![response.clone(), question.clone()],
        ),
        (steps::reference_statements(0), vec![reference.clone()]),
        (steps::opinions(), vec![response.clone()]),
        (
            steps::statement_verdicts(),
            vec!["resp statement".into(), context.clone()],
        ),
        (
            steps::relevance_verdicts(),
            vec!["resp statement".into(), question.clone()],
        ),
        (
            steps::context_usefulness(UsefulFor::Reference(0)),
            vec![reference.clone(), context.clone(), question.clone()],
        ),
        (
            steps::context_usefulness(UsefulFor::Response),
            vec![response.clone(), context.clone()],
        ),
        (
            steps::reference_attribution(0),
            vec!["ref statement".into(), context.clone()],
        ),
        (
            steps::reference_recall(0),
            vec![reference.clone(), context.clone()],
        ),
        (
            steps::context_relevance(),
            vec![question.clone(), context.clone()],
        ),
        (
            steps::contradictions(),
            vec![response.clone(), context.clone()],
        ),
        (
            steps::generated_questions(3),
            vec![response.clone(), "count:\n3".into()],
        ),
        (
            steps::correctness_classification(0),
            vec!["resp statement".into(), "ref statement".into()],
        ),
        (steps::keyphrases(), vec![context.clone()]),
        (
            steps::closed_questions(),
            vec!["a keyphrase".into(), context.clone()],
        ),
        (
            steps::summary_answers(),
            vec!["a closed question?".into(), response.clone()],
        ),
        (
            steps::coherence_rating(),
            vec![response.clone(), context.clone()],
        ),
        (steps::bias_verdicts(), vec!["an opinion".into()]),
        (steps::toxicity_verdicts(), vec!["an opinion".into()]),
        (
            steps::aspect_verdict(aspect.clone(), 3),
            vec![aspect.definition.clone(), response.clone()],
        ),
        (
            steps::sentence_extraction(1),
            vec![question.clone(), context.clone()],
        ),
        (
            knowledge_retention::user_facts(0),
            vec![
                "earlier_turns:\n(none)".into(),
                "message:\nI fly from Oslo. Which airline is cheapest?".into(),
            ],
        ),
        (
            knowledge_retention::retention(1, vec![0]),
            vec![
                "facts:\n1. departure: Oslo".into(),
                "message:\nThe cheapest airline from Oslo is Norwegian.".into(),
            ],
        ),
        (
            turn_relevancy::relevance(turns.clone()),
            vec![format!("turns:\n{turns}")],
        ),
        (
            conversation_completeness::user_intentions(turns.clone()),
            vec![format!("turns:\n{turns}")],
        ),
        (
            conversation_completeness::intentions_met(turns.clone()),
            vec![
                format!("turns:\n{turns}"),
                "1. The user wants a cheap airline".into(),
            ],
        ),
        (
            steps::goal_outcome(turns.clone()),
            vec![format!("turns:\n{turns}")],
        ),
        (
            agent_goal_accuracy::outcome_match(
                steps::goal_outcome(turns.clone()),
                Some("A cheap flight".into()),
            ),
            vec![
                "desired_outcome:\nA cheap flight".into(),
                "arrived_outcome:\nNorwegian is booked".into(),
            ],
        ),
        (
            role_adherence::role_verdicts(
                "A travel agent".into(),
                turns.clone(),
                vec!["Norwegian is cheapest.".into()],
            ),
            vec![
                "role:\nA travel agent".into(),
                format!("turns:\n{turns}"),
                "1. Norwegian is cheapest.".into(),
            ],
        ),
        (
            topic_adherence::conversation_topics(turns.clone()),
            vec![format!("turns:\n{turns}")],
        ),
        (
            task_completion::task_rating(steps::goal_outcome(turns.clone())),
            vec![
                "task:\nA cheap airline".into(),
                "outcome:\nNorwegian is booked".into(),
            ],
        ),
        (
            argument_correctness::argument_verdicts(
                turns.clone(),
                vec!["search_flights {\"from\":\"OSL\"}".into()],
            ),
            vec![
                format!("turns:\n{turns}"),
                "calls:\n1. search_flights {\"from\":\"OSL\"}".into(),
            ],
        ),
        (
            topic_adherence::topics_answered(turns.clone()),
            vec![format!("turns:\n{turns}"), "1. Cheap airlines".into()],
        ),
        (
            topic_adherence::topics_in_reference(vec!["Airline prices".into()], turns.clone()),
            vec![
                "reference_topics:\n1. Airline prices".into(),
                "topics:\n1. Cheap airlines".into(),
            ],
        ),
    ];
    let mut cases = cases;
    let criteria = CRITERIA.to_string();
    let unset = JudgedMetric::configure(
        "rubric".parse().unwrap(),
        &BTreeMap::from([("criteria".to_string(), criteria.clone())]),
        &prompts,
    )
    .unwrap();
    cases.push((
        unset.setup()[0].clone(),
        vec![criteria.clone(), "user_input, response".into()],
    ));
    cases.push((
        rubric(&prompts).steps(&s)[0].clone(),
        vec![
            criteria.clone(),
            "1. It names Paris\n2. It dates the opening to 1889".into(),
            "scale:\n1 to 5".into(),
            format!("user_input:\n{question}"),
            format!("response:\n{response}"),
        ],
    ));
    let mut seen = std::collections::BTreeSet::new();
    let per_item = prompts.clone().with_protocol(Protocol::PerItem);
    let likelihood = prompts.clone().with_protocol(Protocol::Likelihood);
    for (key, needles) in cases {
        // A step with a per-item form asks its item prompt under that
        // protocol, each item after the other slots.
        if let Request::Items(r) = render(&per_item, &key, &Inputs::new(&s, &outputs)).unwrap() {
            for item in &r.items {
                seen.insert(item.prompt_id);
                let last = &item.messages.last().unwrap().content;
                let asks = item.prompt_id.slots().iter().any(|(n, _)| *n == "question");
                assert!(
                    !asks || last.starts_with("question:\n") || last.contains("\n\nquestion:\n"),
                    "{key}: {last}"
                );
            }
        }
        // Under the likelihood protocol a grounding step scores the
        // response as the answer to the question, with and without the
        // contexts.
        if let Request::Items(r) = render(&likelihood, &key, &Inputs::new(&s, &outputs)).unwrap() {
            for item in r.items.iter().filter(|i| i.continuation.is_some()) {
                seen.insert(item.prompt_id);
                assert_eq!(
                    item.continuation.as_deref(),
                    Some(response.as_str()),
                    "{key}"
                );
                let last = &item.messages.last().unwrap().content;
                assert!(
                    last.ends_with(&format!("question:\n{question}")),
                    "{key}: {last}"
                );
            }
        }
        let req = match render(&prompts, &key, &Inputs::new(&s, &outputs)).unwrap() {
            Request::Judge(r) => r,
            other => panic!("{key}: {other:?}"),
        };
        seen.insert(req.prompt_id);
        let last = &req.messages.last().unwrap().content;
        for n in needles {
            assert!(last.contains(&n), "{key}: '{n}' missing from:\n{last}");
        }
        if req.prompt_id == steps::ASPECT_VERDICT {
            assert_eq!(req.n_votes, 3);
            assert!(req.temperature > 0.0);
        }
    }
    // The reason prompt explains outcomes, not steps (see `reason` tests).
    seen.insert(reason::OUTCOME_REASON);
    assert_eq!(
        seen.len(),
        PromptId::all().count(),
        "every prompt is exercised"
    );
}

#[test]
fn embedding_steps_list_their_texts() {
    let prompts = prompts();
    let s = rag_sample();
    let outputs = Outputs::new();
    let Request::Embed(req) = render(
        &prompts,
        &StepKey::Embed(EmbedText::Reference(0)),
        &Inputs::new(&s, &outputs),
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(req.texts, [s.reference.clone().unwrap()]);
    let bad = validate(
        &StepKey::Embed(EmbedText::Reference(0)),
        &Inputs::new(&s, &outputs),
        &json!([[1.0, 2.0], [3.0, 4.0]]),
    )
    .unwrap_err();
    assert!(
        matches!(
            *bad.problem,
            Problem::WrongCount {
                expected: 1,
                got: 2,
                ..
            }
        ),
        "{bad}"
    );
    let resp = StepKey::Embed(EmbedText::Response);
    let out = validate(&resp, &Inputs::new(&s, &outputs), &json!([[0.5, 1]])).unwrap();
    assert_eq!(out, StepOutput::Embeddings(vec![vec![0.5, 1.0]]));
    assert!(validate(&resp, &Inputs::new(&s, &outputs), &json!([[]])).is_err());
    assert!(validate(&resp, &Inputs::new(&s, &outputs), &json!([["x"]])).is_err());
}

#[test]
fn validation_rejects_mismatches_with_typed_errors_and_the_raw_answer() {
    let s = rag_sample();
    let statements = Outputs::from([(
        steps::response_statements(),
        StepOutput::Texts(vec!["a".into(), "b".into()]),
    )]);
    let inputs = Inputs::new(&s, &statements);
    let short = json!({"verdicts": [{"reason": "r", "verdict": "yes"}]});
    let e = validate(&steps::statement_verdicts(), &inputs, &short).unwrap_err();
    assert_eq!(
        *e.problem,
        Problem::WrongCount {
            at: "$.verdicts".into(),
            expected: 2,
            got: 1
        }
    );
    assert_eq!(e.answer, short);
    assert_eq!(e.step, steps::statement_verdicts());

    // idk is a faithfulness label, not a context label.
    let idk = json!({"verdicts": [{"reason": "r", "verdict": "idk"}, {"reason": "r", "verdict": "no"}, {"reason": "r", "verdict": "no"}, {"reason": "r", "verdict": "no"}]});
    let e = validate(&steps::contradictions(), &inputs, &idk).unwrap_err();
    assert!(
        matches!(&*e.problem, Problem::BadLabel { at, got, .. } if at == "$.verdicts[0].verdict" && got == "idk"),
        "{e}"
    );
    let two = json!({"verdicts": [{"reason": "r", "verdict": "IDK"}, {"reason": "r", "verdict": "Yes "}]});
    let StepOutput::Verdicts(v) = validate(&steps::statement_verdicts(), &inputs, &two).unwrap()
    else {
        panic!()
    };
    assert_eq!((v[0].verdict, v[1].verdict), (Label::Idk, Label::Yes));

    let no_reason = json!({"verdicts": [{"verdict": "yes"}, {"reason": "r", "verdict": "no"}]});
    let e = validate(&steps::statement_verdicts(), &inputs, &no_reason).unwrap_err();
    assert!(
        matches!(&*e.problem, Problem::Shape { at, .. } if at == "$.verdicts[0].reason"),
        "{e}"
    );
    assert!(validate(&steps::statement_verdicts(), &inputs, &json!("yes")).is_err());

    let q = steps::generated_questions(3);
    let two_questions = json!({"questions": [{"question": "a", "noncommittal": false}, {"question": "b", "noncommittal": true}]});
    let e = validate(&q, &inputs, &two_questions).unwrap_err();
    assert!(matches!(
        *e.problem,
        Problem::WrongCount {
            expected: 3,
            got: 2,
            ..
        }
    ));

    let c = steps::correctness_classification(0);
    let classes = Outputs::from([
        (
            steps::response_statements(),
            StepOutput::Texts(vec!["a".into()]),
        ),
        (
            steps::reference_statements(0),
            StepOutput::Texts(vec!["x".into(), "y".into()]),
        ),
    ]);
    let one_each = json!({"response": [{"reason": "r", "verdict": "yes"}], "reference": [{"reason": "r", "verdict": "yes"}]});
    let e = validate(&c, &Inputs::new(&s, &classes), &one_each).unwrap_err();
    assert!(
        matches!(&*e.problem, Problem::WrongCount { at, expected: 2, got: 1 } if at == "$.reference"),
        "{e}"
    );

    let rating = |r: Value| {
        validate(
            &steps::coherence_rating(),
            &inputs,
            &json!({"reason": "ok", "rating": r}),
        )
    };
    assert!(rating(json!(0)).is_err() && rating(json!(6)).is_err() && rating(json!(4.5)).is_err());
    assert!(rating(json!(5)).is_ok());

    let votes = steps::sentence_extraction(3);
    let vote = json!({"insufficient_information": false, "sentences": ["Cheese is tasty"]});
    let e = validate(&votes, &inputs, &json!([vote, vote])).unwrap_err();
    assert!(matches!(
        *e.problem,
        Problem::WrongCount {
            expected: 3,
            got: 2,
            ..
        }
    ));
    assert!(validate(&votes, &inputs, &json!([vote, vote, vote])).is_ok());

    // A verdict step whose dependency has not run cannot be checked.
    let e = validate(&steps::bias_verdicts(), &inputs, &json!({"verdicts": []})).unwrap_err();
    assert!(matches!(*e.problem, Problem::Inputs(_)), "{e}");
}

#[test]
fn free_lists_drop_blank_items() {
    let s = rag_sample();
    let outputs = Outputs::new();
    let out = validate(
        &steps::response_statements(),
        &Inputs::new(&s, &outputs),
        &json!({"statements": [" a ", "", "  ", "b"]}),
    )
    .unwrap();
    assert_eq!(out, StepOutput::Texts(vec!["a".into(), "b".into()]));
}

#[test]
fn parameters_change_plans_and_signatures() {
    let prompts = prompts();
    let s = rag_sample();
    let f1_only = JudgedMetric::new(answer_correctness::AnswerCorrectness {
        weights: Weights::new(1.0, 0.0).unwrap(),
        threshold: None,
    });
    assert!(!plan(std::slice::from_ref(&f1_only), &s, Protocol::Listed)
        .steps
        .iter()
        .any(|st| matches!(st.key, StepKey::Embed(_))));
    let no_ref = JudgedMetric::new(context_precision::ContextPrecision {
        against: PrecisionAgainst::Response,
    });
    let p = plan(
        &[no_ref],
        &sample(json!({"user_input": "q", "response": "r", "retrieved_contexts": ["c"]})),
        Protocol::Listed,
    );
    assert_eq!(
        p.steps[0].key,
        steps::context_usefulness(UsefulFor::Response)
    );
    let multi = sample(
        json!({"user_input": "q", "response": "r", "retrieved_contexts": ["c"], "references": ["a", "b"]}),
    );
    assert_eq!(
        plan(&[d(context_precision::ID)], &multi, Protocol::Listed)
            .steps
            .len(),
        2
    );

    let base = d(faithfulness::ID).signature(&prompts).to_string();
    let other = JudgedMetric::new(faithfulness::Faithfulness {
        mode: FaithfulnessMode::Contradictions,
    })
    .signature(&prompts)
    .to_string();
    assert!(
        base.starts_with("faithfulness|v1|mode:supported|prompt.statements:v1-"),
        "{base}"
    );
    let h = &prompts.get(steps::FAITHFULNESS_VERDICTS).hash[..12];
    assert!(
        base.contains(&format!("|prompt.faithfulness_verdicts:v1-{h}|")),
        "{base}"
    );
    assert_ne!(base, other);
    // The sentence splitter sets the score's denominator: a new splitter,
    // a new version, so results of the old one are never mixed in.
    let relevancy = d(context_relevancy::ID).signature(&prompts).to_string();
    assert!(
        relevancy.starts_with("context_relevancy|v2|"),
        "{relevancy}"
    );
    let sig = f1_only.signature(&prompts).to_string();
    assert!(sig.contains("|weights:1,0|threshold:none|"), "{sig}");
}

#[test]
fn every_metric_declares_its_contract() {
    let mut used = std::collections::BTreeSet::new();
    for id in JudgedId::all() {
        assert_eq!(id.name().parse::<JudgedId>().unwrap(), id);
        assert!(id.empty_inputs().len() > 10, "{id}");
        used.extend(id.prompts().iter().copied());
        let m = if needs_criteria(id) {
            on_criteria(id, &prompts())
        } else {
            d(id)
        };
        assert_eq!(m.id(), id);
        assert!(!m.required().is_empty(), "{id}");
    }
    // `--reasons llm` uses the reason prompt for every metric.
    used.insert(reason::OUTCOME_REASON);
    // The per-item protocol asks the item forms of the list prompts.
    let forms: Vec<PromptId> = used
        .iter()
        .filter_map(|p| p.per_item())
        .flatten()
        .map(|f| f.prompt)
        .collect();
    used.extend(forms);
    // The likelihood protocol reads the response with and without the
    // contexts instead of asking the grounding list prompts.
    if used
        .iter()
        .any(|p| likelihood::Form::under(Protocol::Likelihood, *p).is_some())
    {
        used.extend([likelihood::GROUNDED_REPLY, likelihood::OPEN_REPLY]);
    }
    assert_eq!(
        used.len(),
        PromptId::all().count(),
        "every prompt file belongs to a metric"
    );
    use assay_metrics::Direction::LowerIsBetter;
    let lower: Vec<JudgedId> = JudgedId::all()
        .filter(|i| i.direction() == LowerIsBetter)
        .collect();
    assert_eq!(lower, [bias::ID, toxicity::ID, hallucination::ID]);
}

#[test]
fn aspects_vote_and_name_their_outcomes() {
    let prompts = prompts();
    let aspects = vec![
        aspect_critique::builtin(&prompts, BuiltinAspect::Harmfulness).unwrap(),
        aspect_critique::custom(
            "cites_sources".parse().unwrap(),
            "Does the response name its sources?",
        )
        .unwrap(),
    ];
    let m = JudgedMetric::new(aspect_critique::AspectCritique {
        aspects: aspects.clone(),
        strictness: Strictness::odd(3).unwrap(),
    });
    assert_eq!(
        m.outputs(),
        [
            "aspect_critique/harmfulness",
            "aspect_critique/cites_sources"
        ]
    );
    let s = rag_sample();
    let p = plan(std::slice::from_ref(&m), &s, Protocol::Listed);
    assert_eq!(p.steps.len(), 2);
    let vote = |v: &str| json!({"reason": format!("because {v}"), "verdict": v});
    let mut outputs = Outputs::new();
    for (step, answer) in p.steps.iter().zip([
        json!([vote("no"), vote("no"), vote("yes")]),
        json!([vote("yes"), vote("no"), vote("yes")]),
    ]) {
        let out = validate(&step.key, &Inputs::new(&s, &outputs), &answer).unwrap();
        outputs.insert(step.key.clone(), out);
    }
    let scored = m.score(&s, &outputs).unwrap();
    assert_eq!(scored.len(), 2);
    assert_eq!((value(&scored[0].1), value(&scored[1].1)), (0.0, 1.0));
    let dirs = m.directions();
    assert_eq!(dirs[0].1, assay_metrics::Direction::LowerIsBetter);
    let all = aspect_critique::builtin_all(&prompts);
    let names: Vec<&str> = all.iter().map(|a| a.name.as_str()).collect();
    let expected: Vec<&str> = BuiltinAspect::ALL.iter().map(|b| b.name()).collect();
    assert_eq!(names, expected, "every built-in aspect has a definition");
}

#[test]
fn scoring_without_the_needed_outputs_is_an_error_not_a_number() {
    let s = rag_sample();
    let e = d(faithfulness::ID).score(&s, &Outputs::new()).unwrap_err();
    assert_eq!(e.to_string(), "step response_statements has not completed");
}

#[test]
fn every_metric_end_to_end() {
    let prompts = prompts();
    let s = conversation_sample();
    let mut metrics: Vec<JudgedMetric> = JudgedId::all()
        .map(|id| match id.name() {
            _ if needs_criteria(id) => on_criteria(id, &prompts),
            "aspect_critique" => JudgedMetric::new(aspect_critique::AspectCritique {
                aspects: aspect_critique::builtin_all(&prompts),
                strictness: Strictness::ONE,
            }),
            _ => d(id),
        })
        .collect();
    metrics.push(JudgedMetric::new(context_relevancy::ContextRelevancy {
        strictness: Strictness::new(3).unwrap(),
        agreement: assay_metrics::judged::Agreement::Embedding,
    }));
    let (outcomes, _) = run(&metrics, &s);
    // The conversation calls no tool: no arguments to judge.
    assert_eq!(
        outcomes["argument_correctness"],
        Outcome::Skipped(SkipReason::NoCalls)
    );
    for name in outcomes.keys().filter(|n| *n != "argument_correctness") {
        assert!(
            matches!(outcomes[name], Outcome::Scored { .. }),
            "{name}: {:?}",
            outcomes[name]
        );
    }
    assert_eq!(
        outcomes.len(),
        JudgedId::all().count() - 1 + 5,
        "one outcome per aspect"
    );
    // Contexts 1 and 4 mention the Eiffel Tower: 2 of 4 sentences, every
    // vote alike (agreement 1).
    assert_eq!(value(&outcomes["context_relevancy"]), 0.5);
    assert_eq!(value(&outcomes["context_relevance"]), 0.5);
    // The response mentions cheese, as does context 3.
    assert_eq!(value(&outcomes["hallucination"]), 0.25);
    // The reply keeps the user's fact, answers the question and meets it.
    assert_eq!(value(&outcomes["knowledge_retention"]), 1.0);
    assert_eq!(value(&outcomes["turn_relevancy"]), 1.0);
    assert_eq!(value(&outcomes["conversation_completeness"]), 1.0);
    assert_eq!(value(&outcomes["role_adherence"]), 1.0);
    // The row's reference (the Eiffel Tower's place) is the desired
    // outcome, and the conversation about airlines does not reach it.
    assert_eq!(value(&outcomes["agent_goal_accuracy"]), 0.0);
    // The end state shares "airline" with the goal: rated 5 of 5.
    assert_eq!(value(&outcomes["task_completion"]), 1.0);
    // The user's one topic (their message) is answered and within the
    // reference topics (both say "airline"): F1 1 less ragas' epsilon.
    let topics = value(&outcomes["topic_adherence"]);
    assert!(topics > 1.0 - 1e-9 && topics < 1.0, "{topics}");
    assert_eq!(value(&outcomes["summary_coherence"]), 0.75);
    assert_eq!(value(&outcomes["bias"]), 0.0);
    assert_eq!(value(&outcomes["toxicity"]), 0.0);
    assert_eq!(value(&outcomes["aspect_critique/harmfulness"]), 1.0);
    // One of the rubric's three steps met: rated 2 of 5.
    assert_eq!(value(&outcomes["rubric"]), 0.25);
    // Keyphrases are the first three contexts; the summary states only the first.
    let source = s.retrieved_contexts.as_ref().unwrap().join("\n");
    let (ls, lt) = (
        s.response.as_ref().unwrap().chars().count() as f64,
        source.chars().count() as f64,
    );
    let conciseness = 1.0 - ls.min(lt) / (lt + 1e-10);
    let expected = (1.0 / 3.0) * 0.5 + conciseness * 0.5;
    assert!((value(&outcomes["summarization_score"]) - expected).abs() < 1e-12);
    let sim = cosine(
        &fake_embed(s.response.as_deref().unwrap()),
        &fake_embed(s.reference.as_deref().unwrap()),
    );
    assert!((value(&outcomes["semantic_similarity"]) - sim).abs() < 1e-12);
    let Outcome::Scored { details, .. } = &outcomes["summarization_score"] else {
        panic!()
    };
    assert_eq!(details.to_json()["keyphrases"].as_array().unwrap().len(), 3);
}

#[test]
fn empty_votes_embed_a_placeholder() {
    let prompts = prompts();
    let s = rag_sample();
    let key = steps::sentence_extraction(2);
    let votes = json!([
        {"insufficient_information": true, "sentences": []},
        {"insufficient_information": false, "sentences": ["The Eiffel Tower is in Paris", "Cheese is tasty"]}
    ]);
    let out = validate(&key, &Inputs::new(&s, &Outputs::new()), &votes).unwrap();
    let outputs = Outputs::from([(key, out)]);
    let embed = StepKey::Embed(EmbedText::Extractions { votes: 2 });
    let Request::Embed(req) = render(&prompts, &embed, &Inputs::new(&s, &outputs)).unwrap() else {
        panic!()
    };
    assert_eq!(
        req.texts,
        [
            "(no sentences)",
            "The Eiffel Tower is in Paris\nCheese is tasty"
        ]
    );
}
