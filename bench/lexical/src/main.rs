//! Throughput of assay-text's lexical metrics, with rougers for ROUGE.
//!
//! Scores the parity set (`crates/assay-text/tests/data/parity/public.jsonl`)
//! replicated cyclically to `--pairs` pairs (owned copies, so memory traffic is
//! that of a real data set), single-threaded and on `--threads` threads
//! (`std::thread::scope` over contiguous chunks, one scorer per thread). Each
//! measurement is the best of `--repeat` runs. Prints one JSON object.
//!
//! Every measurement also reports a checksum: the sum of the per-pair scores
//! over the sample that `bench/reference.py` times (every `pairs / sample`-th
//! pair), computed untimed, so the report can show that assay-text and the
//! Python references scored the same thing.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::{json, Value};

mod scorers;

use scorers::{Implementation, Metric, PairScorer};

/// One prediction and its references.
struct Pair {
    prediction: String,
    references: Vec<String>,
}

struct Options {
    pairs: usize,
    sample: usize,
    threads: usize,
    repeat: usize,
    data: PathBuf,
    metrics: Vec<Metric>,
}

fn usage() -> String {
    let metrics: Vec<&str> = Metric::ALL.iter().map(|m| m.key()).collect();
    format!(
        "usage: assay-bench-lexical [--pairs N] [--sample K] [--threads T] [--repeat R] \
         [--data PATH] [--metrics {}]",
        metrics.join(",")
    )
}

fn parse_options() -> Result<Options, String> {
    let default_data = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../crates/assay-text/tests/data/parity/public.jsonl");
    let mut options = Options {
        pairs: 20_000,
        sample: 2_000,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        repeat: 5,
        data: default_data,
        metrics: Metric::ALL.to_vec(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{}", usage()))?;
        let number = || {
            value
                .parse::<usize>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--pairs" => options.pairs = number()?,
            "--sample" => options.sample = number()?,
            "--threads" => options.threads = number()?,
            "--repeat" => options.repeat = number()?,
            "--data" => options.data = PathBuf::from(&value),
            "--metrics" => {
                options.metrics = value
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::parse)
                    .collect::<Result<_, _>>()?
            }
            _ => return Err(usage()),
        }
    }
    if options.pairs == 0 || options.threads == 0 || options.repeat == 0 {
        return Err("--pairs, --threads and --repeat must be positive".into());
    }
    Ok(options)
}

/// The distinct pairs of the data file, and those replicated to `--pairs`.
fn load_pairs(options: &Options) -> Result<(Vec<Pair>, Vec<Pair>), String> {
    let text = std::fs::read_to_string(&options.data)
        .map_err(|e| format!("{}: {e}", options.data.display()))?;
    let mut base = Vec::new();
    for (line_no, line) in text.lines().enumerate() {
        let row: Value =
            serde_json::from_str(line).map_err(|e| format!("line {}: {e}", line_no + 1))?;
        let prediction = row["prediction"]
            .as_str()
            .ok_or("prediction is not a string")?;
        let references = row["references"]
            .as_array()
            .ok_or("references is not an array")?
            .iter()
            .map(|r| {
                r.as_str()
                    .map(str::to_owned)
                    .ok_or("reference is not a string")
            })
            .collect::<Result<Vec<_>, _>>()?;
        base.push(Pair {
            prediction: prediction.to_owned(),
            references,
        });
    }
    if base.is_empty() {
        return Err(format!("{}: no pairs", options.data.display()));
    }
    let replicated = (0..options.pairs)
        .map(|i| {
            let p = &base[i % base.len()];
            Pair {
                prediction: p.prediction.clone(),
                references: p.references.clone(),
            }
        })
        .collect();
    Ok((base, replicated))
}

/// Same rule as `reference.py`: every `n / k`-th index, `k` of them.
fn sample_indices(n: usize, k: usize) -> Vec<usize> {
    let stride = (n / k.max(1)).max(1);
    (0..n).step_by(stride).take(k).collect()
}

/// Sum of the scores of `chunk`; NaN if the implementation lacks the metric
/// (never the case: main only measures what `Metric::implementations` lists).
fn score_chunk(implementation: Implementation, metric: Metric, chunk: &[Pair]) -> f64 {
    PairScorer::new(implementation, metric).map_or(f64::NAN, |mut scorer| {
        chunk
            .iter()
            .map(|p| scorer.score(&p.prediction, &p.references))
            .sum()
    })
}

