//! Checking a judge's answer against the inputs it was asked about: the
//! right number of items, labels of the step's set, ratings in range.
//! Schema-following servers usually get these right; a mismatch goes to the
//! judge layer's repair path and, if it persists, becomes a typed failure
//! carrying the raw answer.

use crate::judged::answer::{array, verdict};
pub use crate::judged::answer::{
    with_choice_probabilities, without_choice_probabilities, CHOICE_PROBABILITIES,
};
use crate::judged::step::{Inputs, Problem, StepKey, StepOutput};
use serde_json::Value;

/// An answer that does not fit its request, with the raw answer as evidence.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("step {step}: {problem}")]
pub struct Mismatch {
    pub step: StepKey,
    /// Boxed to keep `Result<StepOutput, Mismatch>` small.
    pub problem: Box<Problem>,
    pub answer: Value,
}

/// Checks `answer` for `step` against its inputs and returns its typed
/// output. For a request with `n_votes > 1` the answer is the JSON array
/// of the votes' answers; for an embedding step, an array of vectors.
/// Probabilities added by [`with_choice_probabilities`] reach the typed
/// output: each verdict's, and for [`crate::judged::steps::coherence_rating`] the five
/// ratings' (normalised; they weight the rating, G-Eval). The mismatch of
/// an answer carries it as the judge wrote it, without them.
///
/// ```
/// use assay_metrics::judged::{steps, validate, Inputs, Outputs, StepOutput};
/// let row = serde_json::json!({"response": "r", "retrieved_contexts": ["a", "b"]});
/// let sample = assay_core::Sample::from_json(1, row.as_object().unwrap()).unwrap();
/// let outputs = Outputs::new();
/// let inputs = Inputs::new(&sample, &outputs);
/// let one = serde_json::json!({"verdicts": [{"reason": "agrees", "verdict": "no"}]});
/// let err = validate(&steps::contradictions(), &inputs, &one).unwrap_err();
/// assert_eq!(err.to_string(), "step contradictions: $.verdicts: expected 2 items, got 1");
/// assert_eq!(err.answer, one);
/// ```
pub fn validate(
    step: &StepKey,
    inputs: &Inputs<'_>,
    answer: &Value,
) -> Result<StepOutput, Mismatch> {
    check(step, inputs, answer).map_err(mismatched(step, answer))
}

/// Wraps a problem of `answer` to `step` with its evidence.
fn mismatched<'a>(step: &'a StepKey, answer: &'a Value) -> impl FnOnce(Problem) -> Mismatch + 'a {
    move |problem| Mismatch {
        step: step.clone(),
        problem: Box::new(problem),
        answer: without_choice_probabilities(answer),
    }
}

/// Checks the answer of ONE vote of a step that draws several (see
/// [`crate::judged::render::JudgeRequest::n_votes`]) as if it were the only
/// one, so that the judge layer can re-ask that vote alone: the problem's
/// paths are relative to the vote's answer and the mismatch carries it.
/// For any other step this is [`validate()`] without the output.
///
/// ```
/// use assay_metrics::judged::{steps, validate_vote, Inputs, Outputs};
/// let row = serde_json::json!({"user_input": "q", "retrieved_contexts": ["a"]});
/// let sample = assay_core::Sample::from_json(1, row.as_object().unwrap()).unwrap();
/// let outputs = Outputs::new();
/// let inputs = Inputs::new(&sample, &outputs);
/// let step = steps::sentence_extraction(3);
/// let vote = serde_json::json!({"insufficient_information": true, "sentences": ["a"]});
/// let err = validate_vote(&step, &inputs, &vote).unwrap_err();
/// assert_eq!(err.answer, vote);
/// assert!(err.to_string().contains("$.sentences: expected none"), "{err}");
/// ```
pub fn validate_vote(step: &StepKey, inputs: &Inputs<'_>, answer: &Value) -> Result<(), Mismatch> {
    let checked = match step {
        StepKey::Unit(u) => u.0.check_vote(inputs, answer),
        StepKey::Embed(_) => check(step, inputs, answer).map(drop),
    };
    checked.map_err(mismatched(step, answer))
}

/// Checks the answer to ONE item of a step asked per item (see
/// [`crate::judged::render::ItemRequests`]): a verdict among the step's
/// labels, the reason optional, so that the judge layer can re-ask that
/// item alone.
///
/// ```
/// use assay_metrics::judged::{steps, validate_item};
/// assert!(validate_item(&steps::statement_verdicts(), &serde_json::json!({"verdict": "idk"})).is_ok());
/// let err = validate_item(&steps::contradictions(), &serde_json::json!({"verdict": "idk"})).unwrap_err();
/// assert!(err.to_string().contains("$.verdict"), "{err}");
/// ```
pub fn validate_item(step: &StepKey, answer: &Value) -> Result<(), Mismatch> {
    verdict(
        &crate::judged::request::with_reason(answer.clone()),
        "$",
        step.labels(),
    )
    .map(drop)
    .map_err(mismatched(step, answer))
}

