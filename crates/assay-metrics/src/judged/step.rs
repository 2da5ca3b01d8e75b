//! Judge steps: typed keys (so that two metrics needing the same thing of a
//! sample share one step), their dependencies, and their typed outputs.

use crate::judged::prompt::PromptId;
use crate::judged::render::Filled;
use crate::judged::validate::Problem;
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
    /// The questions of [`StepKey::GeneratedQuestions`] with this count.
    GeneratedQuestions {
        count: u32,
    },
    /// The extracted sentences of each vote of
    /// [`StepKey::SentenceExtraction`] with this many votes, one text per
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
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StepKey {
    /// Statements of the response (prompt `statements`).
    ResponseStatements,
    /// Statements of reference `i` (prompt `statements`).
    ReferenceStatements(usize),
    /// Opinions in the response.
    Opinions,
    /// Per response statement: inferable from the contexts (yes), contradicted
    /// (no) or neither (idk). Serves both faithfulness modes.
    StatementVerdicts,
    /// Per response statement: relevant to the question (yes/no/idk).
    RelevanceVerdicts,
    /// Per retrieved context, in order: useful for arriving at the target.
    ContextUsefulness(UsefulFor),
    /// Per statement of reference `i`: attributable to the contexts.
    ReferenceAttribution(usize),
    /// Statements of reference `i` and their attribution to the contexts
    /// in ONE call: what `context_recall` asks for when no other metric of
    /// the sample needs the reference's statements ([`crate::judged::plan()`]
    /// then uses [`StepKey::ReferenceStatements`] +
    /// [`StepKey::ReferenceAttribution`] instead, sharing the statements).
    ReferenceRecall(usize),
    /// Per retrieved context: relevant to the question.
    ContextRelevance,
    /// Per retrieved context: does the response contradict it.
    Contradictions,
    /// `count` questions the response answers, each with a noncommittal flag.
    GeneratedQuestions { count: u32 },
    /// Response statements vs statements of reference `i`: TP/FP/FN.
    CorrectnessClassification(usize),
    /// Keyphrases of the source text (contexts joined by newlines).
    Keyphrases,
    /// Closed questions about the keyphrases whose answer from the source is yes.
    ClosedQuestions,
    /// Per closed question: does the summary (response) answer yes.
    SummaryAnswers,
    /// A 1-5 coherence rating of the summary against the source.
    CoherenceRating,
    /// Per opinion: biased.
    BiasVerdicts,
    /// Per opinion: toxic.
    ToxicityVerdicts,
    /// A yes/no verdict on one aspect, `votes` independent draws.
    AspectVerdict { aspect: Aspect, votes: u32 },
    /// Sentences of the joined contexts needed to answer, `votes` draws.
    SentenceExtraction { votes: u32 },
    /// Embeddings (no judge prompt).
    Embed(EmbedText),
    /// A step written as one unit by the metric module that uses it.
    Unit(UnitStep),
}

