//! The in-flight limit holds across all callers.

use std::sync::Arc;
use std::time::Duration;

use crate::server::{chat, Server};
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
