//! Judge steps: typed keys (so that two metrics needing the same thing of a
//! sample share one step), their dependencies, and their typed outputs.

use crate::judged::prompt::{PromptId, SlotValue};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt;

/// What a context-usefulness verdict judges the contexts against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UsefulFor {
    /// The sample's reference number `i` (0-based in the reference list).
    Reference(usize),
    /// The response (the no-reference variant).
    Response,
}

/// Which texts an embedding step embeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EmbedText {
    UserInput,
    Response,
    Reference(usize),
    /// The questions of [`steps::generated_questions`] with this count.
    GeneratedQuestions {
        count: u32,
    },
    /// The extracted sentences of each vote of
    /// [`steps::sentence_extraction`] with this many votes, one text per
    /// vote (its sentences joined by newlines).
    Extractions {
        votes: u32,
    },
}

impl fmt::Display for EmbedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmbedText::UserInput => f.write_str("user_input"),
            EmbedText::Response => f.write_str("response"),
            EmbedText::Reference(i) => write!(f, "reference {i}"),
            EmbedText::GeneratedQuestions { count } => write!(f, "generated_questions {count}"),
            EmbedText::Extractions { votes } => write!(f, "extractions x{votes}"),
        }
    }
}

/// A named criterion for `aspect_critique`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Aspect {
    /// snake_case name; the outcome is `aspect_critique/NAME`.
    pub name: String,
    /// The question the judge answers yes or no.
    pub definition: String,
}

/// One unit of judge work for one sample. Equal keys of the same sample
/// are the same work, whichever metric asks for them.
///
/// Judge steps are units ([`StepUnit`]); the built-in ones are made by the
/// constructors of [`crate::judged::steps`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StepKey {
    /// A judge step: a prompt rendered and its answer checked.
    Unit(UnitStep),
    /// Embeddings (no judge prompt).
    Embed(EmbedText),
}

/// A judge step written as one unit: its prompt, the slots it fills, the
/// schema of its answer and the check of that answer, in one module
/// ([`crate::judged::steps`] for the built-in ones, the metric's own for
/// a step only one metric uses).
pub trait StepUnit: fmt::Debug + Send + Sync {
    /// What identifies the work: within a sample, equal keys are one step.
    fn key(&self) -> String;
    /// How messages name the step: its key unless the key holds more.
    fn name(&self) -> String {
        self.key()
    }
    /// The steps whose outputs its request needs.
    fn deps(&self) -> Vec<StepKey> {
        Vec::new()
    }
    /// The prompt it renders.
    fn prompt(&self) -> PromptId;
    /// Its request's slots, the answer lists whose length the inputs fix,
    /// and how many votes it draws.
    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError>;
    /// Its output when the filled slots leave nothing to ask (no
    /// statements, hence no verdicts), so that no call is made.
    fn trivial(&self, _filled: &Filled) -> Option<StepOutput> {
        None
    }
    /// Its output without a call under
    /// [`crate::judged::Protocol::PerItem`], if it has one there.
    fn without_call(&self, _filled: &Filled) -> Option<StepOutput> {
        None
    }
    /// The schema of one answer: the prompt's, with what the parameters
    /// fix (a rating's scale, say).
    fn schema(&self, prompt_schema: &Value) -> Value {
        prompt_schema.clone()
    }
    /// The verdict labels its answer may use.
    fn labels(&self) -> &'static [Label] {
        &[Label::Yes, Label::No]
    }
    /// The typed output of an answer to the request `filled` rendered, or
    /// what is wrong with it.
    fn check(
        &self,
        inputs: &Inputs<'_>,
        filled: &Filled,
        answer: &Value,
    ) -> Result<StepOutput, Problem>;
    /// Checks the answer of ONE vote, for a step drawing several (see
    /// [`crate::judged::validate_vote`]); any other step checks its answer.
    fn check_vote(&self, inputs: &Inputs<'_>, answer: &Value) -> Result<(), Problem> {
        let filled = self.fill(inputs).map_err(Problem::Inputs)?;
        self.check(inputs, &filled, answer).map(drop)
    }
    /// The text its verdicts are about, where a protocol reads it (the
    /// likelihood protocol scores the reply's words): the sample's
    /// response, unless the step judges another.
    fn reply(&self, inputs: &Inputs<'_>) -> Result<String, InputError> {
        inputs.response().map(str::to_owned)
    }
    /// The same work as two steps, the first's output then the second,
    /// which [`crate::judged::plan()`] takes instead when the first is
    /// wanted anyway, so that its output is shared.
    fn split(&self) -> Option<(StepKey, StepKey)> {
        None
    }
}

/// A [`StepUnit`] behind a shared pointer, compared by its key.
#[derive(Clone, Debug)]
pub struct UnitStep(pub std::sync::Arc<dyn StepUnit>);

impl PartialEq for UnitStep {
    fn eq(&self, other: &Self) -> bool {
        self.0.key() == other.0.key()
    }
}

impl Eq for UnitStep {}

