//! Measurements of the local judge and embedder; `bench/local/run.sh` runs
//! every part and prints the table (with llama.cpp's `llama-bench` beside).
//!
//! Usage: `local PART [ARGS]`, each part printing one `key value` per line:
//! - `pp N`: prompt processing of N tokens, tokens/s (median of `ASSAY_BENCH_REPS`);
//! - `tg N`: generation of N tokens, tokens/s (median of `ASSAY_BENCH_REPS`);
//! - `call`: a typical judge call (about 600 prompt tokens, 40 generated), seconds;
//! - `prefix`: 50 calls (`ASSAY_BENCH_CALLS`) sharing one instruction, with and without prefix caching;
//! - `embed`: sentences/s at batch 32, and calls of 4 sentences per second (medians of `ASSAY_BENCH_REPS`);
//! - `judge-mem` / `embed-mem`: load and use once (run under `/usr/bin/time -v`).
//!
//! Threads: `ASSAY_BENCH_THREADS` (default 2); judge model:
//! `ASSAY_BENCH_MODEL` (a GGUF path; default the default judge); prompt
//! chunk: `ASSAY_BENCH_CHUNK` (default [`JudgeOptions`]'s).

use std::time::{Duration, Instant};

use assay_llm::{ChatRequest, Message, PromptRef};
use assay_local::{
    JudgeOptions, KnownJudge, LlamaToken, LocalEmbedder, LocalJudge, LocalSpec, PrefixCaching,
};
use serde_json::json;

const TEXT: &str = "The committee met on Tuesday to review the annual budget. Members discussed \
the rising cost of maintenance for the old library building, the proposal to extend opening \
hours on weekends, and a grant application for new computers. After a long debate, they agreed \
to postpone the decision on the building until an engineer's report is available. ";

