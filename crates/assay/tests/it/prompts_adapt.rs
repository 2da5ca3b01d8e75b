//! `assay prompts adapt`: the loopback judge translates prompt files, the
//! folder is written with the originals beside it, `eval --prompts DIR`
//! then asks the judge in the translated words, and an answer that is not
//! the same prompt in other words is named and not written.

use crate::common::stderr;
use crate::judged::{ok, rag_row, Fixture, KEY};
use assay_test_server::judge::{self, prompt_name};
use assay_test_server::{chat, error, Recorded};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const GERMAN: &str =
    "Die Brücke über den Fluss wurde im Jahr 1932 eröffnet und ist bis heute offen. ";

/// Every text of `v` with a space in it "translated" (German of about its
/// length); single words (labels such as `yes`) kept.
fn german(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), german(v))).collect()),
        Value::Array(a) => a.iter().map(german).collect(),
        Value::String(s) if s.contains(' ') => GERMAN.repeat(s.len() / GERMAN.len() + 1).into(),
        other => other.clone(),
    }
}

fn is_adapt(req: &Recorded) -> bool {
    prompt_name(req).is_some_and(|n| n.starts_with("adapt_"))
}

/// The loopback translator: the document of the last message, each text
/// marked; `relabel` also turns the first verdict of the statements
/// prompt's example from "yes" into "no", a label its schema allows.
fn translator(relabel: bool) -> Fixture {
    Fixture::new(move |req, _| {
        if !is_adapt(req) {
            return judge::reply(req);
        }
        let document: Value =
            serde_json::from_str(req.body["messages"][1]["content"].as_str().unwrap()).unwrap();
        let mut answer = german(&document);
        if relabel && prompt_name(req) == Some("adapt_faithfulness_verdicts") {
            answer["examples"][0]["output"]["verdicts"][0]["verdict"] = "no".into();
        }
        chat(&answer.to_string())
    })
}

fn adapt(fx: &Fixture, out: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["prompts", "adapt", "--language", "de"])
        .args(["--out", out.to_str().unwrap()])
        .args(["--judge", "openai:judge-model"])
        .args(["--base-url", &fx.server.base_url()])
        .args(["--cache", fx.path("cache.sqlite").to_str().unwrap()])
        .args(extra)
        .env("OPENAI_API_KEY", KEY)
        .env("ASSAY_HOME", fx.dir.path())
        .output()
        .unwrap()
}

#[test]
fn the_judge_translates_a_prompts_folder_that_eval_then_reads() {
    let fx = translator(false);
    let out = fx.path("de");
    let o = adapt(&fx, &out, &["--only", "faithfulness_verdicts,statements"]);
    ok(&o);
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(
        printed.contains("translated 2 of 2 prompts into German"),
        "{printed}"
    );
    let asked: Vec<Recorded> = fx.chats().into_iter().filter(is_adapt).collect();
    assert_eq!(asked.len(), 2);
    let system = asked[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("into German"), "{system}");
    for id in ["faithfulness_verdicts", "statements"] {
        let file: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(format!("{id}.json"))).unwrap())
                .unwrap();
        assert!(
            file["instruction"].as_str().unwrap().starts_with(GERMAN),
            "{file}"
        );
        let id = id
            .parse::<assay_metrics::judged::prompt::PromptId>()
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("original").join(format!("{id}.json"))).unwrap(),
            id.builtin_text(),
            "the original is kept for review"
        );
    }

    // The run reads the translated prompts: the judge is asked in them.
    let data = fx.data(&[rag_row()]);
    ok(&fx.eval(
        &data,
        "faithfulness",
        "run",
        &["--prompts", out.to_str().unwrap()],
    ));
    let verdicts: Vec<Recorded> = fx
        .chats()
        .into_iter()
        .filter(|r| prompt_name(r) == Some("faithfulness_verdicts"))
        .collect();
    assert!(!verdicts.is_empty());
    let instruction = verdicts[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(instruction.starts_with(GERMAN), "{instruction}");

    // The same command again writes the same folder, from the cache.
    ok(&adapt(
        &fx,
        &out,
        &["--only", "faithfulness_verdicts,statements"],
    ));
    assert_eq!(fx.chats().into_iter().filter(is_adapt).count(), 2);
}

#[test]
fn a_translation_that_changes_a_label_is_named_and_not_written() {
    let fx = translator(true);
    let out = fx.path("de");
    let o = adapt(&fx, &out, &["--only", "faithfulness_verdicts,statements"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not translated: faithfulness_verdicts: $.examples[0].output.verdicts[0].verdict: the label \"yes\" became \"no\""),
        "{}",
        stderr(&o)
    );
    assert!(!out.join("faithfulness_verdicts.json").exists());
    assert!(out.join("statements.json").exists());
    // A folder assay did not write is refused, and so is an unknown prompt.
    let foreign = fx.path("mine");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let o = adapt(&fx, &foreign, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("was not written by `assay prompts adapt`"),
        "{}",
        stderr(&o)
    );
    let o = adapt(&fx, &fx.path("x"), &["--only", "statement"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("unknown prompt 'statement'"),
        "{}",
        stderr(&o)
    );
}

/// A judge that refuses the key stops the command at once, naming it.
#[test]
fn a_judge_that_refuses_the_key_stops_it() {
    let fx = Fixture::new(|_, _| error(401, "Incorrect API key provided"));
    let o = adapt(&fx, &fx.path("de"), &["--only", "statements,keyphrases"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("refused the credentials"),
        "{}",
        stderr(&o)
    );
    assert_eq!(fx.chats().len(), 1, "no second prompt is asked");
}
