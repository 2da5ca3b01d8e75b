//! The judged metrics by id, with their parameters: required fields,
//! steps, outputs, directions, signatures, and scoring from step outputs.

use crate::judged::configure::{ConfigError, Values};
use crate::judged::options::{
    Agreement, FaithfulnessMode, IdkCountsAs, LengthPenalty, Noncommittal, PrecisionAgainst,
    Strictness, Unit, Weights,
};
use crate::judged::prompt::{self, PromptDecl, PromptId, PromptSet};
use crate::judged::step::{
    Aspect, EmbedText, InputError, Inputs, Outputs, StepKey, StepOutput, UsefulFor,
};
use crate::judged::{
    answer_correctness, answer_relevance, answer_relevancy, aspect_critique, bias, common,
    context_precision, context_recall, context_relevance, context_relevancy, faithfulness,
    hallucination, semantic_similarity, summarization_score, summary_coherence, toxicity,
};
use crate::params::ParamSpec;
use crate::spec::Direction;
use assay_core::{Failure, Field, Outcome, Sample, Signature, SkipReason};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// The LLM-guided metrics, by the id users type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JudgedId {
    Faithfulness,
    AnswerRelevancy,
    AnswerRelevance,
    ContextPrecision,
    ContextRecall,
    ContextRelevance,
    ContextRelevancy,
    AnswerCorrectness,
    SummarizationScore,
    SummaryCoherence,
    Bias,
    Toxicity,
    Hallucination,
    AspectCritique,
    SemanticSimilarity,
    /// A metric written as one unit ([`MetricUnit`]), by the id users type.
    Declared(&'static str),
}

/// What a judged metric is, whatever its parameters. Each metric's module
/// defines its own (`DEF`); [`JUDGED`] lists them, and everything that
/// lists or describes metrics (`assay metrics`, signatures, parameter
/// parsing, the guard tests) reads them from there.
#[derive(Debug)]
pub struct JudgedDef {
    /// The id this entry describes.
    pub id: JudgedId,
    /// The id users type.
    pub name: &'static str,
    /// One line: what the number means.
    pub summary: &'static str,
    pub direction: Direction,
    /// The prompt files the metric uses (whatever its parameters).
    pub prompts: &'static [PromptId],
    /// The prompt files only this metric uses, declared in its module
    /// (each is one of `prompts`, as [`PromptId::Declared`]).
    pub declared_prompts: &'static [PromptDecl],
    /// The parameters it accepts, with defaults as users type them.
    pub params: &'static [ParamSpec],
    /// What the metric gives on empty inputs (documentation).
    pub empty_inputs: &'static str,
    /// The implementation version in its signature: raised when the same
    /// answers would give another number.
    pub signature_version: u32,
    /// The metric with every parameter at its default.
    pub default: fn() -> JudgedMetric,
    /// The metric from its parameters' values (given over the defaults),
    /// already checked to be known.
    pub configure: fn(&Values<'_>, &PromptSet) -> Result<JudgedMetric, ConfigError>,
    /// The prefix of free-form parameters `PREFIX.NAME=VALUE` the metric
    /// takes besides `params` (`aspect.` for custom aspects; an empty
    /// prefix leaves every other name to `configure`).
    pub named_params: Option<&'static str>,
    /// For a metric with several outputs per sample, how they are named
    /// and which way each is better (documentation).
    pub per_output: Option<PerOutput>,
}

/// The documented outputs of a metric with several per sample.
#[derive(Debug)]
pub struct PerOutput {
    /// How the outputs are named.
    pub outputs: &'static str,
    /// Which way each output is better.
    pub direction: &'static str,
}

/// Every judged metric, in the order `assay metrics` lists them: the one
/// place a metric is registered.
pub static JUDGED: &[&JudgedDef] = &[
    &faithfulness::DEF,
    &answer_relevancy::DEF,
    &answer_relevance::DEF,
    &context_precision::DEF,
    &context_recall::DEF,
    &context_relevance::DEF,
    &context_relevancy::DEF,
    &answer_correctness::DEF,
    &summarization_score::DEF,
    &summary_coherence::DEF,
    &bias::DEF,
    &toxicity::DEF,
    &hallucination::DEF,
    &aspect_critique::DEF,
    &semantic_similarity::DEF,
    &crate::judged::rubric::DEF,
];

impl JudgedId {
    /// Every judged metric, in [`JUDGED`] order.
    pub fn all() -> impl Iterator<Item = JudgedId> {
        JUDGED.iter().map(|d| d.id)
    }

