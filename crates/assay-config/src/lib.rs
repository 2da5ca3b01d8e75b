//! A run as its user names it, typed: metric ids and `METRIC.PARAM`
//! settings, judge and embedder specs (`local`, `openai:MODEL`, ...),
//! limits, cache and prices, each parsed once where the caller gives them
//! (clap on the command line, the binding in Python), then resolved here
//! into configured metrics, connected models and the engine's
//! [`RunOptions`]. A mistake is a [`UsageError`] that names the [`Field`]
//! at fault, which each caller puts in its own words ([`Words`]); nothing
//! here parses arguments or prints.
//!
//! ```
//! use assay_config::{resolve, EvalConfig};
//! let config = EvalConfig {
//!     metrics: vec!["rouge".parse().unwrap()],
//!     out: Some("runs/doc".into()),
//!     ..EvalConfig::new("examples/rag_qa.jsonl")
//! };
//! let options = resolve(config).unwrap();
//! assert_eq!(options.outputs()[0].name, "rouge1");
//! assert!(options.judged.is_none(), "a lexical run connects no model");
//! ```

use assay_core::{Format, InputOptions, Source, Stitch};
use assay_engine::batch::Export;
use assay_engine::{
    open_cache, Existing, JudgedRun, ModelChoice, Reasons, RunOptions, Shard, Strictness,
};
use assay_llm::{
    Cache, CacheLocation, CachedEmbedder, Judge, Limiter, Price, PriceTable, ProviderOptions,
    Secret,
};
use assay_local::{
    JudgeOptions as LocalJudgeOptions, LocalEmbedder, LocalJudge, LocalSpec, Offloaded,
};
use assay_metrics::judged::{fitness, Combiner, GroundingModel, JudgedMetric, PromptSet, Protocol};
use assay_metrics::params::ParamError;
use assay_metrics::{AnyId, Metric, Setting};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// The part of a run's configuration a [`UsageError`] is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Field {
    Data,
    Metrics,
    /// One metric parameter, `METRIC.PARAM`, and its value when given.
    Setting {
        key: String,
        value: Option<String>,
    },
    Out,
    InputFormat,
    /// `--references FILE`, joined onto the rows.
    References,
    /// `--logs FILE`, the OTLP logs export whose GenAI events give the
    /// spans their messages.
    Logs,
    /// Whether trace calls are stitched into conversations.
    Stitch,
    Strict,
    Threads,
    ForceNew,
    Shard,
    Judge,
    Embedder,
    BaseUrl,
    ApiKey,
    Concurrency,
    Rpm,
    Tpm,
    MaxRetries,
    Repeats,
    Timeout,
    /// The price of one model.
    Price(String),
    Cache,
    Prompts,
    Batch,
    Protocol,
    Reasons,
    Grounding,
    GroundingLabel,
    Alignment,
    Language,
}

/// Whose words name a [`Field`]: the command line's flags or Python's
/// keyword arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Words {
    Cli,
    Python,
}

impl Field {
    /// How `words`' caller wrote this field.
    ///
    /// ```
    /// use assay_config::{Field, Words};
    /// let f = Field::Setting { key: "rouge.types".into(), value: Some("rouge9".into()) };
    /// assert_eq!(f.named(Words::Cli), "--set rouge.types=rouge9");
    /// assert_eq!(f.named(Words::Python), r#"params["rouge.types"]="rouge9""#);
    /// assert_eq!(Field::InputFormat.named(Words::Cli), "--input-format");
    /// assert_eq!(Field::InputFormat.named(Words::Python), "input_format");
    /// ```
    pub fn named(&self, words: Words) -> String {
        let plain = |name: &str| match words {
            Words::Cli => format!("--{}", name.replace('_', "-")),
            Words::Python => name.to_string(),
        };
        match self {
            Field::Setting { key, value } => match (words, value) {
                (Words::Cli, Some(v)) => format!("--set {key}={v}"),
                (Words::Cli, None) => format!("--set {key}"),
                (Words::Python, Some(v)) => format!("params[{key:?}]={v:?}"),
                (Words::Python, None) => format!("params[{key:?}]"),
            },
            Field::Price(model) => match words {
                Words::Cli => format!("--price {model}"),
                Words::Python => format!("prices[{model:?}]"),
            },
            Field::Data => match words {
                Words::Cli => "DATA".to_string(),
                Words::Python => "data".to_string(),
            },
            Field::Metrics => plain("metrics"),
            Field::Out => plain("out"),
            Field::InputFormat => plain("input_format"),
            Field::References => plain("references"),
            Field::Logs => plain("logs"),
            Field::Stitch => match words {
                Words::Cli => "--no-stitch".to_string(),
                Words::Python => "stitch".to_string(),
            },
            Field::Strict => plain("strict"),
            Field::Threads => plain("threads"),
            Field::ForceNew => plain("force_new"),
            Field::Shard => plain("shard"),
            Field::Judge => plain("judge"),
            Field::Embedder => plain("embedder"),
            // The command line takes the key from the environment only.
            Field::ApiKey => match words {
                Words::Cli => "OPENAI_API_KEY".to_string(),
                Words::Python => "api_key".to_string(),
            },
            Field::BaseUrl => plain("base_url"),
            Field::Concurrency => plain("concurrency"),
            Field::Rpm => plain("rpm"),
            Field::Tpm => plain("tpm"),
            Field::MaxRetries => plain("max_retries"),
            Field::Repeats => plain("repeats"),
            Field::Timeout => plain("timeout"),
            Field::Cache => plain("cache"),
            Field::Prompts => plain("prompts"),
            Field::Batch => plain("batch"),
            Field::Protocol => plain("protocol"),
            Field::Reasons => plain("reasons"),
            Field::Grounding => plain("grounding"),
            Field::GroundingLabel => plain("grounding_label"),
            Field::Alignment => plain("alignment"),
            Field::Language => plain("language"),
        }
    }
}

