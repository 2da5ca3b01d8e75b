use std::sync::OnceLock;

use assay_llm::Embedder;
use assay_local::{Error, LocalEmbedder, LocalSpec};

fn embedder() -> &'static LocalEmbedder {
    static E: OnceLock<LocalEmbedder> = OnceLock::new();
    E.get_or_init(|| {
        LocalEmbedder::from_spec(&LocalSpec::Default)
            .unwrap_or_else(|e| panic!("cannot load the local embedder: {e}"))
    })
}

fn embed(texts: &[&str]) -> Vec<Vec<f32>> {
    let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    embedder().embed_blocking(&texts).unwrap().0
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

#[test]
fn published_similarity_is_reproduced() {
    let v = embed(&["A man is eating food.", "A man is eating a piece of bread."]);
    assert_eq!(v.len(), 2);
    assert_eq!(v[0].len(), 384);
    let cos = dot(&v[0], &v[1]);
    assert!((cos - 0.7553).abs() < 1e-4, "cosine {cos}");
}

#[test]
fn vectors_are_unit_length_and_batching_does_not_change_them() {
    let texts = [
        "A man is eating food.",
        "The new movie is awesome, I loved it!",
        "",
        "Ünïcödé, punctuation... and   spaces\ttabs",
    ];
    let together = embed(&texts);
    for (t, v) in texts.iter().zip(&together) {
        assert!((dot(v, v) - 1.0).abs() < 1e-5, "{t}");
        let alone = &embed(&[t])[0];
        let diff = v
            .iter()
            .zip(alone)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(diff < 1e-5, "{t}: {diff}");
    }
}

#[test]
fn related_sentences_are_closer_than_unrelated_ones() {
    let v = embed(&[
        "The cat sits on the mat.",
        "A cat is sitting on a rug.",
        "Quarterly revenue grew by eight percent.",
    ]);
    assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]) + 0.3);
}

#[test]
fn long_texts_are_truncated_not_refused() {
    let long = "word ".repeat(2000);
    let v = embed(&[&long]);
    assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-5);
}

#[test]
fn the_trait_reports_vectors_and_tokens() {
    let texts = vec!["hello world".to_string()];
    let out = futures_block_on(embedder().embed(&texts)).unwrap();
    assert_eq!(out.vectors.len(), 1);
    // [CLS] hello world [SEP]
    assert_eq!(out.usage.prompt_tokens, 4);
}

#[test]
fn truncated_weights_are_a_clear_error() {
    let src = LocalSpec::Default;
    let dir = assay_local::models_dir().join("all-minilm-l6-v2");
    let tmp = tempdir("embed-truncated");
    for f in ["tokenizer.json", "config.json"] {
        std::fs::copy(dir.join(f), tmp.join(f)).unwrap();
    }
    let bytes = std::fs::read(dir.join("model.safetensors"))
        .unwrap_or_else(|e| panic!("{src} weights missing ({e}); run scripts/fetch-models.sh"));
    std::fs::write(tmp.join("model.safetensors"), &bytes[..bytes.len() / 2]).unwrap();
    match LocalEmbedder::load(&tmp, "truncated") {
        Err(Error::ModelInvalid { detail, .. }) => assert!(!detail.is_empty()),
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("a truncated file loaded"),
    }
    std::fs::remove_file(tmp.join("model.safetensors")).unwrap();
    let e = LocalEmbedder::load(&tmp, "missing").err().unwrap();
    assert!(e.to_string().contains("scripts/fetch-models.sh"), "{e}");
    std::fs::remove_dir_all(&tmp).unwrap();
}

pub fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("assay-local-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Polls a future that completes without waiting (the local models compute
/// inside `poll`), so no runtime is needed.
pub fn futures_block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("the local model's future was not ready"),
    }
}
