//! The judged metrics by id, with their parameters: required fields,
//! steps, outputs, directions, signatures, and scoring from step outputs.

use crate::judged::prompt::{PromptId, PromptSet, Protocol};
use crate::judged::step::{InputError, Inputs, Outputs, StepKey, StepOutput};
use crate::judged::{conversation, demonstrate, grounding, likelihood, per_turn, screen};
use crate::params::ParamSpec;
use crate::params::{ParamError, Values};
use crate::spec::Direction;
use assay_core::{Failure, Field, Outcome, Sample, Signature, SkipReason};
use assay_grounding::demonstrations::PER_ROW;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A judged metric's id, as users type it: a handle on its [`JudgedDef`].
/// Each metric's module defines its own (`ID`) and registers its
/// [`JudgedDef`] in [`crate::judged::registry::JUDGED`]; ids compare by
/// name and order as the registry lists them.
#[derive(Clone, Copy)]
pub struct JudgedId(&'static JudgedDef);

/// How a judged metric is made from its parameters' values.
pub type Configure = fn(&Values, &PromptSet) -> Result<JudgedMetric, ParamError>;

/// What a judged metric is, whatever its parameters. Each metric's module
/// defines its own (`DEF`); [`crate::judged::registry::JUDGED`] lists them, and everything that
/// lists or describes metrics (`assay metrics`, signatures, parameter
/// parsing, the guard tests) reads them from there.
#[derive(Debug)]
pub struct JudgedDef {
    /// The id users type.
    pub name: &'static str,
    /// One line: what the number means.
    pub summary: &'static str,
    pub direction: Direction,
    /// The fields a sample must have, with the parameters at their
    /// defaults ([`MetricUnit::required`] may say otherwise).
    pub required: &'static [Field],
    /// Whether it judges or summarises the retrieved contexts, so that a
    /// sample whose contexts are all blank is skipped (`no_contexts`).
    pub needs_contexts: bool,
    /// The prompt files the metric uses (whatever its parameters): the
    /// prompts of its steps, declared where each step is.
    pub prompts: &'static [PromptId],
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
    /// already checked to be known; `None` for a metric without
    /// parameters (its default).
    pub configure: Option<Configure>,
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

impl JudgedId {
    /// The id of the metric `def` describes.
    pub const fn of(def: &'static JudgedDef) -> JudgedId {
        JudgedId(def)
    }

    /// The metric's entry.
    pub fn def(self) -> &'static JudgedDef {
        self.0
    }

    /// The id users type.
    pub fn name(self) -> &'static str {
        self.0.name
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

    /// Whether the metric can be scored per turn (`METRIC.per_turn=true`,
    /// see [`per_turn`]).
    pub fn offers_per_turn(self) -> bool {
        self.params().iter().any(|p| p.name == per_turn::PARAM.name)
    }
}

crate::id::by_name!(JudgedId);

/// Not a judged metric id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown judged metric '{0}'")]
pub struct UnknownJudged(pub String);

/// A judged metric written as one unit: its module defines it whole
/// (required fields, steps, outputs, scoring, parameters) and registers
/// its [`JudgedDef`] in [`crate::judged::registry::JUDGED`]; nothing else names it.
pub trait MetricUnit: fmt::Debug + Send + Sync {
    /// Its entry in [`crate::judged::registry::JUDGED`].
    fn def(&self) -> &'static JudgedDef;
    /// The fields a sample must have: by default its entry's.
    fn required(&self) -> Vec<Field> {
        self.def().required.to_vec()
    }
    /// Whether some step embeds texts, so that a run needs an embedder.
    fn needs_embedder(&self) -> bool {
        false
    }
    /// The steps it needs on this sample, dependencies first.
    fn steps(&self, sample: &Sample) -> Vec<StepKey>;
    /// Each output written per sample, with its direction: by default one,
    /// named by the id.
    fn directions(&self) -> Vec<(String, Direction)> {
        let def = self.def();
        vec![(def.name.to_string(), def.direction)]
    }
    /// One `(name, outcome)` per output, from the completed steps.
    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError>;
    /// Every parameter and its value, as users would type them (what the
    /// manifest records).
    fn params(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// The parameters as the signature names them: [`MetricUnit::params`]
    /// unless long texts are better named by a hash.
    fn signature_params(&self) -> Vec<(String, String)> {
        self.params()
    }
    /// What output `output` measures, in words, for a judge-written
    /// reason, where the metric words it itself; by default none, and the
    /// reason prompt's definition of the metric serves.
    fn definition(&self, _output: &str, _prompts: &PromptSet) -> Option<String> {
        None
    }
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

/// A judged metric with its parameters: a [`MetricUnit`] behind a shared
/// pointer; equal when id and parameters are.
#[derive(Clone, Debug)]
pub struct JudgedMetric(Arc<dyn MetricUnit>, Languages);

/// Which rows a metric's verdicts can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Languages {
    Any,
    /// The lexical grounding verdict's: a row in another language is
    /// skipped before any call ([`assay_grounding::language`]).
    Grounding,
}

impl PartialEq for JudgedMetric {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id() && self.params() == other.params()
    }
}

/// The single output of a metric that writes one, named by its id.
pub(crate) fn single(id: JudgedId, outcome: Outcome) -> Result<Vec<(String, Outcome)>, InputError> {
    Ok(vec![(id.to_string(), outcome)])
}

impl JudgedMetric {
    /// Resolves `given` (param -> value) over the defaults. Built-in aspect
    /// definitions come from `prompts`.
    ///
    /// ```
    /// use assay_metrics::judged::{answer_relevancy, JudgedMetric, PromptSet};
    /// let prompts = PromptSet::builtin().unwrap();
    /// let given = [("strictness".to_string(), "5".to_string())].into();
    /// let m = JudgedMetric::configure(answer_relevancy::ID, &given, &prompts).unwrap();
    /// assert_eq!(m.params()[0], ("strictness".to_string(), "5".to_string()));
    /// ```
    pub fn configure(
        id: JudgedId,
        given: &BTreeMap<String, String>,
        prompts: &PromptSet,
    ) -> Result<JudgedMetric, ParamError> {
        let def = id.def();
        let values = Values::resolve(id, def.params, def.named_params, given)?;
        let metric = match def.configure {
            Some(configure) => configure(&values, prompts)?,
            None => (def.default)(),
        };
        per_turn_if_asked(metric, &values)
    }

    /// The metric a unit defines.
    pub fn new(unit: impl MetricUnit + 'static) -> JudgedMetric {
        JudgedMetric(Arc::new(unit), Languages::Any)
    }

    /// The metric as it runs under `prompts`: where the lexical grounding
    /// verdict answers some of its questions and no language is given for
    /// every row, a row in a language that verdict cannot read is skipped
    /// (`unsupported_language`, naming it) instead of judged.
    pub fn reading_languages(mut self, prompts: &PromptSet) -> JudgedMetric {
        if self.asks_grounding(prompts)
            && prompts.grounding().is_none()
            && prompts.language().is_none()
        {
            self.1 = Languages::Grounding;
        }
        self
    }

    /// The metric with every parameter at its default. `aspect_critique`
    /// gets no aspects here: its default, the five built-in aspects, has
    /// definitions in the prompt set ([`aspect_critique::builtin_all`]).
    pub fn default_for(id: JudgedId) -> JudgedMetric {
        (id.def().default)()
    }

    pub fn id(&self) -> JudgedId {
        JudgedId::of(self.0.def())
    }

    /// The fields a sample must have. `context_precision` against the
    /// reference needs [`Field::References`] (`reference` or `references`).
    pub fn required(&self) -> Vec<Field> {
        self.0.required()
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
        if self.0.def().needs_contexts && no_contexts {
            return Some(SkipReason::NoContexts);
        }
        if self.1 == Languages::Grounding {
            if let Err(unsupported) = assay_grounding::language::lexicon_of(&sample.own_texts()) {
                return Some(SkipReason::UnsupportedLanguage(unsupported.to_string()));
            }
        }
        None
    }

    /// The steps this metric needs on this sample, dependencies first.
    pub fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        self.0.steps(sample)
    }

    /// Whether some step of the metric embeds texts, so that a run needs
    /// an embedder besides the judge.
    pub fn needs_embedder(&self) -> bool {
        self.0.needs_embedder()
    }

    /// Names of the outcomes written per sample.
    pub fn outputs(&self) -> Vec<String> {
        self.directions().into_iter().map(|(n, _)| n).collect()
    }

    /// Each output with its direction (aspects differ: yes is bad for
    /// harmfulness and maliciousness).
    pub fn directions(&self) -> Vec<(String, Direction)> {
        self.0.directions()
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
        self.0.score(&Inputs::new(sample, outputs))
    }

    /// Whether a grounding model (the lexical one or a given one) answers
    /// some of this metric's questions under `prompts`.
    pub fn asks_grounding(&self, prompts: &PromptSet) -> bool {
        self.0
            .def()
            .prompts
            .iter()
            .any(|id| grounding::Form::under(prompts, *id).is_some())
    }

    /// Whether the judge reads an alignment's demonstrations for some of
    /// this metric's questions under `prompts`.
    pub fn uses_demonstrations(&self, prompts: &PromptSet) -> bool {
        let protocol = prompts.protocol();
        prompts.demonstrations().is_some()
            && self.0.def().prompts.iter().any(|id| {
                demonstrate::takes(*id)
                    && grounding::Form::under(prompts, *id).is_none()
                    && screen::Screen::under(protocol, *id).is_none()
                    && likelihood::Form::under(protocol, *id).is_none()
            })
    }

    /// The signature: id, implementation version, every parameter, and the
    /// version and hash prefix of every prompt used (the per-item forms
    /// too under [`crate::judged::Protocol::PerItem`], the reply prompts
    /// and the likelihood threshold under [`crate::judged::Protocol::Likelihood`],
    /// the grounding model's identity under [`crate::judged::Protocol::Grounding`]
    /// or wherever one is given).
    pub fn signature(&self, prompts: &PromptSet) -> Signature {
        let def = self.0.def();
        let mut sig = Signature::new(def.name, def.signature_version);
        for (k, v) in self.0.signature_params() {
            sig = sig.with(&k, v);
        }
        // Under the per-item protocols statements are sentences and the
        // item prompts are asked instead of the list ones.
        let protocol = prompts.protocol();
        if protocol != Protocol::Listed {
            sig = sig.with("protocol", protocol.name());
        }
        if def
            .prompts
            .iter()
            .any(|id| likelihood::Form::under(protocol, *id).is_some())
        {
            let (s, c) = (likelihood::SUPPORT, likelihood::CONTRADICTION);
            sig = sig.with(
                "likelihood",
                format!(
                    "{}/{}/{}/{}/{}",
                    s.weight,
                    s.threshold,
                    c.weight,
                    c.threshold,
                    likelihood::WIDTH
                ),
            );
        }
        if def
            .prompts
            .iter()
            .any(|id| screen::Screen::under(protocol, *id).is_some())
        {
            sig = sig.with("screen", "words-v1");
        }
        if self.asks_grounding(prompts) {
            let model = match prompts.grounding() {
                Some(m) => m.0.identity().to_string(),
                None => prompts.combiner().1.to_string(),
            };
            sig = sig.with(
                "grounding",
                format!("{model}/useful-from-{}", grounding::USEFUL_FROM),
            );
        }
        if let Some((_, identity)) = prompts
            .demonstrations()
            .filter(|_| self.uses_demonstrations(prompts))
        {
            sig = sig.with("demonstrations", format!("{identity}/nearest-{PER_ROW}"));
        }
        let mut used: Vec<PromptId> = Vec::new();
        for id in def.prompts {
            let forms = prompts.item_forms(*id).unwrap_or_default();
            let read: &[PromptId] = match likelihood::Form::under(protocol, *id) {
                Some(_) => &[likelihood::GROUNDED_REPLY, likelihood::OPEN_REPLY],
                None => &[],
            };
            let asked = forms.iter().map(|f| f.prompt).chain(read.iter().copied());
            for id in std::iter::once(*id).chain(asked) {
                if !used.contains(&id) {
                    used.push(id);
                }
            }
        }
        for id in &used {
            let p = prompts.get(*id);
            sig = sig.with(
                &format!("prompt.{id}"),
                format!("v{}-{}", p.version, &p.hash[..12.min(p.hash.len())]),
            );
        }
        sig
    }

    /// Every parameter and its value, as users would type it
    /// (`per_turn=false` included where the metric offers it and is not
    /// scored per turn).
    pub fn params(&self) -> Vec<(String, String)> {
        let mut params = self.0.params();
        if self.id().offers_per_turn() && !params.iter().any(|(k, _)| k == per_turn::PARAM.name) {
            params.push((per_turn::PARAM.name.into(), "false".into()));
        }
        params
    }

    /// What output `output` measures, in words (see
    /// [`MetricUnit::definition`]).
    pub fn definition(&self, output: &str, prompts: &PromptSet) -> Option<String> {
        self.0.definition(output, prompts)
    }

    /// The steps the metric needs answered once per run before any
    /// sample (see [`MetricUnit::setup`]).
    pub fn setup(&self) -> Vec<StepKey> {
        self.0.setup()
    }

    /// Takes the parameters a resumed run's manifest recorded for this
    /// metric (see [`MetricUnit::recall`]).
    pub fn recall(&self, recorded: &BTreeMap<String, String>) {
        self.0.recall(recorded);
    }

    /// Takes the output of one of [`JudgedMetric::setup`]'s steps, or its
    /// failure.
    pub fn set_up(&self, step: &StepKey, output: Result<&StepOutput, &Failure>) {
        self.0.set_up(step, output);
    }
}

