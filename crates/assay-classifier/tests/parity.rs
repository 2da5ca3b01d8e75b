//! Every architecture against `transformers`: tiny random models
//! (`tests/fixtures/ARCH`, made by scripts/fixtures/grounding-models.py)
//! with the Hugging Face tokenizer's ids and the model's float32 logits
//! on multilingual, emoji and past-the-window pairs. The token ids must
//! be equal, the logits within 1e-4.

use assay_classifier::{softmax, Architecture, Classifier, Error, Options};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn options(window: usize, label: Option<&str>) -> Options {
    Options {
        label: label.map(String::from),
        threads: 2,
        max_tokens: window,
        batch: 4,
    }
}

/// Loads the fixture and checks every case; returns the model.
fn check(name: &str, label: Option<&str>, architecture: Architecture) -> Classifier {
    let dir = fixture(name);
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let window = expected["window"].as_u64().unwrap() as usize;
    let model = Classifier::load(&dir, &options(window, label)).unwrap();
    assert_eq!(model.architecture(), architecture);
    let cases = expected["cases"].as_array().unwrap();
    let pairs: Vec<(&str, &str)> = cases
        .iter()
        .map(|c| {
            (
                c["premise"].as_str().unwrap(),
                c["hypothesis"].as_str().unwrap(),
            )
        })
        .collect();
    for (case, (p, h)) in cases.iter().zip(&pairs) {
        let ids: Vec<u32> = serde_json::from_value(case["ids"].clone()).unwrap();
        let got = model.encode(p, h).unwrap();
        assert_eq!(
            got.get_ids(),
            ids.as_slice(),
            "{name}: ids of {p:?} / {h:?}"
        );
        if let Some(types) = case["type_ids"].as_array() {
            let types: Vec<u32> = types.iter().map(|t| t.as_u64().unwrap() as u32).collect();
            assert_eq!(
                got.get_type_ids(),
                types.as_slice(),
                "{name}: type ids of {p:?}"
            );
        }
    }
    // Batched (padded, sorted by length) as a run computes them.
    let logits = model.logits(&pairs).unwrap();
    let mut worst = 0f64;
    for (case, got) in cases.iter().zip(&logits) {
        let want: Vec<f32> = serde_json::from_value(case["logits"].clone()).unwrap();
        // ModernBERT's head gives probabilities: compare distributions.
        let (want, got): (Vec<f64>, Vec<f64>) = if architecture == Architecture::ModernBert {
            let log = |v: &[f32]| softmax(v).iter().map(|p| p.ln()).collect::<Vec<_>>();
            (log(&want), log(got))
        } else {
            let wide = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
            (wide(&want), wide(got))
        };
        assert_eq!(want.len(), got.len());
        for (w, g) in want.iter().zip(&got) {
            worst = worst.max((w - g).abs());
            assert!(
                (w - g).abs() < 1e-4,
                "{name}: logits of {:?}: {got:?}, transformers {want:?}",
                case["hypothesis"]
            );
        }
    }
    eprintln!(
        "{name}: {} cases, largest difference {worst:.2e}",
        cases.len()
    );
    model
}

#[test]
fn bert_matches_transformers() {
    let m = check("bert", None, Architecture::Bert);
    assert_eq!(m.labels().supported_name(), "entailment");
}

#[test]
fn roberta_matches_transformers_with_a_named_label() {
    let m = check("roberta", Some("LABEL_1"), Architecture::Roberta);
    assert_eq!(m.labels().supported, 1);
}

#[test]
fn xlm_roberta_matches_transformers() {
    check("xlm-roberta", None, Architecture::Roberta);
}

#[test]
fn deberta_v2_matches_transformers() {
    check("deberta-v2", None, Architecture::DebertaV2);
}

#[test]
fn modernbert_matches_transformers() {
    let m = check("modernbert", None, Architecture::ModernBert);
    // "not_supported" is not read as supported.
    assert_eq!(m.labels().supported_name(), "supported");
}

/// HHEM-2.1-open's shape: a T5 token classifier under `t5.`, a config
/// that names only its foundation and prompt, the pair read through the
/// prompt, the first token's logits; class 1 is consistent.
#[test]
fn hhem_matches_transformers() {
    let m = check("hhem", None, Architecture::Hhem);
    assert_eq!(m.labels().supported_name(), "consistent");
    assert_eq!(m.labels().names, ["hallucinated", "consistent"]);
}

/// MiniCheck-Flan-T5's shape: a T5 text-to-text model (untied, as
/// flan-t5) reading `predict: DOC</s>CLAIM`, the first decoded token's
/// logits at MiniCheck's label tokens.
#[test]
fn minicheck_t5_matches_transformers() {
    let m = check("minicheck-t5", None, Architecture::MiniCheckT5);
    assert_eq!(m.labels().names, ["unsupported", "supported"]);
    assert_eq!(m.labels().supported_name(), "supported");
}

