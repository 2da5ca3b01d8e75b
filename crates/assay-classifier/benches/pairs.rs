//! Milliseconds per (window, claim) pair of [`Classifier::support`] on a
//! fixed workload; `bench/grounding/run.sh` runs it beside the same model
//! in `transformers` (bench/grounding/reference.py) and prints the table.
//!
//! Usage: `pairs MODEL_DIR PAIRS_JSONL`, where each line of the workload is
//! `{"window": ..., "claim": ...}` (bench/grounding/make_pairs.py writes
//! it). One warm-up pass, then the median of `ASSAY_BENCH_REPS` passes
//! (default 5) over all the pairs, in batches of 16 on
//! `ASSAY_BENCH_THREADS` threads (default 2). Prints one `key value` per
//! line: `pairs`, `tokens_per_pair` (special tokens included, after
//! truncation), `ms_per_pair`, `mean_probability` (of the supported label,
//! for the agreement check) and `load_ms`. With `ASSAY_BENCH_PROBABILITIES`
//! set to a path, writes each pair's probability there, one a line, in the
//! workload's order.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use assay_classifier::{Classifier, Options};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo bench` adds `--bench`; only the positional arguments count.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let [model, workload] = args.as_slice() else {
        eprintln!("usage: pairs MODEL_DIR PAIRS_JSONL");
        std::process::exit(2);
    };
    let threads = env_usize("ASSAY_BENCH_THREADS", 2);
    let reps = env_usize("ASSAY_BENCH_REPS", 5).max(1);

    let text =
        std::fs::read_to_string(workload).unwrap_or_else(|e| panic!("reading {workload}: {e}"));
    let rows: Vec<(String, String)> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let field = |k: &str| v[k].as_str().expect("window and claim strings").to_owned();
            (field("window"), field("claim"))
        })
        .collect();
    let pairs: Vec<(&str, &str)> = rows.iter().map(|(w, c)| (w.as_str(), c.as_str())).collect();

    let start = Instant::now();
    let options = Options {
        threads,
        batch: 16,
        ..Options::default()
    };
    let classifier = Classifier::load(&PathBuf::from(model), &options).expect("loading the model");
    let load = start.elapsed();

    let tokens: usize = pairs
        .iter()
        .map(|(w, c)| classifier.encode(w, c).expect("tokenizing").len())
        .sum();

    let probabilities = classifier.support(&pairs).expect("warm-up");
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            let again = classifier.support(&pairs).expect("support");
            let took = start.elapsed();
            assert_eq!(again, probabilities, "the same pairs scored differently");
            took
        })
        .collect();
    times.sort();
    let median = times[times.len() / 2];

    if let Ok(path) = std::env::var("ASSAY_BENCH_PROBABILITIES") {
        let lines: String = probabilities.iter().map(|p| format!("{p:.9}\n")).collect();
        std::fs::write(&path, lines).unwrap_or_else(|e| panic!("writing {path}: {e}"));
    }
    let n = pairs.len().max(1);
    println!("pairs {}", pairs.len());
    println!("tokens_per_pair {:.1}", tokens as f64 / n as f64);
    println!(
        "ms_per_pair {:.2}",
        median.as_secs_f64() * 1000.0 / n as f64
    );
    println!(
        "mean_probability {:.7}",
        probabilities.iter().sum::<f64>() / n as f64
    );
    println!("load_ms {:.0}", load.as_secs_f64() * 1000.0);
    println!("threads {threads}");
    println!("reps {reps}");
}
