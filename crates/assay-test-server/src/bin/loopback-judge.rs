//! The content-reading loopback judge ([`assay_test_server::judge`]) as a
//! process, for the tests of the Python package: prints its base URL on
//! one line, then serves until its standard input closes, and then prints
//! `peak_in_flight N`: the most requests it was answering at once.
//!
//! `--latency-ms N` delays every reply by N ms; `--status N` answers every
//! request with HTTP status N and an error body instead, which quotes
//! the key it was given as OpenAI's 401 does (401: refused credentials); `--faulty-per-1000 N` puts a fault in place of N attempts
//! in a thousand, drawn from every kind of [`assay_test_server::faults`]
//! with `--fault-seed S` (default 0), stalls lasting `--stall-ms` (default
//! 60000). `--items N` gives the arrays of answers to prompts with no rule
//! of their own at least N items ([`assay_test_server::judge::satisfying_with`]),
//! for other libraries' metrics; `--fill-text 1` makes their strings the
//! prompt's sentences and `--fill-score N` their numbers without a maximum
//! N (with one, the maximum) ([`assay_test_server::judge::Fill`]), so that
//! another library's generator keeps what it asked for. On exit it also prints `faults_injected N`, the faults by kind
//! (`faults_by_kind NAME=N ...`), and the requests by how each relates to
//! the earlier ones of the same content ([`assay_test_server::faults::Tally`]):
//! `requests N`, `distinct_requests N`, `retries_after_fault N` and
//! `repeated N` (asked again although answered); and what was asked:
//! `chat_requests N`, `embedding_requests N` and `prompt_chars N`, the
//! characters of every chat request's messages (a benchmark's measure of
//! the tokens a judge reads, whatever its tokenizer).

use assay_test_server::faults::Schedule;
use assay_test_server::{arg, echo_credential, judge, Server};
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

fn main() {
    let latency = Duration::from_millis(arg("--latency-ms", 0));
    let status = arg("--status", 0);
    let fill = judge::Fill {
        items: arg("--items", 0) as usize,
        text: arg("--fill-text", 0) == 1,
        score: Some(arg("--fill-score", 0))
            .filter(|&s| s > 0)
            .map(|s| s as f64),
    };
    let mut schedule = Schedule::new(arg("--fault-seed", 0), arg("--faulty-per-1000", 0), &[]);
    schedule.stall = Duration::from_millis(arg("--stall-ms", 60_000));
    let schedule = Arc::new(schedule);
    let faults = Arc::clone(&schedule);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let server = rt.block_on(Server::start(move |req, _| {
        let reply = match u16::try_from(status) {
            Ok(code) if code > 0 => echo_credential(req, code),
            _ => faults.answer(req, judge::reply_filling(req, &fill)),
        };
        reply.after(latency)
    }));
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", server.base_url()).expect("stdout");
    stdout.flush().expect("stdout");
    // Serves until whoever started it closes our standard input.
    for line in std::io::stdin().lock().lines() {
        if line.is_err() {
            break;
        }
    }
    writeln!(stdout, "peak_in_flight {}", server.peak_in_flight()).expect("stdout");
    writeln!(stdout, "faults_injected {}", schedule.injected_total()).expect("stdout");
    let by_kind: Vec<String> = schedule
        .injected()
        .iter()
        .map(|(fault, n)| format!("{}={n}", fault.name()))
        .collect();
    writeln!(stdout, "faults_by_kind {}", by_kind.join(" ")).expect("stdout");
    let tally = schedule.tally();
    writeln!(stdout, "requests {}", tally.requests).expect("stdout");
    writeln!(stdout, "distinct_requests {}", tally.distinct).expect("stdout");
    writeln!(stdout, "retries_after_fault {}", tally.after_fault).expect("stdout");
    writeln!(stdout, "repeated {}", tally.repeated).expect("stdout");
    let asked = server.requests();
    let (embeddings, chats): (Vec<_>, Vec<_>) =
        asked.iter().partition(|r| r.path.ends_with("/embeddings"));
    let prompt_chars: usize = chats.iter().map(|r| message_chars(&r.body)).sum();
    writeln!(stdout, "chat_requests {}", chats.len()).expect("stdout");
    writeln!(stdout, "embedding_requests {}", embeddings.len()).expect("stdout");
    writeln!(stdout, "prompt_chars {prompt_chars}").expect("stdout");
}

/// The characters of a chat request's messages: each text content, and
/// each text part of a content given as parts.
fn message_chars(body: &serde_json::Value) -> usize {
    let text = |v: &serde_json::Value| v.as_str().map_or(0, |s| s.chars().count());
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| match m["content"].as_array() {
            Some(parts) => parts.iter().map(|p| text(&p["text"])).sum(),
            None => text(&m["content"]),
        })
        .sum()
}