/// A user error: a bad metric, parameter, model spec or limit, with the
/// field at fault when there is one. The command line exits 2 on it;
/// Python raises `assay.UsageError`. Its `Display` is the command line's
/// words; [`UsageError::in_words`] gives another caller's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.in_words(Words::Cli))]
pub struct UsageError {
    pub field: Option<Field>,
    /// What is wrong, without naming the field.
    pub message: String,
}

impl UsageError {
    /// An error about `field`.
    pub fn of(field: Field, message: impl fmt::Display) -> UsageError {
        UsageError {
            field: Some(field),
            message: message.to_string(),
        }
    }

    /// An error about the run as a whole.
    pub fn general(message: impl fmt::Display) -> UsageError {
        UsageError {
            field: None,
            message: message.to_string(),
        }
    }

    /// A metric's parameter error, about the setting it names.
    pub fn of_param(e: &ParamError) -> UsageError {
        match e {
            ParamError::Unknown {
                metric,
                param,
                known,
            } => UsageError::of(
                Field::Setting {
                    key: format!("{metric}.{param}"),
                    value: None,
                },
                format!("{metric} has no parameter '{param}' (known: {known})"),
            ),
            ParamError::Invalid {
                metric,
                param,
                value,
                message,
            } => UsageError::of(
                Field::Setting {
                    key: format!("{metric}.{param}"),
                    value: Some(value.clone()),
                },
                message,
            ),
            other => UsageError::general(other),
        }
    }

    /// The error as `words`' caller reads it: `FIELD: message`.
    pub fn in_words(&self, words: Words) -> String {
        match &self.field {
            Some(field) => format!("{}: {}", field.named(words), self.message),
            None => self.message.clone(),
        }
    }
}

/// The result of resolving.
pub type Result<T> = std::result::Result<T, UsageError>;

/// One model's price, as `MODEL=IN/OUT` (per million tokens).
///
/// ```
/// let p: assay_config::ModelPrice = "gpt-4o-mini=0.15/0.6".parse().unwrap();
/// assert_eq!((p.model.as_str(), p.price.output_per_million), ("gpt-4o-mini", 0.6));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ModelPrice {
    pub model: String,
    pub price: Price,
}

impl FromStr for ModelPrice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let (model, price) = s
            .rsplit_once('=')
            .ok_or_else(|| format!("{s}: expected MODEL=IN/OUT"))?;
        Ok(ModelPrice {
            model: model.to_string(),
            price: price.parse().map_err(|e: assay_llm::Error| e.to_string())?,
        })
    }
}

