//! Checking a judge's answer against the inputs it was asked about: the
//! right number of items, labels of the step's set, ratings in range.
//! Schema-following servers usually get these right; a mismatch goes to the
//! judge layer's repair path and, if it persists, becomes a typed failure
//! carrying the raw answer.

use crate::judged::step::{InputError, Inputs, Label, Rating, StepKey, StepOutput, Verdict};
use serde_json::{Map, Value};
use std::fmt;

/// The member under which [`with_choice_probabilities`] puts the judge's
/// probabilities of the closed choices of an object, field by field:
/// `{"verdict": "yes", "$choice_probabilities": {"verdict": {"yes": 0.9,
/// "no": 0.1}}}`. The `$` keeps it apart from any property a prompt's
/// schema declares.
pub const CHOICE_PROBABILITIES: &str = "$choice_probabilities";

/// What is wrong with an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The step's inputs are unavailable, so the answer cannot be checked.
    Inputs(InputError),
    /// A value is missing or of the wrong JSON type.
    Shape { at: String, expected: &'static str },
    /// A list has the wrong number of items.
    WrongCount {
        at: String,
        expected: usize,
        got: usize,
    },
    /// A verdict label outside the step's set.
    BadLabel {
        at: String,
        got: String,
        allowed: String,
    },
    /// A number outside its range (ratings, probabilities, embeddings).
    OutOfRange { at: String, got: String },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Inputs(e) => write!(f, "{e}"),
            Problem::Shape { at, expected } => write!(f, "{at}: expected {expected}"),
            Problem::WrongCount { at, expected, got } => {
                write!(f, "{at}: expected {expected} items, got {got}")
            }
            Problem::BadLabel { at, got, allowed } => {
                write!(f, "{at}: '{got}' is not one of {allowed}")
            }
            Problem::OutOfRange { at, got } => write!(f, "{at}: {got} is out of range"),
        }
    }
}

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
        &crate::judged::render::with_reason(answer.clone()),
        "$",
        step.labels(),
    )
    .map(drop)
    .map_err(mismatched(step, answer))
}

/// The judge's answer with the probabilities of its closed choices put
/// beside them (under [`CHOICE_PROBABILITIES`] in the object holding each
/// choice), for [`validate`] to read. `choices` are JSON Pointers into the
/// answer with each allowed value (compact JSON text) and its probability,
/// as in-process judges report them. A pointer that names no member of an
/// object (an array item, a missing place) has nowhere to go and is left
/// out.
///
/// ```
/// use assay_metrics::judged::validate::{with_choice_probabilities, CHOICE_PROBABILITIES};
/// let answer = serde_json::json!({"verdicts": [{"reason": "r", "verdict": "yes"}]});
/// let probabilities = vec![("\"yes\"".to_string(), 0.75), ("\"no\"".to_string(), 0.25)];
/// let annotated = with_choice_probabilities(answer, [("/verdicts/0/verdict", &probabilities[..])]);
/// assert_eq!(annotated["verdicts"][0][CHOICE_PROBABILITIES]["verdict"]["no"], 0.25);
/// ```
pub fn with_choice_probabilities<'a>(
    mut answer: Value,
    choices: impl IntoIterator<Item = (&'a str, &'a [(String, f64)])>,
) -> Value {
    for (pointer, probabilities) in choices {
        let Some((parent, field)) = pointer.rsplit_once('/') else {
            continue;
        };
        let field = field.replace("~1", "/").replace("~0", "~");
        let Some(Value::Object(holder)) = answer.pointer_mut(parent) else {
            continue;
        };
        if !holder.contains_key(&field) {
            continue;
        }
        // Values by name: `yes` rather than its JSON text `"yes"`.
        let by_value: Map<String, Value> = probabilities
            .iter()
            .map(|(text, p)| {
                let name = match serde_json::from_str::<Value>(text) {
                    Ok(Value::String(s)) => s,
                    _ => text.clone(),
                };
                (name, Value::from(*p))
            })
            .collect();
        if let Value::Object(fields) = holder
            .entry(CHOICE_PROBABILITIES)
            .or_insert_with(|| Value::Object(Map::new()))
        {
            fields.insert(field, Value::Object(by_value));
        }
    }
    answer
}

