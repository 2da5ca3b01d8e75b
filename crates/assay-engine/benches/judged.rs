//! The judged engine against a loopback judge answering after a fixed
//! latency: `cargo bench -p assay-engine --bench judged [-- --samples N
//! --latency-ms L --concurrency C]` (defaults 200 samples with 4 contexts,
//! 200 ms, 16).
//!
//! Three suites, each run in-process by [`assay_engine::run_blocking`] on a
//! runtime of its own (two workers, as `assay eval` on two cores), with no
//! cache, over OpenAI-protocol clients of the loopback judge: the default RAG
//! suite (faithfulness, answer_relevancy, context_precision,
//! context_recall), then every single-turn judged metric, on RAG rows; then
//! every conversation metric with the RAG metrics per turn, on
//! conversations of three exchanges with a tool call and contexts per
//! reply (`--conversations N`, default 50). Per metric it reports its
//! share of the judge calls per sample (a call of a step that n metrics
//! read counts 1/n), its embedding requests, and the calls it makes when
//! run alone, measured by running it alone. Per suite: the whole call
//! count, what sharing saved against the metrics run one by one, and the
//! wall time against the two ideals: dependency depth x latency (the
//! bound when concurrency does not limit) and requests x latency /
//! concurrency (the bound when it does).

use assay_core::{Field, Sample, Source};
use assay_engine::{
    run_blocking, CancelToken, Existing, JudgedRun, ModelChoice, Reasons, RunOptions, Silent,
    Strictness,
};
use assay_llm::{CachedEmbedder, Judge, Limiter, ModelSpec, PriceTable, ProviderOptions};
use assay_metrics::judged::{
    answer_relevancy, context_precision, context_recall, faithfulness, plan, JudgedId,
    JudgedMetric, PromptSet, Protocol,
};
use assay_test_server::{arg, judge, Server};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bench's settings and its loopback judge.
struct Bench {
    server: Server,
    latency: Duration,
    concurrency: u64,
    dir: PathBuf,
}

/// What one run did.
struct Run {
    summary: Value,
    /// Requests (judge and embeddings) the server received.
    requests: usize,
    wall: Duration,
}

impl Run {
    /// Judge calls and embedding requests of the run.
    fn calls(&self) -> (f64, f64) {
        let run = &self.summary["usage"]["run"];
        (num(&run["calls"]), num(&run["embeddings"]["calls"]))
    }
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// Sample `i`: four contexts, a reference, and a response with an
/// opinion, so that the test judge's rules give every metric something
/// to judge. Every text names `i` (the generated questions come from the
/// first statement), so no call is shared across samples.
fn row(i: usize) -> Value {
    let first = format!("The Eiffel Tower {i} is in Paris");
    json!({
        "id": i,
        "user_input": format!("Where is the Eiffel Tower {i}"),
        "response": format!("{first}. I think tower {i} is beautiful. It is {i} metres tall"),
        "retrieved_contexts": [
            first,
            format!("Paris had {i} visitors"),
            "Cheese is tasty",
            "The Eiffel Tower opened in 1889"
        ],
        "reference": format!("{first}. The Eiffel Tower opened in 1889. It is {i} metres tall"),
    })
}

/// Conversation `i`: a travel assistant that answers from retrieved
/// contexts, calls a tool, and is told a fact it should keep. Every text
/// names `i`, so no call is shared across conversations.
fn conversation(i: usize) -> Value {
    json!({
        "id": format!("c{i}"),
        "chatbot_role": "a polite travel assistant",
        "reference_topics": ["flights", "hotels"],
        "reference": format!("Two seats to Rome {i} are booked"),
        "messages": [
            {"role": "system", "content": "You are a travel assistant."},
            {"role": "user", "content": format!("My name is Ada {i}. Which flights go to Rome {i}?")},
            {"role": "assistant", "content": format!("Flights to Rome {i} leave daily. SK{i} leaves at nine"),
             "retrieved_contexts": [format!("Flights to Rome {i} leave daily"), format!("SK{i} leaves at nine"), "Cheese is tasty"]},
            {"role": "user", "content": format!("Book two seats on SK{i}.")},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
             "function": {"name": "book_flight", "arguments": format!("{{\"flight\": \"SK{i}\", \"seats\": 2}}")}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": format!("booked SK{i}")},
            {"role": "assistant", "content": format!("Two seats on SK{i} are booked, Ada {i}"),
             "retrieved_contexts": [format!("booked SK{i}")]},
            {"role": "user", "content": format!("Is there a hotel near Rome {i} airport?")},
            {"role": "assistant", "content": format!("Hotel {i} is near the airport. It has a pool"),
             "retrieved_contexts": [format!("Hotel {i} is near the airport"), "Rome has two airports"]},
        ],
    })
}

/// What a suite runs on: its rows, and how many.
#[derive(Clone, Copy)]
struct Rows {
    row: fn(usize) -> Value,
    n: usize,
    /// How the rows are counted in the report.
    unit: &'static str,
}

impl Bench {
    /// The rows' data file.
    fn data(&self, rows: Rows) -> PathBuf {
        let path = self.dir.join(format!("{}.jsonl", rows.unit));
        if !path.exists() {
            let lines: Vec<String> = (0..rows.n).map(|i| (rows.row)(i).to_string()).collect();
            std::fs::write(&path, lines.join("\n")).expect("write data");
        }
        path
    }

