//! An experiment for issue 30, not part of assay: does the in-process
//! embedder's cosine add to the grounding model's lexical features? For
//! every training claim (`assay_grounding::train::labelled_claims`) and
//! every response sentence of the calibration sets' RAGTruth, SummEval
//! and HaluEval QA rows, it writes one JSON line: the claim's lexical
//! features and the all-MiniLM-L6-v2 cosine between the claim and the
//! closest sentence of its question and contexts (`cos_max`), and the
//! sentence the lexical features call closest (`cos_lexical`); a
//! calibration claim also carries its row's trivial baselines (`length`
//! in characters, `novelty` as `assay calibrate` computes it).
//! `scripts/experiments/grounding-cosine.py` fits and scores the models.
//!
//! ```sh
//! cargo run --release --locked -p assay-local --example grounding-cosine -- \
//!     ../shared/data/train data/calibration/meta claims.jsonl
//! ```

use assay_grounding::train::labelled_claims;
use assay_grounding::{Features, Support};
use assay_local::{LocalEmbedder, LocalSpec};
use assay_text::sentences::split_sentences;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// A claim to score, with what it is written out with.
struct Claim {
    text: String,
    support: Vec<String>,
    meta: Value,
}

/// The calibration files read, and the label each row keeps.
const SETS: [(&str, &str); 3] = [
    ("ragtruth", "ragtruth_sample.jsonl"),
    ("summeval", "summeval_sample.jsonl"),
    ("halueval-qa", "halueval_qa_sample.jsonl"),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [train, calibration, out] = args.as_slice() else {
        return Err("usage: grounding-cosine TRAIN_DIR CALIBRATION_DIR OUT.jsonl".into());
    };
    let mut claims = Vec::new();
    let (labelled, _) = labelled_claims(Path::new(train))?;
    for c in labelled {
        let fold = c.fold();
        claims.push(Claim {
            meta: json!({"set": "train", "source": c.source, "fold": fold,
                         "supported": c.supported}),
            text: c.text,
            support: c.support.to_vec(),
        });
    }
    for (set, file) in SETS {
        let text = std::fs::read_to_string(Path::new(calibration).join(file))?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let row: Value = serde_json::from_str(line)?;
            let str_of = |k: &str| row.get(k).and_then(Value::as_str).unwrap_or("");
            let mut support: Vec<String> = Vec::new();
            if !str_of("user_input").is_empty() {
                support.push(str_of("user_input").to_string());
            }
            if let Some(c) = row.get("retrieved_contexts").and_then(Value::as_array) {
                support.extend(c.iter().filter_map(Value::as_str).map(str::to_string));
            }
            let task = row
                .pointer("/meta/ragtruth_task")
                .and_then(Value::as_str)
                .unwrap_or(str_of("task"));
            let response = str_of("response");
            // The trivial baselines on the same rows: the response's
            // length and the share of its content words its sources lack.
            let sources: Vec<&str> = support.iter().map(String::as_str).collect();
            let novelty = assay_grounding::features::novelty(response, &sources);
            for sentence in split_sentences(response) {
                claims.push(Claim {
                    text: sentence.to_string(),
                    support: support.clone(),
                    meta: json!({"set": set, "id": str_of("id"), "task": task,
                                 "question": str_of("user_input"),
                                 "labels": row.get("labels"),
                                 "length": response.chars().count(), "novelty": novelty}),
                });
            }
        }
    }
    eprintln!("{} claims", claims.len());

    let embedder = LocalEmbedder::from_spec(&LocalSpec::Default)?;
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut texts: Vec<String> = Vec::new();
    let mut add = |t: &str| {
        if !index.contains_key(t) {
            index.insert(t.to_string(), texts.len());
            texts.push(t.to_string());
        }
    };
    let sentences_of = |support: &[String]| -> Vec<String> {
        support
            .iter()
            .flat_map(|t| split_sentences(t))
            .map(str::to_string)
            .collect()
    };
    for c in &claims {
        add(&c.text);
        for s in sentences_of(&c.support) {
            add(&s);
        }
    }
    eprintln!("{} texts to embed", texts.len());
    let mut vectors = Vec::with_capacity(texts.len());
    for (i, chunk) in texts.chunks(2048).enumerate() {
        vectors.extend(embedder.embed_blocking(chunk)?.0);
        eprintln!("embedded {}", (i + 1) * 2048);
    }
    let cosine = |a: &str, b: &str| -> f64 {
        let (x, y) = (&vectors[index[a]], &vectors[index[b]]);
        x.iter()
            .zip(y)
            .map(|(p, q)| f64::from(*p) * f64::from(*q))
            .sum()
    };

    let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
    for c in &claims {
        let features = Features::of(&c.text, &Support::new(c.support.iter().map(String::as_str)));
        let sentences = sentences_of(&c.support);
        let cos_max = sentences
            .iter()
            .map(|s| cosine(&c.text, s))
            .fold(f64::NAN, f64::max);
        let cos_lexical = features
            .best_sentence
            .as_deref()
            .filter(|s| index.contains_key(*s))
            .map(|s| cosine(&c.text, s));
        let mut line = c.meta.clone();
        line["claim"] = json!(c.text);
        line["features"] = json!(features.values);
        line["cos_max"] = json!(cos_max);
        line["cos_lexical"] = json!(cos_lexical);
        writeln!(file, "{line}")?;
    }
    Ok(())
}
