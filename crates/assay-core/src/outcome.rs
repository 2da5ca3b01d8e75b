//! What scoring one (sample, metric) produces, and its public JSON form.

use crate::Field;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// The result of one metric on one sample. Never NaN: a number is either
/// scored, or the outcome says why there is none.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Scored {
        /// In [0, 1].
        value: f64,
        /// Why this value, composed from the evidence (may be absent for
        /// lexical metrics, whose details say it all).
        reason: Option<String>,
        /// Everything needed to audit the value.
        details: Details,
    },
    Skipped(SkipReason),
    Failed(Failure),
}

impl Outcome {
    /// A scored outcome with details and no reason.
    pub fn scored(value: f64, details: impl Into<Details>) -> Outcome {
        Outcome::Scored {
            value,
            reason: None,
            details: details.into(),
        }
    }

    pub fn status(&self) -> Status {
        match self {
            Outcome::Scored { .. } => Status::Scored,
            Outcome::Skipped(_) => Status::Skipped,
            Outcome::Failed(_) => Status::Failed,
        }
    }
}

/// What a scored outcome's value rests on, written as `results.jsonl`'s
/// `details` object.
///
/// A lexical metric reports the same few numbers for each of millions of
/// outcomes; as [`Details::Numbers`] they are written without building a
/// JSON map for each (which took a tenth of a ROUGE run). Both forms
/// serialise alike, and what is read back is [`Details::Json`]. The JSON
/// form is boxed, so that an outcome stays small to move.
///
/// ```
/// use assay_core::Details;
/// use serde_json::json;
/// let prf = Details::numbers(&["precision", "recall"], [0.5, 0.25]);
/// assert_eq!(prf.number("recall"), Some(0.25));
/// assert_eq!(serde_json::to_string(&prf).unwrap(), r#"{"precision":0.5,"recall":0.25}"#);
/// assert_eq!(prf, Details::from(json!({"precision": 0.5, "recall": 0.25})));
/// ```
#[derive(Clone, Debug)]
pub enum Details {
    /// `names[i]` = `values[i]`, in the order of the names.
    Numbers {
        names: &'static [&'static str],
        values: [f64; Details::MAX_NUMBERS],
    },
    /// Any JSON value (the judged metrics' verdicts and evidence).
    Json(Box<Value>),
}

impl Details {
    /// The most numbers [`Details::Numbers`] holds: a lexical metric's
    /// counts for one output.
    pub const MAX_NUMBERS: usize = 4;

    /// `names[i]` = `values[i]`; more than [`Details::MAX_NUMBERS`] do
    /// not compile.
    pub fn numbers<const N: usize>(names: &'static [&'static str; N], values: [f64; N]) -> Details {
        const { assert!(N <= Details::MAX_NUMBERS) };
        let mut slots = [0.0; Details::MAX_NUMBERS];
        slots[..N].copy_from_slice(&values);
        Details::Numbers {
            names,
            values: slots,
        }
    }

    /// The number under `key`, when the details are an object that has
    /// one there.
    pub fn number(&self, key: &str) -> Option<f64> {
        match self {
            Details::Numbers { names, values } => {
                names.iter().position(|n| *n == key).map(|i| values[i])
            }
            Details::Json(v) => v.get(key).and_then(Value::as_f64),
        }
    }

    /// Sets `key` (the details become a JSON object, an object as they
    /// were when they were one).
    pub fn insert(&mut self, key: &str, value: Value) {
        match self {
            Details::Json(json) => json[key] = value,
            Details::Numbers { .. } => {
                let mut json = self.clone().into_json();
                json[key] = value;
                *self = Details::from(json);
            }
        }
    }

    /// The details as a JSON value, borrowed where they are one.
    pub fn to_json(&self) -> Cow<'_, Value> {
        match self {
            Details::Json(v) => Cow::Borrowed(v),
            numbers => Cow::Owned(numbers.clone().into_json()),
        }
    }

    /// The details as one JSON value.
    pub fn into_json(self) -> Value {
        match self {
            Details::Json(v) => *v,
            Details::Numbers { names, values } => Value::Object(
                names
                    .iter()
                    .zip(values)
                    .map(|(n, v)| (n.to_string(), Value::from(v)))
                    .collect(),
            ),
        }
    }
}

