//! The in-flight limit holds across all callers; the tokens-per-minute
//! bucket is settled with the usage the server reports.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::server::{chat, chat_body, Reply, Server};
use crate::{judge, options, request};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_more_than_concurrency_requests_are_in_flight() {
    let server = Server::start(|_, _| chat("ok").after(Duration::from_millis(100))).await;
    let mut opts = options(&server);
    opts.concurrency = 3;
    let j = Arc::new(judge(&opts, None));
    let tasks: Vec<_> = (0..12)
        .map(|i| {
            let j = Arc::clone(&j);
            tokio::spawn(async move { j.chat(&request(&format!("q{i}"))).await })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    // Twelve callers at once, 100 ms an answer: the limit is reached, not passed.
    assert_eq!(server.peak_in_flight(), 3);
    let mut arrivals: Vec<_> = server.requests().iter().map(|r| r.at).collect();
    arrivals.sort();
    assert_eq!(arrivals.len(), 12);
    // Request k can only start once request k-3 was answered, 100 ms after it arrived.
    for k in 3..arrivals.len() {
        assert!(
            arrivals[k] - arrivals[k - 3] >= Duration::from_millis(100),
            "request {k} started too early"
        );
    }
}

/// A completion reporting `prompt` + `completion` tokens.
fn answer_using(prompt: u64, completion: u64) -> Reply {
    let mut body = chat_body("ok", "stop");
    body["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion,
        "total_tokens": prompt + completion});
    Reply::json(200, body)
}

/// Seconds between the first two requests the server received.
fn gap(server: &Server) -> Duration {
    let arrivals: Vec<_> = server.requests().iter().map(|r| r.at).collect();
    assert_eq!(arrivals.len(), 2);
    arrivals[1] - arrivals[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tpm_charges_the_tokens_the_server_reports_beyond_the_estimate() {
    // 6000 tokens per minute, 100 per second. A request debits about 130
    // tokens up front (a quarter of its 500-byte body, and `max_tokens` 1);
    // the server reports 6000, which empties the bucket, so the next
    // request waits for its own estimate to refill (1.3 s). Debiting the
    // estimate alone would send it at once.
    let server = Server::start(|_, _| answer_using(5_990, 10)).await;
    let mut opts = options(&server);
    opts.tpm = Some(6000);
    let j = judge(&opts, None);
    for i in 0..2 {
        let mut r = request(&format!("{i}{}", "x".repeat(400)));
        r.sampling.max_tokens = Some(1);
        j.chat(&r).await.unwrap();
    }
    let waited = gap(&server);
    assert!(waited >= Duration::from_secs(1), "{waited:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tpm_refunds_what_the_estimate_reserved_beyond_the_reported_usage() {
    // 1000 tokens per minute. A request asking for up to 100,000 completion
    // tokens debits the whole bucket; the server reports 18 used, so the
    // rest comes back and the next request goes at once. Keeping the
    // estimate would hold it back until the bucket refilled: a minute.
    let server = Server::start(|_, _| chat("ok")).await;
    let mut opts = options(&server);
    opts.tpm = Some(1000);
    let j = judge(&opts, None);
    for i in 0..2 {
        let mut r = request(&format!("q{i}"));
        r.sampling.max_tokens = Some(100_000);
        j.chat(&r).await.unwrap();
    }
    let waited = gap(&server);
    assert!(waited < Duration::from_secs(30), "{waited:?}");
}
