//! The judged conversation metrics through `assay eval`: against the
//! content-reading loopback judge (each score what its rules imply, each
//! call made once per piece of work and cached, malformed conversations
//! failing only their own outcomes), and against the real small local
//! judge.

use crate::common::{assay, repo, stderr};
use crate::judged::{by_metric, finished, ok, Fixture};
use serde_json::{json, Value};

const METRICS: &str = "knowledge_retention,turn_relevancy,conversation_completeness";

fn chat(id: &str, turns: &[(&str, &str)]) -> Value {
    let messages: Vec<Value> = turns
        .iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    json!({"id": id, "messages": messages})
}

/// Under the loopback judge's rules: `kept` keeps its facts and answers
/// its question; `forgot` asks again where the user flies from; `off` answers
/// another question than the one asked and states no fact.
fn rows() -> Vec<Value> {
    vec![
        chat(
            "kept",
            &[
                ("system", "You are a travel assistant."),
                ("user", "My name is Ada Lovelace. I fly from Oslo."),
                (
                    "assistant",
                    "Welcome Ada, flights from Oslo are listed below.",
                ),
                ("user", "Which airline is cheapest?"),
                ("assistant", "The cheapest airline from Oslo is Norwegian."),
            ],
        ),
        chat(
            "forgot",
            &[
                ("user", "I fly from Oslo."),
                ("assistant", "Where do you fly from?"),
                ("user", "Oslo, as I said. What does a ticket cost?"),
                ("assistant", "A ticket costs 120 euros."),
            ],
        ),
        chat(
            "off",
            &[
                ("user", "What is the baggage allowance?"),
                ("assistant", "Our lounge serves breakfast."),
            ],
        ),
        json!({"id": "broken", "messages": [
            {"role": "user", "content": "I fly from Oslo."},
            {"role": "robot", "content": "Beep."},
        ]}),
    ]
}