impl From<Value> for Details {
    fn from(v: Value) -> Details {
        Details::Json(Box::new(v))
    }
}

impl PartialEq for Details {
    fn eq(&self, other: &Details) -> bool {
        self.to_json() == other.to_json()
    }
}

impl Serialize for Details {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Details::Json(v) => v.serialize(s),
            Details::Numbers { names, values } => {
                let mut map = s.serialize_map(Some(names.len()))?;
                for (name, value) in names.iter().zip(values) {
                    map.serialize_entry(name, value)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Details {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Details, D::Error> {
        Value::deserialize(d).map(Details::from)
    }
}

/// Why a sample was not scored although nothing went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// The metric needs this field and the row lacks it.
    MissingField(Field),
    /// The text to judge yields no statements (e.g. an empty response).
    NoStatements,
    /// The metric judges retrieved contexts and the list is empty.
    NoContexts,
    /// The judge found nothing to ask about the source (no keyphrases or
    /// no questions), so there is nothing to score.
    NoQuestions,
    /// No assistant message of the conversation follows a fact the user
    /// stated, so there is nothing to retain.
    NoFacts,
    /// The conversation has no assistant reply to judge.
    NoTurns,
    /// The user wants nothing of the conversation, so nothing can be met.
    NoIntentions,
    /// The user brings up no topic, so none can be kept to.
    NoTopics,
    /// The conversation makes no tool call, so no arguments can be right.
    NoCalls,
    /// No assistant reply of the conversation carries its own retrieved
    /// contexts, so a per-turn RAG metric has no turn to score.
    NoTurnContexts,
    /// The row is written in a language the metric's verdict cannot read;
    /// the text names it and says what can.
    UnsupportedLanguage(String),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::MissingField(Field::References) => {
                f.write_str("missing required field 'reference' (or 'references')")
            }
            SkipReason::MissingField(field) => write!(f, "missing required field '{field}'"),
            SkipReason::NoStatements => {
                f.write_str("no_statements: the text has no statements to judge")
            }
            SkipReason::NoContexts => f.write_str("no_contexts: the retrieved contexts are empty"),
            SkipReason::NoQuestions => {
                f.write_str("no_questions: the source yields no questions to ask")
            }
            SkipReason::NoFacts => {
                f.write_str("no_facts: no assistant message follows a fact the user stated")
            }
            SkipReason::NoTurns => {
                f.write_str("no_turns: the conversation has no assistant reply to judge")
            }
            SkipReason::NoIntentions => {
                f.write_str("no_intentions: the user wants nothing of the conversation")
            }
            SkipReason::NoTopics => {
                f.write_str("no_topics: the user brings up no topic in the conversation")
            }
            SkipReason::NoCalls => f.write_str("no_calls: the conversation makes no tool call"),
            SkipReason::NoTurnContexts => f.write_str(
                "no_turn_contexts: no assistant reply carries its own retrieved contexts",
            ),
            SkipReason::UnsupportedLanguage(why) => write!(f, "unsupported_language: {why}"),
        }
    }
}

/// Something went wrong; `kind` says what, `message` carries the evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    pub message: String,
}

