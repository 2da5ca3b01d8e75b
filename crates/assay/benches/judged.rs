//! The judged engine against a loopback judge answering after a fixed
//! latency: `cargo bench -p assay --bench judged [-- --samples N
//! --latency-ms L --concurrency C]` (defaults 200 samples with 4 contexts,
//! 200 ms, 16).
//!
//! Runs `assay eval` with the default suite (faithfulness,
//! answer_relevancy, context_precision, context_recall), no cache, and
//! reports judge calls per sample per metric and the wall time against the
//! ideal: every request (chat and embeddings) at full concurrency,
//! requests x latency / concurrency.

use assay_test_server::{arg, judge, Server};
use serde_json::{json, Value};
use std::process::Command;
use std::time::{Duration, Instant};

fn main() {
    let samples = arg("--samples", 200);
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
    let data = dir.path().join("data.jsonl");
    let rows: Vec<String> = (0..samples)
        .map(|i| {
            let mut row: Value = judge::eiffel_row();
            row["id"] = json!(i);
            // Distinct texts, so that nothing is shared across samples.
            row["user_input"] = json!(format!("Where is the Eiffel Tower {i}"));
            row["response"] = json!(format!(
                "The Eiffel Tower is in Paris. It is {i} metres tall"
            ));
            row.to_string()
        })
        .collect();
    std::fs::write(&data, rows.join("\n")).expect("write data");
    let out = dir.path().join("run");
    let metrics = "faithfulness,answer_relevancy,context_precision,context_recall";
    let start = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["eval", data.to_str().unwrap_or_default(), "-m", metrics])
        .args([
            "--judge",
            "vllm:judge",
            "--embedder",
            "vllm:embed",
            "--no-cache",
        ])
        .args(["--base-url", &server.base_url(), "--format", "json"])
        .args(["--concurrency", &concurrency.to_string()])
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run assay");
    let wall = start.elapsed();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: Value = serde_json::from_slice(&o.stdout).expect("summary");
    let requests = server.count() as f64;
    let ideal = requests * latency.as_secs_f64() / concurrency as f64;
    println!(
        "{samples} samples, 4 contexts, latency {} ms, concurrency {concurrency}",
        latency.as_millis()
    );
    for (metric, u) in summary["usage"]["per_metric"]
        .as_object()
        .into_iter()
        .flatten()
    {
        println!(
            "  {metric:<18} {:.2} judge calls per sample",
            u["calls"].as_f64().unwrap_or(0.0) / samples as f64
        );
    }
    for o in summary["outputs"].as_array().into_iter().flatten() {
        println!(
            "  {:<18} scored {} failed {} mean {}",
            o["name"].as_str().unwrap_or(""),
            o["n_scored"],
            o["n_failed"],
            o["mean"]
        );
    }
    println!(
        "  all judge calls    {:.2} per sample; {} requests in all (chat + embeddings)",
        summary["usage"]["run"]["calls"].as_f64().unwrap_or(0.0) / samples as f64,
        requests
    );
    println!(
        "  wall {:.2} s vs ideal {:.2} s ({:+.1}%)",
        wall.as_secs_f64(),
        ideal,
        (wall.as_secs_f64() / ideal - 1.0) * 100.0
    );
}