/// How the judge and embedder are reached.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeConfig {
    /// `None`: the in-process local model (no key, no network).
    pub judge: Option<ModelChoice>,
    /// `None`: the local embedder when a metric embeds.
    pub embedder: Option<ModelChoice>,
    pub base_url: Option<String>,
    /// An API key given explicitly; else it comes from `OPENAI_API_KEY` or
    /// `ASSAY_API_KEY`.
    pub api_key: Option<Secret>,
    /// Requests in flight at once (at least 1).
    pub concurrency: usize,
    pub rpm: Option<u32>,
    pub tpm: Option<u32>,
    pub max_retries: Option<u32>,
    /// Seconds per attempt.
    pub timeout: Option<f64>,
    /// The cache: its default place, a path, or none.
    pub cache: CacheLocation,
    /// A folder of prompt files that replace the built-in ones.
    pub prompts: Option<PathBuf>,
    /// Prices per million tokens.
    pub prices: Vec<ModelPrice>,
    /// How many times each sample is judged (at least 1).
    pub repeats: u32,
    /// Batch export: answer from the cache, collect the rest for a batch.
    pub batch_export: bool,
    pub reasons: Reasons,
    /// How closed verdicts are asked; `None`: by the trained grounding
    /// model for an in-process judge, listed for a remote one.
    pub protocol: Option<Protocol>,
    /// A grounding model's folder: it answers the closed grounding
    /// questions under any protocol.
    pub grounding: Option<PathBuf>,
    /// The grounding model's label that means supported.
    pub grounding_label: Option<String>,
    /// An alignment file: the lexical grounding verdict's combiner
    /// refitted on the user's labels.
    pub alignment: Option<PathBuf>,
    /// The language of every row, for the lexical grounding verdict;
    /// `None`: each row's, detected.
    pub language: Option<String>,
}

impl Default for JudgeConfig {
    fn default() -> Self {
        JudgeConfig {
            judge: None,
            embedder: None,
            base_url: None,
            api_key: None,
            concurrency: 16,
            rpm: None,
            tpm: None,
            max_retries: None,
            timeout: None,
            cache: CacheLocation::Default,
            prompts: None,
            prices: Vec::new(),
            repeats: 1,
            batch_export: false,
            reasons: Reasons::Composed,
            protocol: None,
            grounding: None,
            grounding_label: None,
            alignment: None,
            language: None,
        }
    }
}

/// One evaluation, typed.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalConfig {
    pub data: Source,
    /// In output order.
    pub metrics: Vec<AnyId>,
    pub settings: Vec<Setting>,
    /// The run directory; `None`: `runs/<UTC timestamp>`.
    pub out: Option<PathBuf>,
    /// `None`: from the content and extension.
    pub input_format: Option<Format>,
    /// A references file (JSONL or CSV keyed by `trace_id`, `sample_id`
    /// or `id`) joined onto the rows.
    pub references: Option<PathBuf>,
    /// An OTLP logs export whose GenAI events (`gen_ai.user.message`,
    /// `gen_ai.choice`, ...) give the trace export's spans their messages.
    pub logs: Option<PathBuf>,
    /// Whether an OTLP export's LLM calls without a common parent are
    /// stitched into conversations (else one row per call).
    pub stitch: Stitch,
    /// Stop at the first bad row instead of recording it.
    pub strict: bool,
    /// Worker threads; `None`: every core.
    pub threads: Option<usize>,
    pub judge: JudgeConfig,
    /// Start over instead of resuming what `out` holds.
    pub force_new: bool,
    /// Score only this shard.
    pub shard: Option<Shard>,
}

impl EvalConfig {
    /// A run over `data` (a path, `-` for standard input) with every
    /// other field at its default and no metric yet.
    pub fn new(data: &str) -> EvalConfig {
        EvalConfig {
            data: Source::parse(data),
            metrics: Vec::new(),
            settings: Vec::new(),
            out: None,
            input_format: None,
            references: None,
            logs: None,
            stitch: Stitch::On,
            strict: false,
            threads: None,
            judge: JudgeConfig::default(),
            force_new: false,
            shard: None,
        }
    }
}

/// Connects the judge: over HTTP, or loads the local model in-process.
fn connect_judge(
    choice: &ModelChoice,
    options: &ProviderOptions,
    cache: Option<Arc<Cache>>,
    limiter: Arc<Limiter>,
    threads: usize,
) -> std::result::Result<Judge, String> {
    match choice {
        ModelChoice::Http(spec) => {
            Judge::connect(spec, options, cache, limiter).map_err(|e| e.to_string())
        }
        ModelChoice::Local(name) => {
            // No more threads than the run was given: llama.cpp's threads
            // spin while they wait, so a model that takes cores another
            // process holds (a second run, a Ray task beside it) is slowed
            // many times over.
            let local = LocalJudgeOptions {
                threads,
                ..LocalJudgeOptions::default()
            };
            let model =
                LocalJudge::from_spec(&local_spec(name)?, local).map_err(|e| e.to_string())?;
            Ok(Judge::new(
                Arc::new(Offloaded::new(Arc::new(model))),
                cache,
                options.repair_attempts,
            ))
        }
    }
}

