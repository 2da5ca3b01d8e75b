//! `rubric` through `assay eval`: against the content-reading loopback
//! judge (steps written once per run, cached, recorded, reproducible; a
//! failed writing fails the rubric's outcomes, not the run) and against
//! the real small local judge (the rating weighted by its probabilities).

use crate::common::{assay, read_json, results, stderr};
use crate::judged::{assert_probability_weighted, by_metric, ok, rag_row, unscored, Fixture};
use assay_test_server::chat;
use assay_test_server::judge;
use serde_json::{json, Value};

/// Its steps are its three sentences (the loopback judge's rule); the
/// Eiffel response meets only the first: rated 2 of 5.
const CRITERIA: &str =
    "rubric.criteria=It names Paris. It dates the opening to 1889. It gives the height";
/// One step; met by a response that says "metres".
const HEIGHT: &str = "rubric.height.criteria=It gives the height in metres";

fn rows() -> Vec<Value> {
    let mut tall = rag_row();
    tall["id"] = json!("tall");
    tall["response"] = json!("The Eiffel Tower is in Paris. It is 330 metres tall");
    let mut short = rag_row();
    short["id"] = json!("short");
    short["response"] = json!("It is in Paris");
    vec![rag_row(), tall, short]
}

fn params(out: &std::path::Path) -> Value {
    read_json(&out.join("manifest.json"))["metrics"][0]["params"].clone()
}