/// `answer` without what [`with_choice_probabilities`] added: the answer
/// as the judge wrote it.
pub fn without_choice_probabilities(answer: &Value) -> Value {
    match answer {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != CHOICE_PROBABILITIES)
                .map(|(k, v)| (k.clone(), without_choice_probabilities(v)))
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.iter().map(without_choice_probabilities).collect())
        }
        other => other.clone(),
    }
}

/// The probabilities [`with_choice_probabilities`] put beside `field` of
/// `holder` (at `at`), by value: each finite and in [0, 1].
fn choice_probabilities<'v>(
    holder: &'v Value,
    at: &str,
    field: &str,
) -> Result<Option<Vec<(&'v str, f64)>>, Problem> {
    let Some(by_value) = holder.get(CHOICE_PROBABILITIES).and_then(|c| c.get(field)) else {
        return Ok(None);
    };
    let at = format!("{at}.{CHOICE_PROBABILITIES}.{field}");
    let Value::Object(by_value) = by_value else {
        return Err(Problem::Shape {
            at,
            expected: "an object of probabilities",
        });
    };
    by_value
        .iter()
        .map(|(value, p)| {
            p.as_f64()
                .filter(|p| (0.0..=1.0).contains(p))
                .map(|p| (value.as_str(), p))
                .ok_or_else(|| Problem::OutOfRange {
                    at: format!("{at}.{value}"),
                    got: p.to_string(),
                })
        })
        .collect::<Result<_, _>>()
        .map(Some)
}

fn check(step: &StepKey, inputs: &Inputs<'_>, answer: &Value) -> Result<StepOutput, Problem> {
    match step {
        StepKey::Unit(u) => {
            let filled = u.0.fill(inputs).map_err(Problem::Inputs)?;
            u.0.check(inputs, &filled, answer)
        }
        StepKey::Embed(_) => {
            let expected = crate::judged::render::embed_request(step, inputs)
                .map_err(Problem::Inputs)?
                .texts
                .len();
            embeddings(answer, expected).map(StepOutput::Embeddings)
        }
    }
}

/// Where vote `i` of a step drawing `votes` is in its answer.
pub(crate) fn vote_at(votes: u32, i: usize) -> String {
    if votes > 1 {
        format!("$[{i}]")
    } else {
        "$".to_string()
    }
}

/// The answers of the votes: the answer itself for one vote.
pub(crate) fn votes_of(answer: &Value, votes: u32) -> Result<Vec<&Value>, Problem> {
    if votes <= 1 {
        return Ok(vec![answer]);
    }
    Ok(array(answer, "$", Some(votes as usize))?.iter().collect())
}

pub(crate) fn field<'v>(
    value: &'v Value,
    at: &str,
    name: &'static str,
) -> Result<&'v Value, Problem> {
    match value {
        Value::Object(map) => map.get(name).ok_or_else(|| Problem::Shape {
            at: format!("{at}.{name}"),
            expected: "a value (missing)",
        }),
        _ => Err(Problem::Shape {
            at: at.to_string(),
            expected: "an object",
        }),
    }
}

pub(crate) fn array<'v>(
    value: &'v Value,
    at: &str,
    expected: Option<usize>,
) -> Result<&'v Vec<Value>, Problem> {
    let Value::Array(items) = value else {
        return Err(Problem::Shape {
            at: at.to_string(),
            expected: "a list",
        });
    };
    match expected {
        Some(n) if n != items.len() => Err(Problem::WrongCount {
            at: at.to_string(),
            expected: n,
            got: items.len(),
        }),
        _ => Ok(items),
    }
}

pub(crate) fn string(value: &Value, at: &str) -> Result<String, Problem> {
    value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| Problem::Shape {
            at: at.to_string(),
            expected: "a string",
        })
}

pub(crate) fn boolean(value: &Value, at: &str) -> Result<bool, Problem> {
    value.as_bool().ok_or_else(|| Problem::Shape {
        at: at.to_string(),
        expected: "true or false",
    })
}