    fn eval(&self, metrics: &[JudgedMetric], rows: Rows, out: &str) -> Run {
        let prompts = PromptSet::builtin().expect("built-in prompts");
        let metrics = metrics.to_vec();
        let provider = ProviderOptions {
            base_url: Some(self.server.base_url()),
            concurrency: self.concurrency as usize,
            ..ProviderOptions::default()
        };
        let limiter = Arc::new(Limiter::from_options(&provider));
        let spec = |s: &str| s.parse::<ModelSpec>().expect("model spec");
        let embedder = metrics.iter().any(JudgedMetric::needs_embedder).then(|| {
            let embedder =
                CachedEmbedder::connect(&spec("vllm:embed"), &provider, None, Arc::clone(&limiter))
                    .expect("embedder");
            (embedder, ModelChoice::Http(spec("vllm:embed")))
        });
        let judged = JudgedRun {
            metrics,
            prompts,
            judge: Judge::connect(&spec("vllm:judge"), &provider, None, limiter).expect("judge"),
            judge_spec: ModelChoice::Http(spec("vllm:judge")),
            embedder,
            options: provider,
            prices: PriceTable::default(),
            repeats: 1,
            export: None,
            reasons: Reasons::Composed,
        };
        let options = RunOptions {
            source: Source::Path(self.data(rows)),
            input_format: None,
            input: Default::default(),
            metrics: Vec::new(),
            judged: Some(Arc::new(judged)),
            out: self.dir.join(out),
            strict: Strictness::RecordAndContinue,
            threads: 2,
            existing: Existing::Resume,
            shard: None,
        };
        let before = self.server.count();
        let start = Instant::now();
        let summary = run_blocking(&options, &mut Silent, &CancelToken::new()).expect("run");
        let wall = start.elapsed();
        Run {
            summary: serde_json::to_value(&summary).expect("summary"),
            requests: self.server.count() - before,
            wall,
        }
    }

    /// The longest chain of dependent requests of one sample.
    fn depth(&self, metrics: &[JudgedMetric], rows: Rows) -> usize {
        (0..rows.n)
            .map(|i| {
                let r = (rows.row)(i);
                let sample = Sample::from_json(i as u64 + 1, r.as_object().expect("object"))
                    .expect("sample");
                plan(metrics, &sample, Protocol::Listed).depth()
            })
            .max()
            .unwrap_or(0)
    }