/// The kinds of failure, as reported in results and counted in summaries.
///
/// One type from the dataset readers to Python: the judge layer
/// (`assay-llm`'s `Error::kind`) and the local models fail with these
/// same kinds, so a judge error becomes an outcome without a map. Each
/// kind has a stable snake_case id (`Display`/`FromStr` and serde
/// round-trip through it), written in `results.jsonl` and counted in
/// summaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The row could not be read or has a field of the wrong type.
    Input,
    /// The metric's computation is undefined for this input (e.g. nltk's
    /// smoothing method 6 on a hypothesis without trigram matches).
    Undefined,
    // The judge layer's kinds.
    /// The provider refused the credentials (HTTP 401/403).
    ///
    /// Run-fatal: every later request would fail the same way, so a caller
    /// should stop the whole run at once (`assay-llm`'s `Error::is_run_fatal`).
    Auth,
    /// HTTP 429 after all retries, or a `Retry-After` longer than allowed.
    RateLimited,
    /// The per-attempt timeout elapsed (or HTTP 408) after all retries.
    Timeout,
    /// HTTP 5xx after all retries.
    Server,
    /// The connection failed or was reset, after all retries.
    Connection,
    /// The provider rejected the request itself (other 4xx, e.g. unknown model).
    Rejected,
    /// The body was not the protocol's JSON, was too large, or lacked fields.
    InvalidResponse,
    /// The model stopped at the token limit (`finish_reason: length`).
    Truncated,
    /// The provider's content filter withheld the answer.
    ContentFilter,
    /// The answer did not yield JSON valid against the output schema, even
    /// after the repair re-asks; the message carries the raw text.
    Parse,
    /// The response cache could not be read or written.
    Cache,
    /// A model spec, option or batch file was not understood.
    Config,
    /// The answer was valid JSON but did not fit the question (wrong number
    /// of verdicts, a label outside the set), even after one repair.
    Mismatch,
    /// The judge in use is measured unfit for the metric, which declined
    /// to print a number and asked nothing (`assay_metrics::judged::fitness`).
    Unfit,
}

impl FailureKind {
    /// Every kind, in declaration order.
    pub const ALL: [FailureKind; 16] = [
        FailureKind::Input,
        FailureKind::Undefined,
        FailureKind::Auth,
        FailureKind::RateLimited,
        FailureKind::Timeout,
        FailureKind::Server,
        FailureKind::Connection,
        FailureKind::Rejected,
        FailureKind::InvalidResponse,
        FailureKind::Truncated,
        FailureKind::ContentFilter,
        FailureKind::Parse,
        FailureKind::Cache,
        FailureKind::Config,
        FailureKind::Mismatch,
        FailureKind::Unfit,
    ];

    /// The stable snake_case id.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Input => "input",
            FailureKind::Undefined => "undefined",
            FailureKind::Auth => "auth",
            FailureKind::RateLimited => "rate_limited",
            FailureKind::Timeout => "timeout",
            FailureKind::Server => "server",
            FailureKind::Connection => "connection",
            FailureKind::Rejected => "rejected",
            FailureKind::InvalidResponse => "invalid_response",
            FailureKind::Truncated => "truncated",
            FailureKind::ContentFilter => "content_filter",
            FailureKind::Parse => "parse",
            FailureKind::Cache => "cache",
            FailureKind::Config => "config",
            FailureKind::Mismatch => "mismatch",
            FailureKind::Unfit => "unfit",
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The id names no [`FailureKind`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown failure kind {0:?}")]
pub struct UnknownFailureKind(pub String);

impl FromStr for FailureKind {
    type Err = UnknownFailureKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FailureKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownFailureKind(s.to_owned()))
    }
}

/// An outcome's status, as written in `results.jsonl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Scored,
    Skipped,
    Failed,
}

/// Version of the `results.jsonl` row format. Later versions add fields,
/// never rename them.
pub const RESULTS_FORMAT_VERSION: u32 = 1;

/// One line of `results.jsonl`.
///
/// ```
/// use assay_core::{Outcome, OutcomeRecord};
/// let rec = OutcomeRecord::new("q1", 1, "bleu", Outcome::scored(0.5, serde_json::json!({})));
/// let line = serde_json::to_string(&rec).unwrap();
/// assert_eq!(line, r#"{"format_version":1,"sample_id":"q1","row":1,"metric":"bleu","status":"scored","value":0.5,"details":{}}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutcomeRecord {
    pub format_version: u32,
    pub sample_id: String,
    pub row: u64,
    pub metric: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Details>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorRecord>,
    /// Which judging of the sample this is, under `--repeats N` (1..N-1;
    /// absent for the first, so single runs read as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
}