/// A free list of texts: trimmed, blank ones dropped (they carry nothing
/// to judge and no count depends on them).
pub(crate) fn texts(value: &Value, at: &str) -> Result<Vec<String>, Problem> {
    array(value, at, None)?
        .iter()
        .enumerate()
        .map(|(i, v)| string(v, &format!("{at}[{i}]")))
        .filter_map(|s| match s {
            Ok(s) if s.trim().is_empty() => None,
            Ok(s) => Some(Ok(s.trim().to_string())),
            Err(e) => Some(Err(e)),
        })
        .collect()
}

/// The verdicts of list `name` of the answer, `expected` of them when known.
pub(crate) fn verdicts(
    answer: &Value,
    name: &'static str,
    expected: Option<usize>,
    labels: &[Label],
) -> Result<Vec<Verdict>, Problem> {
    let at = format!("$.{name}");
    array(field(answer, "$", name)?, &at, expected)?
        .iter()
        .enumerate()
        .map(|(i, v)| verdict(v, &format!("{at}[{i}]"), labels))
        .collect()
}

/// One verdict: a label of `labels`, a reason, and the judge's
/// probabilities when it gave them.
pub(crate) fn verdict(value: &Value, at: &str, labels: &[Label]) -> Result<Verdict, Problem> {
    let raw = string(field(value, at, "verdict")?, &format!("{at}.verdict"))?;
    let label = labels
        .iter()
        .find(|l| l.name() == raw.trim().to_ascii_lowercase())
        .copied()
        .ok_or_else(|| Problem::BadLabel {
            at: format!("{at}.verdict"),
            got: raw.clone(),
            allowed: labels
                .iter()
                .map(|l| l.name())
                .collect::<Vec<_>>()
                .join("/"),
        })?;
    let probabilities = choice_probabilities(value, at, "verdict")?.map(|by_value| {
        labels
            .iter()
            .filter_map(|l| {
                by_value
                    .iter()
                    .find(|(v, _)| *v == l.name())
                    .map(|(_, p)| (*l, *p))
            })
            .collect()
    });
    Ok(Verdict {
        verdict: label,
        reason: string(field(value, at, "reason")?, &format!("{at}.reason"))?,
        probabilities,
    })
}

/// A rating on the scale 1..=`scale` with its reason, and the judge's
/// probabilities of each rating when it gave them.
pub(crate) fn rating(answer: &Value, scale: u8) -> Result<Rating, Problem> {
    let raw = field(answer, "$", "rating")?;
    let rating = raw
        .as_u64()
        .filter(|r| (1..=u64::from(scale)).contains(r))
        .ok_or_else(|| Problem::OutOfRange {
            at: "$.rating".into(),
            got: raw.to_string(),
        })? as u8;
    let probabilities = match choice_probabilities(answer, "$", "rating")? {
        None => None,
        Some(by_value) => Some(rating_probabilities(&by_value, scale)?),
    };
    Ok(Rating {
        rating,
        reason: string(field(answer, "$", "reason")?, "$.reason")?,
        probabilities,
    })
}

/// The probabilities of ratings 1..=`scale` (one absent: zero), with a
/// positive sum, normalised.
fn rating_probabilities(by_value: &[(&str, f64)], scale: u8) -> Result<Vec<f64>, Problem> {
    let at = format!("$.{CHOICE_PROBABILITIES}.rating");
    let mut p = vec![0.0; usize::from(scale)];
    for (value, x) in by_value {
        let slot = value
            .parse::<usize>()
            .ok()
            .filter(|r| (1..=usize::from(scale)).contains(r))
            .ok_or_else(|| Problem::OutOfRange {
                at: at.clone(),
                got: format!("rating {value}"),
            })?;
        p[slot - 1] = *x;
    }
    let sum: f64 = p.iter().sum();
    if sum <= 0.0 {
        return Err(Problem::OutOfRange {
            at,
            got: "a zero sum".into(),
        });
    }
    Ok(p.into_iter().map(|x| x / sum).collect())
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
    use crate::judged::{steps, Outputs};
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
