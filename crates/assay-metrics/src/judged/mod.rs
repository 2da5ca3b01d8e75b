//! The LLM-guided metrics, as pure data and functions: versioned prompt
//! files, typed judge steps shared across metrics, a per-sample plan of
//! those steps, neutral requests for the judge layer, validation of its
//! answers, and pure scoring from validated step outputs.
//!
//! Nothing here talks to a model. The engine, for each sample:
//! 1. calls [`plan()`] for the configured metrics (steps deduplicated, in
//!    dependency order; metrics that cannot run are listed as skipped);
//! 2. for each step whose dependencies are done, calls [`render()`] and
//!    sends the [`JudgeRequest`] / [`EmbedRequest`] to the judge layer (or
//!    takes a [`Request::Resolved`] output as is); under
//!    [`Protocol::PerItem`] a list step with an item form is
//!    [`Request::Items`], one request per item, and statements are the
//!    text's sentences; under [`Protocol::Likelihood`] the grounding
//!    verdicts are read from the likelihood of the response
//!    ([`likelihood`]);
//! 3. checks each answer with [`validate()`] ([`validate_item`] for one
//!    item; a [`Mismatch`] goes to the repair path, then becomes a failure
//!    with the raw answer);
//! 4. once a metric's steps are done, calls [`JudgedMetric::score`].
//!
//! ```
//! use assay_metrics::judged::{answer_relevance, faithfulness, plan, steps, JudgedMetric, Protocol};
//! let row = serde_json::json!({"user_input": "q", "response": "r", "retrieved_contexts": ["c"], "reference": "g"});
//! let sample = assay_core::Sample::from_json(1, row.as_object().unwrap()).unwrap();
//! let metrics = [JudgedMetric::default_for(faithfulness::ID), JudgedMetric::default_for(answer_relevance::ID)];
//! let p = plan(&metrics, &sample, Protocol::Listed);
//! let shared = p.steps.iter().filter(|s| s.key == steps::response_statements()).count();
//! assert_eq!(shared, 1);
//! ```

pub mod adapt;
pub mod answer;
pub mod demonstrate;
pub mod fitness;
pub mod grounding;
pub mod likelihood;
pub mod measured;
pub mod metric;
pub mod plan;
pub mod prompt;
pub mod reason;
pub mod registry;
pub mod render;
pub mod request;
pub mod schema;
pub mod screen;
pub mod step;
pub mod steps;
pub mod validate;

pub mod options;

mod common;
pub mod conversation;
pub mod per_turn;
pub mod share;

pub mod ragas_score;
pub mod rubrics;

/// Declares each judged metric's module and registers its definition, in
/// the order `assay metrics` lists them ([`registry::JUDGED`]): a new
/// metric is its module, its prompt file and its line here.
macro_rules! judged_metrics {
    ($($metric:ident),+ $(,)?) => {
        $(pub mod $metric;)+
        const METRICS: &[&metric::JudgedDef] = &[$(&$metric::DEF),+];
    };
}

judged_metrics! {
    faithfulness,
    answer_relevancy,
    answer_relevance,
    context_precision,
    context_recall,
    context_relevance,
    context_relevancy,
    answer_correctness,
    summarization_score,
    summary_coherence,
    bias,
    toxicity,
    hallucination,
    aspect_critique,
    semantic_similarity,
    rubric,
    knowledge_retention,
    turn_relevancy,
    conversation_completeness,
    role_adherence,
    agent_goal_accuracy,
    topic_adherence,
    argument_correctness,
    task_completion,
    conversation_rubric,
}

pub use aspect_critique::CUSTOM_ASPECT_PREFIX;
pub use common::SOFT_SCORE;
pub use metric::{JudgedId, JudgedMetric, UnknownJudged};
pub use options::{
    Agreement, BuiltinAspect, FaithfulnessMode, IdkCountsAs, LengthPenalty, Noncommittal,
    OptionError, PrecisionAgainst, Strictness, TopicMode, Unit, Weights,
};
pub use plan::{plan, Plan, PlannedStep};
pub use prompt::{Combiner, GroundingModel, Prompt, PromptError, PromptId, PromptSet, Protocol};
pub use ragas_score::{ragas_score, MetricMean, RagasScore, RagasScoreError};
pub use render::{render, ItemRequests, Request};
pub use request::{EmbedRequest, JudgeRequest, Message, Role};
pub use step::{
    Aspect, EmbedText, Extraction, Filled, GeneratedQuestion, InputError, Inputs, Label, Outputs,
    Problem, Rating, StepKey, StepOutput, UsefulFor, Verdict,
};
pub use validate::{validate, validate_item, validate_vote, Mismatch};