    /// The metric's entry in [`JUDGED`].
    pub fn def(self) -> &'static JudgedDef {
        JUDGED
            .iter()
            .find(|d| d.id == self)
            .expect("every judged metric is registered in JUDGED (a guard test checks)")
    }

    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// Bias, toxicity and hallucination measure harm: lower is better.
    pub fn direction(self) -> Direction {
        self.def().direction
    }

    /// The prompt files the metric uses (whatever its parameters).
    pub fn prompts(self) -> &'static [PromptId] {
        self.def().prompts
    }

    /// What the metric gives on empty inputs (documentation).
    pub fn empty_inputs(self) -> &'static str {
        self.def().empty_inputs
    }

    /// The parameters the metric accepts, with defaults as users type them.
    /// `aspect_critique` also takes any number of `aspect.NAME=DEFINITION`.
    pub fn params(self) -> &'static [ParamSpec] {
        self.def().params
    }
}

impl fmt::Display for JudgedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Not a judged metric id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown judged metric '{0}'")]
pub struct UnknownJudged(pub String);

impl FromStr for JudgedId {
    type Err = UnknownJudged;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        JudgedId::all()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownJudged(s.to_string()))
    }
}

/// A judged metric with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum JudgedMetric {
    Faithfulness {
        mode: FaithfulnessMode,
    },
    AnswerRelevancy {
        strictness: Strictness,
        noncommittal: Noncommittal,
    },
    AnswerRelevance {
        idk_counts_as: IdkCountsAs,
    },
    ContextPrecision {
        against: PrecisionAgainst,
    },
    ContextRecall,
    ContextRelevance,
    ContextRelevancy {
        strictness: Strictness,
        agreement: Agreement,
    },
    AnswerCorrectness {
        weights: Weights,
        threshold: Option<Unit>,
    },
    SummarizationScore {
        length_penalty: LengthPenalty,
        coeff: Unit,
    },
    SummaryCoherence,
    Bias,
    Toxicity,
    Hallucination,
    AspectCritique {
        aspects: Vec<Aspect>,
        strictness: Strictness,
    },
    SemanticSimilarity {
        threshold: Option<Unit>,
    },
    /// A metric written as one unit in its own module.
    Unit(UnitMetric),
}

/// A judged metric written as one unit: its module defines it whole
/// (required fields, steps, outputs, scoring, parameters) and registers
/// its [`JudgedDef`] in [`JUDGED`]; nothing else names it.
pub trait MetricUnit: fmt::Debug + Send + Sync {
    /// Its entry in [`JUDGED`].
    fn def(&self) -> &'static JudgedDef;
    /// The fields a sample must have.
    fn required(&self) -> Vec<Field>;
    /// Whether it judges the retrieved contexts, so that a sample whose
    /// contexts are all blank is skipped (`no_contexts`).
    fn needs_some_context(&self) -> bool {
        false
    }
    /// Whether some step embeds texts, so that a run needs an embedder.
    fn needs_embedder(&self) -> bool {
        false
    }
    /// The steps it needs on this sample, dependencies first.
    fn steps(&self, sample: &Sample) -> Vec<StepKey>;
    /// Each output written per sample, with its direction.
    fn directions(&self) -> Vec<(String, Direction)>;
    /// One `(name, outcome)` per output, from the completed steps.
    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError>;
    /// Every parameter and its value, as users would type them (what the
    /// manifest records).
    fn params(&self) -> Vec<(String, String)>;
    /// The parameters as the signature names them: [`MetricUnit::params`]
    /// unless long texts are better named by a hash.
    fn signature_params(&self) -> Vec<(String, String)> {
        self.params()
    }
    /// What output `output` measures, in words, for a judge-written reason.
    fn definition(&self, output: &str) -> Option<String>;
    /// Steps the metric needs answered once per run, before any sample
    /// (their inputs come from the parameters, not the sample); the run
    /// hands each output to [`MetricUnit::set_up`].
    fn setup(&self) -> Vec<StepKey> {
        Vec::new()
    }
    /// Takes the output of one of [`MetricUnit::setup`]'s steps, or its
    /// failure (which the metric's outcomes then report).
    fn set_up(&self, _step: &StepKey, _output: Result<&StepOutput, &Failure>) {}
    /// Takes the parameters a run's manifest recorded for this metric when
    /// the run resumes, so that what its setup steps answered then is not
    /// asked again (and cannot come out otherwise).
    fn recall(&self, _recorded: &BTreeMap<String, String>) {}
}