/// Connects the embedder, likewise; a local one computes on `threads`
/// threads.
fn connect_embedder(
    choice: &ModelChoice,
    options: &ProviderOptions,
    cache: Option<Arc<Cache>>,
    limiter: Arc<Limiter>,
    threads: usize,
) -> std::result::Result<CachedEmbedder, String> {
    match choice {
        ModelChoice::Http(spec) => {
            CachedEmbedder::connect(spec, options, cache, limiter).map_err(|e| e.to_string())
        }
        ModelChoice::Local(name) => {
            let model = LocalEmbedder::from_spec(&local_spec(name)?)
                .map_err(|e| e.to_string())?
                .with_threads(threads);
            Ok(CachedEmbedder::new(
                Arc::new(Offloaded::new(Arc::new(model))),
                cache,
            ))
        }
    }
}

/// How manifests and signatures name the model: as typed, except that a
/// local model file is named without its path (see [`LocalSpec::portable`]).
fn portable(choice: &ModelChoice) -> ModelChoice {
    match choice {
        ModelChoice::Local(name) => LocalSpec::named(name.as_deref()).map_or_else(
            |_| choice.clone(),
            |s| ModelChoice::Local(s.portable().name()),
        ),
        ModelChoice::Http(_) => choice.clone(),
    }
}

/// The in-process model `local:NAME` names.
fn local_spec(name: &Option<String>) -> std::result::Result<LocalSpec, String> {
    LocalSpec::named(name.as_deref()).map_err(|e| e.to_string())
}

/// The run `args` names, its models connected.
pub fn resolve(args: EvalConfig) -> Result<RunOptions> {
    let mut ids: Vec<AnyId> = Vec::new();
    for id in args.metrics {
        if ids.contains(&id) {
            return Err(UsageError::of(
                Field::Metrics,
                format!("metric '{id}' listed twice"),
            ));
        }
        ids.push(id);
    }
    if ids.is_empty() {
        return Err(UsageError::of(Field::Metrics, "no metric listed"));
    }
    let mut given: BTreeMap<AnyId, BTreeMap<String, String>> = BTreeMap::new();
    for s in args.settings {
        if !ids.contains(&s.metric) {
            return Err(UsageError::of(
                Field::Setting {
                    key: format!("{}.{}", s.metric, s.param),
                    value: Some(s.value),
                },
                format!("metric '{}' is not among the metrics of the run", s.metric),
            ));
        }
        given.entry(s.metric).or_default().insert(s.param, s.value);
    }
    let prompts = match &args.judge.prompts {
        Some(dir) => PromptSet::load_dir(dir),
        None => PromptSet::builtin(),
    }
    .map_err(|e| UsageError::of(Field::Prompts, e))?;
    let none = BTreeMap::new();
    let mut metrics = Vec::new();
    let mut judged = Vec::new();
    for id in &ids {
        let params = given.get(id).unwrap_or(&none);
        match id {
            AnyId::Lexical(l) => {
                metrics.push(Metric::configure(*l, params).map_err(|e| UsageError::of_param(&e))?)
            }
            AnyId::Judged(j) => judged.push(
                JudgedMetric::configure(*j, params, &prompts)
                    .map_err(|e| UsageError::of_param(&e))?,
            ),
        }
    }
    let threads = threads(args.threads)?;
    let judged = if judged.is_empty() {
        if args.judge.batch_export {
            return Err(UsageError::of(
                Field::Batch,
                "no judged metric among the metrics: nothing to export",
            ));
        }
        None
    } else {
        Some(Arc::new(judged_run(judged, prompts, &args.judge, threads)?))
    };
    // A run whose every metric declines would score nothing.
    if let (true, Some(j)) = (metrics.is_empty(), &judged) {
        let declined: Option<Vec<String>> = j
            .metrics
            .iter()
            .map(|m| fitness::declined(m.id().name(), &j.prompts).map(|f| f.reason()))
            .collect();
        if let Some(reasons) = declined {
            return Err(UsageError::of(
                Field::Metrics,
                format!("nothing would be scored: {}", reasons.join("; ")),
            ));
        }
    }
    let references = existing_file(args.references, Field::References)?;
    let logs = existing_file(args.logs, Field::Logs)?;
    let out = match args.out {
        Some(dir) => dir,
        None => PathBuf::from("runs").join(utc_timestamp(std::time::SystemTime::now())?),
    };
    Ok(RunOptions {
        source: args.data,
        input_format: args.input_format,
        input: InputOptions {
            references,
            logs,
            stitch: args.stitch,
        },
        metrics,
        judged,
        out,
        strict: if args.strict {
            Strictness::StopAtFirst
        } else {
            Strictness::RecordAndContinue
        },
        threads,
        existing: if args.force_new {
            Existing::StartOver
        } else {
            Existing::Resume
        },
        shard: args.shard,
    })
}