    /// Runs `metrics` together on `rows`, then each alone, and prints the
    /// figures.
    fn suite(
        &self,
        title: &str,
        metrics: &[JudgedMetric],
        rows: Rows,
        alone: &mut BTreeMap<JudgedId, Run>,
    ) {
        let n = rows.n as f64;
        let unit = rows.unit;
        let shared = self.eval(metrics, rows, title);
        for m in metrics {
            if let std::collections::btree_map::Entry::Vacant(e) = alone.entry(m.id()) {
                let out = format!("alone-{unit}-{}", m.id());
                e.insert(self.eval(std::slice::from_ref(m), rows, &out));
            }
        }
        println!("\n{title}: {} metrics", metrics.len());
        println!(
            "  {:<25} {:>12} {:>12} {:>12} {:>12}  scored/skipped/failed",
            "metric",
            format!("judge/{unit}"),
            format!("embed/{unit}"),
            "alone judge",
            "alone embed"
        );
        let usage = &shared.summary["usage"]["per_metric"];
        let (mut sum_judge, mut sum_embed) = (0.0, 0.0);
        for m in metrics {
            let name = m.id().name();
            let shown = match m.params().contains(&("per_turn".into(), "true".into())) {
                true => format!("{name} per turn"),
                false => name.to_string(),
            };
            let u = &usage[name];
            let (judge, embed) = alone[&m.id()].calls();
            sum_judge += judge;
            sum_embed += embed;
            println!(
                "  {:<25} {:>12.2} {:>12.2} {:>12.2} {:>12.2}  {}",
                shown,
                num(&u["calls"]) / n,
                num(&u["embeddings"]["calls"]) / n,
                judge / n,
                embed / n,
                coverage(&shared.summary, name),
            );
        }
        let (judge, embed) = shared.calls();
        println!(
            "  together: {:.2} judge calls + {:.2} embedding requests per {unit}; \
             the metrics alone: {:.2} + {:.2}; sharing saved {:.2} judge calls per {unit} \
             ({:.0}%), {:.2} embedding requests",
            judge / n,
            embed / n,
            sum_judge / n,
            sum_embed / n,
            (sum_judge - judge) / n,
            100.0 * (sum_judge - judge) / sum_judge,
            (sum_embed - embed) / n,
        );
        let depth = self.depth(metrics, rows);
        let lat = self.latency.as_secs_f64();
        let by_depth = depth as f64 * lat;
        let by_concurrency = shared.requests as f64 * lat / self.concurrency as f64;
        let wall = shared.wall.as_secs_f64();
        println!(
            "  wall {wall:.2} s; ideal: depth {depth} x {} ms = {by_depth:.2} s, \
             {} requests x {} ms / {} = {by_concurrency:.2} s; wall / larger ideal = {:.3}",
            self.latency.as_millis(),
            shared.requests,
            self.latency.as_millis(),
            self.concurrency,
            wall / by_depth.max(by_concurrency),
        );
    }
}

/// `scored/skipped/failed` of a metric's outputs, summed.
fn coverage(summary: &Value, metric: &str) -> String {
    let outputs: Vec<&Value> = summary["outputs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|o| o["metric"] == metric)
        .collect();
    let sum = |k: &str| {
        outputs
            .iter()
            .map(|o| o[k].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    format!(
        "{}/{}/{}",
        sum("n_scored"),
        sum("n_skipped"),
        sum("n_failed")
    )
}

fn main() {
    let samples = arg("--samples", 200) as usize;
    let conversations = arg("--conversations", 50) as usize;
    let latency = Duration::from_millis(arg("--latency-ms", 200));
    let concurrency = arg("--concurrency", 16);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let server = rt.block_on(Server::start(move |req, _| {
        judge::reply(req).after(latency)
    }));
    let dir = tempfile::tempdir().expect("temp dir");
    let bench = Bench {
        server,
        latency,
        concurrency,
        dir: dir.path().to_path_buf(),
    };
    println!(
        "{samples} samples, 4 contexts, {conversations} conversations, latency {} ms, \
         concurrency {concurrency}, no cache",
        latency.as_millis()
    );
    let rag = Rows {
        row,
        n: samples,
        unit: "sample",
    };
    let prompts = PromptSet::builtin().expect("built-in prompts");
    let defaults = |ids: &[JudgedId]| -> Vec<JudgedMetric> {
        ids.iter()
            .map(|id| JudgedMetric::configure(*id, &BTreeMap::new(), &prompts).expect("defaults"))
            .collect()
    };
    let conversational = |id: &JudgedId| {
        JudgedMetric::default_for(*id)
            .required()
            .contains(&Field::Messages)
    };
    let mut alone = BTreeMap::new();
    let default_suite = [
        faithfulness::ID,
        answer_relevancy::ID,
        context_precision::ID,
        context_recall::ID,
    ];
    bench.suite("default suite", &defaults(&default_suite), rag, &mut alone);
    // Every metric but the rubrics, which rate on a criterion the user
    // writes and have none by default (each adds one rating call per
    // sample and rubric).
    let rubric = |id: &JudgedId| id.params().iter().any(|p| p.name == "criteria");
    let single: Vec<JudgedId> = JudgedId::all()
        .filter(|id| !rubric(id) && !conversational(id))
        .collect();
    bench.suite("every judged metric", &defaults(&single), rag, &mut alone);
    let mut suite = defaults(
        &JudgedId::all()
            .filter(|id| !rubric(id) && conversational(id))
            .collect::<Vec<_>>(),
    );
    for id in single.iter().filter(|id| id.offers_per_turn()) {
        let given: BTreeMap<String, String> = [("per_turn".to_string(), "true".to_string())].into();
        suite.push(JudgedMetric::configure(*id, &given, &prompts).expect("per turn"));
    }
    let chats = Rows {
        row: conversation,
        n: conversations,
        unit: "conversation",
    };
    bench.suite("conversation suite", &suite, chats, &mut BTreeMap::new());
}
