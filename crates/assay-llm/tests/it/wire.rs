//! HTTP/1.1 framing and connection handling of plain-http endpoints, with
//! answers written byte for byte by the server.

use assay_llm::{FailureKind, Source};

use crate::server::{chat, chat_body, Reply, Server};
use crate::{judge, options, request};

/// A chat completion answering `content`, as JSON text.
fn completion(content: &str) -> String {
    chat_body(content, "stop").to_string()
}

/// `text` cut into chunks of `size` bytes in chunked transfer coding, with
/// a chunk extension on the first and a trailer after the last.
fn chunked(text: &str, size: usize) -> String {
    let mut out = String::new();
    for (i, piece) in text.as_bytes().chunks(size).enumerate() {
        let ext = if i == 0 { ";name=value" } else { "" };
        out.push_str(&format!("{:x}{ext}\r\n", piece.len()));
        out.push_str(std::str::from_utf8(piece).expect("ascii"));
        out.push_str("\r\n");
    }
    out.push_str("0\r\nx-trailer: done\r\n\r\n");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_answer_is_read_whole() {
    let body = completion("chunks joined");
    let server = Server::start(move |_, _| {
        Reply::raw(format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{}",
            chunked(&body, 7)
        ))
    })
    .await;
    let answer = judge(&options(&server), None)
        .chat(&request("q"))
        .await
        .unwrap();
    assert_eq!(answer.text, "chunks joined");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_ended_by_closing_the_connection_is_read_whole_and_the_next_request_connects_again(
) {
    let server = Server::start(|_, n| {
        Reply::raw(format!(
            "HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n{}",
            completion(&format!("answer {n}"))
        ))
    })
    .await;
    // No retries: a closed connection taken for the second request would fail it.
    let mut opts = options(&server);
    opts.max_retries = 0;
    let judge = judge(&opts, None);
    for (i, q) in ["first", "second"].into_iter().enumerate() {
        let answer = judge.chat(&request(q)).await.unwrap();
        assert_eq!(answer.text, format!("answer {i}"));
    }
    assert_eq!(server.connections(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_close_is_honoured_and_interim_answers_are_skipped() {
    let server = Server::start(|_, n| {
        Reply::raw({
            let body = completion(&format!("answer {n}"));
            format!(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nConnection: close\r\n\
                 content-length: {}\r\n\r\n{body}",
                body.len()
            )
        })
    })
    .await;
    let mut opts = options(&server);
    opts.max_retries = 0;
    let judge = judge(&opts, None);
    for i in 0..3 {
        let answer = judge.chat(&request(&format!("q{i}"))).await.unwrap();
        assert_eq!(answer.text, format!("answer {i}"));
    }
    assert_eq!(server.connections(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_alive_connections_carry_request_after_request() {
    let server = Server::start(|_, n| chat(&format!("answer {n}"))).await;
    let judge = judge(&options(&server), None);
    for i in 0..5 {
        let answer = judge.chat(&request(&format!("q{i}"))).await.unwrap();
        assert_eq!(answer.text, format!("answer {i}"));
        assert_eq!(answer.source, Source::Upstream);
    }
    assert_eq!(server.count(), 5);
    assert_eq!(server.connections(), 1, "one connection, kept alive");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_cut_short_is_a_connection_error_and_retried() {
    let full = completion("whole");
    let server = Server::start(move |_, n| match n {
        0 => Reply::raw(format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{}",
            full.len(),
            &full[..full.len() / 2]
        )),
        _ => chat("whole"),
    })
    .await;
    let answer = judge(&options(&server), None)
        .chat(&request("q"))
        .await
        .unwrap();
    assert_eq!(answer.text, "whole");
    assert_eq!(server.count(), 2);

    let server =
        Server::start(|_, _| Reply::raw("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort"))
            .await;
    let mut opts = options(&server);
    opts.max_retries = 1;
    let err = judge(&opts, None).chat(&request("q")).await.unwrap_err();
    assert_eq!(err.kind(), FailureKind::Connection);
    assert!(
        err.detail().contains("after 5 of 10 body bytes") && err.detail().contains("2 attempt"),
        "{}",
        err.detail()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_that_are_not_http_or_too_long_fail_with_their_kind() {
    let server = Server::start(|_, _| Reply::raw("SSH-2.0-OpenSSH_9.6\r\n\r\n")).await;
    let mut opts = options(&server);
    opts.max_retries = 0;
    let err = judge(&opts, None).chat(&request("q")).await.unwrap_err();
    assert_eq!(err.kind(), FailureKind::Connection);
    assert!(
        err.detail().contains("not a valid HTTP/1.1 answer"),
        "{}",
        err.detail()
    );

    let body = completion(&"x".repeat(2000));
    let server = Server::start(move |_, _| {
        Reply::raw(format!(
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n{}",
            chunked(&body, 100)
        ))
    })
    .await;
    let mut opts = options(&server);
    opts.max_response_bytes = 1000;
    let err = judge(&opts, None).chat(&request("q")).await.unwrap_err();
    assert_eq!(err.kind(), FailureKind::InvalidResponse);
    assert!(
        err.detail().contains("larger than 1000 bytes"),
        "{}",
        err.detail()
    );
    assert_eq!(server.count(), 1, "a too-long answer is not asked again");
}