/// An empty record (no sample, skipped, nothing said), to be refilled.
impl Default for OutcomeRecord {
    fn default() -> OutcomeRecord {
        OutcomeRecord {
            format_version: RESULTS_FORMAT_VERSION,
            sample_id: String::new(),
            row: 0,
            metric: String::new(),
            status: Status::Skipped,
            value: None,
            details: None,
            reason: None,
            error: None,
            repeat: None,
        }
    }
}

/// The `error` object of a failed outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorRecord {
    pub kind: FailureKind,
    pub message: String,
}

impl OutcomeRecord {
    /// Takes the outcome whole: its details move into the record
    /// uncopied, which a run writing millions of them notices.
    pub fn new(sample_id: &str, row: u64, metric: &str, outcome: Outcome) -> OutcomeRecord {
        let mut rec = OutcomeRecord::default();
        rec.refill(sample_id, row, metric, outcome);
        rec
    }

    /// Makes this record [`OutcomeRecord::new`]'s of the arguments, in
    /// place: a run writing millions of records refills one and keeps its
    /// strings' memory instead of allocating two for each.
    pub fn refill(&mut self, sample_id: &str, row: u64, metric: &str, outcome: Outcome) {
        let reuse = |mut kept: String, text: &str| {
            kept.clear();
            kept.push_str(text);
            kept
        };
        *self = OutcomeRecord {
            sample_id: reuse(std::mem::take(&mut self.sample_id), sample_id),
            row,
            metric: reuse(std::mem::take(&mut self.metric), metric),
            status: outcome.status(),
            ..OutcomeRecord::default()
        };
        match outcome {
            Outcome::Scored {
                value,
                reason,
                details,
            } => {
                self.value = Some(value);
                self.reason = reason;
                self.details = Some(details);
            }
            Outcome::Skipped(why) => self.reason = Some(why.to_string()),
            Outcome::Failed(f) => {
                self.error = Some(ErrorRecord {
                    kind: f.kind,
                    message: f.message,
                })
            }
        }
    }