impl PartialOrd for UnitStep {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for UnitStep {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.key().cmp(&other.0.key())
    }
}

impl std::hash::Hash for UnitStep {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.key().hash(state);
    }
}

impl StepKey {
    /// The prompt this step renders; `None` for embedding steps.
    pub fn prompt(&self) -> Option<PromptId> {
        match self {
            StepKey::Unit(u) => Some(u.0.prompt()),
            StepKey::Embed(_) => None,
        }
    }

    /// The verdict labels this step accepts (none for embedding steps).
    pub fn labels(&self) -> &'static [Label] {
        match self {
            StepKey::Unit(u) => u.0.labels(),
            StepKey::Embed(_) => &[],
        }
    }

    /// The same work as two steps, see [`StepUnit::split`].
    pub fn split(&self) -> Option<(StepKey, StepKey)> {
        match self {
            StepKey::Unit(u) => u.0.split(),
            StepKey::Embed(_) => None,
        }
    }
}

impl fmt::Display for StepKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepKey::Unit(u) => f.write_str(&u.0.name()),
            StepKey::Embed(t) => write!(f, "embed[{t}]"),
        }
    }
}

/// A verdict label. Which ones a step accepts is [`StepKey::labels`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    Yes,
    No,
    /// Neither (e.g. a statement the contexts neither support nor contradict).
    Idk,
}

impl Label {
    pub fn name(self) -> &'static str {
        match self {
            Label::Yes => "yes",
            Label::No => "no",
            Label::Idk => "idk",
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One verdict with the judge's reason.
///
/// Serialised (in outcome details) as `{verdict, reason}`, plus, when the
/// judge gave probabilities, `verdict_probability` (of the chosen label)
/// and `yes_probability`: a soft score to audit the count by.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub verdict: Label,
    pub reason: String,
    /// The judge's probability of each label, when it reports them
    /// (in-process judges decode verdicts as closed choices).
    pub probabilities: Option<Vec<(Label, f64)>>,
}

impl Verdict {
    /// A verdict with its reason and no probabilities.
    pub fn new(verdict: Label, reason: impl Into<String>) -> Verdict {
        Verdict {
            verdict,
            reason: reason.into(),
            probabilities: None,
        }
    }

    /// The judge's probability of `label`, when it gave probabilities.
    pub fn probability(&self, label: Label) -> Option<f64> {
        let known = self.probabilities.as_ref()?;
        // A label the judge could not choose had probability zero.
        Some(
            known
                .iter()
                .find(|(l, _)| *l == label)
                .map_or(0.0, |(_, p)| *p),
        )
    }
}

impl Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("verdict", &self.verdict)?;
        map.serialize_entry("reason", &self.reason)?;
        if let (Some(chosen), Some(yes)) =
            (self.probability(self.verdict), self.probability(Label::Yes))
        {
            map.serialize_entry("verdict_probability", &chosen)?;
            map.serialize_entry("yes_probability", &yes)?;
        }
        map.end()
    }
}

/// One question of [`steps::generated_questions`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GeneratedQuestion {
    pub question: String,
    /// The response is evasive or vague ("I don't know").
    pub noncommittal: bool,
}

/// A rating on a scale 1..=N, possibly with the judge's probabilities of
/// each rating.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rating {
    pub rating: u8,
    pub reason: String,
    /// Normalised probabilities of ratings 1..=N when the judge gave them.
    pub probabilities: Option<Vec<f64>>,
}

impl Rating {
    /// The probability-weighted rating when the judge gave probabilities
    /// (G-Eval), else the rating.
    pub fn expected(&self) -> f64 {
        match &self.probabilities {
            Some(p) => p.iter().enumerate().map(|(i, x)| (i + 1) as f64 * x).sum(),
            None => f64::from(self.rating),
        }
    }
}

/// One vote of [`steps::sentence_extraction`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "sentences", rename_all = "snake_case")]
pub enum Extraction {
    /// The judge said the contexts cannot answer the question.
    InsufficientInformation,
    Sentences(Vec<String>),
}

/// A validated step output.
#[derive(Clone, Debug, PartialEq)]
pub enum StepOutput {
    /// Statements, opinions, keyphrases or closed questions.
    Texts(Vec<String>),
    /// One verdict per item (statement, context, opinion, question) or,
    /// for [`steps::aspect_verdict`], one per vote.
    Verdicts(Vec<Verdict>),
    Questions(Vec<GeneratedQuestion>),
    /// Per response statement: supported by the reference (yes = TP, no =
    /// FP); per reference statement: present in the response (no = FN).
    Classification {
        response: Vec<Verdict>,
        reference: Vec<Verdict>,
    },
    Rating(Rating),
    /// Statements extracted and judged in the same call, one verdict each.
    Attributed {
        statements: Vec<String>,
        verdicts: Vec<Verdict>,
    },
    /// One per vote.
    Extractions(Vec<Extraction>),
    /// One vector per text, in order.
    Embeddings(Vec<Vec<f64>>),
}

