//! Embeddings: batching, unit normalisation and per-text caching.

use std::sync::Arc;

use assay_llm::{Cache, CachedEmbedder, Embedder, FailureKind, Limiter, OpenAiEmbedder, Secret};
use serde_json::json;

use crate::server::{Reply, Server};
use crate::{options, spec, temp_dir, KEY};

/// Vector of text `t`: [len(t), 1, 0] (not unit length on purpose).
fn embeddings_server() -> impl Fn(&crate::server::Recorded, usize) -> Reply {
    |r, _| {
        let inputs = r.body["input"].as_array().cloned().unwrap_or_default();
        // Answer in reverse order with explicit indices, as servers may.
        let data: Vec<_> = inputs
            .iter()
            .enumerate()
            .rev()
            .map(|(i, t)| json!({"index": i, "embedding": [t.as_str().unwrap().len() as f64, 1.0, 0.0]}))
            .collect();
        Reply::json(
            200,
            json!({"data": data, "usage": {"prompt_tokens": inputs.len()}}),
        )
    }
}

fn embedder(opts: &assay_llm::ProviderOptions) -> OpenAiEmbedder {
    let limiter = Arc::new(Limiter::new(opts.concurrency, opts.rpm, opts.tpm));
    OpenAiEmbedder::with_key(&spec("embed-model"), opts, Some(Secret::new(KEY)), limiter).unwrap()
}

fn texts(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_are_unit_length_in_input_order_and_batched() {
    let server = Server::start(embeddings_server()).await;
    let mut opts = options(&server);
    opts.embed_batch = 2;
    let out = embedder(&opts)
        .embed(&texts(&["a", "bbb", "cc", "dddd", "e"]))
        .await
        .unwrap();
    assert_eq!(server.count(), 3, "five texts in batches of two");
    assert_eq!(server.requests()[0].path, "/v1/embeddings");
    assert_eq!(out.usage.prompt_tokens, 5);
    assert_eq!(out.vectors.len(), 5);
    for (v, len) in out.vectors.iter().zip([1.0f64, 3.0, 2.0, 4.0, 1.0]) {
        let norm = (len * len + 1.0).sqrt();
        let want = [len / norm, 1.0 / norm, 0.0];
        assert_eq!(v.len(), 3);
        for (got, want) in v.iter().zip(want) {
            assert!((f64::from(*got) - want).abs() < 1e-6, "{v:?}");
        }
        let unit: f64 = v.iter().map(|x| f64::from(*x) * f64::from(*x)).sum();
        assert!((unit - 1.0).abs() < 1e-6);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_vectors_are_reused_per_text() {
    let server = Server::start(embeddings_server()).await;
    let dir = temp_dir("embed");
    let cache = Arc::new(Cache::open(dir.path().join("c.sqlite")).unwrap());
    let e = CachedEmbedder::new(
        Arc::new(embedder(&options(&server))),
        Some(Arc::clone(&cache)),
    );
    let first = e.embed(&texts(&["x", "yy"])).await.unwrap();
    let second = e.embed(&texts(&["yy", "zzz", "x"])).await.unwrap();
    assert_eq!(server.count(), 2);
    assert_eq!(
        server.requests()[1].body["input"],
        json!(["zzz"]),
        "only the new text is sent"
    );
    assert_eq!(second.vectors[0], first.vectors[1]);
    assert_eq!(second.vectors[2], first.vectors[0]);
    assert_eq!(cache.stats().unwrap().embedding_entries, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_vector_or_wrong_count_is_invalid() {
    let server = Server::start(|r, _| match r.body["input"][0].as_str() {
        Some("zero") => Reply::json(
            200,
            json!({"data": [{"index": 0, "embedding": [0.0, 0.0]}]}),
        ),
        _ => Reply::json(200, json!({"data": []})),
    })
    .await;
    let e = embedder(&options(&server));
    assert_eq!(
        e.embed(&texts(&["zero"])).await.unwrap_err().kind(),
        FailureKind::InvalidResponse
    );
    assert_eq!(
        e.embed(&texts(&["other"])).await.unwrap_err().kind(),
        FailureKind::InvalidResponse
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_share_texts_in_flight_and_duplicates_are_sent_once() {
    let inner = embeddings_server();
    let arrived = Arc::new(tokio::sync::Notify::new());
    let signal = Arc::clone(&arrived);
    let server = Server::start(move |r, n| {
        signal.notify_one();
        inner(r, n).after(std::time::Duration::from_millis(300))
    })
    .await;
    let e = Arc::new(CachedEmbedder::new(
        Arc::new(embedder(&options(&server))),
        None,
    ));
    let first = {
        let e = Arc::clone(&e);
        tokio::spawn(async move { e.embed(&texts(&["a", "bb", "a"])).await })
    };
    // The second call starts once the first one has reached the server.
    tokio::time::timeout(std::time::Duration::from_secs(10), arrived.notified())
        .await
        .expect("the first call never reached the server");
    let second = e.embed(&texts(&["bb", "ccc"])).await.unwrap();
    let first = first.await.unwrap().unwrap();
    let sent: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.body["input"].clone())
        .collect();
    assert_eq!(sent, [json!(["a", "bb"]), json!(["ccc"])]);
    assert_eq!(first.vectors.len(), 3);
    assert_eq!(first.vectors[0], first.vectors[2]);
    assert_eq!(
        second.vectors[0], first.vectors[1],
        "bb was shared, not re-sent"
    );
}

/// A 200 that is not a usable embeddings answer (an error object, no
/// vectors) is asked again within the retry budget, as for chat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_success_is_retried_like_a_server_error() {
    use crate::server::faults::Fault;
    let healthy = embeddings_server();
    let server = Server::start(move |r, n| match n {
        0 => Fault::ErrorObject.reply("", std::time::Duration::ZERO, 0),
        1 => Fault::NoChoices.reply("", std::time::Duration::ZERO, 0),
        _ => healthy(r, n),
    })
    .await;
    let out = embedder(&options(&server))
        .embed(&texts(&["a", "bb"]))
        .await
        .unwrap();
    assert_eq!(out.vectors.len(), 2);
    assert_eq!(server.count(), 3, "two unusable answers, then the good one");
}