/// A [`MetricUnit`] behind a shared pointer; equal when id and parameters are.
#[derive(Clone, Debug)]
pub struct UnitMetric(pub Arc<dyn MetricUnit>);

impl PartialEq for UnitMetric {
    fn eq(&self, other: &Self) -> bool {
        self.0.def().id == other.0.def().id && self.0.params() == other.0.params()
    }
}

impl JudgedMetric {
    /// The metric with every parameter at its default. `aspect_critique`
    /// gets no aspects here: its default, the five built-in aspects, has
    /// definitions in the prompt set ([`aspect_critique::builtin_all`]).
    pub fn default_for(id: JudgedId) -> JudgedMetric {
        (id.def().default)()
    }

    pub fn id(&self) -> JudgedId {
        match self {
            JudgedMetric::Faithfulness { .. } => JudgedId::Faithfulness,
            JudgedMetric::AnswerRelevancy { .. } => JudgedId::AnswerRelevancy,
            JudgedMetric::AnswerRelevance { .. } => JudgedId::AnswerRelevance,
            JudgedMetric::ContextPrecision { .. } => JudgedId::ContextPrecision,
            JudgedMetric::ContextRecall => JudgedId::ContextRecall,
            JudgedMetric::ContextRelevance => JudgedId::ContextRelevance,
            JudgedMetric::ContextRelevancy { .. } => JudgedId::ContextRelevancy,
            JudgedMetric::AnswerCorrectness { .. } => JudgedId::AnswerCorrectness,
            JudgedMetric::SummarizationScore { .. } => JudgedId::SummarizationScore,
            JudgedMetric::SummaryCoherence => JudgedId::SummaryCoherence,
            JudgedMetric::Bias => JudgedId::Bias,
            JudgedMetric::Toxicity => JudgedId::Toxicity,
            JudgedMetric::Hallucination => JudgedId::Hallucination,
            JudgedMetric::AspectCritique { .. } => JudgedId::AspectCritique,
            JudgedMetric::SemanticSimilarity { .. } => JudgedId::SemanticSimilarity,
            JudgedMetric::Unit(u) => u.0.def().id,
        }
    }

    /// The fields a sample must have. `context_precision` against the
    /// reference needs [`Field::References`] (`reference` or `references`).
    pub fn required(&self) -> Vec<Field> {
        use Field::{References, Response, RetrievedContexts, UserInput};
        match self {
            JudgedMetric::Faithfulness { .. } | JudgedMetric::Hallucination => {
                vec![Response, RetrievedContexts]
            }
            JudgedMetric::AnswerRelevancy { .. } | JudgedMetric::AnswerRelevance { .. } => {
                vec![UserInput, Response]
            }
            JudgedMetric::ContextPrecision { against } => match against {
                PrecisionAgainst::Reference => vec![UserInput, RetrievedContexts, References],
                PrecisionAgainst::Response => vec![UserInput, RetrievedContexts, Response],
            },
            JudgedMetric::ContextRecall => vec![RetrievedContexts, References],
            JudgedMetric::ContextRelevance | JudgedMetric::ContextRelevancy { .. } => {
                vec![UserInput, RetrievedContexts]
            }
            JudgedMetric::AnswerCorrectness { .. } | JudgedMetric::SemanticSimilarity { .. } => {
                vec![Response, References]
            }
            JudgedMetric::SummarizationScore { .. } | JudgedMetric::SummaryCoherence => {
                vec![Response, RetrievedContexts]
            }
            JudgedMetric::Bias | JudgedMetric::Toxicity | JudgedMetric::AspectCritique { .. } => {
                vec![Response]
            }
            JudgedMetric::Unit(u) => u.0.required(),
        }
    }