fn check(step: &StepKey, inputs: &Inputs<'_>, answer: &Value) -> Result<StepOutput, Problem> {
    match step {
        StepKey::Unit(u) => {
            let filled = u.0.fill(inputs).map_err(Problem::Inputs)?;
            u.0.check(inputs, &filled, answer)
        }
        StepKey::Embed(_) => {
            let expected = crate::judged::steps::embed_request(step, inputs)
                .map_err(Problem::Inputs)?
                .texts
                .len();
            embeddings(answer, expected).map(StepOutput::Embeddings)
        }
    }
}

fn embeddings(answer: &Value, expected: usize) -> Result<Vec<Vec<f64>>, Problem> {
    let rows = array(answer, "$", Some(expected))?;
    let mut out: Vec<Vec<f64>> = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let at = format!("$[{i}]");
        let vector = array(row, &at, out.first().map(Vec::len))?
            .iter()
            .enumerate()
            .map(|(j, x)| {
                x.as_f64()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| Problem::OutOfRange {
                        at: format!("{at}[{j}]"),
                        got: x.to_string(),
                    })
            })
            .collect::<Result<Vec<f64>, _>>()?;
        if vector.is_empty() {
            return Err(Problem::Shape {
                at,
                expected: "a non-empty vector",
            });
        }
        out.push(vector);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judged::answer::rating;
    use crate::judged::{steps, Label, Outputs};
    use serde_json::json;

    fn probabilities(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
        pairs.iter().map(|(v, p)| (v.to_string(), *p)).collect()
    }

    #[test]
    fn choice_probabilities_reach_the_verdict_they_belong_to() {
        let row = json!({"response": "r", "retrieved_contexts": ["a", "b"]});
        let sample = assay_core::Sample::from_json(1, row.as_object().unwrap()).unwrap();
        let outputs = Outputs::new();
        let inputs = Inputs::new(&sample, &outputs);
        let answer = json!({"verdicts": [
            {"reason": "agrees", "verdict": "no"},
            {"reason": "contradicts", "verdict": "yes"}
        ]});
        let second = probabilities(&[("\"yes\"", 0.7), ("\"no\"", 0.3)]);
        let annotated = with_choice_probabilities(
            answer.clone(),
            [
                ("/verdicts/1/verdict", &second[..]),
                // An array item and a missing member have no holder.
                ("/verdicts/0", &second[..]),
                ("/verdicts/5/verdict", &second[..]),
            ],
        );
        let Ok(StepOutput::Verdicts(v)) = validate(&steps::contradictions(), &inputs, &annotated)
        else {
            panic!("{annotated}")
        };
        assert_eq!(v[0].probabilities, None);
        assert_eq!(
            v[1].probabilities,
            Some(vec![(Label::Yes, 0.7), (Label::No, 0.3)])
        );
        let details = serde_json::to_value(&v).unwrap();
        assert_eq!(details[0], json!({"verdict": "no", "reason": "agrees"}));
        assert_eq!(details[1]["verdict_probability"], 0.7);
        assert_eq!(details[1]["yes_probability"], 0.7);

        // A mismatch shows the answer as the judge wrote it.
        let short = json!({"verdicts": [{"reason": "r", "verdict": "yes"}]});
        let yes = probabilities(&[("\"yes\"", 0.9), ("\"no\"", 0.1)]);
        let annotated =
            with_choice_probabilities(short.clone(), [("/verdicts/0/verdict", &yes[..])]);
        assert_ne!(annotated, short);
        let e = validate(&steps::contradictions(), &inputs, &annotated).unwrap_err();
        assert_eq!(e.answer, short);
    }

    #[test]
    fn rating_probabilities_are_read_by_rating_and_checked() {
        let answer = json!({"reason": "fine", "rating": 4});
        let five = probabilities(&[("1", 0.0), ("2", 0.1), ("3", 0.1), ("4", 0.6), ("5", 0.2)]);
        let Ok(StepOutput::Rating(r)) = check_rating(&with_choice_probabilities(
            answer.clone(),
            [("/rating", &five[..])],
        )) else {
            panic!()
        };
        assert_eq!(r.rating, 4);
        assert_eq!(r.probabilities, Some(vec![0.0, 0.1, 0.1, 0.6, 0.2]));
        let bad = probabilities(&[("4", 1.5)]);
        let e = check_rating(&with_choice_probabilities(
            answer.clone(),
            [("/rating", &bad[..])],
        ))
        .unwrap_err();
        assert_eq!(
            e,
            Problem::OutOfRange {
                at: "$.$choice_probabilities.rating.4".into(),
                got: "1.5".into()
            }
        );
        let six = probabilities(&[("6", 1.0)]);
        assert!(check_rating(&with_choice_probabilities(answer, [("/rating", &six[..])])).is_err());
    }

    fn check_rating(answer: &Value) -> Result<StepOutput, Problem> {
        rating(answer, 5).map(StepOutput::Rating)
    }
}