fn threads() -> usize {
    std::env::var("ASSAY_BENCH_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(2)
}

/// Calls of the prefix-caching run (`ASSAY_BENCH_CALLS`, default 50).
fn calls() -> usize {
    std::env::var("ASSAY_BENCH_CALLS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(50)
}

/// Repetitions inside one part (`ASSAY_BENCH_REPS`, default 3).
fn reps() -> usize {
    std::env::var("ASSAY_BENCH_REPS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(3)
}

fn judge(prefix_caching: PrefixCaching) -> LocalJudge {
    let options = JudgeOptions {
        threads: threads(),
        context: 4096,
        max_tokens: 128,
        prefix_caching,
        chunk: std::env::var("ASSAY_BENCH_CHUNK")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(JudgeOptions::default().chunk),
    };
    let loaded = match std::env::var_os("ASSAY_BENCH_MODEL") {
        Some(p) => LocalJudge::load(std::path::Path::new(&p), "bench", options),
        None => LocalJudge::known(KnownJudge::Qwen25Coder05b, options),
    };
    loaded.unwrap_or_else(|e| fail(&e.to_string()))
}

fn fail(msg: &str) -> ! {
    eprintln!("local bench: {msg}");
    std::process::exit(1)
}

fn request(system: &str, user: &str) -> ChatRequest {
    ChatRequest::new(
        PromptRef {
            id: "bench".into(),
            version: "1".into(),
        },
        vec![Message::system(system), Message::user(user)],
    )
}

/// Exactly `n` prompt tokens of ordinary text.
fn tokens(j: &LocalJudge, n: usize) -> Vec<LlamaToken> {
    let mut text = String::new();
    loop {
        text.push_str(TEXT);
        let t = j.tokenize(&text);
        if t.len() >= n {
            return t[..n].to_vec();
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let part = args.first().map(String::as_str).unwrap_or("");
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    match part {
        "pp" => {
            let j = judge(PrefixCaching::Disabled);
            let prompt = tokens(&j, n);
            let mut r = request("", "");
            r.sampling.max_tokens = Some(1);
            j.answer_tokens(&prompt, &r)
                .unwrap_or_else(|e| fail(&e.to_string()));
            let rates: Vec<f64> = (0..reps())
                .map(|_| {
                    let a = j
                        .answer_tokens(&prompt, &r)
                        .unwrap_or_else(|e| fail(&e.to_string()));
                    n as f64 / secs(a.prompt_time)
                })
                .collect();
            println!("pp{n} {:.2}", median(rates));
        }
        "tg" => {
            let j = judge(PrefixCaching::Disabled);
            let prompt = j.tokenize(
                &j.render(&[Message::user(
                    "Write a long essay about the history of Rome.",
                )])
                .unwrap_or_else(|e| fail(&e.to_string())),
            );
            let mut r = request("", "");
            r.sampling.max_tokens = Some(n as u32);
            let rates: Vec<f64> = (0..reps())
                .map(|_| {
                    let a = j
                        .answer_tokens(&prompt, &r)
                        .unwrap_or_else(|e| fail(&e.to_string()));
                    if a.completion_tokens != n {
                        fail(&format!(
                            "generated {} tokens, not {n}",
                            a.completion_tokens
                        ));
                    }
                    n as f64 / secs(a.generation_time)
                })
                .collect();
            println!("tg{n} {:.2}", median(rates));
        }
        "call" => {
            let j = judge(PrefixCaching::Disabled);
            let context = TEXT.repeat(9);
            let mut r = request(
                "You are a judge. Read the context and the answer, then explain briefly.",
                &format!(
                    "Context: {context}\nAnswer: The committee postponed the decision.\nExplain."
                ),
            );
            r.sampling.max_tokens = Some(40);
            let prompt = j.tokenize(
                &j.render(&r.messages)
                    .unwrap_or_else(|e| fail(&e.to_string())),
            );
            let runs: Vec<f64> = (0..reps())
                .map(|_| {
                    let t = Instant::now();
                    let a = j.answer(&r).unwrap_or_else(|e| fail(&e.to_string()));
                    if a.completion_tokens != 40 {
                        fail(&format!("generated {} tokens, not 40", a.completion_tokens));
                    }
                    secs(t.elapsed())
                })
                .collect();
            println!("call_prompt_tokens {}", prompt.len());
            println!("call_seconds {:.3}", median(runs));
        }
        "prefix" => {
            let instruction = format!(
                "You are a strict grader. Decide whether the statement is supported by the \
                 context. Answer with a short reason and a verdict. Examples follow. {}",
                TEXT.repeat(8)
            );
            let schema = json!({
                "type": "object",
                "properties": {"reason": {"type": "string"}, "verdict": {"enum": ["yes", "no"]}},
                "required": ["reason", "verdict"],
                "additionalProperties": false
            });
            for mode in [PrefixCaching::Disabled, PrefixCaching::Enabled] {
                let j = judge(mode);
                let t = Instant::now();
                let mut reused = 0;
                let mut prompt = 0;
                for i in 0..calls() {
                    let mut r = request(
                        &instruction,
                        &format!(
                            "Statement {i}: the committee met on day {i} and agreed on item {}.",
                            i * 7
                        ),
                    )
                    .with_schema(schema.clone());
                    r.sampling.max_tokens = Some(40);
                    let a = j.answer(&r).unwrap_or_else(|e| fail(&e.to_string()));
                    reused += a.reused_tokens;
                    prompt += a.prompt_tokens;
                }
                let name = match mode {
                    PrefixCaching::Enabled => "cached",
                    PrefixCaching::Disabled => "uncached",
                };
                println!("prefix_{name}_seconds {:.2}", secs(t.elapsed()));
                println!(
                    "prefix_{name}_reused_share {:.3}",
                    reused as f64 / prompt as f64
                );
            }
        }
        "embed" => {
            let e = LocalEmbedder::from_spec(&LocalSpec::Default)
                .unwrap_or_else(|e| fail(&e.to_string()))
                .with_threads(threads());
            // Sentences of everyday length (STS-benchmark-like, about a
            // dozen words), each made distinct.
            let base: Vec<&str> = include_str!("../../../bench/local/sentences.txt")
                .lines()
                .collect();
            let sentences: Vec<String> = base
                .iter()
                .cycle()
                .take(256)
                .enumerate()
                .map(|(i, s)| format!("{s} ({i})"))
                .collect();
            let tokens: usize = sentences.iter().map(|s| e.token_ids(s).len()).sum();
            println!(
                "embed_tokens_per_sentence {:.1}",
                tokens as f64 / sentences.len() as f64
            );
            // Calls of `size` sentences per second, the median of the reps.
            let calls_per_s = |size: usize| {
                let rates: Vec<f64> = (0..reps())
                    .map(|_| {
                        let t = Instant::now();
                        for call in sentences.chunks(size) {
                            e.embed_blocking(call)
                                .unwrap_or_else(|e| fail(&e.to_string()));
                        }
                        sentences.len().div_ceil(size) as f64 / secs(t.elapsed())
                    })
                    .collect();
                median(rates)
            };
            println!("embed_sentences_per_s {:.1}", 32.0 * calls_per_s(32));
            // answer_relevancy's call: the question and its generated ones.
            println!("embed_calls_of_4_per_s {:.1}", calls_per_s(4));
        }
        "judge-mem" => {
            let j = judge(PrefixCaching::Enabled);
            let mut r = request("You are a judge.", &TEXT.repeat(8));
            r.sampling.max_tokens = Some(40);
            j.answer(&r).unwrap_or_else(|e| fail(&e.to_string()));
        }
        "embed-mem" => {
            let e = LocalEmbedder::from_spec(&LocalSpec::Default)
                .unwrap_or_else(|e| fail(&e.to_string()));
            let batch: Vec<String> = (0..32).map(|i| format!("{TEXT} {i}")).collect();
            e.embed_blocking(&batch)
                .unwrap_or_else(|e| fail(&e.to_string()));
        }
        other => fail(&format!(
            "unknown part {other:?}; one of pp N, tg N, call, prefix, embed, judge-mem, embed-mem"
        )),
    }
}
