//! Versioned prompt files: one per judge step, embedded in the binary and
//! overridable from a directory (`--prompts DIR`).
//!
//! A prompt file is JSON with `id`, `version` (integer), `instruction`,
//! `slots` (the named inputs it renders, in order), `examples` (few-shot
//! input/output pairs), `output_schema` (JSON Schema of one answer) and,
//! for the aspect prompt, `definitions` (built-in aspect texts). Its hash is
//! the SHA-256 of its canonical JSON (keys sorted, no spaces), so any edit,
//! even of an example, changes signatures and cache keys.

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Every prompt, by the id written in its file (`prompts/ID.json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PromptId {
    Statements,
    Opinions,
    FaithfulnessVerdicts,
    RelevanceVerdicts,
    ContextUsefulness,
    ReferenceAttribution,
    ReferenceRecall,
    ContextRelevance,
    Contradictions,
    GeneratedQuestions,
    CorrectnessClassification,
    Keyphrases,
    ClosedQuestions,
    SummaryAnswers,
    CoherenceRating,
    BiasVerdicts,
    ToxicityVerdicts,
    AspectVerdict,
    SentenceExtraction,
    /// One statement against the contexts (the per-item form of
    /// [`PromptId::FaithfulnessVerdicts`]).
    StatementSupport,
    /// The response against one context (the per-item form of
    /// [`PromptId::Contradictions`]).
    ContextContradiction,
    /// One context useful for the answer (the per-item form of
    /// [`PromptId::ContextUsefulness`]).
    ContextUseful,
    /// One reference statement against the contexts (the per-item form of
    /// [`PromptId::ReferenceAttribution`]).
    ReferenceSupport,
    /// One closed question answered from the summary (the per-item form of
    /// [`PromptId::SummaryAnswers`]).
    SummaryAnswer,
    /// One response statement against the reference's statements (the
    /// per-item form of [`PromptId::CorrectnessClassification`]'s
    /// `response` list).
    StatementInReference,
    /// One reference statement against the response's statements (the
    /// per-item form of its `reference` list).
    StatementInResponse,
    /// The judge-written reason of a scored outcome (`--reasons llm`); no
    /// step uses it, see [`crate::judged::reason`].
    OutcomeReason,
    /// The question put with the contexts, whose answer is the response
    /// read under [`Protocol::Likelihood`] (see [`crate::judged::likelihood`]).
    GroundedReply,
    /// The same question without the contexts: the baseline of
    /// [`PromptId::GroundedReply`].
    OpenReply,
    /// A prompt declared by the metric module that uses it (in its
    /// [`crate::judged::metric::JudgedDef::declared_prompts`]), by name.
    Declared(&'static str),
}

/// How one list of a list prompt is asked one item at a time: the item
/// prompt, the list slot the items come from, the text slot of the item
/// prompt that holds one of them, and the answer list the items' answers
/// form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemForm {
    pub prompt: PromptId,
    pub list: &'static str,
    pub item: &'static str,
    pub answers: &'static str,
}

/// How closed verdicts on a list of items are asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// One request judges the whole list, a reason before each verdict
    /// (the form of ragas and DeepEval; the default for remote judges).
    #[default]
    Listed,
    /// One short request per item whose answer is the verdict alone, read
    /// with its probabilities (a small model that writes a reason first
    /// tends to invent the evidence for it).
    PerItem,
    /// As [`Protocol::PerItem`], except for whether the response is
    /// grounded in the contexts (faithfulness, hallucination): that is
    /// read from how much more likely the judge finds the response's own
    /// words with the contexts than without them, and nothing is asked
    /// (see [`crate::judged::likelihood`]). In-process judges only; the
    /// default for them.
    Likelihood,
    /// As [`Protocol::PerItem`], except that closed grounding questions
    /// (a statement supported by the contexts, a context useful or
    /// contradicted, a statement matched by the reference) are answered by
    /// the trained grounding model of `assay_grounding`, toxicity and bias
    /// by a word screen, and nothing is asked for them (see
    /// [`crate::judged::grounding`], [`crate::judged::screen`]). The
    /// default of in-process judges.
    Grounding,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Listed => "listed",
            Protocol::PerItem => "per-item",
            Protocol::Likelihood => "likelihood",
            Protocol::Grounding => "grounding",
        }
    }

    /// The per-item forms `id` is asked in under this protocol (one per
    /// answer list), if any.
    pub fn item_forms(self, id: PromptId) -> Option<&'static [ItemForm]> {
        id.per_item().filter(|_| self != Protocol::Listed)
    }

    /// How the grounding model answers `id` under this protocol, if it does.
    pub fn grounding_form(self, id: PromptId) -> Option<crate::judged::grounding::Form> {
        crate::judged::grounding::Form::of(id).filter(|_| self == Protocol::Grounding)
    }

    /// How the screen answers `id` under this protocol, if it does.
    pub fn screen(self, id: PromptId) -> Option<crate::judged::screen::Screen> {
        crate::judged::screen::Screen::of(id).filter(|_| self == Protocol::Grounding)
    }

    /// How `id`'s verdicts are read from likelihoods under this protocol,
    /// if they are.
    pub fn likelihood_form(self, id: PromptId) -> Option<crate::judged::likelihood::Form> {
        crate::judged::likelihood::Form::of(id).filter(|_| self == Protocol::Likelihood)
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "listed" => Ok(Protocol::Listed),
            "per-item" => Ok(Protocol::PerItem),
            "likelihood" => Ok(Protocol::Likelihood),
            "grounding" => Ok(Protocol::Grounding),
            _ => Err(format!(
                "unknown protocol '{s}' (listed, per-item, likelihood, grounding)"
            )),
        }
    }
}

/// A prompt file declared by the one metric module that uses it: its id,
/// its text (embedded with `include_str!`), the slots the module fills and
/// the answer lists whose length the inputs fix. Registering the metric
/// registers its prompts.
#[derive(Debug)]
pub struct PromptDecl {
    pub name: &'static str,
    pub text: &'static str,
    pub slots: &'static [(&'static str, SlotKind)],
    pub counts: &'static [&'static str],
}

/// The prompts the registered metrics declare.
fn declarations() -> impl Iterator<Item = &'static PromptDecl> {
    crate::judged::metric::JUDGED
        .iter()
        .flat_map(|d| d.declared_prompts)
}

/// Whether a slot holds one text or a numbered list of texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlotKind {
    Text,
    List,
}

impl PromptId {
    /// Every prompt: the shared ones, then those the metrics declare.
    pub fn all() -> impl Iterator<Item = PromptId> {
        PromptId::SHARED
            .into_iter()
            .chain(declarations().map(|p| PromptId::Declared(p.name)))
    }

    /// The declaration of a prompt a metric declares.
    fn declared(self) -> Option<&'static PromptDecl> {
        let PromptId::Declared(name) = self else {
            return None;
        };
        declarations().find(|p| p.name == name)
    }

    /// The answer lists whose length a request's inputs fix.
    pub fn counts(self) -> &'static [&'static str] {
        match self {
            PromptId::Declared(_) => self.declared().map_or(&[], |d| d.counts),
            PromptId::GeneratedQuestions => &["questions"],
            PromptId::CorrectnessClassification => &["response", "reference"],
            PromptId::FaithfulnessVerdicts
            | PromptId::RelevanceVerdicts
            | PromptId::ContextUsefulness
            | PromptId::ReferenceAttribution
            | PromptId::ContextRelevance
            | PromptId::Contradictions
            | PromptId::SummaryAnswers
            | PromptId::BiasVerdicts
            | PromptId::ToxicityVerdicts => &["verdicts"],
            _ => &[],
        }
    }

    /// The prompts that ask about one item of this prompt's lists at a
    /// time (see [`Protocol::PerItem`]), one form per answer list, if it
    /// has them.
    pub fn per_item(self) -> Option<&'static [ItemForm]> {
        const fn form(
            prompt: PromptId,
            list: &'static str,
            item: &'static str,
            answers: &'static str,
        ) -> ItemForm {
            ItemForm {
                prompt,
                list,
                item,
                answers,
            }
        }
        use PromptId as P;
        Some(match self {
            P::FaithfulnessVerdicts => {
                const {
                    &[form(
                        P::StatementSupport,
                        "statements",
                        "statement",
                        "verdicts",
                    )]
                }
            }
            P::Contradictions => {
                const {
                    &[form(
                        P::ContextContradiction,
                        "contexts",
                        "context",
                        "verdicts",
                    )]
                }
            }
            P::ContextUsefulness => {
                const { &[form(P::ContextUseful, "contexts", "context", "verdicts")] }
            }
            P::ReferenceAttribution => {
                const {
                    &[form(
                        P::ReferenceSupport,
                        "statements",
                        "statement",
                        "verdicts",
                    )]
                }
            }
            P::SummaryAnswers => {
                const { &[form(P::SummaryAnswer, "questions", "question", "verdicts")] }
            }
            P::CorrectnessClassification => {
                const {
                    &[
                        form(
                            P::StatementInReference,
                            "response_statements",
                            "statement",
                            "response",
                        ),
                        form(
                            P::StatementInResponse,
                            "reference_statements",
                            "statement",
                            "reference",
                        ),
                    ]
                }
            }
            _ => return None,
        })
    }

    /// The prompts shared by several metrics or steps, in file-listing order.
    const SHARED: [PromptId; 29] = [
        PromptId::Statements,
        PromptId::Opinions,
        PromptId::FaithfulnessVerdicts,
        PromptId::RelevanceVerdicts,
        PromptId::ContextUsefulness,
        PromptId::ReferenceAttribution,
        PromptId::ReferenceRecall,
        PromptId::ContextRelevance,
        PromptId::Contradictions,
        PromptId::GeneratedQuestions,
        PromptId::CorrectnessClassification,
        PromptId::Keyphrases,
        PromptId::ClosedQuestions,
        PromptId::SummaryAnswers,
        PromptId::CoherenceRating,
        PromptId::BiasVerdicts,
        PromptId::ToxicityVerdicts,
        PromptId::AspectVerdict,
        PromptId::SentenceExtraction,
        PromptId::StatementSupport,
        PromptId::ContextContradiction,
        PromptId::ContextUseful,
        PromptId::ReferenceSupport,
        PromptId::SummaryAnswer,
        PromptId::StatementInReference,
        PromptId::StatementInResponse,
        PromptId::OutcomeReason,
        PromptId::GroundedReply,
        PromptId::OpenReply,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PromptId::Statements => "statements",
            PromptId::Opinions => "opinions",
            PromptId::FaithfulnessVerdicts => "faithfulness_verdicts",
            PromptId::RelevanceVerdicts => "relevance_verdicts",
            PromptId::ContextUsefulness => "context_usefulness",
            PromptId::ReferenceAttribution => "reference_attribution",
            PromptId::ReferenceRecall => "reference_recall",
            PromptId::ContextRelevance => "context_relevance",
            PromptId::Contradictions => "contradictions",
            PromptId::GeneratedQuestions => "generated_questions",
            PromptId::CorrectnessClassification => "correctness_classification",
            PromptId::Keyphrases => "keyphrases",
            PromptId::ClosedQuestions => "closed_questions",
            PromptId::SummaryAnswers => "summary_answers",
            PromptId::CoherenceRating => "coherence_rating",
            PromptId::BiasVerdicts => "bias_verdicts",
            PromptId::ToxicityVerdicts => "toxicity_verdicts",
            PromptId::AspectVerdict => "aspect_verdict",
            PromptId::SentenceExtraction => "sentence_extraction",
            PromptId::StatementSupport => "statement_support",
            PromptId::ContextContradiction => "context_contradiction",
            PromptId::ContextUseful => "context_useful",
            PromptId::ReferenceSupport => "reference_support",
            PromptId::SummaryAnswer => "summary_answer",
            PromptId::StatementInReference => "statement_in_reference",
            PromptId::StatementInResponse => "statement_in_response",
            PromptId::OutcomeReason => "outcome_reason",
            PromptId::GroundedReply => "grounded_reply",
            PromptId::OpenReply => "open_reply",
            PromptId::Declared(name) => name,
        }
    }

    /// The file's path relative to `crates/assay-metrics/` (or to a
    /// `--prompts` directory, without the `prompts/` part).
    pub fn path(self) -> String {
        format!("prompts/{}.json", self.name())
    }

    /// The slots the code fills for this prompt; a file must declare
    /// exactly these (in any order: its order is the rendering order).
    pub fn slots(self) -> &'static [(&'static str, SlotKind)] {
        use SlotKind::{List, Text};
        match self {
            PromptId::Statements => &[("question", Text), ("text", Text)],
            PromptId::Opinions => &[("text", Text)],
            PromptId::FaithfulnessVerdicts | PromptId::ReferenceAttribution => {
                &[("contexts", List), ("statements", List)]
            }
            PromptId::RelevanceVerdicts => &[("question", Text), ("statements", List)],
            PromptId::ContextUsefulness => {
                &[("question", Text), ("answer", Text), ("contexts", List)]
            }
            PromptId::ReferenceRecall => &[("contexts", List), ("reference", Text)],
            PromptId::ContextRelevance => &[("question", Text), ("contexts", List)],
            PromptId::Contradictions => &[("response", Text), ("contexts", List)],
            PromptId::GeneratedQuestions => &[("response", Text), ("count", Text)],
            PromptId::CorrectnessClassification => &[
                ("question", Text),
                ("response_statements", List),
                ("reference_statements", List),
            ],
            PromptId::Keyphrases => &[("text", Text)],
            PromptId::ClosedQuestions => &[("text", Text), ("keyphrases", List)],
            PromptId::SummaryAnswers => &[("summary", Text), ("questions", List)],
            PromptId::CoherenceRating => &[("text", Text), ("summary", Text)],
            PromptId::BiasVerdicts | PromptId::ToxicityVerdicts => &[("opinions", List)],
            PromptId::AspectVerdict => &[
                ("aspect", Text),
                ("definition", Text),
                ("question", Text),
                ("response", Text),
                ("contexts", List),
            ],
            PromptId::SentenceExtraction => &[("question", Text), ("context", Text)],
            PromptId::StatementSupport => {
                &[("contexts", List), ("question", Text), ("statement", Text)]
            }
            PromptId::ContextContradiction => {
                &[("question", Text), ("response", Text), ("context", Text)]
            }
            PromptId::ContextUseful => &[("question", Text), ("answer", Text), ("context", Text)],
            PromptId::ReferenceSupport => {
                &[("contexts", List), ("question", Text), ("statement", Text)]
            }
            PromptId::SummaryAnswer => &[("summary", Text), ("question", Text)],
            PromptId::StatementInReference => &[
                ("question", Text),
                ("reference_statements", List),
                ("statement", Text),
            ],
            PromptId::StatementInResponse => &[
                ("question", Text),
                ("response_statements", List),
                ("statement", Text),
            ],
            PromptId::OutcomeReason => &[
                ("metric", Text),
                ("definition", Text),
                ("score", Text),
                ("summary", Text),
                ("verdicts", Text),
            ],
            PromptId::GroundedReply => &[("contexts", List), ("question", Text)],
            PromptId::OpenReply => &[("question", Text)],
            PromptId::Declared(_) => self.declared().map_or(&[], |d| d.slots),
        }
    }

    fn builtin_text(self) -> &'static str {
        match self {
            PromptId::Statements => include_str!("../../prompts/statements.json"),
            PromptId::Opinions => include_str!("../../prompts/opinions.json"),
            PromptId::FaithfulnessVerdicts => {
                include_str!("../../prompts/faithfulness_verdicts.json")
            }
            PromptId::RelevanceVerdicts => include_str!("../../prompts/relevance_verdicts.json"),
            PromptId::ContextUsefulness => include_str!("../../prompts/context_usefulness.json"),
            PromptId::ReferenceAttribution => {
                include_str!("../../prompts/reference_attribution.json")
            }
            PromptId::ReferenceRecall => include_str!("../../prompts/reference_recall.json"),
            PromptId::ContextRelevance => include_str!("../../prompts/context_relevance.json"),
            PromptId::Contradictions => include_str!("../../prompts/contradictions.json"),
            PromptId::GeneratedQuestions => include_str!("../../prompts/generated_questions.json"),
            PromptId::CorrectnessClassification => {
                include_str!("../../prompts/correctness_classification.json")
            }
            PromptId::Keyphrases => include_str!("../../prompts/keyphrases.json"),
            PromptId::ClosedQuestions => include_str!("../../prompts/closed_questions.json"),
            PromptId::SummaryAnswers => include_str!("../../prompts/summary_answers.json"),
            PromptId::CoherenceRating => include_str!("../../prompts/coherence_rating.json"),
            PromptId::BiasVerdicts => include_str!("../../prompts/bias_verdicts.json"),
            PromptId::ToxicityVerdicts => include_str!("../../prompts/toxicity_verdicts.json"),
            PromptId::AspectVerdict => include_str!("../../prompts/aspect_verdict.json"),
            PromptId::SentenceExtraction => include_str!("../../prompts/sentence_extraction.json"),
            PromptId::StatementSupport => include_str!("../../prompts/statement_support.json"),
            PromptId::ContextContradiction => {
                include_str!("../../prompts/context_contradiction.json")
            }
            PromptId::ContextUseful => include_str!("../../prompts/context_useful.json"),
            PromptId::ReferenceSupport => include_str!("../../prompts/reference_support.json"),
            PromptId::SummaryAnswer => include_str!("../../prompts/summary_answer.json"),
            PromptId::StatementInReference => {
                include_str!("../../prompts/statement_in_reference.json")
            }
            PromptId::StatementInResponse => {
                include_str!("../../prompts/statement_in_response.json")
            }
            PromptId::OutcomeReason => include_str!("../../prompts/outcome_reason.json"),
            PromptId::GroundedReply => include_str!("../../prompts/grounded_reply.json"),
            PromptId::OpenReply => include_str!("../../prompts/open_reply.json"),
            PromptId::Declared(_) => self.declared().map_or("", |d| d.text),
        }
    }
}

impl fmt::Display for PromptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Not a prompt id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown prompt '{0}'")]
pub struct UnknownPrompt(pub String);

impl FromStr for PromptId {
    type Err = UnknownPrompt;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PromptId::all()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownPrompt(s.to_string()))
    }
}

/// A few-shot example: slot values in, one answer out.
#[derive(Clone, Debug, PartialEq)]
pub struct Example {
    /// Slot name -> a string (text slot) or a list of strings (list slot).
    pub input: BTreeMap<String, SlotValue>,
    pub output: Value,
}

/// The value of one slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotValue {
    Text(String),
    List(Vec<String>),
    /// An optional input the sample lacks; rendered as "(not given)".
    Absent,
}

/// A parsed, checked prompt file.
#[derive(Clone, Debug, PartialEq)]
pub struct Prompt {
    pub id: PromptId,
    pub version: u32,
    pub instruction: String,
    /// Slot names in rendering order.
    pub slots: Vec<String>,
    pub examples: Vec<Example>,
    /// JSON Schema of one answer, without item counts (rendering adds
    /// `minItems`/`maxItems` per request).
    pub output_schema: Value,
    /// Named texts the prompt refers to (the built-in aspects' definitions).
    pub definitions: BTreeMap<String, String>,
    /// Lower-case hex SHA-256 of the file's canonical JSON.
    pub hash: String,
}

/// A prompt file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{origin}: not valid JSON: {source}")]
    Json {
        origin: String,
        source: serde_json::Error,
    },
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrompt {
    id: String,
    version: u32,
    instruction: String,
    slots: Vec<RawSlot>,
    examples: Vec<RawExample>,
    output_schema: Value,
    #[serde(default)]
    definitions: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSlot {
    name: String,
    kind: SlotKind,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExample {
    input: BTreeMap<String, Value>,
    output: Value,
}

/// Where a prompt's text comes from, for error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Embedded in the binary.
    Builtin(PromptId),
    /// A file of a `--prompts` directory.
    File(PathBuf),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Builtin(id) => write!(f, "built-in {}", id.path()),
            Origin::File(path) => write!(f, "{}", path.display()),
        }
    }
}

impl Prompt {
    /// Parses and checks one prompt file's text.
    pub fn parse(origin: &Origin, text: &str) -> Result<Prompt, PromptError> {
        let origin = origin.to_string();
        let origin = origin.as_str();
        let invalid = |message: String| PromptError::Invalid {
            origin: origin.to_string(),
            message,
        };
        let value: Value = serde_json::from_str(text).map_err(|source| PromptError::Json {
            origin: origin.to_string(),
            source,
        })?;
        let raw: RawPrompt =
            serde_json::from_value(value.clone()).map_err(|source| PromptError::Json {
                origin: origin.to_string(),
                source,
            })?;
        let id: PromptId = raw
            .id
            .parse()
            .map_err(|e: UnknownPrompt| invalid(e.to_string()))?;
        if raw.version == 0 {
            return Err(invalid("version must be at least 1".into()));
        }
        if raw.instruction.trim().is_empty() {
            return Err(invalid("empty instruction".into()));
        }
        let expected = id.slots();
        let mut names = Vec::with_capacity(raw.slots.len());
        for slot in &raw.slots {
            match expected.iter().find(|(n, _)| *n == slot.name) {
                Some((_, kind)) if *kind == slot.kind => {}
                Some(_) => return Err(invalid(format!("slot '{}' has the wrong kind", slot.name))),
                None => {
                    return Err(invalid(format!(
                        "unknown slot '{}' (this prompt's slots: {})",
                        slot.name,
                        slot_names(expected)
                    )))
                }
            }
            if names.contains(&slot.name) {
                return Err(invalid(format!("slot '{}' declared twice", slot.name)));
            }
            names.push(slot.name.clone());
        }
        if names.len() != expected.len() {
            return Err(invalid(format!(
                "declares {} slots, expected all of: {}",
                names.len(),
                slot_names(expected)
            )));
        }
        crate::judged::schema::check_subset(&raw.output_schema)
            .map_err(|e| invalid(format!("output_schema: {e}")))?;
        let mut examples = Vec::with_capacity(raw.examples.len());
        for (i, ex) in raw.examples.into_iter().enumerate() {
            let mut input = BTreeMap::new();
            for (name, kind) in expected {
                let value = match (kind, ex.input.get(*name)) {
                    (_, None) | (_, Some(Value::Null)) => SlotValue::Absent,
                    (SlotKind::Text, Some(Value::String(s))) => SlotValue::Text(s.clone()),
                    (SlotKind::List, Some(Value::Array(items))) => SlotValue::List(
                        items
                            .iter()
                            .map(|v| v.as_str().map(str::to_string))
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| {
                                invalid(format!("example {i}: slot '{name}' must hold strings"))
                            })?,
                    ),
                    _ => {
                        return Err(invalid(format!(
                            "example {i}: slot '{name}' has the wrong type"
                        )))
                    }
                };
                input.insert(name.to_string(), value);
            }
            if let Some(extra) = ex
                .input
                .keys()
                .find(|k| !expected.iter().any(|(n, _)| n == k))
            {
                return Err(invalid(format!("example {i}: unknown slot '{extra}'")));
            }
            assay_core::schema::validate(&ex.output, &raw.output_schema).map_err(|e| {
                invalid(format!("example {i}: output does not fit the schema: {e}"))
            })?;
            examples.push(Example {
                input,
                output: ex.output,
            });
        }
        Ok(Prompt {
            id,
            version: raw.version,
            instruction: raw.instruction,
            slots: names,
            examples,
            output_schema: raw.output_schema,
            definitions: raw.definitions,
            hash: sha256_hex(canonical_json(&value).as_bytes()),
        })
    }
}

fn slot_names(slots: &[(&str, SlotKind)]) -> String {
    slots.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// Every prompt a run uses, one per [`PromptId`], and the protocol that
/// picks between a list prompt and its per-item form.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptSet {
    prompts: BTreeMap<PromptId, Prompt>,
    protocol: Protocol,
}

impl PromptSet {
    /// The prompts embedded in the binary.
    pub fn builtin() -> Result<PromptSet, PromptError> {
        let prompts = PromptId::all()
            .map(|id| {
                let prompt = Prompt::parse(&Origin::Builtin(id), id.builtin_text())?;
                check_id(&prompt, id, &id.path())?;
                Ok((id, prompt))
            })
            .collect::<Result<_, PromptError>>()?;
        Ok(PromptSet {
            prompts,
            protocol: Protocol::default(),
        })
    }

    /// The built-in prompts, each replaced by `DIR/ID.json` where that file
    /// exists. An override may change the version, instruction, examples
    /// and definitions, not the slots or the output schema: those are the
    /// code's contract with [`crate::judged::validate()`]. A `.json` file in
    /// `dir` that names no prompt is an error, so a typo cannot go unseen.
    pub fn load_dir(dir: &Path) -> Result<PromptSet, PromptError> {
        let io = |source| PromptError::Io {
            path: dir.to_path_buf(),
            source,
        };
        let mut set = PromptSet::builtin()?;
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let origin = path.display().to_string();
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            let id: PromptId = stem
                .parse()
                .map_err(|e: UnknownPrompt| PromptError::Invalid {
                    origin: origin.clone(),
                    message: e.to_string(),
                })?;
            let text = std::fs::read_to_string(&path).map_err(|source| PromptError::Io {
                path: path.clone(),
                source,
            })?;
            let prompt = Prompt::parse(&Origin::File(path.clone()), &text)?;
            check_id(&prompt, id, &origin)?;
            let builtin = set.get(id);
            if prompt.output_schema != builtin.output_schema {
                return Err(PromptError::Invalid {
                    origin,
                    message: "output_schema differs from the built-in one (only the version, \
                              instruction, examples and definitions may change)"
                        .into(),
                });
            }
            set.prompts.insert(id, prompt);
        }
        Ok(set)
    }

    /// The same prompts asked under `protocol`.
    pub fn with_protocol(mut self, protocol: Protocol) -> PromptSet {
        self.protocol = protocol;
        self
    }

    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The per-item form `id` is asked in under this set's protocol, if
    /// any.
    pub fn item_forms(&self, id: PromptId) -> Option<&'static [ItemForm]> {
        self.protocol.item_forms(id)
    }

    /// The prompt of `id`.
    pub fn get(&self, id: PromptId) -> &Prompt {
        // Both constructors insert every id, so the map is total.
        &self.prompts[&id]
    }

    /// Every prompt, in [`PromptId::all`] order.
    pub fn iter(&self) -> impl Iterator<Item = &Prompt> {
        self.prompts.values()
    }
}

fn check_id(prompt: &Prompt, id: PromptId, origin: &str) -> Result<(), PromptError> {
    if prompt.id == id {
        Ok(())
    } else {
        Err(PromptError::Invalid {
            origin: origin.to_string(),
            message: format!("file of '{id}' declares id '{}'", prompt.id),
        })
    }
}

/// JSON with object keys sorted and no insignificant whitespace: the same
/// value always gives the same bytes, whatever the file's layout.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    assay_core::hash::hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_ignores_layout_and_key_order() {
        let a: Value =
            serde_json::from_str("{ \"b\": [1, {\"y\":2,\"x\":\"é\"}],\n \"a\": null }").unwrap();
        let b = json!({"a": null, "b": [1, {"x": "é", "y": 2}]});
        assert_eq!(canonical_json(&a), r#"{"a":null,"b":[1,{"x":"é","y":2}]}"#);
        assert_eq!(canonical_json(&a), canonical_json(&b));
    }

    #[test]
    fn ids_round_trip() {
        for id in PromptId::all() {
            assert_eq!(id.name().parse::<PromptId>().unwrap(), id);
            assert_eq!(id.to_string(), id.name());
        }
        assert!("statement".parse::<PromptId>().is_err());
    }
}