/// Scores every pair on `threads` threads; returns (seconds, checksum).
/// CPU time used so far by the whole process (all threads, live or ended).
/// Unlike wall time it barely changes when other work shares the machine.
fn process_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant
    // every supported Unix provides.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Scores every pair on `threads` threads; returns (wall seconds, CPU
/// seconds, checksum).
fn run_once(
    implementation: Implementation,
    metric: Metric,
    pairs: &[Pair],
    threads: usize,
) -> (f64, f64, f64) {
    let cpu_start = process_cpu_seconds();
    let start = Instant::now();
    let checksum = if threads == 1 {
        score_chunk(implementation, metric, pairs)
    } else {
        let chunk_len = pairs.len().div_ceil(threads);
        std::thread::scope(|s| {
            let handles: Vec<_> = pairs
                .chunks(chunk_len)
                .map(|chunk| s.spawn(move || score_chunk(implementation, metric, chunk)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(f64::NAN))
                .sum()
        })
    };
    let wall = start.elapsed().as_secs_f64();
    (wall, process_cpu_seconds() - cpu_start, checksum)
}

fn measure(
    implementation: Implementation,
    metric: Metric,
    pairs: &[Pair],
    threads: usize,
    repeat: usize,
) -> Value {
    let mut best = f64::INFINITY;
    let mut best_cpu = f64::INFINITY;
    let mut checksum = 0.0;
    for _ in 0..repeat {
        let (seconds, cpu, sum) = run_once(implementation, metric, pairs, threads);
        best = best.min(seconds);
        best_cpu = best_cpu.min(cpu);
        checksum = sum;
    }
    json!({
        "threads": threads,
        "cpu_seconds": best_cpu,
        "pairs_per_cpu_s": pairs.len() as f64 / best_cpu,
        "pairs": pairs.len(),
        "seconds": best,
        "pairs_per_s": pairs.len() as f64 / best,
        "checksum": checksum,
    })
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(o) => o,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let (distinct, pairs) = match load_pairs(&options) {
        Ok(p) => p,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let sample = sample_indices(pairs.len(), options.sample);

    let mut results = serde_json::Map::new();
    for &metric in &options.metrics {
        let mut by_impl = serde_json::Map::new();
        for implementation in metric.implementations() {
            let sampled: Vec<&Pair> = sample.iter().map(|&i| &pairs[i]).collect();
            let sample_checksum =
                PairScorer::new(implementation, metric).map_or(f64::NAN, |mut s| {
                    sampled
                        .iter()
                        .map(|p| s.score(&p.prediction, &p.references))
                        .sum()
                });
            let single = measure(implementation, metric, &pairs, 1, options.repeat);
            let multi = measure(
                implementation,
                metric,
                &pairs,
                options.threads,
                options.repeat,
            );
            // Scorers may memoise tokens across pairs; a single pass over the
            // distinct pairs shows the throughput without replication's repeats.
            let once = measure(implementation, metric, &distinct, 1, options.repeat);
            eprintln!(
                "assay-bench-lexical: {} {}: {:.0} pairs/s (1 thread), {:.0} pairs/s ({} threads)",
                metric.key(),
                implementation.key(),
                single["pairs_per_s"].as_f64().unwrap_or(0.0),
                multi["pairs_per_s"].as_f64().unwrap_or(0.0),
                options.threads
            );
            by_impl.insert(
                implementation.key().to_owned(),
                json!({
                    "computes": implementation.describe(metric),
                    "sample_checksum": sample_checksum,
                    "1": single,
                    "N": multi,
                    "distinct_1": once,
                }),
            );
        }
        results.insert(metric.key().to_owned(), Value::Object(by_impl));
    }

    let out = json!({
        "tool": "assay-bench-lexical",
        "data": std::fs::canonicalize(&options.data)
            .unwrap_or_else(|_| options.data.clone())
            .display()
            .to_string(),
        "pairs_replicated": pairs.len(),
        "sample": {"pairs": sample.len(), "rule": "every (pairs / sample)-th pair, as reference.py"},
        "threads": options.threads,
        "repeat": options.repeat,
        "distinct_pairs": distinct.len(),
        "timing": "best of `repeat` runs over all replicated pairs (\"1\", \"N\"), and over \
                   the distinct pairs once on 1 thread (\"distinct_1\"); a fresh scorer per run \
                   and thread; wall-clock seconds, and process CPU seconds (best run)",
        "results": results,
    });
    println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    ExitCode::SUCCESS
}
