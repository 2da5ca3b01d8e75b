use std::sync::{Arc, OnceLock};

use std::path::Path;

use assay_llm::{Embedder, ModelIdentity};
use assay_local::{Error, LocalEmbedder, LocalSpec, Offloaded};

fn embedder() -> &'static Arc<LocalEmbedder> {
    static E: OnceLock<Arc<LocalEmbedder>> = OnceLock::new();
    E.get_or_init(|| {
        Arc::new(
            LocalEmbedder::from_spec(&LocalSpec::Default)
                .unwrap_or_else(|e| panic!("cannot load the local embedder: {e}")),
        )
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
fn the_thread_count_does_not_change_a_bit_of_any_vector() {
    // 70 texts of varied lengths: more than two batches, split unevenly.
    let texts: Vec<String> = (0..70)
        .map(|i| format!("Sentence {i} says {}.", "something more ".repeat(i % 9)))
        .collect();
    let on = |threads: usize| {
        LocalEmbedder::from_spec(&LocalSpec::Default)
            .unwrap()
            .with_threads(threads)
            .embed_blocking(&texts)
            .unwrap()
    };
    let (one, tokens) = on(1);
    assert_eq!(one.len(), texts.len());
    for threads in [2, 3, 8, 100] {
        let (vectors, counted) = on(threads);
        assert_eq!(counted, tokens, "{threads} threads");
        assert_eq!(vectors, one, "{threads} threads");
    }
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
    let out = current_thread()
        .block_on(Offloaded::new(Arc::clone(embedder())).embed(&texts))
        .unwrap();
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

/// The same embedder in folders of the same name under two different
/// parents gives the same identity, which names neither parent.
#[test]
fn the_identity_is_the_same_wherever_the_model_is() {
    let src = assay_local::models_dir().join("all-minilm-l6-v2");
    let identity = identity_at_two_places(
        "embed-where",
        |parent| {
            let dir = parent.join("all-minilm-l6-v2");
            std::fs::create_dir(&dir).unwrap();
            for f in ["model.safetensors", "tokenizer.json", "config.json"] {
                link_or_copy(&src.join(f), &dir.join(f));
            }
            LocalSpec::File(dir)
        },
        |spec| {
            LocalEmbedder::from_spec(spec)
                .unwrap_or_else(|e| panic!("cannot load {spec}: {e}"))
                .identity()
                .clone()
        },
    );
    // `sha256sum config.json model.safetensors tokenizer.json | sha256sum`
    // in the folder scripts/fetch-models.sh fills.
    assert_eq!(
        identity.endpoint,
        "all-minilm-l6-v2@sha256:843a1ab71ebc52c11094cfbef57c4a45525e2aa0a7bcda0cdaaef97bf2dd9b2f"
    );
    assert_eq!(embedder().identity(), &identity, "the known embedder");
}

/// Places a model in two fresh temporary folders (`place` returns its spec
/// there), loads both (`identity`), checks that they have the same identity
/// and that it mentions neither folder, as it goes into cache keys and
/// manifests; returns it.
pub fn identity_at_two_places(
    name: &str,
    place: impl Fn(&Path) -> LocalSpec,
    identity: impl Fn(&LocalSpec) -> ModelIdentity,
) -> ModelIdentity {
    let dirs = ["a", "b"].map(|side| tempdir(&format!("{name}-{side}")));
    let [first, second] = dirs.each_ref().map(|dir| identity(&place(dir)));
    assert_eq!(first, second);
    let text = serde_json::to_string(&first).unwrap();
    for dir in dirs {
        assert!(
            !text.contains(&dir.display().to_string()),
            "{text} names {}",
            dir.display()
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
    first
}

/// A hard link (no copy of hundreds of megabytes), or a copy where the
/// two paths are on different file systems.
pub fn link_or_copy(from: &Path, to: &Path) {
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).unwrap_or_else(|e| {
            panic!(
                "cannot copy {} ({e}); run scripts/fetch-models.sh",
                from.display()
            )
        });
    }
}

pub fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("assay-local-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A single-threaded runtime, for the trait methods.
pub fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime")
}

/// Reference ids from HuggingFace `tokenizers` 0.20.3 on the shipped
/// tokenizer.json (padding off, truncation 256).
#[test]
fn token_ids_match_huggingface_tokenizers() {
    let cases: [(&str, &[u32]); 7] = [
        (
            "A man is eating food.",
            &[101, 1037, 2158, 2003, 5983, 2833, 1012, 102],
        ),
        (
            "Ünïcödé, punctuation... and   spaces\ttabs",
            &[
                101, 27260, 1010, 26136, 6593, 14505, 1012, 1012, 1012, 1998, 7258, 21628, 2015,
                102,
            ],
        ),
        (
            "naïve café—“quoted” text: 3.14 % ok?",
            &[
                101, 15743, 7668, 1517, 1523, 9339, 1524, 3793, 1024, 1017, 1012, 2403, 1003, 7929,
                1029, 102,
            ],
        ),
        (
            "東京は日本の首都です。",
            &[
                101, 1879, 1755, 1672, 1864, 1876, 1671, 100, 1961, 1665, 30184, 1636, 102,
            ],
        ),
        (
            "supercalifragilisticexpialidocious antidisestablishmentarianism",
            &[
                101, 3565, 9289, 10128, 29181, 24411, 4588, 10288, 19312, 21273, 10085, 6313, 3424,
                10521, 4355, 7875, 13602, 3672, 12199, 2964, 102,
            ],
        ),
        (
            "e-mail: someone@example.com #hashtag $100",
            &[
                101, 1041, 1011, 5653, 1024, 2619, 1030, 2742, 1012, 4012, 1001, 23325, 15900,
                1002, 2531, 102,
            ],
        ),
        ("", &[101, 102]),
    ];
    for (text, want) in cases {
        assert_eq!(embedder().token_ids(text), want, "{text:?}");
    }
}