/// The long premise is cut into windows, each claim scored against every
/// one: the verdict's probability is that of its best window, which it
/// names.
#[test]
fn a_claim_is_judged_by_its_best_window() {
    let model = Classifier::load(&fixture("bert"), &options(32, None)).unwrap();
    let long = "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. \
        It is named after the engineer Gustave Eiffel. \
        It was built from 1887 to 1889 as the centrepiece of the World's Fair. \
        Locally it is nicknamed La dame de fer.";
    let claim = "The tower was built for the World's Fair.";
    let verdicts = model.verify(&[claim], &[long]).unwrap();
    // The budget verify uses: the window less the claim and the special
    // tokens of a pair.
    let specials = model.encode("", "").unwrap().len();
    let budget = 32 - model.count_tokens(claim).unwrap() - specials;
    let windows =
        assay_classifier::windows::windows(&[long], budget, |t| model.count_tokens(t).unwrap());
    assert!(windows.len() > 1, "{windows:?}");
    let each = model
        .support(
            &windows
                .iter()
                .map(|w| (w.as_str(), claim))
                .collect::<Vec<_>>(),
        )
        .unwrap();
    let best = each.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!((verdicts[0].probability - best).abs() < 1e-9);
    let at = each.iter().position(|p| *p == best).unwrap();
    assert_eq!(verdicts[0].evidence, windows[at]);
}

fn load_error(dir: &Path, label: Option<&str>) -> String {
    match Classifier::load(dir, &options(64, label)) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(e) => e.to_string(),
    }
}

/// A copy of a fixture with `edit` applied, in a fresh folder.
fn broken(name: &str, edit: impl FnOnce(&Path)) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("assay-classifier-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::copy(fixture("bert").join(f), dir.join(f)).unwrap();
    }
    edit(&dir);
    dir
}

#[test]
fn a_broken_folder_is_an_error_naming_it_and_what_is_wrong() {
    let no_weights = broken("no-weights", |d| {
        std::fs::remove_file(d.join("model.safetensors")).unwrap()
    });
    let e = load_error(&no_weights, None);
    assert!(e.contains(&no_weights.display().to_string()), "{e}");
    assert!(e.contains("expected model.safetensors"), "{e}");

    let no_tokenizer = broken("no-tokenizer", |d| {
        std::fs::remove_file(d.join("tokenizer.json")).unwrap()
    });
    assert!(load_error(&no_tokenizer, None).contains("no tokenizer.json"));

    let edit_config = |d: &Path, from: &str, to: &str| {
        let c = std::fs::read_to_string(d.join("config.json")).unwrap();
        assert!(c.contains(from), "{from} not in the fixture's config");
        std::fs::write(d.join("config.json"), c.replace(from, to)).unwrap();
    };
    let t5 = broken("t5", |d| {
        edit_config(d, "\"model_type\": \"bert\"", "\"model_type\": \"gpt2\"")
    });
    let e = load_error(&t5, None);
    assert!(
        e.contains("model_type \"gpt2\" is not an architecture"),
        "{e}"
    );

    let labels = broken("labels", |d| {
        edit_config(d, "\"entailment\"", "\"LABEL_1\"");
    });
    let e = load_error(&labels, None);
    assert!(e.contains("--grounding-label"), "{e}");
    assert!(load_error(&labels, Some("supported")).contains("no label \"supported\""));
    assert!(Classifier::load(&labels, &options(64, Some("LABEL_1"))).is_ok());

    let wrong_shape = broken("shape", |d| {
        edit_config(d, "\"hidden_size\": 32", "\"hidden_size\": 64")
    });
    let e = load_error(&wrong_shape, None);
    assert!(e.contains("the weights do not fit"), "{e}");

    // HHEM's download has no tokenizer: the error says whose to add.
    let hhem = broken("hhem-no-tokenizer", |d| {
        std::fs::remove_file(d.join("tokenizer.json")).unwrap();
        for f in ["config.json", "model.safetensors"] {
            std::fs::copy(fixture("hhem").join(f), d.join(f)).unwrap();
        }
    });
    let e = load_error(&hhem, None);
    assert!(e.contains("google/flan-t5-base's tokenizer.json"), "{e}");

    let missing = fixture("no-such-model");
    assert!(matches!(
        Classifier::load(&missing, &options(64, None)),
        Err(Error::Invalid { .. })
    ));
    for d in [no_weights, no_tokenizer, t5, labels, wrong_shape, hhem] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// The identity names the weights by their hash: a model with other
/// weights is another model.
#[test]
fn the_identity_follows_the_weights() {
    let a = Classifier::load(&fixture("bert"), &options(64, None)).unwrap();
    let b = Classifier::load(&fixture("bert"), &options(64, Some("neutral"))).unwrap();
    assert!(a.identity().starts_with("bert@sha256:"), "{}", a.identity());
    assert!(a.identity().ends_with("/label=entailment"));
    assert_ne!(a.identity(), b.identity());
    let c = Classifier::load(&fixture("modernbert"), &options(64, None)).unwrap();
    assert_ne!(
        a.identity().split('/').next(),
        c.identity().split('/').next()
    );
}