/// `path`, if given, checked to be a file: a side file of the input
/// (`field`) that is missing is a usage error before the run starts.
fn existing_file(path: Option<PathBuf>, field: Field) -> Result<Option<PathBuf>> {
    match path {
        Some(p) if !p.is_file() => Err(UsageError::of(
            field,
            format!("{}: no such file", p.display()),
        )),
        other => Ok(other),
    }
}

/// Worker threads, and a local model's CPU threads: at least 1; all cores
/// when not given.
pub fn threads(given: Option<usize>) -> Result<usize> {
    match given {
        Some(0) => Err(UsageError::of(Field::Threads, "must be at least 1")),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// Connects the judge (and embedder, if a metric needs one). Without a
/// judge named it is the in-process local model, so that no run calls a
/// paid API unasked; a local model computes on `threads` CPU threads
/// (see [`threads`]).
pub fn judged_run(
    metrics: Vec<JudgedMetric>,
    prompts: PromptSet,
    args: &JudgeConfig,
    threads: usize,
) -> Result<JudgedRun> {
    // The default is the in-process local model: never a paid cloud API.
    let judge_spec = args.judge.clone().unwrap_or(ModelChoice::Local(None));
    let embedder_spec = match &args.embedder {
        Some(spec) => Some(spec.clone()),
        None if metrics.iter().any(JudgedMetric::needs_embedder) => Some(ModelChoice::Local(None)),
        None => None,
    };
    if args.concurrency == 0 {
        return Err(UsageError::of(Field::Concurrency, "must be at least 1"));
    }
    if args.repeats == 0 {
        return Err(UsageError::of(Field::Repeats, "must be at least 1"));
    }
    let mut options = ProviderOptions {
        base_url: args.base_url.clone(),
        api_key: args.api_key.clone(),
        concurrency: args.concurrency,
        rpm: args.rpm,
        tpm: args.tpm,
        ..ProviderOptions::default()
    };
    if let Some(n) = args.max_retries {
        options.max_retries = n;
    }
    if let Some(secs) = args.timeout {
        if !(secs.is_finite() && secs > 0.0) {
            return Err(UsageError::of(
                Field::Timeout,
                "must be a positive number of seconds",
            ));
        }
        options.attempt_timeout = Duration::from_secs_f64(secs);
    }
    let mut prices = PriceTable::default();
    for p in &args.prices {
        prices.insert(&p.model, p.price);
    }
    let cache = cache(args.cache.clone())?;
    let limiter = Arc::new(Limiter::from_options(&options));
    let unavailable = |e: String| UsageError::of(Field::Judge, format!("{judge_spec}: {e}"));
    let (judge, export) = match (args.batch_export, &judge_spec, &cache) {
        (false, _, _) => (
            connect_judge(
                &judge_spec,
                &options,
                cache.clone(),
                Arc::clone(&limiter),
                threads,
            )
            .map_err(unavailable)?,
            None,
        ),
        (true, ModelChoice::Http(spec), Some(cache)) => {
            let (judge, export) =
                Export::judge(spec, &options, Arc::clone(cache), Arc::clone(&limiter))
                    .map_err(|e| unavailable(e.to_string()))?;
            (judge, Some(export))
        }
        (true, ModelChoice::Local(_), _) => {
            return Err(UsageError::of(
                Field::Batch,
                "export needs a judge behind an OpenAI-compatible server \
                 (openai:, vllm:, ...), not the in-process local model",
            ))
        }
        (true, _, None) => {
            return Err(UsageError::of(
                Field::Batch,
                "export keeps the answers in the cache, so the cache cannot be off",
            ))
        }
    };
    let embedder = match embedder_spec {
        Some(spec) => Some((
            connect_embedder(&spec, &options, cache, limiter, threads)
                .map_err(|e| UsageError::of(Field::Embedder, format!("{spec}: {e}")))?,
            portable(&spec),
        )),
        None => None,
    };
    // A small in-process model judges better one narrow question at a
    // time, and closed grounding questions are answered better and
    // thousands of times faster by the trained grounding model than by
    // the model's likelihoods (issue 30's calibration); remote judges
    // keep the listed prompts of ragas, and cannot score a given reply.
    let protocol = args.protocol.unwrap_or(match judge_spec {
        ModelChoice::Local(_) => Protocol::Grounding,
        ModelChoice::Http(_) => Protocol::Listed,
    });
    if protocol == Protocol::Likelihood && matches!(judge_spec, ModelChoice::Http(_)) {
        return Err(UsageError::of(
            Field::Protocol,
            "likelihood needs an in-process judge (local:...): \
             an HTTP endpoint cannot score a given reply",
        ));
    }
    let prompts = match &args.grounding {
        Some(dir) => prompts.with_grounding(grounding_model(
            dir,
            args.grounding_label.as_deref(),
            threads,
        )?),
        None => prompts,
    };
    let prompts = match &args.alignment {
        Some(path) => prompts.with_combiner(alignment(path)?),
        None => prompts,
    };
    let prompts = match &args.language {
        Some(name) => {
            prompts.with_language(assay_grounding::language::named(name).map_err(|_| {
                UsageError::of(
                    Field::Language,
                    format!(
                        "{name}: the grounding verdict reads {}",
                        assay_grounding::language::names()
                    ),
                )
            })?)
        }
        None => prompts,
    };
    let prompts = prompts.with_protocol(protocol);
    Ok(JudgedRun {
        metrics: metrics
            .into_iter()
            .map(|m| fitness::under(m, &prompts).reading_languages(&prompts))
            .collect(),
        prompts,
        judge,
        judge_spec: portable(&judge_spec),
        embedder,
        options,
        prices,
        repeats: args.repeats,
        export,
        reasons: args.reasons,
    })
}

/// Loads the grounding model in `dir`, checked before any row is judged.
pub fn grounding_model(
    dir: &std::path::Path,
    label: Option<&str>,
    threads: usize,
) -> Result<GroundingModel> {
    let options = assay_classifier::Options {
        label: label.map(String::from),
        threads,
        ..assay_classifier::Options::default()
    };
    let model = assay_classifier::Classifier::load(dir, &options)
        .map_err(|e| UsageError::of(Field::Grounding, e))?;
    Ok(GroundingModel(Arc::new(model)))
}

/// Reads an alignment file (`assay align`): its refitted combiner, named
/// by the file's hash.
pub fn alignment(path: &std::path::Path) -> Result<Combiner> {
    let bad = |e: String| UsageError::of(Field::Alignment, format!("{}: {e}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let a = assay_grounding::align::Alignment::parse(&text).map_err(bad)?;
    Ok(Combiner {
        model: Arc::new(a.model),
        identity: assay_grounding::align::Alignment::identity(&text),
        demonstrations: Arc::new(assay_grounding::demonstrations::Pool::new(a.demonstrations)),
    })
}

/// Opens the cache, creating its folder.
pub fn cache(location: CacheLocation) -> Result<Option<Arc<Cache>>> {
    open_cache(location).map_err(|e| UsageError::of(Field::Cache, e))
}

/// `20261121T210700Z`: sortable, and safe as a directory name everywhere.
fn utc_timestamp(now: std::time::SystemTime) -> Result<String> {
    let secs = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| UsageError::general(format!("system clock: {e}")))?
        .as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    Ok(format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    ))
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn timestamps() {
        assert_eq!(utc_timestamp(UNIX_EPOCH).unwrap(), "19700101T000000Z");
        // 2000-02-29 12:34:56 UTC, a leap day.
        assert_eq!(
            utc_timestamp(UNIX_EPOCH + Duration::from_secs(951_827_696)).unwrap(),
            "20000229T123456Z"
        );
    }

    #[test]
    fn manifests_name_a_local_model_file_without_its_path() {
        for (typed, recorded) in [
            ("local:/home/me/models/x.gguf", "local:x.gguf"),
            ("local:models/minilm/", "local:minilm"),
            ("local:smollm2-135m", "local:smollm2-135m"),
            ("local", "local"),
            ("openai:gpt-4o-mini", "openai:gpt-4o-mini"),
        ] {
            let choice: ModelChoice = typed.parse().unwrap();
            assert_eq!(portable(&choice).to_string(), recorded, "{typed}");
        }
    }
}