/// `metric`, scored per turn ([`per_turn`]) when its values say
/// `per_turn=true`; refused when its parameters make it embed texts.
fn per_turn_if_asked(metric: JudgedMetric, values: &Values) -> Result<JudgedMetric, ParamError> {
    let name = per_turn::PARAM.name;
    if !metric.id().offers_per_turn() || !values.parse::<bool>(name)? {
        return Ok(metric);
    }
    if metric.needs_embedder() {
        let why = "with these parameters the metric embeds texts, which is not done per turn";
        return Err(values.invalid(name, "true", why));
    }
    Ok(JudgedMetric::new(PerTurn { metric }))
}

/// A metric scored on each turn of a conversation that carries contexts
/// (see [`per_turn`]).
#[derive(Debug)]
struct PerTurn {
    metric: JudgedMetric,
}

impl MetricUnit for PerTurn {
    fn def(&self) -> &'static JudgedDef {
        self.metric.id().def()
    }

    fn required(&self) -> Vec<Field> {
        vec![Field::Messages]
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        per_turn::turns(sample)
            .iter()
            .filter(|t| self.metric.precheck(&t.sample).is_none())
            .flat_map(|t| {
                let keys = self.metric.steps(&t.sample);
                keys.into_iter().map(move |k| per_turn::on(t, k))
            })
            .collect()
    }

    fn directions(&self) -> Vec<(String, Direction)> {
        self.metric.directions()
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        let names = self.metric.outputs();
        if let Some(outcome) = conversation::unreadable(inputs.sample, &per_turn::TURN_PARTS) {
            return Ok(names.into_iter().map(|n| (n, outcome.clone())).collect());
        }
        let mut by_output: Vec<Vec<(String, Outcome)>> = vec![Vec::new(); names.len()];
        for turn in per_turn::turns(inputs.sample) {
            let keys = self.metric.steps(&turn.sample);
            let read = per_turn::view(&turn, keys, inputs.outputs);
            for (name, outcome) in self.metric.score(&turn.sample, &read)? {
                if let Some(i) = names.iter().position(|n| *n == name) {
                    by_output[i].push((turn.name(), outcome));
                }
            }
        }
        Ok(names
            .into_iter()
            .zip(by_output)
            .map(|(name, turns)| (name, per_turn::score(&turns)))
            .collect())
    }

    fn params(&self) -> Vec<(String, String)> {
        let mut params = self.metric.params();
        params.retain(|(k, _)| k != per_turn::PARAM.name);
        params.push((per_turn::PARAM.name.into(), "true".into()));
        params
    }

    fn signature_params(&self) -> Vec<(String, String)> {
        let mut params = self.metric.0.signature_params();
        params.push((per_turn::PARAM.name.into(), "true".into()));
        params
    }

    fn definition(&self, output: &str, prompts: &PromptSet) -> Option<String> {
        self.metric.definition(output, prompts)
    }
}
