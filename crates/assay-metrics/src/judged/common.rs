//! Small helpers shared by the metric modules: composing reasons and
//! details from verdicts, and vector similarity.

use crate::judged::step::{Label, Rating, Verdict};
use assay_core::{Failure, FailureKind, Outcome, SkipReason};
use serde_json::{json, Value};

/// A rating on the scale 1..=`scale`, mapped to [0, 1]: (r - 1) / (scale - 1)
/// with r the probability-weighted rating when the judge gave
/// probabilities (G-Eval), else the rating. Details carry the rating, the
/// scale, the probabilities and the expected rating.
pub(crate) fn rated(rating: &Rating, scale: u8) -> Outcome {
    let expected = rating.expected();
    let top = f64::from(scale);
    let value = ((expected - 1.0) / (top - 1.0)).clamp(0.0, 1.0);
    let how = if rating.probabilities.is_some() {
        format!(
            "expected rating {expected:.2} of {scale} (most likely {})",
            rating.rating
        )
    } else {
        format!("rated {} of {scale}", rating.rating)
    };
    scored(
        value,
        if rating.reason.trim().is_empty() {
            how
        } else {
            format!("{how}: {}", rating.reason.trim())
        },
        json!({"rating": rating.rating, "scale": scale, "probabilities": rating.probabilities, "expected_rating": expected}),
    )
}

/// How many failing items a reason quotes before summarising the rest.
const QUOTED: usize = 5;

/// Items with their verdicts, for `details`: `[{KEY: item, verdict, reason}]`
/// (with the verdict's probabilities when the judge gave them).
pub(crate) fn itemized(key: &str, items: &[String], verdicts: &[Verdict]) -> Value {
    Value::Array(
        items
            .iter()
            .zip(verdicts)
            .map(|(item, v)| {
                let mut entry = json!(v);
                entry[key] = json!(item);
                entry
            })
            .collect(),
    )
}

/// The items whose verdict satisfies `pick`, quoted with their reasons:
/// `[2] "item" (reason); [4] ...`, at most [`QUOTED`] of them.
pub(crate) fn quote(
    items: &[String],
    verdicts: &[Verdict],
    pick: impl Fn(Label) -> bool,
) -> String {
    let picked: Vec<String> = items
        .iter()
        .zip(verdicts)
        .enumerate()
        .filter(|(_, (_, v))| pick(v.verdict))
        .map(|(i, (item, v))| {
            if v.reason.trim().is_empty() {
                format!("[{}] \"{item}\"", i + 1)
            } else {
                format!("[{}] \"{item}\" ({})", i + 1, v.reason.trim())
            }
        })
        .collect();
    let mut out = picked
        .iter()
        .take(QUOTED)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if picked.len() > QUOTED {
        out.push_str(&format!("; and {} more", picked.len() - QUOTED));
    }
    out
}

/// `base`, then `": "` and the quoted items when there are any.
pub(crate) fn with_quotes(base: String, label: &str, quoted: String) -> String {
    if quoted.is_empty() {
        base
    } else {
        format!("{base}; {label}: {quoted}")
    }
}

/// The outcome when verdicts do not line up with their items: validation
/// rules this out, so it only happens when the engine pairs wrong outputs.
pub(crate) fn misaligned(what: &str, items: usize, verdicts: usize) -> Outcome {
    Outcome::Failed(Failure {
        kind: FailureKind::Undefined,
        message: format!("{verdicts} verdicts for {items} {what}"),
    })
}

/// A failure for a similarity that cannot be computed (zero vector or
/// dimensions that differ).
pub(crate) fn undefined(message: String) -> Outcome {
    Outcome::Failed(Failure {
        kind: FailureKind::Undefined,
        message,
    })
}

/// Cosine similarity; `None` for vectors of different or zero length, or
/// a zero norm.
pub(crate) fn cosine(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 {
        None
    } else {
        Some(dot / (na * nb))
    }
}

/// The expected share of verdicts that are `label`: the mean of the
/// judge's probabilities of it, when it gave them for every verdict. It
/// ranks samples more finely than the count (two samples with every
/// statement supported differ in how sure the judge was), so calibration
/// ranks by it; details carry it as `soft_score`.
pub(crate) fn soft_share(verdicts: &[Verdict], label: Label) -> Option<f64> {
    let ps: Option<Vec<f64>> = verdicts.iter().map(|v| v.probability(label)).collect();
    let ps = ps.filter(|p| !p.is_empty())?;
    Some(ps.iter().sum::<f64>() / ps.len() as f64)
}

/// The details member holding an outcome's soft score (see
/// [`soft_share`]); `assay calibrate` reads it.
pub const SOFT_SCORE: &str = "soft_score";

/// `details` with [`SOFT_SCORE`] set when there is one.
pub(crate) fn with_soft_score(mut details: Value, soft: Option<f64>) -> Value {
    if let Some(soft) = soft {
        details[SOFT_SCORE] = json!(soft);
    }
    details
}

/// A score, its reason and details.
pub(crate) fn scored(value: f64, reason: String, details: Value) -> Outcome {
    Outcome::Scored {
        value,
        reason: Some(reason),
        details: details.into(),
    }
}

/// The share of retrieved contexts whose verdict is yes (context_relevance,
/// hallucination): skipped without contexts, a typed failure when the
/// verdicts do not line up with them. `summary` words the count, and the
/// reason quotes the contexts whose verdict is `quoted` under `quoted_as`.
/// Details carry the mean probability of yes as `soft_score` when the
/// judge gave probabilities.
pub fn context_share(
    contexts: &[String],
    verdicts: &[Verdict],
    summary: impl FnOnce(usize, usize) -> String,
    quoted: Label,
    quoted_as: &str,
) -> Outcome {
    if contexts.is_empty() {
        return Outcome::Skipped(SkipReason::NoContexts);
    }
    if contexts.len() != verdicts.len() {
        return misaligned("contexts", contexts.len(), verdicts.len());
    }
    let yes = verdicts.iter().filter(|v| v.verdict == Label::Yes).count();
    scored(
        yes as f64 / contexts.len() as f64,
        with_quotes(
            summary(yes, contexts.len()),
            quoted_as,
            quote(contexts, verdicts, |l| l == quoted),
        ),
        with_soft_score(
            json!({"contexts": itemized("context", contexts, verdicts)}),
            soft_share(verdicts, Label::Yes),
        ),
    )
}

/// How many references the sample has (none when it has no reference).
pub(crate) fn n_refs(sample: &assay_core::Sample) -> usize {
    sample.reference_list().map_or(0, |r| r.len())
}

/// The single vector of a one-text embedding step (empty if the answer
/// had none, which validation rules out).
pub(crate) fn first(vectors: &[Vec<f64>]) -> &[f64] {
    vectors.first().map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_known_vectors() {
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 2.0]), Some(0.0));
        assert!((cosine(&[1.0, 1.0], &[2.0, 2.0]).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), None);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), None);
    }

    #[test]
    fn quotes_are_capped() {
        let items: Vec<String> = (0..7).map(|i| format!("s{i}")).collect();
        let verdicts = vec![
            Verdict {
                verdict: Label::No,
                reason: "r".into(),
                probabilities: None,
            };
            7
        ];
        let q = quote(&items, &verdicts, |l| l == Label::No);
        assert!(q.starts_with("[1] \"s0\" (r); [2]"), "{q}");
        assert!(q.ends_with("; and 2 more"), "{q}");
    }
}