    /// Whether the metric judges or summarises the retrieved contexts, so
    /// that an empty list leaves nothing to score.
    fn needs_some_context(&self) -> bool {
        if let JudgedMetric::Unit(u) = self {
            return u.0.needs_some_context();
        }
        matches!(
            self,
            JudgedMetric::Hallucination
                | JudgedMetric::ContextPrecision { .. }
                | JudgedMetric::ContextRelevance
                | JudgedMetric::ContextRelevancy { .. }
                | JudgedMetric::SummarizationScore { .. }
                | JudgedMetric::SummaryCoherence
        )
    }

    /// Why the metric cannot run on this sample, if so (decided before any
    /// call; the empty-output rules come later, in scoring).
    pub fn precheck(&self, sample: &Sample) -> Option<SkipReason> {
        // An empty `references` list counts as missing: there is nothing
        // to compare with.
        let has = |f: Field| match f {
            Field::References => sample.reference_list().is_some_and(|r| !r.is_empty()),
            _ => sample.has(f),
        };
        if let Some(missing) = self.required().into_iter().find(|f| !has(*f)) {
            return Some(SkipReason::MissingField(missing));
        }
        let no_contexts = sample
            .retrieved_contexts
            .as_ref()
            .is_some_and(|c| c.iter().all(|t| t.trim().is_empty()));
        if self.needs_some_context() && no_contexts {
            return Some(SkipReason::NoContexts);
        }
        None
    }