/// The rows of `examples/agent.jsonl`.
fn agent_rows() -> Vec<Value> {
    std::fs::read_to_string(repo().join("examples/agent.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn value(out: &std::path::Path, id: &str, metric: &str) -> Value {
    by_metric(out, id)[metric]["value"].clone()
}

#[test]
fn conversations_score_what_the_judge_s_answers_imply() {
    let fx = Fixture::content_reading();
    let data = fx.data(&rows());
    ok(&fx.eval(&data, METRICS, "first", &[]));
    let out = fx.path("first");
    assert_eq!(value(&out, "kept", "knowledge_retention"), 1.0);
    assert_eq!(value(&out, "forgot", "knowledge_retention"), 0.5);
    let forgot = &by_metric(&out, "forgot")["knowledge_retention"];
    assert!(
        forgot["reason"].as_str().unwrap().contains("messages[1]"),
        "{forgot}"
    );
    assert_eq!(
        forgot["details"]["facts"],
        json!(["I fly from Oslo", "Oslo, as I said"])
    );
    // No fact before any reply: nothing to retain, said so.
    let off = &by_metric(&out, "off")["knowledge_retention"];
    assert_eq!(off["status"], "skipped", "{off}");
    assert!(
        off["reason"].as_str().unwrap().starts_with("no_facts"),
        "{off}"
    );

    assert_eq!(value(&out, "kept", "turn_relevancy"), 1.0);
    assert_eq!(value(&out, "forgot", "turn_relevancy"), 1.0);
    assert_eq!(value(&out, "off", "turn_relevancy"), 0.0);

    assert_eq!(value(&out, "kept", "conversation_completeness"), 1.0);
    assert_eq!(value(&out, "off", "conversation_completeness"), 0.0);
    let off = &by_metric(&out, "off")["conversation_completeness"];
    assert!(
        off["reason"]
            .as_str()
            .unwrap()
            .contains("baggage allowance"),
        "{off}"
    );

    // A conversation that cannot be read fails each metric, naming the
    // message and field; the other rows are scored.
    for metric in METRICS.split(',') {
        let broken = &by_metric(&out, "broken")[metric];
        assert_eq!(broken["status"], "failed", "{metric}: {broken}");
        assert_eq!(broken["error"]["kind"], "input");
        assert!(
            broken["error"]["message"]
                .as_str()
                .unwrap()
                .contains("messages[1].role"),
            "{broken}"
        );
    }

    // Facts per user message with text, a verdict per reply that follows
    // a fact, a window per reply, one reading of intentions and one of
    // their verdicts per conversation with intentions.
    assert_eq!(fx.asked("user_facts"), 5);
    assert_eq!(fx.asked("retention_verdict"), 4);
    assert_eq!(fx.asked("turn_relevance"), 5);
    assert_eq!(fx.asked("user_intentions"), 3);
    assert_eq!(fx.asked("intentions_met"), 3);

    // Everything is cached: a second run asks nothing and scores the same.
    ok(&fx.eval(&data, METRICS, "second", &[]));
    assert_eq!(fx.asked("user_facts") + fx.asked("turn_relevance"), 10);
    for id in ["kept", "forgot", "off"] {
        assert_eq!(by_metric(&fx.path("second"), id), by_metric(&out, id));
    }
}

/// A concierge who answers about the city, then offers to debug code:
/// under the loopback judge's rules, one reply of two breaks the role.
#[test]
fn role_adherence_is_the_share_of_replies_in_the_role() {
    let fx = Fixture::content_reading();
    let mut concierge = chat(
        "concierge",
        &[
            ("user", "Where can I eat schnitzel?"),
            ("assistant", "Figlmueller is two streets from the hotel."),
            ("user", "Can you fix my script?"),
            (
                "assistant",
                "Sure, paste the Python code and I will debug it.",
            ),
        ],
    );
    concierge["chatbot_role"] = json!("A hotel concierge in Vienna.");
    let no_role = rows()[0].clone();
    let data = fx.data(&[concierge, no_role]);
    ok(&fx.eval(&data, "role_adherence", "role", &[]));
    let out = fx.path("role");
    let outcome = &by_metric(&out, "concierge")["role_adherence"];
    assert_eq!(outcome["value"], 0.5, "{outcome}");
    assert!(
        outcome["reason"]
            .as_str()
            .unwrap()
            .contains("out of character: messages[3]"),
        "{outcome}"
    );
    assert_eq!(fx.asked("role_verdicts"), 1);
    let skipped = &by_metric(&out, "kept")["role_adherence"];
    assert_eq!(skipped["status"], "skipped");
    assert!(
        skipped["reason"].as_str().unwrap().contains("chatbot_role"),
        "{skipped}"
    );
}

/// The agent example has no reference: the goal the judge infers (under
/// the loopback judge's rules, the user's first message) is what must be
/// reached, and the judge reads the calls the agent made.
#[test]
fn agent_goal_accuracy_reads_the_calls_and_the_inferred_goal() {
    let fx = Fixture::content_reading();
    let rows = agent_rows();
    let mut with_reference = rows[3].clone();
    with_reference["id"] = json!("missing-call-referenced");
    with_reference["reference"] = json!("Two seats are booked on the flight to Rome.");
    let mut all = rows;
    all.push(with_reference);
    let data = fx.data(&all);
    ok(&fx.eval(&data, "agent_goal_accuracy", "goal", &[]));
    let out = fx.path("goal");
    // Booked: the end state names the booking the user asked for.
    assert_eq!(value(&out, "correct", "agent_goal_accuracy"), 1.0);
    let goal = &by_metric(&out, "correct")["agent_goal_accuracy"];
    assert_eq!(
        goal["details"]["user_goal"],
        "Book two seats Oslo-Rome on 1 May."
    );
    assert!(
        goal["details"]["end_state"]
            .as_str()
            .unwrap()
            .contains("[calls book_flight"),
        "{goal}"
    );
    // Searched but never booked.
    assert_eq!(value(&out, "missing-call", "agent_goal_accuracy"), 0.0);
    // With a reference, the reference is the desired outcome.
    let referenced = &by_metric(&out, "missing-call-referenced")["agent_goal_accuracy"];
    assert_eq!(
        referenced["details"]["against_reference"], true,
        "{referenced}"
    );
    // The two rows of one transcript share its reading; each is judged
    // against its own desired outcome.
    assert_eq!(fx.asked("goal_outcome"), 7);
    assert_eq!(fx.asked("outcome_match"), 8);
    // task_completion rates the same reading: no new goal_outcome request,
    // one rating per transcript. Booked: the outcome names the booking
    // (rated 5 by the loopback judge's rule); a chat about Rome's sights
    // shares no word with the baggage question (rated 1).
    ok(&fx.eval(&data, "task_completion", "task", &[]));
    assert_eq!(fx.asked("goal_outcome"), 7);
    assert_eq!(fx.asked("task_rating"), 7);
    let out = fx.path("task");
    assert_eq!(value(&out, "correct", "task_completion"), 1.0);
    assert_eq!(value(&out, "off-topic", "task_completion"), 0.0);
    let rated = &by_metric(&out, "correct")["task_completion"];
    assert_eq!(
        rated["details"]["task"],
        "Book two seats Oslo-Rome on 1 May."
    );
}

#[test]
fn under_the_per_item_protocol_each_intention_is_asked_alone() {
    let fx = Fixture::content_reading();
    let data = fx.data(&rows()[..2]);
    ok(&fx.eval(
        &data,
        "conversation_completeness",
        "items",
        &["--protocol", "per-item"],
    ));
    assert_eq!(fx.asked("intentions_met"), 0);
    assert_eq!(fx.asked("intention_met"), 2);
    let out = fx.path("items");
    assert_eq!(value(&out, "kept", "conversation_completeness"), 1.0);
    assert_eq!(value(&out, "forgot", "conversation_completeness"), 1.0);
}

/// The agent example's calls under the loopback judge's rule: a call is
/// wrong when an argument copies one of the user's words ("two" seats, a
/// city spelled as the user spelled it).
#[test]
fn argument_correctness_judges_each_call_of_the_agent_example() {
    let fx = Fixture::content_reading();
    let rows = agent_rows();
    let data = fx.data(&rows);
    ok(&fx.eval(&data, "argument_correctness", "arguments", &[]));
    let out = fx.path("arguments");
    assert_eq!(value(&out, "correct", "argument_correctness"), 1.0);
    assert_eq!(value(&out, "wrong-argument", "argument_correctness"), 0.5);
    let extra = &by_metric(&out, "extra-call")["argument_correctness"];
    assert_eq!(extra["value"], 2.0 / 3.0, "{extra}");
    assert!(
        extra["reason"]
            .as_str()
            .unwrap()
            .contains("wrong arguments: messages[2].tool_calls[1] get_weather"),
        "{extra}"
    );
    let none = &by_metric(&out, "off-topic")["argument_correctness"];
    assert!(
        none["reason"].as_str().unwrap().starts_with("no_calls"),
        "{none}"
    );
    // One request per conversation with calls; under per-item, one per call.
    assert_eq!(fx.asked("argument_verdicts"), 5);
    ok(&fx.eval(
        &data,
        "argument_correctness",
        "argument-items",
        &["--protocol", "per-item"],
    ));
    assert_eq!(fx.asked("argument_verdict"), 2 + 2 + 2 + 1 + 3);
}

/// Under the loopback judge's rules the user's messages are the topics:
/// the flight question is answered and within the reference topics, the
/// pizza question answered outside them, the seat question refused within
/// them. ragas' counts: TP 1, FP 1, FN 1, so precision, recall and F1 are
/// 0.5 (less its epsilon).
#[test]
fn topic_adherence_counts_answered_and_refused_topics_against_the_reference() {
    let fx = Fixture::content_reading();
    let mut travel = chat(
        "travel",
        &[
            ("user", "Which airline flies to Rome?"),
            ("assistant", "Norwegian flies to Rome daily."),
            ("user", "Can you recommend a pizza restaurant?"),
            ("assistant", "Try Da Michele for pizza."),
            ("user", "How do I change my airline seat?"),
            ("assistant", "Sorry, I cannot help with that."),
        ],
    );
    travel["reference_topics"] = json!(["Flights and airline bookings"]);
    let mut silent = chat("silent", &[("assistant", "Hello! How can I help?")]);
    silent["reference_topics"] = json!(["Flights"]);
    let no_reference = rows()[0].clone();
    let data = fx.data(&[travel, silent, no_reference]);
    ok(&fx.eval(&data, "topic_adherence", "topics", &[]));
    let out = fx.path("topics");
    let outcome = &by_metric(&out, "travel")["topic_adherence"];
    let f1 = outcome["value"].as_f64().unwrap();
    assert!((f1 - 0.5).abs() < 1e-9, "{outcome}");
    let reason = outcome["reason"].as_str().unwrap();
    assert!(
        reason.contains("answered outside: \"Can you recommend a pizza restaurant?\"")
            && reason.contains("refused: \"How do I change my airline seat?\""),
        "{reason}"
    );
    assert_eq!(outcome["details"]["true_positives"], 1);
    assert_eq!(fx.asked("conversation_topics"), 2);
    assert_eq!(
        fx.asked("topics_answered"),
        1,
        "the silent row asks nothing more"
    );
    assert_eq!(fx.asked("topics_in_reference"), 1);
    let silent = &by_metric(&out, "silent")["topic_adherence"];
    assert!(
        silent["reason"].as_str().unwrap().starts_with("no_topics"),
        "{silent}"
    );
    let missing = &by_metric(&out, "kept")["topic_adherence"];
    assert_eq!(missing["status"], "skipped");
    assert!(
        missing["reason"]
            .as_str()
            .unwrap()
            .contains("reference_topics"),
        "{missing}"
    );
    // Per item, as ragas asks: one request per topic, and the mode chosen.
    ok(&fx.eval(
        &data,
        "topic_adherence",
        "topic-items",
        &[
            "--protocol",
            "per-item",
            "--set",
            "topic_adherence.mode=recall",
        ],
    ));
    assert_eq!(fx.asked("topic_answered"), 3);
    let recall = &by_metric(&fx.path("topic-items"), "travel")["topic_adherence"];
    assert!(
        (recall["value"].as_f64().unwrap() - 0.5).abs() < 1e-9,
        "{recall}"
    );
    assert_eq!(recall["details"]["mode"], "recall");
}

/// With the real small local judge, asked anyway (`--protocol per-item`;
/// by default it declines the metrics it is unfit for): every conversation
/// metric runs in-process to a score or its documented skip (a 135M model
/// may find no fact to retain), never a failure. Needs
/// `scripts/fetch-models.sh`.
#[test]
fn the_local_judge_scores_conversations() {
    let _cores = crate::common::one_local_model_at_a_time();
    let fx = Fixture::content_reading();
    let data = fx.data(&rows()[..1]);
    let out = fx.path("local");
    let o = assay(
        &[
            "eval",
            data.to_str().unwrap(),
            "-m",
            METRICS,
            "--judge",
            "local:smollm2-135m",
            "--protocol",
            "per-item",
            "--no-cache",
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    );
    finished(&o, &out);
    let skips = ["no_facts", "no_turns", "no_intentions"];
    for metric in METRICS.split(',') {
        let outcome = &by_metric(&out, "kept")[metric];
        let scored = outcome["value"]
            .as_f64()
            .is_some_and(|v| (0.0..=1.0).contains(&v));
        let skipped = outcome["status"] == "skipped"
            && skips
                .iter()
                .any(|s| outcome["reason"].as_str().unwrap().starts_with(s));
        assert!(scored || skipped, "{metric}: {outcome}");
    }
    assert_eq!(fx.server.count(), 0, "nothing went over the network");
}

/// `conversation_rubric` rates the whole conversation on the criterion,
/// through the same steps as `rubric`: under the loopback judge's rules,
/// 1 plus the given steps whose last word the conversation contains.
#[test]
fn conversation_rubric_rates_the_whole_conversation_on_its_steps() {
    let fx = Fixture::content_reading();
    let data = fx.data(&rows());
    let o = fx.eval(
        &data,
        "conversation_rubric",
        "run",
        &[
            "--set",
            "conversation_rubric.criteria=Does the assistant help with the flight?",
            "--set",
            "conversation_rubric.steps=Find Oslo | Find Norwegian | Find euros",
            "--set",
            "conversation_rubric.scale=4",
        ],
    );
    ok(&o);
    let out = fx.path("run");
    // kept: Oslo and Norwegian (rating 3 of 4); forgot: Oslo and euros;
    // off: none of them (rating 1).
    for (id, rating) in [("kept", 3.0), ("forgot", 3.0), ("off", 1.0)] {
        let got = value(&out, id, "conversation_rubric").as_f64().unwrap();
        assert!((got - (rating - 1.0) / 3.0).abs() < 1e-12, "{id}: {got}");
    }
    let broken = &by_metric(&out, "broken")["conversation_rubric"];
    assert_eq!(broken["error"]["kind"], "input", "{broken}");
    // Each row's conversation was the judge's to read, tool calls and all.
    let asked = fx.chats();
    assert_eq!(asked.len(), 3, "one rating per readable conversation");
    assert!(asked.iter().any(|r| r
        .last_message()
        .contains("assistant: The cheapest airline from Oslo is Norwegian.")));
}

/// A RAG conversation under the loopback judge's rules: the first reply
/// states what its context says; the second states one thing of two its
/// contexts say, and one of its contexts contradicts it (both speak of
/// cheese); the last reply carries no contexts.
fn rag_chat() -> Value {
    json!({"id": "einstein", "messages": [
        {"role": "user", "content": "Where was Einstein born?"},
        {"role": "assistant", "content": "Einstein was born in Ulm.",
         "retrieved_contexts": ["Einstein was born in Ulm in 1879."]},
        {"role": "user", "content": "And where did he die?"},
        {"role": "assistant", "content": "He died in Princeton. He liked cheese.",
         "retrieved_contexts": ["He died in Princeton in 1955.", "He never ate cheese."]},
        {"role": "user", "content": "Thanks!"},
        {"role": "assistant", "content": "You are welcome."},
    ]})
}

#[test]
fn rag_metrics_score_each_turn_that_carries_contexts() {
    let fx = Fixture::content_reading();
    let rows = vec![
        rag_chat(),
        chat(
            "chat",
            &[("user", "Hello"), ("assistant", "Hi, how can I help?")],
        ),
        json!({"id": "single", "user_input": "q", "response": "a", "retrieved_contexts": ["a"]}),
        json!({"id": "broken", "messages": [
            {"role": "user", "content": "Where was Einstein born?"},
            {"role": "assistant", "content": "In Ulm.", "retrieved_contexts": 5},
        ]}),
    ];
    let data = fx.data(&rows);
    let per_turn = [
        "--set",
        "faithfulness.per_turn=true",
        "--set",
        "hallucination.per_turn=true",
    ];
    ok(&fx.eval(&data, "faithfulness,hallucination", "turns", &per_turn));
    let out = fx.path("turns");
    let einstein = by_metric(&out, "einstein");
    assert_eq!(einstein["faithfulness"]["value"], 0.75, "{einstein:?}");
    assert_eq!(einstein["hallucination"]["value"], 0.25, "{einstein:?}");
    let turns = &einstein["faithfulness"]["details"]["turns"];
    let names: Vec<&str> = turns
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["turn"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["messages[1]", "messages[3]"]);
    assert!(
        turns[1]["reason"]
            .as_str()
            .unwrap()
            .contains("He liked cheese"),
        "{turns}"
    );
    // Each turn's work once: the statements of a reply, their verdicts,
    // and one reading of each reply against its contexts.
    assert_eq!(fx.asked("statements"), 2);
    assert_eq!(fx.asked("faithfulness_verdicts"), 2);
    assert_eq!(fx.asked("contradictions"), 2);

    let chat = &by_metric(&out, "chat")["faithfulness"];
    assert_eq!(chat["status"], "skipped", "{chat}");
    assert!(
        chat["reason"]
            .as_str()
            .unwrap()
            .starts_with("no_turn_contexts"),
        "{chat}"
    );
    let single = &by_metric(&out, "single")["faithfulness"];
    assert!(
        single["reason"].as_str().unwrap().contains("messages"),
        "{single}"
    );
    for metric in ["faithfulness", "hallucination"] {
        let broken = &by_metric(&out, "broken")[metric];
        assert_eq!(broken["status"], "failed", "{broken}");
        assert_eq!(broken["error"]["kind"], "input");
        assert!(
            broken["error"]["message"]
                .as_str()
                .unwrap()
                .contains("messages[1].retrieved_contexts"),
            "{broken}"
        );
    }

    // A turn is scored as the single-turn row it reads as: the same
    // values, from the same cached answers, with no new call.
    let as_rows: Vec<Value> = [
        ("t1", "Where was Einstein born?", &rag_chat()["messages"][1]),
        ("t3", "And where did he die?", &rag_chat()["messages"][3]),
    ]
    .iter()
    .map(|(id, q, m)| {
        json!({"id": id, "user_input": q, "response": m["content"],
               "retrieved_contexts": m["retrieved_contexts"]})
    })
    .collect();
    let calls = fx.chats().len();
    let data = fx.data(&as_rows);
    ok(&fx.eval(&data, "faithfulness,hallucination", "rows", &[]));
    assert_eq!(fx.chats().len(), calls);
    for (i, id) in ["t1", "t3"].iter().enumerate() {
        let row = by_metric(&fx.path("rows"), id);
        assert_eq!(row["faithfulness"]["value"], turns[i]["value"], "{id}");
        let h = &einstein["hallucination"]["details"]["turns"][i];
        assert_eq!(row["hallucination"]["value"], h["value"], "{id}");
    }
}

#[test]
fn a_metric_that_embeds_is_refused_per_turn_and_precision_reads_the_reference() {
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_chat()]);
    let o = fx.eval(
        &data,
        "context_relevancy",
        "refused",
        &[
            "--set",
            "context_relevancy.per_turn=true",
            "--set",
            "context_relevancy.strictness=3",
            "--set",
            "context_relevancy.agreement=embedding",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("context_relevancy.per_turn=true"), "{err}");
    assert!(err.contains("embeds"), "{err}");
    assert_eq!(fx.chats().len(), 0);

    // context_precision compares each turn's contexts with the
    // conversation's reference (DeepEval's expected outcome); without
    // one, each turn is skipped for it, and so is the conversation.
    let mut chat = rag_chat();
    chat["reference"] = json!("Einstein was born in Ulm.");
    let mut bare = rag_chat();
    bare["id"] = json!("bare");
    let data = fx.data(&[chat, bare]);
    let set = ["--set", "context_precision.per_turn=true"];
    ok(&fx.eval(&data, "context_precision", "precision", &set));
    let out = fx.path("precision");
    let einstein = &by_metric(&out, "einstein")["context_precision"];
    assert_eq!(einstein["status"], "scored", "{einstein}");
    let turns = einstein["details"]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "{einstein}");
    let bare = &by_metric(&out, "bare")["context_precision"];
    assert_eq!(bare["status"], "skipped", "{bare}");
    assert!(
        bare["reason"].as_str().unwrap().contains("reference"),
        "{bare}"
    );
    assert_eq!(fx.chats().len(), fx.asked("context_usefulness"));
    assert_eq!(fx.asked("context_usefulness"), 2);
}

/// The plain conversations of `examples/conversations.jsonl`, whose right
/// verdicts (`meta.expected`) a person sees at a glance, with the default
/// judge: a metric the local judge is measured unfit for fails every row
/// with `unfit`, says so in the summary's agreement line and asks nothing;
/// every other metric gives each row the verdict it expects (above 0.5 for
/// 1, below for 0). Needs `scripts/fetch-models.sh`.
#[test]
fn plain_conversations_get_the_right_verdict_or_none() {
    let _cores = crate::common::one_local_model_at_a_time();
    let metrics = "knowledge_retention,turn_relevancy,conversation_completeness,role_adherence,\
                   agent_goal_accuracy,topic_adherence,argument_correctness,task_completion";
    let data = repo().join("examples/conversations.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = crate::common::eval(&data, metrics, &out, &["--no-cache"]);
    // A declined metric's outcomes all fail: exit code 5, naming it.
    finished(&o, &out);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<Value> = std::fs::read_to_string(&data)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut declined = 0;
    for metric in metrics.split(',') {
        let outcomes: Vec<(Value, Value)> = rows
            .iter()
            .map(|row| {
                let id = row["id"].as_str().unwrap();
                (
                    row["meta"]["expected"][metric].clone(),
                    by_metric(&out, id)[metric].clone(),
                )
            })
            .collect();
        if outcomes[0].1["error"]["kind"] == "unfit" {
            declined += 1;
            for (_, outcome) in &outcomes {
                assert_eq!(outcome["error"]["kind"], "unfit", "{metric}: {outcome}");
                let why = outcome["error"]["message"].as_str().unwrap();
                assert!(why.contains("--judge openai:MODEL"), "{why}");
            }
            let line = stdout
                .lines()
                .find(|l| l.trim_start().starts_with(metric) && l.contains("declined"));
            assert!(
                line.is_some(),
                "{metric} declined in the summary:\n{stdout}"
            );
            continue;
        }
        for (expected, outcome) in outcomes.iter().filter(|(e, _)| !e.is_null()) {
            let value = outcome["value"].as_f64();
            let right = value.is_some_and(|v| (v > 0.5) == (expected.as_f64() == Some(1.0)));
            assert!(right, "{metric}: expected {expected}, got {outcome}");
        }
    }
    assert!(
        declined > 0,
        "the local judge declines what it was measured unfit for"
    );

    // A run of declined metrics alone would score nothing: a usage error.
    let o = crate::common::eval(&data, "knowledge_retention", &dir.path().join("none"), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "nothing would be scored: the in-process judges are not fit for knowledge_retention"
        ),
        "{}",
        stderr(&o)
    );
}
