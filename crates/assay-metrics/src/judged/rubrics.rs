//! What the two rubric metrics (G-Eval) share, not a metric of its own:
//! [`crate::judged::rubric`] rates a sample's fields,
//! [`crate::judged::conversation_rubric`] a whole conversation, on
//! criteria the user writes. Each of those modules is only a definition;
//! this is their one [`MetricUnit`] (the rubrics, unnamed and named, of
//! one configured metric), their parameters and their two steps.
//!
//! `--set METRIC.criteria="..."` rates every sample on a scale 1..N
//! (`METRIC.scale`, default 5) and maps the rating to [0, 1] as
//! (r - 1) / (N - 1). When the judge gives the probabilities of the N
//! ratings (the local judge decodes the rating as a closed choice), r is
//! the probability-weighted rating, as G-Eval does. The judge reads the
//! criterion, the evaluation steps and the sample's fields named by
//! `METRIC.fields` (`messages` is the conversation as a transcript, tool
//! calls included).
//!
//! Evaluation steps: `METRIC.steps` (separated by `|`), or, when absent,
//! written once per run by the judge from the criterion
//! (`prompts/rubric_steps.json`), before any sample. That call goes
//! through the judge's cache like any other, and the steps it wrote are
//! recorded in the manifest's parameters, so the run can be repeated with
//! exactly those steps (`METRIC.steps=...`) on any judge. When the call
//! fails, every sample's outcome is `failed` with its failure.
//!
//! Several rubrics in one run: `METRIC.NAME.criteria=...` (with optional
//! `NAME.steps`, written by the judge when absent, and `NAME.scale`,
//! `NAME.fields`, which default to the unnamed ones' values), outputs
//! `METRIC/NAME`; `METRIC.criteria` gives the output `METRIC`.
//!
//! Steps: per rubric, one rating call per sample (`prompts/rubric_rating.json`).
//!
//! Empty inputs: a sample lacking a field the rubric reads is skipped
//! (`missing_field`); empty texts are rated as they are; a conversation
//! whose messages, contents or tool calls could not be read fails
//! (`input`) naming the field.