    /// The steps this metric needs on this sample, dependencies first.
    pub fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        let n_refs = sample.reference_list().map_or(0, |r| r.len());
        match self {
            JudgedMetric::Faithfulness { .. } => faithfulness::steps(),
            JudgedMetric::AnswerRelevancy { strictness, .. } => {
                answer_relevancy::steps(*strictness)
            }
            JudgedMetric::AnswerRelevance { .. } => answer_relevance::steps(),
            JudgedMetric::ContextPrecision { against } => {
                context_precision::steps(*against, n_refs)
            }
            JudgedMetric::ContextRecall => context_recall::steps(n_refs),
            JudgedMetric::ContextRelevance => context_relevance::steps(),
            JudgedMetric::ContextRelevancy {
                strictness,
                agreement,
            } => context_relevancy::steps(*strictness, *agreement),
            JudgedMetric::AnswerCorrectness { weights, .. } => {
                answer_correctness::steps(*weights, n_refs)
            }
            JudgedMetric::SummarizationScore { .. } => summarization_score::steps(),
            JudgedMetric::SummaryCoherence => summary_coherence::steps(),
            JudgedMetric::Bias => bias::steps(),
            JudgedMetric::Toxicity => toxicity::steps(),
            JudgedMetric::Hallucination => hallucination::steps(),
            JudgedMetric::AspectCritique {
                aspects,
                strictness,
            } => aspect_critique::steps(aspects, *strictness),
            JudgedMetric::SemanticSimilarity { .. } => semantic_similarity::steps(n_refs),
            JudgedMetric::Unit(u) => u.0.steps(sample),
        }
    }

    /// Whether some step of the metric embeds texts, so that a run needs
    /// an embedder besides the judge.
    pub fn needs_embedder(&self) -> bool {
        match self {
            JudgedMetric::AnswerRelevancy { .. } | JudgedMetric::SemanticSimilarity { .. } => true,
            JudgedMetric::AnswerCorrectness { weights, .. } => weights.needs_embeddings(),
            JudgedMetric::ContextRelevancy {
                strictness,
                agreement,
            } => *agreement == Agreement::Embedding && strictness.get() > 1,
            JudgedMetric::Unit(u) => u.0.needs_embedder(),
            _ => false,
        }
    }

    /// Names of the outcomes written per sample.
    pub fn outputs(&self) -> Vec<String> {
        match self {
            JudgedMetric::AspectCritique { aspects, .. } => aspects
                .iter()
                .map(|a| aspect_critique::outcome_name(&a.name))
                .collect(),
            JudgedMetric::Unit(u) => u.0.directions().into_iter().map(|(n, _)| n).collect(),
            _ => vec![self.id().to_string()],
        }
    }

    /// Each output with its direction (aspects differ: yes is bad for
    /// harmfulness and maliciousness).
    pub fn directions(&self) -> Vec<(String, Direction)> {
        match self {
            JudgedMetric::AspectCritique { aspects, .. } => aspects
                .iter()
                .map(|a| {
                    (
                        aspect_critique::outcome_name(&a.name),
                        aspect_critique::direction(&a.name),
                    )
                })
                .collect(),
            JudgedMetric::Unit(u) => u.0.directions(),
            _ => vec![(self.id().to_string(), self.id().direction())],
        }
    }

    /// Scores the sample from its completed steps: one `(name, outcome)`
    /// per [`JudgedMetric::outputs`]. An error means a step this metric
    /// needs has not completed (the engine's bug, or a failed step whose
    /// failure the engine reports instead).
    pub fn score(
        &self,
        sample: &Sample,
        outputs: &Outputs,
    ) -> Result<Vec<(String, Outcome)>, InputError> {
        if let Some(why) = self.precheck(sample) {
            return Ok(self
                .outputs()
                .into_iter()
                .map(|name| (name, Outcome::Skipped(why.clone())))
                .collect());
        }
        let inputs = Inputs::new(sample, outputs);
        let one = |o: Outcome| Ok(vec![(self.id().to_string(), o)]);
        match self {
            JudgedMetric::Unit(u) => u.0.score(&inputs),
            JudgedMetric::Faithfulness { mode } => one(faithfulness::score(
                inputs.texts(&StepKey::ResponseStatements)?,
                inputs.verdicts(&StepKey::StatementVerdicts)?,
                *mode,
            )),
            JudgedMetric::AnswerRelevancy {
                strictness,
                noncommittal,
            } => {
                let count = strictness.get();
                one(answer_relevancy::score(
                    inputs.questions(&StepKey::GeneratedQuestions { count })?,
                    first(inputs.embeddings(&StepKey::Embed(EmbedText::UserInput))?),
                    inputs.embeddings(&StepKey::Embed(EmbedText::GeneratedQuestions { count }))?,
                    *noncommittal,
                ))
            }
            JudgedMetric::AnswerRelevance { idk_counts_as } => one(answer_relevance::score(
                inputs.texts(&StepKey::ResponseStatements)?,
                inputs.verdicts(&StepKey::RelevanceVerdicts)?,
                *idk_counts_as,
            )),
            JudgedMetric::ContextPrecision { against } => {
                let contexts = inputs.contexts()?;
                let targets = match against {
                    PrecisionAgainst::Response => vec![UsefulFor::Response],
                    PrecisionAgainst::Reference => {
                        (0..n_refs(sample)).map(UsefulFor::Reference).collect()
                    }
                };
                let verdicts = targets
                    .iter()
                    .map(|t| inputs.verdicts(&StepKey::ContextUsefulness(*t)))
                    .collect::<Result<Vec<_>, _>>()?;
                one(context_precision::score(contexts, &verdicts))
            }
            JudgedMetric::ContextRecall => {
                // Either form the plan chose: one call, or shared statements
                // plus attribution verdicts.
                let per_ref = (0..n_refs(sample))
                    .map(|i| {
                        let attribution = StepKey::ReferenceAttribution(i);
                        if outputs.contains_key(&attribution) {
                            return Ok((
                                inputs.texts(&StepKey::ReferenceStatements(i))?,
                                inputs.verdicts(&attribution)?,
                            ));
                        }
                        let key = StepKey::ReferenceRecall(i);
                        match inputs.output(&key)? {
                            StepOutput::Attributed {
                                statements,
                                verdicts,
                            } => Ok((statements.as_slice(), verdicts.as_slice())),
                            _ => Err(InputError::WrongOutput(key)),
                        }
                    })
                    .collect::<Result<Vec<_>, InputError>>()?;
                one(context_recall::score(&per_ref))
            }
            JudgedMetric::ContextRelevance => one(context_relevance::score(
                inputs.contexts()?,
                inputs.verdicts(&StepKey::ContextRelevance)?,
            )),
            JudgedMetric::ContextRelevancy {
                strictness,
                agreement,
            } => {
                let votes = strictness.get();
                let extractions = inputs.extractions(&StepKey::SentenceExtraction { votes })?;
                let embeddings = match agreement {
                    Agreement::Embedding if votes > 1 => {
                        Some(inputs.embeddings(&StepKey::Embed(EmbedText::Extractions { votes }))?)
                    }
                    _ => None,
                };
                one(context_relevancy::score(
                    &inputs.source()?,
                    extractions,
                    embeddings,
                ))
            }
            JudgedMetric::AnswerCorrectness { weights, threshold } => {
                let response = inputs.texts(&StepKey::ResponseStatements)?;
                let response_embedding = if weights.needs_embeddings() {
                    Some(first(
                        inputs.embeddings(&StepKey::Embed(EmbedText::Response))?,
                    ))
                } else {
                    None
                };
                let per_ref = (0..n_refs(sample))
                    .map(|i| {
                        let classification =
                            match inputs.output(&StepKey::CorrectnessClassification(i))? {
                                StepOutput::Classification {
                                    response,
                                    reference,
                                } => (response.as_slice(), reference.as_slice()),
                                _ => {
                                    return Err(InputError::WrongOutput(
                                        StepKey::CorrectnessClassification(i),
                                    ))
                                }
                            };
                        let similarity = match response_embedding {
                            Some(r) => match common::cosine(
                                r,
                                first(inputs.embeddings(&StepKey::Embed(EmbedText::Reference(i)))?),
                            ) {
                                Some(c) => answer_correctness::Similarity::Cosine(c),
                                None => answer_correctness::Similarity::Undefined,
                            },
                            None => answer_correctness::Similarity::NotNeeded,
                        };
                        Ok(answer_correctness::PerReference {
                            reference_statements: inputs.texts(&StepKey::ReferenceStatements(i))?,
                            response_verdicts: classification.0,
                            reference_verdicts: classification.1,
                            similarity,
                        })
                    })
                    .collect::<Result<Vec<_>, InputError>>()?;
                one(answer_correctness::score(
                    response, &per_ref, *weights, *threshold,
                ))
            }
            JudgedMetric::SummarizationScore {
                length_penalty,
                coeff,
            } => one(summarization_score::score(
                &summarization_score::Texts {
                    source: &inputs.source()?,
                    summary: inputs.response()?,
                },
                inputs.texts(&StepKey::Keyphrases)?,
                inputs.texts(&StepKey::ClosedQuestions)?,
                inputs.verdicts(&StepKey::SummaryAnswers)?,
                *length_penalty,
                *coeff,
            )),
            JudgedMetric::SummaryCoherence => match inputs.output(&StepKey::CoherenceRating)? {
                StepOutput::Rating(r) => one(summary_coherence::score(r)),
                _ => Err(InputError::WrongOutput(StepKey::CoherenceRating)),
            },
            JudgedMetric::Bias => one(bias::score(
                inputs.texts(&StepKey::Opinions)?,
                inputs.verdicts(&StepKey::BiasVerdicts)?,
            )),
            JudgedMetric::Toxicity => one(toxicity::score(
                inputs.texts(&StepKey::Opinions)?,
                inputs.verdicts(&StepKey::ToxicityVerdicts)?,
            )),
            JudgedMetric::Hallucination => one(hallucination::score(
                inputs.contexts()?,
                inputs.verdicts(&StepKey::Contradictions)?,
            )),
            JudgedMetric::AspectCritique {
                aspects,
                strictness,
            } => aspects
                .iter()
                .map(|a| {
                    let key = StepKey::AspectVerdict {
                        aspect: a.clone(),
                        votes: strictness.get(),
                    };
                    Ok((
                        aspect_critique::outcome_name(&a.name),
                        aspect_critique::score(a, inputs.verdicts(&key)?),
                    ))
                })
                .collect(),
            JudgedMetric::SemanticSimilarity { threshold } => {
                let response = first(inputs.embeddings(&StepKey::Embed(EmbedText::Response))?);
                let references = (0..n_refs(sample))
                    .map(|i| {
                        Ok(first(
                            inputs.embeddings(&StepKey::Embed(EmbedText::Reference(i)))?,
                        ))
                    })
                    .collect::<Result<Vec<_>, InputError>>()?;
                one(semantic_similarity::score(
                    response,
                    &references,
                    *threshold,
                ))
            }
        }
    }

    /// The signature: id, implementation version, every parameter, and the
    /// version and hash prefix of every prompt used.
    pub fn signature(&self, prompts: &PromptSet) -> Signature {
        let def = self.id().def();
        let mut sig = Signature::new(def.name, def.signature_version);
        let params = match self {
            JudgedMetric::Unit(u) => u.0.signature_params(),
            _ => self.params(),
        };
        for (k, v) in params {
            sig = sig.with(&k, v);
        }
        for id in self.id().prompts() {
            let p = prompts.get(*id);
            sig = sig.with(
                &format!("prompt.{id}"),
                format!("v{}-{}", p.version, &p.hash[..12.min(p.hash.len())]),
            );
        }
        sig
    }

    /// Every parameter and its value, as users would type it.
    pub fn params(&self) -> Vec<(String, String)> {
        if let JudgedMetric::Unit(u) = self {
            return u.0.params();
        }
        self.builtin_params()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    fn builtin_params(&self) -> Vec<(&'static str, String)> {
        let opt = |t: &Option<Unit>| t.map_or("none".to_string(), |u| u.to_string());
        match self {
            JudgedMetric::Faithfulness { mode } => vec![("mode", mode.to_string())],
            JudgedMetric::AnswerRelevancy {
                strictness,
                noncommittal,
            } => vec![
                ("strictness", strictness.to_string()),
                ("noncommittal", noncommittal.to_string()),
            ],
            JudgedMetric::AnswerRelevance { idk_counts_as } => {
                vec![("idk_counts_as", idk_counts_as.to_string())]
            }
            JudgedMetric::ContextPrecision { against } => vec![("against", against.to_string())],
            JudgedMetric::ContextRelevancy {
                strictness,
                agreement,
            } => vec![
                ("strictness", strictness.to_string()),
                ("agreement", agreement.to_string()),
            ],
            JudgedMetric::AnswerCorrectness { weights, threshold } => vec![
                ("weights", weights.to_string()),
                ("threshold", opt(threshold)),
            ],
            JudgedMetric::SummarizationScore {
                length_penalty,
                coeff,
            } => vec![
                ("length_penalty", length_penalty.to_string()),
                ("coeff", coeff.to_string()),
            ],
            JudgedMetric::AspectCritique {
                aspects,
                strictness,
            } => vec![
                (
                    "aspects",
                    aspects
                        .iter()
                        .map(|a| {
                            format!(
                                "{}={}",
                                a.name,
                                &prompt::sha256_hex(a.definition.as_bytes())[..8]
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(","),
                ),
                ("strictness", strictness.to_string()),
            ],
            JudgedMetric::SemanticSimilarity { threshold } => vec![("threshold", opt(threshold))],
            JudgedMetric::ContextRecall
            | JudgedMetric::ContextRelevance
            | JudgedMetric::SummaryCoherence
            | JudgedMetric::Bias
            | JudgedMetric::Toxicity
            | JudgedMetric::Hallucination
            | JudgedMetric::Unit(_) => Vec::new(),
        }
    }

    /// The steps the metric needs answered once per run before any
    /// sample (see [`MetricUnit::setup`]).
    pub fn setup(&self) -> Vec<StepKey> {
        match self {
            JudgedMetric::Unit(u) => u.0.setup(),
            _ => Vec::new(),
        }
    }

    /// Takes the parameters a resumed run's manifest recorded for this
    /// metric (see [`MetricUnit::recall`]).
    pub fn recall(&self, recorded: &BTreeMap<String, String>) {
        if let JudgedMetric::Unit(u) = self {
            u.0.recall(recorded);
        }
    }

    /// Takes the output of one of [`JudgedMetric::setup`]'s steps, or its
    /// failure.
    pub fn set_up(&self, step: &StepKey, output: Result<&StepOutput, &Failure>) {
        if let JudgedMetric::Unit(u) = self {
            u.0.set_up(step, output);
        }
    }
}

fn n_refs(sample: &Sample) -> usize {
    sample.reference_list().map_or(0, |r| r.len())
}

/// The single vector of a one-text embedding step (empty if the answer
/// had none, which validation rules out).
fn first(vectors: &[Vec<f64>]) -> &[f64] {
    vectors.first().map_or(&[], Vec::as_slice)
}