#[test]
fn rubric_steps_are_written_once_per_run_cached_and_recorded() {
    let fx = Fixture::content_reading();
    let data = fx.data(&rows());
    let set = [
        "--set",
        CRITERIA,
        "--set",
        HEIGHT,
        "--set",
        "rubric.height.scale=3",
    ];
    ok(&fx.eval(&data, "rubric", "first", &set));
    // One writing per rubric, not per sample; one rating per rubric and sample.
    assert_eq!(fx.asked("rubric_steps"), 2);
    assert_eq!(fx.asked("rubric_rating"), 6);
    let first = fx.path("first");
    let eiffel = by_metric(&first, "eiffel");
    assert_eq!(eiffel["rubric"]["value"], 0.25, "{}", eiffel["rubric"]);
    assert_eq!(eiffel["rubric"]["details"]["rating"], 2);
    assert_eq!(eiffel["rubric"]["details"]["scale"], 5);
    assert_eq!(eiffel["rubric/height"]["value"], 0.0);
    assert_eq!(by_metric(&first, "tall")["rubric/height"]["value"], 0.5);

    // The steps the judge wrote are in the manifest, as `--set` takes them.
    let recorded = params(&first);
    assert_eq!(
        recorded["steps"],
        "It names Paris | It dates the opening to 1889 | It gives the height"
    );
    assert_eq!(recorded["height.steps"], "It gives the height in metres");
    assert_eq!(recorded["height.scale"], "3");
    let prompts: Vec<Value> = read_json(&first.join("manifest.json"))["judge"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].clone())
        .collect();
    assert!(prompts.contains(&json!("rubric_steps")), "{prompts:?}");

    // A second run asks nothing: the writing and the ratings are cached.
    ok(&fx.eval(&data, "rubric", "second", &set));
    assert_eq!(fx.asked("rubric_steps"), 2);
    assert_eq!(fx.asked("rubric_rating"), 6);
    // Samples finish in any order.
    let values = |dir: &str| -> Vec<String> {
        let mut v: Vec<String> = results(&fx.path(dir))
            .into_iter()
            .map(|r| json!([r["sample_id"], r["metric"], r["value"]]).to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(values("second"), values("first"));
    assert_eq!(params(&fx.path("second")), recorded);

    // The recorded steps given back reproduce the run without a writing
    // call: the very same rating requests (all answered by the cache), and
    // the same signature.
    let steps = format!("rubric.steps={}", recorded["steps"].as_str().unwrap());
    let given = ["--set", CRITERIA, "--set", &steps];
    ok(&fx.eval(&data, "rubric", "given", &given));
    assert_eq!(fx.asked("rubric_steps"), 2, "given steps are not written");
    assert_eq!(fx.asked("rubric_rating"), 6, "the same requests");
    let first_sig = read_json(&first.join("manifest.json"))["metrics"][0]["signature"].clone();
    let unnamed = |sig: &Value| {
        sig.as_str()
            .unwrap()
            .split('|')
            .filter(|p| p.starts_with("criteria:") || p.starts_with("steps:"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let given_sig = read_json(&fx.path("given/manifest.json"))["metrics"][0]["signature"].clone();
    assert_eq!(unnamed(&given_sig), unnamed(&first_sig));
    assert_eq!(
        by_metric(&fx.path("given"), "eiffel")["rubric"]["value"],
        0.25
    );

    // A run without rubric lists none of its prompts.
    ok(&fx.eval(&data, "faithfulness", "other", &[]));
    let other = read_json(&fx.path("other/manifest.json"))["judge"]["prompts"].to_string();
    assert!(!other.contains("rubric"), "{other}");
}

/// Resuming takes the steps from the run's manifest: nothing is asked
/// again even when the cache is gone, so the resumed samples are rated
/// with the same steps as the first ones.
#[test]
fn a_resumed_rubric_run_keeps_its_written_steps_without_the_cache() {
    let fx = Fixture::content_reading();
    let data = fx.data(&rows());
    let set = ["--set", CRITERIA];
    ok(&fx.eval(&data, "rubric", "run", &set));
    assert_eq!(fx.asked("rubric_steps"), 1);
    for entry in std::fs::read_dir(fx.dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("cache.sqlite")
        {
            std::fs::remove_file(path).unwrap();
        }
    }
    let o = fx.eval(&data, "rubric", "run", &set);
    ok(&o);
    assert_eq!(fx.asked("rubric_steps"), 1, "{}", stderr(&o));
    assert_eq!(fx.asked("rubric_rating"), 3, "every sample was done");
}

#[test]
fn a_rubric_whose_steps_cannot_be_written_fails_its_outcomes_not_the_run() {
    let fx = Fixture::new(|req, _| match judge::prompt_name(req) {
        Some("rubric_steps") => chat("no steps today"),
        _ => judge::reply(req),
    });
    let data = fx.data(&rows());
    let o = fx.eval(&data, "rubric,faithfulness", "run", &["--set", CRITERIA]);
    unscored(&o, &["rubric"]);
    for r in results(&fx.path("run")) {
        match r["metric"].as_str().unwrap() {
            "rubric" => {
                assert_eq!(r["status"], "failed", "{r}");
                assert_eq!(r["error"]["kind"], "parse", "{r}");
            }
            _ => assert_eq!(r["status"], "scored", "{r}"),
        }
    }
    assert_eq!(fx.asked("rubric_rating"), 0);
    assert_eq!(params(&fx.path("run"))["steps"], "failed");
    let bad = fx.eval(&data, "rubric", "bad", &["--set", "rubric.scale=4"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("rubric.criteria"), "{}", stderr(&bad));
}

/// With the real small local judge, which reports the probabilities of its
/// closed choices: the rating is weighted by them (G-Eval) on the rubric's
/// own scale, the steps it writes are recorded, and `--threads` is what the
/// model computes on. Needs
/// `scripts/fetch-models.sh`.
#[test]
fn the_local_judge_weights_a_rubric_rating_by_its_probabilities() {
    let _cores = crate::common::one_local_model_at_a_time();
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    let out = fx.path("local");
    let o = assay(
        &[
            "eval",
            data.to_str().unwrap(),
            "-m",
            "rubric",
            "--judge",
            "local:smollm2-135m",
            "--no-cache",
            "--out",
            out.to_str().unwrap(),
            "--set",
            "rubric.criteria=The response answers the question correctly.",
            "--set",
            "rubric.scale=4",
            "--threads",
            "1",
        ],
        None,
    );
    ok(&o);
    assert_probability_weighted(&by_metric(&out, "eiffel")["rubric"], 4);
    // The model computed on the one thread asked for, and its identity (in
    // signatures and cache keys) says so: another count gives other sums.
    let manifest = crate::common::read_json(&out.join("manifest.json"));
    let settings = manifest["judge"]["identity"]["settings"].as_str().unwrap();
    assert!(settings.ends_with(";threads=1"), "{settings}");
    let steps = params(&out)["steps"].as_str().unwrap().to_string();
    assert!(steps != "generated" && steps != "failed" && !steps.is_empty());
    assert_eq!(fx.server.count(), 0, "nothing went over the network");
}

/// Under `--batch export` every sample's rating request needs the steps,
/// so they must be known before the export: given, or already written
/// into the cache by a live run.
#[test]
fn batch_export_of_a_rubric_needs_its_steps_known_first() {
    let fx = Fixture::content_reading();
    let data = fx.data(&rows());
    let export = ["--set", CRITERIA, "--batch", "export"];
    let o = fx.eval(&data, "rubric", "unwritten", &export);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("step rubric_steps is not in the cache"),
        "{}",
        stderr(&o)
    );
    assert_eq!(fx.server.count(), 0, "batch mode sends nothing");

    let given = [
        "--set",
        CRITERIA,
        "--set",
        "rubric.steps=It names Paris | It gives the height",
        "--batch",
        "export",
    ];
    ok(&fx.eval(&data, "rubric", "given", &given));
    let requests = std::fs::read_to_string(fx.path("given/batch/round-1.requests.jsonl")).unwrap();
    assert_eq!(requests.lines().count(), 3, "one rating per sample");
    assert!(requests.contains("rubric_rating"), "{requests}");
    assert_eq!(fx.server.count(), 0);
}