use crate::judged::answer;
use crate::judged::common::rated;
use crate::judged::conversation::{agent_transcript, readable, unreadable};
use crate::judged::metric::{JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::prompt::{sha256_hex, PromptDecl, PromptId, PromptSet, SlotKind};
use crate::judged::request::numbered;
use crate::judged::step::Problem;
use crate::judged::step::{list, text, Filled};
use crate::judged::step::{InputError, Inputs, StepKey, StepOutput, StepUnit, UnitStep};
use crate::judged::steps::AGENT_PARTS;
use crate::params::{param, ParamError, ParamSpec, Values};
use crate::spec::Direction;
use assay_core::{Failure, FailureKind, Field, Outcome, Sample};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

/// The evaluation steps the judge writes for a criterion, once per run.
pub const STEPS_PROMPT: PromptId = PromptId(&PromptDecl {
    name: "rubric_steps",
    text: include_str!("../../prompts/rubric_steps.json"),
    slots: &[("criteria", SlotKind::Text), ("fields", SlotKind::Text)],
    counts: &[],
    per_item: &[],
});

/// The 1..N rating of one sample on a criterion, with its steps.
pub const RATING_PROMPT: PromptId = PromptId(&PromptDecl {
    name: "rubric_rating",
    text: include_str!("../../prompts/rubric_rating.json"),
    slots: &[
        ("criteria", SlotKind::Text),
        ("steps", SlotKind::List),
        ("scale", SlotKind::Text),
        ("sample", SlotKind::Text),
    ],
    counts: &[],
    per_item: &[],
});

/// The parameters a named rubric may set (`NAME.PARAM`).
const PER_RUBRIC: [&str; 4] = ["criteria", "steps", "scale", "fields"];

/// The value of `steps` that asks the judge to write them.
const GENERATED: &str = "generated";

/// The value of `steps` recorded when the judge failed to write them.
const FAILED: &str = "failed";

/// The parameters of a rubric metric whose rubrics read `fields` unless
/// told otherwise.
pub const fn params(fields: &'static str) -> [ParamSpec; 4] {
    [
        param(
            "criteria",
            "none",
            "what the judge rates, in words (METRIC.NAME.criteria for named rubrics)",
        ),
        param(
            "steps",
            GENERATED,
            "evaluation steps separated by '|'; when generated, the judge writes them once per run",
        ),
        param("scale", "5", "the top of the rating scale 1..N (2 to 10)"),
        param(
            "fields",
            fields,
            "the sample fields the judge reads, comma-separated (messages: the conversation)",
        ),
    ]
}

/// The metric `def` before configuration: no rubric yet.
pub fn unconfigured(def: &'static JudgedDef) -> JudgedMetric {
    unit(def, Vec::new())
}

fn unit(def: &'static JudgedDef, rubrics: Vec<Rubric>) -> JudgedMetric {
    JudgedMetric::new(Rubrics { def, rubrics })
}

/// The rubrics of metric `def` from their parameters: the unnamed one
/// when `criteria` is given, and one per `NAME.criteria`.
pub fn configure(def: &'static JudgedDef, values: &Values) -> Result<JudgedMetric, ParamError> {
    let invalid = |param: &str, value: &str, message: String| values.invalid(param, value, message);
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for key in values.given().keys() {
        let known = match key.rsplit_once('.') {
            None => PER_RUBRIC.contains(&key.as_str()),
            Some((name, param)) => {
                names.insert(name);
                PER_RUBRIC.contains(&param) && valid_name(name)
            }
        };
        if !known {
            return Err(ParamError::Unknown {
                metric: JudgedId::of(def).into(),
                param: key.clone(),
                known: "criteria, steps, scale, fields, NAME.criteria, NAME.steps, NAME.scale, \
                        NAME.fields (NAME: lower-case letters, digits, _)"
                    .into(),
            });
        }
    }
    let read = |name: Option<&str>, param: &'static str| -> String {
        match name {
            None => values.raw(param).to_string(),
            Some(n) => values
                .given()
                .get(&format!("{n}.{param}"))
                .cloned()
                // A named rubric's steps are its own; its scale and fields
                // default to the unnamed ones'.
                .unwrap_or_else(|| match param {
                    "steps" => GENERATED.to_string(),
                    _ => values.raw(param).to_string(),
                }),
        }
    };
    let mut rubrics = Vec::new();
    let unnamed = (values.raw("criteria").trim() != "none").then_some(None);
    for name in unnamed.into_iter().chain(names.iter().map(|n| Some(*n))) {
        let key = |param: &str| name.map_or(param.to_string(), |n| format!("{n}.{param}"));
        let criteria = read(name, "criteria");
        if criteria.trim().is_empty() || criteria.trim() == "none" {
            return Err(invalid(
                &key("criteria"),
                &criteria,
                "the rubric needs a criterion".into(),
            ));
        }
        let raw_scale = read(name, "scale");
        let scale = raw_scale
            .trim()
            .parse::<u8>()
            .ok()
            .filter(|n| (2..=10).contains(n))
            .ok_or_else(|| invalid(&key("scale"), &raw_scale, "expected 2 to 10".into()))?;
        let raw_fields = read(name, "fields");
        let fields = parse_fields(&raw_fields)
            .map_err(|message| invalid(&key("fields"), &raw_fields, message))?;
        let raw_steps = read(name, "steps");
        let steps = if raw_steps.trim() == GENERATED {
            Steps::Generated(OnceLock::new())
        } else {
            let given = split_steps(&raw_steps);
            if given.is_empty() {
                return Err(invalid(
                    &key("steps"),
                    &raw_steps,
                    format!("no step (separate them by '|', or give '{GENERATED}')"),
                ));
            }
            Steps::Given(given)
        };
        rubrics.push(Rubric {
            metric: def.name,
            name: name.map(str::to_string),
            criteria: criteria.trim().to_string(),
            steps,
            scale,
            fields,
        });
    }
    if rubrics.is_empty() {
        return Err(invalid(
            "criteria",
            "none",
            format!("give {0}.criteria=... or {0}.NAME.criteria=...", def.name),
        ));
    }
    Ok(unit(def, rubrics))
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn split_steps(raw: &str) -> Vec<String> {
    raw.split('|')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The fields a rubric may read: the text fields and the conversation.
fn readable_fields() -> impl Iterator<Item = Field> {
    Field::TEXT.into_iter().chain([Field::Messages])
}

/// The fields a rubric reads, in the order given, each once. `reference`
/// and `references` both mean the sample's reference list.
pub fn parse_fields(raw: &str) -> Result<Vec<Field>, String> {
    let mut fields = Vec::new();
    for name in raw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let field = match readable_fields().find(|f| f.name() == name) {
            Some(Field::Reference) => Field::References,
            Some(f) => f,
            None => {
                let known: Vec<&str> = readable_fields().map(|f| f.name()).collect();
                return Err(format!(
                    "unknown field '{name}' (known: {})",
                    known.join(", ")
                ));
            }
        };
        if !fields.contains(&field) {
            fields.push(field);
        }
    }
    if fields.is_empty() {
        return Err("no field".into());
    }
    Ok(fields)
}

/// Where a rubric's evaluation steps come from.
#[derive(Debug)]
enum Steps {
    Given(Vec<String>),
    /// Written by the judge once per run ([`MetricUnit::set_up`]), or the
    /// failure of that call.
    Generated(OnceLock<Result<Vec<String>, Failure>>),
}

/// One criterion with its steps, scale and fields.
#[derive(Debug)]
struct Rubric {
    /// The metric's name: its outputs' and steps' first word.
    metric: &'static str,
    /// `None` for the unnamed rubric (output `METRIC`).
    name: Option<String>,
    criteria: String,
    steps: Steps,
    scale: u8,
    fields: Vec<Field>,
}

impl Rubric {
    fn output(&self) -> String {
        self.name.as_ref().map_or_else(
            || self.metric.to_string(),
            |n| format!("{}/{n}", self.metric),
        )
    }

    /// How this rubric's sample reads, when it reads a conversation that
    /// cannot be read: skipped or failed, naming the message and field.
    fn unreadable(&self, sample: &Sample) -> Option<Outcome> {
        if self.fields.contains(&Field::Messages) {
            unreadable(sample, &AGENT_PARTS)
        } else {
            None
        }
    }

    /// The steps, once known: `None` before the judge wrote them.
    fn steps(&self) -> Option<Result<&[String], &Failure>> {
        match &self.steps {
            Steps::Given(s) => Some(Ok(s)),
            Steps::Generated(cell) => cell.get().map(|r| r.as_ref().map(Vec::as_slice)),
        }
    }

    fn steps_step(&self) -> StepKey {
        StepKey::Unit(UnitStep(Arc::new(WriteSteps {
            metric: self.metric,
            name: self.name.clone(),
            criteria: self.criteria.clone(),
            fields: self.fields.clone(),
        })))
    }

    fn rating_step(&self, steps: &[String]) -> StepKey {
        StepKey::Unit(UnitStep(Arc::new(Rate {
            metric: self.metric,
            name: self.name.clone(),
            criteria: self.criteria.clone(),
            steps: steps.to_vec(),
            scale: self.scale,
            fields: self.fields.clone(),
        })))
    }

    /// The parameter names of this rubric: `PARAM` or `NAME.PARAM`.
    fn key(&self, param: &str) -> String {
        self.name
            .as_ref()
            .map_or_else(|| param.to_string(), |n| format!("{n}.{param}"))
    }

    fn steps_text(&self) -> String {
        match self.steps() {
            Some(Ok(steps)) => steps.join(" | "),
            Some(Err(_)) => FAILED.into(),
            None => GENERATED.into(),
        }
    }

    fn fields_text(&self) -> String {
        self.fields
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The rubrics of one run of metric `def`.
#[derive(Debug)]
struct Rubrics {
    def: &'static JudgedDef,
    rubrics: Vec<Rubric>,
}

impl MetricUnit for Rubrics {
    fn def(&self) -> &'static JudgedDef {
        self.def
    }

    fn required(&self) -> Vec<Field> {
        if self.rubrics.is_empty() {
            // The metric before configuration, as `assay metrics` shows it.
            return self.def.required.to_vec();
        }
        let mut all: Vec<Field> = Vec::new();
        for f in self.rubrics.iter().flat_map(|r| &r.fields) {
            if !all.contains(f) {
                all.push(*f);
            }
        }
        all
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        self.rubrics
            .iter()
            .filter(|r| r.unreadable(sample).is_none())
            .filter_map(|r| match r.steps() {
                Some(Ok(steps)) => Some(r.rating_step(steps)),
                _ => None,
            })
            .collect()
    }

    fn directions(&self) -> Vec<(String, Direction)> {
        self.rubrics
            .iter()
            .map(|r| (r.output(), Direction::HigherIsBetter))
            .collect()
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        self.rubrics
            .iter()
            .map(|r| {
                if let Some(outcome) = r.unreadable(inputs.sample) {
                    return Ok((r.output(), outcome));
                }
                let outcome = match r.steps() {
                    Some(Ok(steps)) => {
                        let key = r.rating_step(steps);
                        match inputs.output(&key)? {
                            StepOutput::Rating(rating) => score(rating, r.scale),
                            _ => return Err(InputError::WrongOutput(key)),
                        }
                    }
                    Some(Err(failure)) => Outcome::Failed(failure.clone()),
                    None => Outcome::Failed(Failure {
                        kind: FailureKind::Undefined,
                        message: format!(
                            "internal: the steps of {} were never written",
                            r.output()
                        ),
                    }),
                };
                Ok((r.output(), outcome))
            })
            .collect()
    }

    fn params(&self) -> Vec<(String, String)> {
        self.rubrics
            .iter()
            .flat_map(|r| {
                [
                    (r.key("criteria"), r.criteria.clone()),
                    (r.key("steps"), r.steps_text()),
                    (r.key("scale"), r.scale.to_string()),
                    (r.key("fields"), r.fields_text()),
                ]
            })
            .collect()
    }

    fn signature_params(&self) -> Vec<(String, String)> {
        let short = |s: &str| sha256_hex(s.as_bytes())[..12].to_string();
        self.rubrics
            .iter()
            .flat_map(|r| {
                [
                    (r.key("criteria"), short(&r.criteria)),
                    (r.key("steps"), short(&r.steps_text())),
                    (r.key("scale"), r.scale.to_string()),
                    (r.key("fields"), r.fields_text()),
                ]
            })
            .collect()
    }

    fn definition(&self, output: &str, _: &PromptSet) -> Option<String> {
        self.rubrics
            .iter()
            .find(|r| r.output() == output)
            .map(|r| r.criteria.clone())
    }

    fn setup(&self) -> Vec<StepKey> {
        self.rubrics
            .iter()
            .filter(|r| r.steps().is_none())
            .map(Rubric::steps_step)
            .collect()
    }

    fn recall(&self, recorded: &BTreeMap<String, String>) {
        for r in &self.rubrics {
            let Steps::Generated(cell) = &r.steps else {
                continue;
            };
            let same = |param: &str, now: String| recorded.get(&r.key(param)) == Some(&now);
            if !(same("criteria", r.criteria.clone())
                && same("fields", r.fields_text())
                && same("scale", r.scale.to_string()))
            {
                continue;
            }
            let steps = recorded.get(&r.key("steps")).map_or("", String::as_str);
            if steps != GENERATED && steps != FAILED {
                let _ = cell.set(Ok(split_steps(steps)));
            }
        }
    }

    fn set_up(&self, step: &StepKey, output: Result<&StepOutput, &Failure>) {
        let Some(r) = self.rubrics.iter().find(|r| r.steps_step() == *step) else {
            return;
        };
        let Steps::Generated(cell) = &r.steps else {
            return;
        };
        let steps = match output {
            Ok(StepOutput::Texts(steps)) => Ok(steps.clone()),
            Ok(_) => Err(Failure {
                kind: FailureKind::Undefined,
                message: format!("internal: step {step} produced an output of another kind"),
            }),
            Err(failure) => Err(failure.clone()),
        };
        // A second answer for the same rubric keeps the first.
        let _ = cell.set(steps);
    }
}

/// A rating on the scale 1..=`scale` mapped to [0, 1], weighted by the
/// judge's probabilities when it gave them.
///
/// ```
/// use assay_metrics::judged::{rubrics, Rating};
/// let r = Rating { rating: 4, reason: "clear".into(), probabilities: Some(vec![0.0, 0.0, 0.5, 0.5]) };
/// // expected rating 3.5 of 4: (3.5 - 1) / 3
/// let assay_core::Outcome::Scored { value, .. } = rubrics::score(&r, 4) else { panic!() };
/// assert!((value - 2.5 / 3.0).abs() < 1e-12);
/// ```
pub fn score(rating: &crate::judged::step::Rating, scale: u8) -> Outcome {
    rated(rating, scale)
}

/// The judge writes a rubric's evaluation steps from its criterion.
#[derive(Debug)]
struct WriteSteps {
    metric: &'static str,
    name: Option<String>,
    criteria: String,
    fields: Vec<Field>,
}

impl StepUnit for WriteSteps {
    fn key(&self) -> String {
        match &self.name {
            None => format!("{}_steps", self.metric),
            Some(n) => format!("{}_steps[{n}]", self.metric),
        }
    }

    fn prompt(&self) -> PromptId {
        STEPS_PROMPT
    }

    fn fill(&self, _: &Inputs<'_>) -> Result<Filled, InputError> {
        let fields: Vec<&str> = self.fields.iter().map(|f| f.name()).collect();
        Ok(Filled {
            slots: [
                ("criteria", text(&self.criteria)),
                ("fields", text(&fields.join(", "))),
            ]
            .into(),
            counts: Vec::new(),
            votes: 1,
        })
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        let steps = answer::texts(answer::field(answer, "$", "steps")?, "$.steps")?;
        // '|' separates steps where they are recorded and given back.
        if steps.is_empty() || steps.iter().any(|s| s.trim().is_empty() || s.contains('|')) {
            return Err(Problem::Shape {
                at: "$.steps".into(),
                expected: "at least one step, none blank, none with '|'",
            });
        }
        Ok(StepOutput::Texts(
            steps.into_iter().map(|s| s.trim().to_string()).collect(),
        ))
    }
}

/// The judge rates one sample against a rubric.
#[derive(Debug)]
struct Rate {
    metric: &'static str,
    name: Option<String>,
    criteria: String,
    steps: Vec<String>,
    scale: u8,
    fields: Vec<Field>,
}

impl StepUnit for Rate {
    fn key(&self) -> String {
        match &self.name {
            None => format!("{}_rating", self.metric),
            Some(n) => format!("{}_rating[{n}]", self.metric),
        }
    }

    fn prompt(&self) -> PromptId {
        RATING_PROMPT
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let mut sample = String::new();
        for field in &self.fields {
            if !sample.is_empty() {
                sample.push_str("\n\n");
            }
            sample.push_str(field.name());
            sample.push_str(":\n");
            match field {
                Field::UserInput => sample.push_str(inputs.user_input()?),
                Field::Response => sample.push_str(inputs.response()?),
                Field::RetrievedContexts => sample.push_str(&numbered(inputs.contexts()?)),
                Field::Reference | Field::References => {
                    let refs = inputs
                        .sample
                        .reference_list()
                        .ok_or(InputError::MissingField(Field::References))?;
                    sample.push_str(&numbered(&refs));
                }
                Field::ReferenceContexts => sample.push_str(&numbered(
                    inputs
                        .sample
                        .reference_contexts
                        .as_deref()
                        .ok_or(InputError::MissingField(Field::ReferenceContexts))?,
                )),
                Field::ChatbotRole => sample.push_str(
                    inputs
                        .sample
                        .chatbot_role
                        .as_deref()
                        .ok_or(InputError::MissingField(Field::ChatbotRole))?,
                ),
                Field::ReferenceTopics => sample.push_str(&numbered(
                    inputs
                        .sample
                        .reference_topics
                        .as_deref()
                        .ok_or(InputError::MissingField(Field::ReferenceTopics))?,
                )),
                Field::Messages => sample.push_str(&agent_transcript(
                    readable(inputs.sample, &AGENT_PARTS)
                        .ok_or(InputError::MissingField(Field::Messages))?,
                )),
                // `parse_fields` takes no other field.
                Field::ReferenceToolCalls => return Err(InputError::MissingField(*field)),
            }
        }
        Ok(Filled {
            slots: [
                ("criteria", text(&self.criteria)),
                ("steps", list(&self.steps)),
                ("scale", text(&format!("1 to {}", self.scale))),
                ("sample", text(&sample)),
            ]
            .into(),
            counts: Vec::new(),
            votes: 1,
        })
    }

    fn schema(&self, prompt_schema: &Value) -> Value {
        let mut schema = prompt_schema.clone();
        if let Some(rating) = schema.pointer_mut("/properties/rating") {
            rating["maximum"] = Value::from(self.scale);
        }
        schema
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        answer::rating(answer, self.scale).map(StepOutput::Rating)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judged::step::Rating;

    fn metric(given: &[(&str, &str)]) -> Result<JudgedMetric, ParamError> {
        let given: BTreeMap<String, String> = given
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        JudgedMetric::configure(
            crate::judged::rubric::ID,
            &given,
            &PromptSet::builtin().unwrap(),
        )
    }

    fn value(o: &Outcome) -> f64 {
        match o {
            Outcome::Scored { value, .. } => *value,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ratings_map_to_the_unit_interval_on_any_scale() {
        let r = |rating, probabilities| Rating {
            rating,
            reason: String::new(),
            probabilities,
        };
        assert_eq!(value(&score(&r(1, None), 5)), 0.0);
        assert_eq!(value(&score(&r(5, None), 5)), 1.0);
        assert_eq!(value(&score(&r(3, None), 5)), 0.5);
        assert_eq!(value(&score(&r(2, None), 2)), 1.0);
        assert_eq!(value(&score(&r(4, None), 10)), 1.0 / 3.0);
        // Probabilities weight the rating: 0.2 x 1 + 0.8 x 3 = 2.6 of 3.
        let weighted = score(&r(3, Some(vec![0.2, 0.0, 0.8])), 3);
        assert!((value(&weighted) - 0.8).abs() < 1e-12);
        let Outcome::Scored {
            reason, details, ..
        } = weighted
        else {
            panic!()
        };
        assert_eq!(
            reason.as_deref(),
            Some("expected rating 2.60 of 3 (most likely 3)")
        );
        assert_eq!(details.to_json()["scale"], 3);
    }

    #[test]
    fn named_rubrics_have_their_own_outputs_and_parameters() {
        let m = metric(&[
            ("criteria", "Is it polite?"),
            ("scale", "4"),
            ("tone.criteria", "Is the tone warm?"),
            ("tone.steps", "Read it | Judge the warmth"),
            ("facts.criteria", "Is it correct?"),
            ("facts.fields", "user_input,response,reference"),
        ])
        .unwrap();
        assert_eq!(m.outputs(), ["rubric", "rubric/facts", "rubric/tone"]);
        let params: BTreeMap<String, String> = m.params().into_iter().collect();
        assert_eq!(params["scale"], "4");
        // A named rubric takes the unnamed one's scale and fields unless it
        // sets its own; its steps are its own.
        assert_eq!(params["tone.scale"], "4");
        assert_eq!(params["tone.steps"], "Read it | Judge the warmth");
        assert_eq!(params["steps"], GENERATED);
        assert_eq!(params["facts.fields"], "user_input,response,references");
        assert_eq!(params["tone.fields"], "user_input,response");
        // What params() reports configures the same metric.
        let back: Vec<(&str, &str)> = params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(metric(&back).unwrap(), m);
        assert_eq!(
            m.required(),
            [Field::UserInput, Field::Response, Field::References]
        );
    }

    #[test]
    fn bad_parameters_are_refused_with_the_parameter_named() {
        let err = |given: &[(&str, &str)]| metric(given).unwrap_err().to_string();
        assert!(err(&[]).contains("give rubric.criteria"), "{}", err(&[]));
        assert!(err(&[("criteria", "x"), ("scale", "1")]).contains("rubric.scale=1"));
        assert!(err(&[("criteria", "x"), ("scale", "11")]).contains("expected 2 to 10"));
        assert!(err(&[("criteria", "x"), ("fields", "answer")]).contains("unknown field 'answer'"));
        assert!(err(&[("criteria", "x"), ("steps", " | ")]).contains("no step"));
        assert!(err(&[("criteria", "x"), ("crit", "y")]).contains("unknown parameter 'crit'"));
        assert!(err(&[("Tone.criteria", "y")]).contains("unknown parameter 'Tone.criteria'"));
        assert!(err(&[("tone.steps", "a")]).contains("rubric.tone.criteria"));
    }

    #[test]
    fn generated_steps_are_asked_once_and_then_part_of_the_parameters() {
        let m = metric(&[("criteria", "Is it polite?")]).unwrap();
        let setup = m.setup();
        assert_eq!(setup.len(), 1);
        let sample = Sample::default();
        assert!(m.steps(&sample).is_empty(), "no rating before the steps");
        let before = m.signature(&PromptSet::builtin().unwrap()).to_string();
        m.set_up(
            &setup[0],
            Ok(&StepOutput::Texts(vec![
                "Read it.".into(),
                "Rate it.".into(),
            ])),
        );
        assert!(m.setup().is_empty(), "written once");
        let params: BTreeMap<String, String> = m.params().into_iter().collect();
        assert_eq!(params["steps"], "Read it. | Rate it.");
        assert_ne!(
            m.signature(&PromptSet::builtin().unwrap()).to_string(),
            before,
            "the steps are in the signature"
        );
        let StepKey::Unit(step) = &m.steps(&sample)[0] else {
            panic!()
        };
        assert_eq!(step.0.key(), "rubric_rating");
        // Given steps are the same metric as generated ones.
        assert_eq!(
            metric(&[
                ("criteria", "Is it polite?"),
                ("steps", "Read it. | Rate it.")
            ])
            .unwrap(),
            m
        );
    }

    #[test]
    fn a_resumed_run_takes_the_steps_its_manifest_recorded() {
        let m = metric(&[("criteria", "Is it polite?"), ("t.criteria", "Is it warm?")]).unwrap();
        let mut recorded: BTreeMap<String, String> = m.params().into_iter().collect();
        recorded.insert("steps".into(), "Read it. | Rate it.".into());
        recorded.insert("t.steps".into(), "Feel it.".into());
        // Recorded for another scale: not this rubric's steps.
        recorded.insert("t.scale".into(), "3".into());
        m.recall(&recorded);
        let params: BTreeMap<String, String> = m.params().into_iter().collect();
        assert_eq!(params["steps"], "Read it. | Rate it.");
        assert_eq!(params["t.steps"], GENERATED);
        let StepKey::Unit(left) = &m.setup()[0] else {
            panic!()
        };
        assert_eq!(left.0.key(), "rubric_steps[t]", "only the other is asked");
    }

    #[test]
    fn a_failed_step_writing_fails_every_sample_with_its_failure() {
        let m = metric(&[("criteria", "Is it polite?")]).unwrap();
        let failure = Failure {
            kind: FailureKind::Parse,
            message: "no JSON".into(),
        };
        m.set_up(&m.setup()[0], Err(&failure));
        let sample = Sample {
            user_input: Some("q".into()),
            response: Some("r".into()),
            ..Sample::default()
        };
        let scored = m.score(&sample, &Default::default()).unwrap();
        assert_eq!(scored, [("rubric".to_string(), Outcome::Failed(failure))]);
    }
}
