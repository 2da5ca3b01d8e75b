//! Retries, waits and error kinds against injected faults.

use std::time::Duration;

use assay_llm::{FailureKind, JudgeHistory, Source};

use crate::server::faults::Fault;
use crate::server::{chat, chat_body, error, Reply, Server};
use crate::{judge, options, request, KEY};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_and_resets_are_retried_until_success() {
    let server = Server::start(|_, n| match n {
        0 => error(500, "boom"),
        1 => error(503, "overloaded"),
        2 => Reply::Reset,
        _ => chat("fine"),
    })
    .await;
    let answer = judge(&options(&server), None)
        .chat(&request("q"))
        .await
        .unwrap();
    assert_eq!(answer.text, "fine");
    assert_eq!(answer.source, Source::Upstream);
    assert_eq!(server.count(), 4, "three failures, then the success");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_stop_at_max_retries_with_the_last_kind() {
    let server = Server::start(|_, _| error(429, "slow down")).await;
    let mut opts = options(&server);
    opts.max_retries = 3;
    let err = judge(&opts, None).chat(&request("q")).await.unwrap_err();
    assert_eq!(err.kind(), FailureKind::RateLimited);
    assert!(
        err.detail().contains("after 4 attempt(s)"),
        "{}",
        err.detail()
    );
    assert_eq!(server.count(), 4, "one attempt plus three retries");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_is_honoured_in_seconds_and_milliseconds() {
    let server = Server::start(|_, n| match n {
        0 => error(429, "wait").with_header("Retry-After", "1"),
        1 => error(429, "wait").with_header("retry-after-ms", "400"),
        _ => chat("ok"),
    })
    .await;
    // Backoff alone would wait at most 1 ms, so the gaps come from Retry-After.
    let mut opts = options(&server);
    opts.backoff_base = Duration::from_millis(1);
    opts.backoff_max = Duration::from_millis(1);
    judge(&opts, None).chat(&request("q")).await.unwrap();
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[1].at - reqs[0].at >= Duration::from_secs(1));
    assert!(reqs[2].at - reqs[1].at >= Duration::from_millis(400));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_beyond_the_allowed_wait_fails_at_once() {
    let server =
        Server::start(|_, _| error(429, "come back tomorrow").with_header("Retry-After", "86400"))
            .await;
    let err = judge(&options(&server), None)
        .chat(&request("q"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), FailureKind::RateLimited);
    assert_eq!(err.retry_after(), Some(Duration::from_secs(86400)));
    assert_eq!(server.count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthorised_is_fatal_not_retried_and_never_shows_the_key() {
    let server = Server::start(|r, _| {
        // Echo the presented credential, as some servers do, to prove it is masked.
        error(
            401,
            &format!(
                "Incorrect API key provided: {}",
                r.header("authorization").unwrap_or("")
            ),
        )
    })
    .await;
    let err = judge(&options(&server), None)
        .chat(&request("q"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), FailureKind::Auth);
    assert!(err.is_run_fatal(JudgeHistory::Answered));
    assert_eq!(server.count(), 1, "auth failures are not retried");
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("Incorrect API key provided"), "{shown}");
}

/// Whether `text` holds 8 or more characters of the key in a row.
fn shows_the_key(text: &str) -> bool {
    KEY.as_bytes()
        .windows(8)
        .any(|part| text.contains(std::str::from_utf8(part).unwrap()))
}

/// The key as JSON spells it with every character escaped (`\u0073...`).
fn escaped_key() -> String {
    KEY.chars()
        .map(|c| format!("\\u{:04x}", c as u32))
        .collect()
}

fn raw_json(status: u16, body: String) -> Reply {
    Reply::Http {
        status,
        headers: Vec::new(),
        body,
        delay: Duration::ZERO,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_quoted_back_is_masked_even_at_the_excerpts_end_or_json_escaped() {
    // Quoted where the excerpt of the message kept in a detail ends: no
    // part of it is left at the cut.
    let server = Server::start(|r, _| {
        let key = r
            .header("authorization")
            .unwrap_or("")
            .replace("Bearer ", "");
        error(500, &format!("{}{key}", ".".repeat(390)))
    })
    .await;
    let mut opts = options(&server);
    opts.max_retries = 0;
    let err = judge(&opts, None).chat(&request("q")).await.unwrap_err();
    assert_eq!(err.kind(), FailureKind::Server);
    assert!(err.detail().contains(".........."), "{}", err.detail());
    assert!(!shows_the_key(&format!("{err} {err:?}")), "{err}");

    // Spelt with JSON escapes in an error message, and in an answer.
    let server = Server::start(|r, _| {
        let body = |message: &str| format!(r#"{{"error": {{"message": "bad key {message}"}}}}"#);
        if r.last_message() == "refuse" {
            raw_json(401, body(&escaped_key()))
        } else {
            let answer = chat_body("KEY", "stop").to_string();
            raw_json(
                200,
                answer.replace("KEY", &format!("your key: {}", escaped_key())),
            )
        }
    })
    .await;
    let opts = options(&server);
    let err = judge(&opts, None)
        .chat(&request("refuse"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), FailureKind::Auth);
    assert!(err.detail().contains("bad key ****"), "{}", err.detail());
    let answer = judge(&opts, None).chat(&request("q")).await.unwrap();
    assert_eq!(answer.text, "your key: ****");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_slower_than_the_timeout_is_a_retried_timeout() {
    let server = Server::start(|_, _| Reply::SlowBody {
        body: chat_body("late", "stop").to_string(),
        stall: Duration::from_secs(3),
    })
    .await;
    let mut opts = options(&server);
    opts.attempt_timeout = Duration::from_millis(300);
    opts.max_retries = 2;
    let err = judge(&opts, None).chat(&request("q")).await.unwrap_err();
    assert_eq!(err.kind(), FailureKind::Timeout);
    assert_eq!(server.count(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_beyond_the_timeout_then_a_fast_answer_succeeds() {
    let server = Server::start(|_, n| match n {
        0 => chat("slow").after(Duration::from_secs(3)),
        _ => chat("fast"),
    })
    .await;
    let mut opts = options(&server);
    opts.attempt_timeout = Duration::from_millis(300);
    let answer = judge(&opts, None).chat(&request("q")).await.unwrap();
    assert_eq!(answer.text, "fast");
    assert_eq!(server.count(), 2);
}

/// A 200 whose JSON is cut off is asked again within the retry budget
/// (gateways answer so under load), and is an invalid response once the
/// budget is spent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_is_retried_then_an_invalid_response() {
    let server = Server::start(|_, _| Reply::Http {
        status: 200,
        headers: Vec::new(),
        body: "{\"choices\": [".into(),
        delay: Duration::ZERO,
    })
    .await;
    let err = judge(&options(&server), None)
        .chat(&request("q"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), FailureKind::InvalidResponse);
    let budget = options(&server).max_retries as usize;
    assert_eq!(server.count(), 1 + budget);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finish_reason_length_is_truncated_with_the_raw_text() {
    let server = Server::start(|_, _| {
        crate::server::Reply::json(200, chat_body("{\"verdict\": ", "length"))
    })
    .await;
    let err = judge(&options(&server), None)
        .chat(&request("q"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), FailureKind::Truncated);
    assert_eq!(err.raw_output(), Some("{\"verdict\": "));
    assert_eq!(server.count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_client_errors_are_rejected_and_content_filter_is_typed() {
    let server = Server::start(|r, _| match r.last_message() {
        "filtered" => Reply::json(
            400,
            serde_json::json!({"error": {"message": "no", "code": "content_filter"}}),
        ),
        _ => error(404, "model not found"),
    })
    .await;
    let j = judge(&options(&server), None);
    let unknown = j.chat(&request("unknown model")).await.unwrap_err();
    assert_eq!(unknown.kind(), FailureKind::Rejected);
    // Every call names the same model: fatal to a run that has had no answer.
    assert!(unknown.is_endpoint_fault());
    assert!(unknown.is_run_fatal(JudgeHistory::NothingAnswered));
    assert!(!unknown.is_run_fatal(JudgeHistory::Answered));
    assert_eq!(
        j.chat(&request("filtered")).await.unwrap_err().kind(),
        FailureKind::ContentFilter
    );
    assert_eq!(server.count(), 2);
}

/// A base URL whose port was just free: nothing listens there.
fn closed_port_url() -> String {
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    format!("http://{addr}/v1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_before_any_answer_is_not_retried_and_is_run_fatal() {
    let opts = assay_llm::ProviderOptions {
        base_url: Some(closed_port_url()),
        backoff_base: Duration::from_millis(1),
        backoff_max: Duration::from_millis(2),
        max_retries: 2,
        ..Default::default()
    };
    let err = judge(&opts, None).chat(&request("q")).await.unwrap_err();
    assert_eq!(err.kind(), FailureKind::Connection);
    assert!(
        err.detail().contains("cannot connect") && err.detail().contains("after 1 attempt(s)"),
        "{}",
        err.detail()
    );
    assert!(err.is_endpoint_fault());
    assert!(err.is_run_fatal(JudgeHistory::NothingAnswered));
}

/// A server that answered, then went away (connections refused since),
/// is an outage: retried, and no reason to stop a run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_after_an_answer_is_retried_and_not_run_fatal() {
    let server = Server::start(|_, n| match n {
        0 => chat("first"),
        _ => Reply::Shutdown,
    })
    .await;
    let mut opts = options(&server);
    opts.max_retries = 2;
    let j = judge(&opts, None);
    assert_eq!(j.chat(&request("one")).await.unwrap().text, "first");
    let err = j.chat(&request("two")).await.unwrap_err();
    assert_eq!(err.kind(), FailureKind::Connection);
    assert!(
        err.detail().contains("cannot connect") && err.detail().contains("after 3 attempt(s)"),
        "{}",
        err.detail()
    );
    assert!(!err.is_run_fatal(JudgeHistory::Answered));
    assert_eq!(
        server.count(),
        2,
        "the answer, then the request it went away on"
    );
}

/// The body a healthy server sends, that the faults below are made from.
fn good_body() -> String {
    chat_body("fine", "stop").to_string()
}

/// Options for the fault table: a short attempt timeout so that a stalled
/// body times out, and a 16 KiB body limit so that a huge body is cheap.
fn fault_options(server: &Server) -> assay_llm::ProviderOptions {
    let mut opts = options(server);
    opts.attempt_timeout = Duration::from_millis(500);
    opts.max_response_bytes = 16 << 10;
    opts.max_retries = 2;
    opts
}

/// Each fault once, then a healthy answer: every fault but an answer
/// naming another model costs exactly one retry, and the call succeeds.
/// (A body over the size limit is the request's answer, not retried: see
/// `an_oversized_body_is_an_invalid_response`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_once_costs_one_retry_then_the_answer() {
    for fault in Fault::ALL.into_iter().filter(|f| *f != Fault::HugeBody) {
        let server = Server::start(move |_, n| match n {
            0 => fault.reply(&good_body(), Duration::from_secs(30), 64 << 10),
            _ => chat("fine"),
        })
        .await;
        let answer = judge(&fault_options(&server), None)
            .chat(&request("q"))
            .await
            .unwrap_or_else(|e| panic!("{fault:?}: {e}"));
        assert_eq!(answer.text, "fine", "{fault:?}");
        let expected = if fault.is_failure() { 2 } else { 1 };
        assert_eq!(server.count(), expected, "{fault:?}");
    }
}

/// Each fault on every attempt: the retry budget is spent (no more), and
/// the call fails with the fault's kind, never a panic or a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_always_spends_the_budget_and_ends_typed() {
    for fault in Fault::ALL.into_iter().filter(|f| f.is_failure()) {
        let server =
            Server::start(move |_, _| fault.reply(&good_body(), Duration::from_secs(30), 64 << 10))
                .await;
        let opts = fault_options(&server);
        let err = judge(&opts, None)
            .chat(&request("q"))
            .await
            .expect_err("a fault on every attempt");
        let kind = match fault {
            Fault::RateLimited | Fault::RateLimitedRetryAfter => FailureKind::RateLimited,
            Fault::Internal | Fault::BadGateway | Fault::Unavailable => FailureKind::Server,
            Fault::ResetBeforeHead | Fault::ResetMidBody | Fault::WrongContentLength => {
                FailureKind::Connection
            }
            Fault::Stall => FailureKind::Timeout,
            _ => FailureKind::InvalidResponse,
        };
        assert_eq!(err.kind(), kind, "{fault:?}: {err}");
        let attempts = if fault == Fault::HugeBody {
            1
        } else {
            1 + opts.max_retries as usize
        };
        assert_eq!(server.count(), attempts, "{fault:?}");
        assert!(
            !err.is_run_fatal(JudgeHistory::NothingAnswered),
            "{fault:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_body_is_an_invalid_response() {
    let big = "x".repeat(64 * 1024);
    let server = Server::start(move |_, _| chat(&big)).await;
    let mut opts = options(&server);
    opts.max_response_bytes = 16 * 1024;
    let err = judge(&opts, None).chat(&request("q")).await.unwrap_err();
    assert_eq!(err.kind(), FailureKind::InvalidResponse);
    assert!(
        err.detail().contains("larger than 16384 bytes"),
        "{}",
        err.detail()
    );
    assert_eq!(server.count(), 1);
}