    /// Appends the record's `results.jsonl` line: the bytes of
    /// `serde_json::to_writer` and a newline (tested to be the same), with
    /// the fixed keys copied rather than escaped one byte at a time, which
    /// showed in the profile of a run writing millions of lines.
    pub fn write_line(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(b"{\"format_version\":");
        serde_json::to_writer(&mut *out, &self.format_version)?;
        out.extend_from_slice(b",\"sample_id\":");
        serde_json::to_writer(&mut *out, &self.sample_id)?;
        out.extend_from_slice(b",\"row\":");
        serde_json::to_writer(&mut *out, &self.row)?;
        out.extend_from_slice(b",\"metric\":");
        serde_json::to_writer(&mut *out, &self.metric)?;
        out.extend_from_slice(match self.status {
            Status::Scored => b",\"status\":\"scored\"",
            Status::Skipped => b",\"status\":\"skipped\"",
            Status::Failed => b",\"status\":\"failed\"",
        });
        let mut written = 0..0;
        if let Some(value) = self.value {
            out.extend_from_slice(b",\"value\":");
            written = out.len()..out.len();
            serde_json::to_writer(&mut *out, &value)?;
            written.end = out.len();
        }
        match &self.details {
            None => {}
            Some(Details::Numbers { names, values }) => {
                out.extend_from_slice(b",\"details\":{");
                for (i, (name, value)) in names.iter().zip(values).enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    serde_json::to_writer(&mut *out, name)?;
                    out.push(b':');
                    // A lexical metric's value is one of its numbers
                    // (ROUGE's F-measure): its digits are copied, not
                    // formatted twice.
                    if self.value.map(f64::to_bits) == Some(value.to_bits()) {
                        out.extend_from_within(written.clone());
                    } else {
                        serde_json::to_writer(&mut *out, value)?;
                    }
                }
                out.push(b'}');
            }
            Some(Details::Json(details)) => {
                out.extend_from_slice(b",\"details\":");
                serde_json::to_writer(&mut *out, details)?;
            }
        }
        if let Some(reason) = &self.reason {
            out.extend_from_slice(b",\"reason\":");
            serde_json::to_writer(&mut *out, reason)?;
        }
        if let Some(error) = &self.error {
            out.extend_from_slice(b",\"error\":");
            serde_json::to_writer(&mut *out, error)?;
        }
        if let Some(repeat) = self.repeat {
            out.extend_from_slice(b",\"repeat\":");
            serde_json::to_writer(&mut *out, &repeat)?;
        }
        out.extend_from_slice(b"}\n");
        Ok(())
    }

    /// Sets which judging this is (0-based); repeat 0 carries no field.
    pub fn set_repeat(&mut self, repeat: u32) {
        self.repeat = (repeat > 0).then_some(repeat);
    }

    /// The record of judging `repeat` (0-based); repeat 0 carries no field.
    ///
    /// ```
    /// use assay_core::{Outcome, OutcomeRecord};
    /// let rec = OutcomeRecord::new("q1", 1, "faithfulness", Outcome::scored(1.0, serde_json::json!({})));
    /// assert_eq!(rec.clone().with_repeat(0).repeat, None);
    /// assert_eq!(rec.with_repeat(2).repeat, Some(2));
    /// ```
    pub fn with_repeat(mut self, repeat: u32) -> OutcomeRecord {
        self.set_repeat(repeat);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn skipped_and_failed_rows_have_their_keys_only() {
        let skipped = OutcomeRecord::new(
            "a",
            2,
            "rouge1",
            Outcome::Skipped(SkipReason::MissingField(Field::References)),
        );
        assert_eq!(
            serde_json::to_value(&skipped).unwrap(),
            json!({"format_version": 1, "sample_id": "a", "row": 2, "metric": "rouge1", "status": "skipped",
                   "reason": "missing required field 'reference' (or 'references')"})
        );
        let failed = Outcome::Failed(Failure {
            kind: FailureKind::Input,
            message: "data.jsonl:3: invalid JSON".into(),
        });
        let v = serde_json::to_value(OutcomeRecord::new("3", 3, "bleu", failed)).unwrap();
        assert_eq!(
            v["error"],
            json!({"kind": "input", "message": "data.jsonl:3: invalid JSON"})
        );
        assert!(v.get("value").is_none());
    }

    #[test]
    fn empty_input_skips_start_with_their_key() {
        for (why, key) in [
            (SkipReason::NoStatements, "no_statements: "),
            (SkipReason::NoContexts, "no_contexts: "),
            (SkipReason::NoQuestions, "no_questions: "),
            (SkipReason::NoFacts, "no_facts: "),
            (SkipReason::NoTurns, "no_turns: "),
            (SkipReason::NoIntentions, "no_intentions: "),
            (SkipReason::NoTopics, "no_topics: "),
            (SkipReason::NoCalls, "no_calls: "),
            (SkipReason::NoTurnContexts, "no_turn_contexts: "),
            (
                SkipReason::UnsupportedLanguage("Mandarin".into()),
                "unsupported_language: Mandarin",
            ),
        ] {
            assert!(why.to_string().starts_with(key), "{why}");
        }
    }

    #[test]
    fn failure_kinds_round_trip_through_their_ids() {
        for kind in FailureKind::ALL {
            assert_eq!(kind.name().parse::<FailureKind>(), Ok(kind));
            assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.name()));
        }
        assert!("nope".parse::<FailureKind>().is_err());
    }

    #[test]
    fn numbers_read_back_as_the_json_they_wrote() {
        let rec = OutcomeRecord::new(
            "x",
            1,
            "rouge1",
            Outcome::scored(
                0.5,
                Details::numbers(&["precision", "fmeasure"], [1.0, 0.5]),
            ),
        );
        let line = serde_json::to_string(&rec).unwrap();
        assert!(line.ends_with(r#""value":0.5,"details":{"precision":1.0,"fmeasure":0.5}}"#));
        let back: OutcomeRecord = serde_json::from_str(&line).unwrap();
        assert!(matches!(back.details, Some(Details::Json(_))));
        assert_eq!(back, rec);
        let mut details = back.details.unwrap();
        assert_eq!(details.number("fmeasure"), Some(0.5));
        details.insert("note", json!("kept"));
        assert_eq!(
            details.into_json(),
            json!({"precision": 1.0, "fmeasure": 0.5, "note": "kept"})
        );
        let mut numbers = Details::numbers(&["recall"], [0.25]);
        numbers.insert("n", json!(3));
        assert_eq!(numbers, Details::from(json!({"recall": 0.25, "n": 3})));
    }

    #[test]
    fn a_written_line_is_serde_jsons() {
        let failed = Outcome::Failed(Failure {
            kind: FailureKind::Timeout,
            message: "no answer in \"60\" s\n".into(),
        });
        let judged = Outcome::Scored {
            value: 1.0 / 3.0,
            reason: Some("1 of 3 — «quoted»\t".into()),
            details: json!({"votes": [{"verdict": "yes", "p": 1e-7}], "k": null}).into(),
        };
        let records = [
            OutcomeRecord::new(
                "q\"1\\é",
                7,
                "rouge1",
                Outcome::scored(
                    0.0,
                    Details::numbers(&["precision", "recall", "fmeasure"], [1.0, 1e-300, 2.5e20]),
                ),
            ),
            OutcomeRecord::new(
                "",
                u64::MAX,
                "m/é",
                Outcome::Skipped(SkipReason::NoContexts),
            ),
            // A value that is also a detail, and zeros of both signs.
            OutcomeRecord::new(
                "r",
                3,
                "rougeL",
                Outcome::scored(
                    0.1 + 0.2,
                    Details::numbers(
                        &["precision", "fmeasure", "zero"],
                        [0.1 + 0.2, 0.1 + 0.2, -0.0],
                    ),
                ),
            ),
            OutcomeRecord::new(
                "z",
                4,
                "rouge2",
                Outcome::scored(0.0, Details::numbers(&["f"], [-0.0])),
            ),
            OutcomeRecord::new("\u{1}x", 0, "bleu", failed).with_repeat(3),
            OutcomeRecord::new("a", 1, "faithfulness", judged).with_repeat(1),
            OutcomeRecord::new(
                "b",
                2,
                "chrf",
                Outcome::scored(1.0, Details::numbers(&[], [])),
            ),
        ];
        for rec in records {
            let mut line = Vec::new();
            rec.write_line(&mut line).unwrap();
            let expected = serde_json::to_string(&rec).unwrap() + "\n";
            assert_eq!(String::from_utf8(line).unwrap(), expected);
        }
    }

    #[test]
    fn a_refilled_record_is_a_new_one() {
        let failed = || {
            Outcome::Failed(Failure {
                kind: FailureKind::Server,
                message: "503".into(),
            })
        };
        let outcomes = [
            failed(),
            Outcome::scored(0.5, Details::numbers(&["recall"], [0.5])),
            Outcome::Skipped(SkipReason::NoContexts),
            failed(),
        ];
        let mut record = OutcomeRecord::default();
        for (i, outcome) in outcomes.into_iter().enumerate() {
            let repeat = (i % 2) as u32;
            record.refill(&format!("s{i}"), i as u64, "m", outcome.clone());
            record.set_repeat(repeat);
            let fresh = OutcomeRecord::new(&format!("s{i}"), i as u64, "m", outcome);
            assert_eq!(record, fresh.with_repeat(repeat), "{i}");
        }
    }

    #[test]
    fn records_round_trip() {
        let rec = OutcomeRecord::new(
            "x",
            9,
            "chrf",
            Outcome::scored(0.25, json!({"score": 25.0})),
        );
        let back: OutcomeRecord =
            serde_json::from_str(&serde_json::to_string(&rec).unwrap()).unwrap();
        assert_eq!(back, rec);
    }
}