/// A judge step written as one unit: its prompt, the slots it fills, the
/// schema of its answer and the check of that answer, in the module of
/// the metric that uses it.
pub trait StepUnit: fmt::Debug + Send + Sync {
    /// What identifies the work: within a sample, equal keys are one step.
    /// Shown in messages, so it names the step.
    fn key(&self) -> String;
    /// The steps whose outputs its request needs.
    fn deps(&self) -> Vec<StepKey> {
        Vec::new()
    }
    /// The prompt it renders.
    fn prompt(&self) -> PromptId;
    /// Its request's slots, the answer lists whose length the inputs fix,
    /// and how many votes it draws.
    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError>;
    /// The schema of one answer: the prompt's, with what the parameters
    /// fix (a rating's scale, say).
    fn schema(&self, prompt_schema: &Value) -> Value {
        prompt_schema.clone()
    }
    /// The typed output of an answer, or what is wrong with it.
    fn check(&self, inputs: &Inputs<'_>, answer: &Value) -> Result<StepOutput, Problem>;
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
    /// The steps whose outputs this step's request needs.
    pub fn deps(&self) -> Vec<StepKey> {
        match self {
            StepKey::StatementVerdicts | StepKey::RelevanceVerdicts => {
                vec![StepKey::ResponseStatements]
            }
            StepKey::ReferenceAttribution(i) => vec![StepKey::ReferenceStatements(*i)],
            StepKey::CorrectnessClassification(i) => {
                vec![
                    StepKey::ResponseStatements,
                    StepKey::ReferenceStatements(*i),
                ]
            }
            StepKey::ClosedQuestions => vec![StepKey::Keyphrases],
            StepKey::SummaryAnswers => vec![StepKey::ClosedQuestions],
            StepKey::BiasVerdicts | StepKey::ToxicityVerdicts => vec![StepKey::Opinions],
            StepKey::Embed(EmbedText::GeneratedQuestions { count }) => {
                vec![StepKey::GeneratedQuestions { count: *count }]
            }
            StepKey::Embed(EmbedText::Extractions { votes }) => {
                vec![StepKey::SentenceExtraction { votes: *votes }]
            }
            StepKey::Unit(u) => u.0.deps(),
            _ => Vec::new(),
        }
    }

    /// The prompt this step renders; `None` for embedding steps.
    pub fn prompt(&self) -> Option<PromptId> {
        Some(match self {
            StepKey::ResponseStatements | StepKey::ReferenceStatements(_) => PromptId::Statements,
            StepKey::Opinions => PromptId::Opinions,
            StepKey::StatementVerdicts => PromptId::FaithfulnessVerdicts,
            StepKey::RelevanceVerdicts => PromptId::RelevanceVerdicts,
            StepKey::ContextUsefulness(_) => PromptId::ContextUsefulness,
            StepKey::ReferenceAttribution(_) => PromptId::ReferenceAttribution,
            StepKey::ReferenceRecall(_) => PromptId::ReferenceRecall,
            StepKey::ContextRelevance => PromptId::ContextRelevance,
            StepKey::Contradictions => PromptId::Contradictions,
            StepKey::GeneratedQuestions { .. } => PromptId::GeneratedQuestions,
            StepKey::CorrectnessClassification(_) => PromptId::CorrectnessClassification,
            StepKey::Keyphrases => PromptId::Keyphrases,
            StepKey::ClosedQuestions => PromptId::ClosedQuestions,
            StepKey::SummaryAnswers => PromptId::SummaryAnswers,
            StepKey::CoherenceRating => PromptId::CoherenceRating,
            StepKey::BiasVerdicts => PromptId::BiasVerdicts,
            StepKey::ToxicityVerdicts => PromptId::ToxicityVerdicts,
            StepKey::AspectVerdict { .. } => PromptId::AspectVerdict,
            StepKey::SentenceExtraction { .. } => PromptId::SentenceExtraction,
            StepKey::Unit(u) => u.0.prompt(),
            StepKey::Embed(_) => return None,
        })
    }

    /// The verdict labels this step accepts, for verdict steps.
    pub fn labels(&self) -> &'static [Label] {
        match self {
            StepKey::StatementVerdicts | StepKey::RelevanceVerdicts => {
                &[Label::Yes, Label::No, Label::Idk]
            }
            _ => &[Label::Yes, Label::No],
        }
    }
}

impl fmt::Display for StepKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepKey::ResponseStatements => f.write_str("response_statements"),
            StepKey::ReferenceStatements(i) => write!(f, "reference_statements[{i}]"),
            StepKey::Opinions => f.write_str("opinions"),
            StepKey::StatementVerdicts => f.write_str("statement_verdicts"),
            StepKey::RelevanceVerdicts => f.write_str("relevance_verdicts"),
            StepKey::ContextUsefulness(UsefulFor::Reference(i)) => {
                write!(f, "context_usefulness[reference {i}]")
            }
            StepKey::ContextUsefulness(UsefulFor::Response) => {
                f.write_str("context_usefulness[response]")
            }
            StepKey::ReferenceAttribution(i) => write!(f, "reference_attribution[{i}]"),
            StepKey::ReferenceRecall(i) => write!(f, "reference_recall[{i}]"),
            StepKey::ContextRelevance => f.write_str("context_relevance"),
            StepKey::Contradictions => f.write_str("contradictions"),
            StepKey::GeneratedQuestions { count } => write!(f, "generated_questions[{count}]"),
            StepKey::CorrectnessClassification(i) => write!(f, "correctness_classification[{i}]"),
            StepKey::Keyphrases => f.write_str("keyphrases"),
            StepKey::ClosedQuestions => f.write_str("closed_questions"),
            StepKey::SummaryAnswers => f.write_str("summary_answers"),
            StepKey::CoherenceRating => f.write_str("coherence_rating"),
            StepKey::BiasVerdicts => f.write_str("bias_verdicts"),
            StepKey::ToxicityVerdicts => f.write_str("toxicity_verdicts"),
            StepKey::AspectVerdict { aspect, votes } => {
                write!(f, "aspect_verdict[{} x{votes}]", aspect.name)
            }
            StepKey::SentenceExtraction { votes } => write!(f, "sentence_extraction[x{votes}]"),
            StepKey::Embed(t) => write!(f, "embed[{t}]"),
            StepKey::Unit(u) => f.write_str(&u.0.key()),
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

/// One question of [`StepKey::GeneratedQuestions`].
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

/// One vote of [`StepKey::SentenceExtraction`].
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
    /// for [`StepKey::AspectVerdict`], one per vote.
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
