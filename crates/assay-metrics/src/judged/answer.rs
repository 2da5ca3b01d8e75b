//! Reading a judge's answer: its fields, lists, verdicts and ratings,
//! each checked and typed, with the paths of what is wrong, and the
//! probabilities an in-process judge reports beside its closed choices.
//! The steps read their answers with these; [`crate::judged::validate()`]
//! dispatches an answer to its step.

use crate::judged::step::{Label, Problem, Rating, Verdict};
use serde_json::{Map, Value};

/// The member under which [`with_choice_probabilities`] puts the judge's
/// probabilities of the closed choices of an object, field by field:
/// `{"verdict": "yes", "$choice_probabilities": {"verdict": {"yes": 0.9,
/// "no": 0.1}}}`. The `$` keeps it apart from any property a prompt's
/// schema declares.
pub const CHOICE_PROBABILITIES: &str = "$choice_probabilities";

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