impl StepOutput {
    /// The output as JSON, for details and debugging.
    pub fn to_json(&self) -> Value {
        match self {
            StepOutput::Texts(t) => json!(t),
            StepOutput::Verdicts(v) => json!(v),
            StepOutput::Questions(q) => json!(q),
            StepOutput::Classification {
                response,
                reference,
            } => json!({"response": response, "reference": reference}),
            StepOutput::Rating(r) => json!(r),
            StepOutput::Attributed {
                statements,
                verdicts,
            } => json!({"statements": statements, "verdicts": verdicts}),
            StepOutput::Extractions(e) => json!(e),
            StepOutput::Embeddings(e) => json!(e),
        }
    }
}

/// The outputs of one sample's completed steps.
pub type Outputs = BTreeMap<StepKey, StepOutput>;

/// A step's inputs are not available.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("the sample lacks '{0}'")]
    MissingField(assay_core::Field),
    #[error("the sample has no reference number {0}")]
    NoSuchReference(usize),
    #[error("step {0} has not completed")]
    MissingOutput(StepKey),
    #[error("step {0} produced an output of another kind")]
    WrongOutput(StepKey),
    /// The grounding model given could not answer.
    #[error("{0}")]
    Model(String),
}

/// What a step sees: the sample and the outputs of completed steps.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    pub sample: &'a assay_core::Sample,
    pub outputs: &'a Outputs,
}

impl<'a> Inputs<'a> {
    pub fn new(sample: &'a assay_core::Sample, outputs: &'a Outputs) -> Inputs<'a> {
        Inputs { sample, outputs }
    }

    pub(crate) fn output(&self, key: &StepKey) -> Result<&'a StepOutput, InputError> {
        self.outputs
            .get(key)
            .ok_or_else(|| InputError::MissingOutput(key.clone()))
    }

    pub(crate) fn texts(&self, key: &StepKey) -> Result<&'a [String], InputError> {
        match self.output(key)? {
            StepOutput::Texts(t) => Ok(t),
            _ => Err(InputError::WrongOutput(key.clone())),
        }
    }

    pub(crate) fn verdicts(&self, key: &StepKey) -> Result<&'a [Verdict], InputError> {
        match self.output(key)? {
            StepOutput::Verdicts(v) => Ok(v),
            _ => Err(InputError::WrongOutput(key.clone())),
        }
    }

    pub(crate) fn questions(&self, key: &StepKey) -> Result<&'a [GeneratedQuestion], InputError> {
        match self.output(key)? {
            StepOutput::Questions(q) => Ok(q),
            _ => Err(InputError::WrongOutput(key.clone())),
        }
    }

    pub(crate) fn extractions(&self, key: &StepKey) -> Result<&'a [Extraction], InputError> {
        match self.output(key)? {
            StepOutput::Extractions(e) => Ok(e),
            _ => Err(InputError::WrongOutput(key.clone())),
        }
    }

    pub(crate) fn embeddings(&self, key: &StepKey) -> Result<&'a [Vec<f64>], InputError> {
        match self.output(key)? {
            StepOutput::Embeddings(e) => Ok(e),
            _ => Err(InputError::WrongOutput(key.clone())),
        }
    }

    pub(crate) fn user_input(&self) -> Result<&'a str, InputError> {
        self.sample
            .user_input
            .as_deref()
            .ok_or(InputError::MissingField(assay_core::Field::UserInput))
    }

    pub(crate) fn response(&self) -> Result<&'a str, InputError> {
        self.sample
            .response
            .as_deref()
            .ok_or(InputError::MissingField(assay_core::Field::Response))
    }

    pub(crate) fn contexts(&self) -> Result<&'a [String], InputError> {
        self.sample
            .retrieved_contexts
            .as_deref()
            .ok_or(InputError::MissingField(
                assay_core::Field::RetrievedContexts,
            ))
    }

    pub(crate) fn reference(&self, i: usize) -> Result<&'a str, InputError> {
        let list = self
            .sample
            .reference_list()
            .ok_or(InputError::MissingField(assay_core::Field::References))?;
        list.get(i).copied().ok_or(InputError::NoSuchReference(i))
    }

    /// The summarised source: the retrieved contexts joined by newlines.
    pub(crate) fn source(&self) -> Result<String, InputError> {
        Ok(self.contexts()?.join("\n"))
    }
}

/// The filled slots of a step, and the answer arrays whose length the
/// inputs fix.
#[derive(Clone, Debug, PartialEq)]
pub struct Filled {
    pub slots: BTreeMap<&'static str, SlotValue>,
    pub counts: Vec<(&'static str, usize)>,
    /// Independent answers to draw (1: one answer at temperature 0).
    pub votes: u32,
}

impl Filled {
    /// The length the inputs fix for the answer list at `path`.
    pub fn count(&self, path: &str) -> Option<usize> {
        self.counts
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, n)| *n)
    }
}

pub(crate) fn text(s: &str) -> SlotValue {
    SlotValue::Text(s.to_string())
}

pub(crate) fn list(items: &[String]) -> SlotValue {
    SlotValue::List(items.to_vec())
}

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
