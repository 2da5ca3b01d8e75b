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
//! let mut config = EvalConfig {
//!     metrics: vec!["rouge".parse().unwrap()],
//!     ..EvalConfig::new("examples/rag_qa.jsonl")
//! };
//! config.options.out = Some("runs/doc".into());
//! let options = resolve(config).unwrap();
//! assert_eq!(options.outputs()[0].name, "rouge1");
//! assert!(options.judged.is_none(), "a lexical run connects no model");
//! ```

pub mod file;
pub mod options;

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
use assay_report::gates::Condition;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use options::{Given, How, Scalar, Value};

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
    /// One of the options of what a run reads and how it runs.
    Eval(EvalOption),
    /// One of the judge options.
    Judge(JudgeOption),
    /// One of the options of what is done once the run has run.
    Finish(FinishOption),
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
    /// use assay_config::{EvalOption, Field, Words};
    /// let f = Field::Setting { key: "rouge.types".into(), value: Some("rouge9".into()) };
    /// assert_eq!(f.named(Words::Cli), "--set rouge.types=rouge9");
    /// assert_eq!(f.named(Words::Python), r#"params["rouge.types"]="rouge9""#);
    /// let f = Field::Eval(EvalOption::InputFormat);
    /// assert_eq!(f.named(Words::Cli), "--input-format");
    /// assert_eq!(f.named(Words::Python), "input_format");
    /// assert_eq!(Field::Eval(EvalOption::Stitch).named(Words::Cli), "--no-stitch");
    /// ```
    pub fn named(&self, words: Words) -> String {
        let plain = |name: &str| match words {
            Words::Cli => format!("--{name}"),
            Words::Python => name.to_string(),
        };
        match self {
            Field::Setting { key, value } => match (words, value) {
                (Words::Cli, Some(v)) => format!("--set {key}={v}"),
                (Words::Cli, None) => format!("--set {key}"),
                (Words::Python, Some(v)) => format!("params[{key:?}]={v:?}"),
                (Words::Python, None) => format!("params[{key:?}]"),
            },
            Field::Data => match words {
                Words::Cli => "DATA".to_string(),
                Words::Python => "data".to_string(),
            },
            Field::Metrics => plain("metrics"),
            Field::Eval(option) => option.spec().named(words),
            Field::Judge(option) => option.spec().named(words),
            Field::Finish(option) => option.spec().named(words),
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
            price: price
                .parse()
                .map_err(|e: assay_llm::Error| format!("{s}: {e}"))?,
        })
    }
}

declare! {
    /// How the judge and embedder are reached: the judge options of
    /// `assay eval`, `calibrate` and `prompts adapt`, and the keywords of
    /// `assay.evaluate` and `assay.calibrate`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct JudgeConfig, options JudgeOption, field Field::Judge {
        /// The chat model of judged metrics: openai:MODEL, ollama:MODEL,
        /// vllm:MODEL, llamacpp:MODEL, local (Qwen2.5-Coder-0.5B in-process),
        /// local:smollm2-135m or local:/path/model.gguf.
        Judge judge: ModelChoice = ModelChoice::Local(None), How::value("SPEC");
        /// The embedding model of metrics that compare embeddings: the same
        /// remote forms, local (all-MiniLM-L6-v2 in-process) or local:DIR (a
        /// sentence-transformers folder, multilingual ones included)
        /// [default: local, when a metric embeds].
        Embedder embedder: Option<ModelChoice> = None, How::value("SPEC");
        /// The provider's base URL (ending in /v1) instead of its default.
        BaseUrl base_url: Option<String> = None, How::value("URL");
        /// An API key, tried before the environment's; never written
        /// anywhere.
        ApiKey api_key: Option<Secret> = None, How::environment("OPENAI_API_KEY or ASSAY_API_KEY");
        /// Requests in flight at once (at least 1).
        Concurrency concurrency: usize = ProviderOptions::default().concurrency, How::value("N");
        /// Requests per minute.
        Rpm rpm: Option<u32> = None, How::value("N");
        /// Tokens per minute: a request reserves an estimate (body bytes / 4 +
        /// max_tokens) and is settled with the usage its answer reports.
        Tpm tpm: Option<u32> = None, How::value("N");
        /// Retries of a transient failure (429, 5xx, timeout, connection).
        MaxRetries max_retries: u32 = ProviderOptions::default().max_retries, How::value("N");
        /// Seconds per attempt of one call.
        Timeout timeout: f64 = ProviderOptions::default().attempt_timeout.as_secs_f64(),
            How::value("SECS");
        /// The most tokens of one judge answer (sent as max_tokens; part of
        /// the cache key): a small model served locally can repeat itself
        /// until its context is full [default: the model's own limit; 1024
        /// for the in-process local judge].
        MaxTokens max_tokens: Option<u32> = None, How::value("N");
        /// The response cache [default: $ASSAY_HOME/cache.sqlite, else
        /// ~/.cache/assay/cache.sqlite]; off with --no-cache (Python:
        /// False).
        Cache cache: CacheLocation = CacheLocation::Default, How::value_or_off("PATH");
        /// A folder of prompt files replacing the built-in ones.
        Prompts prompts: Option<PathBuf> = None, How::value("DIR");
        /// A model's price per million tokens, MODEL=IN/OUT (Python: a
        /// mapping of MODEL to "IN/OUT"). None is assumed.
        Prices prices: Prices = Prices::default(), How::repeated("price", "MODEL=IN/OUT");
        /// Judge every sample N times, repeat r with seed r, and report the
        /// spread of the means per metric (judge noise).
        Repeats repeats: u32 = 1, How::value("N");
        /// `export`: answer judge calls from the cache only and write every
        /// missing request to DIR/batch/ as OpenAI Batch JSONL instead of
        /// sending it (see `assay batch import`).
        Batch batch: Option<BatchMode> = None, How::value("MODE").command_line_only();
        /// How a scored outcome's reason is written: `composed` from the
        /// judge's verdicts, no extra call; `llm`: one more judge call per
        /// scored outcome writes it in prose (the composed one stays in
        /// `details.composed_reason`).
        Reasons reasons: Reasons = Reasons::Composed, How::value("HOW");
        /// How closed verdicts (statement supported, context contradicted, ...)
        /// are asked: `listed`, the whole list in one call with a reason before
        /// each verdict (ragas' prompts); `per-item`, one short call per item
        /// whose verdict is read with its probabilities; `likelihood`, as
        /// per-item, but whether the response is grounded in its contexts
        /// (faithfulness, hallucination) is read from how much likelier the
        /// contexts make its words, local judges only; `grounding`, as
        /// per-item, but grounding, contradiction, usefulness and statement
        /// matches are answered by the trained grounding model and toxicity
        /// and bias by a word screen, no judge asked [default: grounding for
        /// a local judge, listed for a remote one].
        Protocol protocol: Option<Protocol> = None, How::value("HOW");
        /// A grounding model: a Hugging Face folder of a sequence classifier
        /// (NLI cross-encoder, MiniCheck; BERT, RoBERTa, DeBERTa-v2/v3 or
        /// ModernBERT), HHEM-2.1-open or MiniCheck-Flan-T5, that answers
        /// every closed grounding question of every metric (faithfulness,
        /// context_recall, context_precision, hallucination,
        /// answer_correctness's matches, summarization_score's answers),
        /// whatever the judge, and whether `assay generate`'s reference
        /// answers are supported by their contexts.
        Grounding grounding: Option<PathBuf> = None, How::value("DIR");
        /// The grounding model's label that means supported, by name or index
        /// [default: the one its id2label calls entailment, supported,
        /// consistent, ...].
        GroundingLabel grounding_label: Option<String> = None, How::value("LABEL");
        /// An alignment file (`assay align`): the lexical grounding verdict's
        /// combiner refitted on your labels, in place of the built-in one.
        Alignment alignment: Option<PathBuf> = None, How::value("FILE");
        /// The language of every row (en, fr, de, es, or their names), for
        /// the lexical grounding verdict; by default each row's is detected,
        /// and a row in a language it cannot read is skipped.
        Language language: Option<String> = None, How::value("LANG");
    }
}

/// `--batch`: how judge calls that are not in the cache are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchMode {
    /// Write them to a batch file; send nothing.
    Export,
}

impl Scalar for BatchMode {
    const PYTHON: &'static str = "str";
    fn parse(text: &str) -> std::result::Result<Self, String> {
        match text {
            "export" => Ok(BatchMode::Export),
            other => Err(format!("{other:?}: expected \"export\"")),
        }
    }
    fn text(&self) -> String {
        "export".to_string()
    }
    fn choices() -> &'static [&'static str] {
        &["export"]
    }
}

/// Prices per million tokens, one per model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prices(pub Vec<ModelPrice>);

impl Prices {
    /// As the judge's ledger reads them; a model given twice keeps its
    /// last price.
    pub fn table(&self) -> PriceTable {
        let mut prices = PriceTable::default();
        for p in &self.0 {
            prices.insert(&p.model, p.price);
        }
        prices
    }
}

impl Value for Prices {
    fn give(&mut self, given: Given<'_>) -> std::result::Result<(), String> {
        match given {
            Given::Text(text) => {
                self.0.push(text.parse()?);
                Ok(())
            }
            Given::Switch(_) => Err("expected MODEL=IN/OUT".to_string()),
        }
    }
    fn shown(&self) -> Option<String> {
        None
    }
    fn python_literal(&self) -> String {
        "None".to_string()
    }
    fn annotation() -> String {
        "Mapping[str, str] | None".to_string()
    }
}

declare! {
    /// What a run reads and how it runs, besides its metrics and judge:
    /// the flags of `assay eval` and the keywords of `assay.evaluate`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct EvalOptions, options EvalOption, field Field::Eval {
        /// The run directory [default: runs/<UTC timestamp>; Python: a
        /// temporary one, kept only when given].
        Out out: Option<PathBuf> = None, How::value("DIR");
        /// Input format, when the file extension does not say it (an OTLP
        /// trace export is recognised by its first key).
        InputFormat input_format: Option<Format> = None, How::value("FORMAT");
        /// A JSONL or CSV file of references joined onto the samples: each
        /// row names its sample by `trace_id`, `sample_id` or `id` and gives
        /// `reference_tool_calls`, `reference`, `reference_topics`, ...
        /// (Python: also a mapping of id to fields, or rows).
        References references: Option<PathBuf> = None,
            How::value("FILE").python_type("Any");
        /// The OTLP logs export (`{"resourceLogs": ...}`) of an OTLP trace
        /// export whose spans carry no messages: its GenAI events
        /// (`gen_ai.user.message`, `gen_ai.choice`, ...) give each span its
        /// messages, joined by trace and span id.
        Logs logs: Option<PathBuf> = None, How::value("FILE");
        /// Stitch the LLM calls of an OTLP export that have no common parent
        /// span into conversations; off (`--no-stitch`, Python
        /// `stitch=False`), each call is its own row.
        Stitch stitch: bool = true, How::off();
        /// Stop at the first bad row (exit code 2) instead of recording it
        /// as failed.
        Strict strict: bool = false, How::switch();
        /// Worker threads, and the local judge's and embedder's CPU threads
        /// [default: all cores].
        Threads threads: Option<usize> = None, How::value("N");
        /// Start over in an `--out` that holds a run made with another
        /// manifest; its files are moved to `DIR/superseded-N/`, never
        /// deleted.
        ForceNew force_new: bool = false, How::switch();
        /// Score only shard K of N (1-based): the rows whose sample id hashes
        /// (FNV-1a 64) to K-1 modulo N. `assay merge` combines the shards.
        Shard shard: Option<Shard> = None, How::value("K/N");
    }
}

/// Bounds on outputs' means, as `--fail-under` (`AT_LEAST`) or
/// `--fail-over` writes them (`METRIC=VALUE`), each parsed when given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bounds<const AT_LEAST: bool>(pub Vec<Condition>);

impl<const AT_LEAST: bool> Value for Bounds<AT_LEAST> {
    fn give(&mut self, given: Given<'_>) -> std::result::Result<(), String> {
        let raw = options::needs_text(given)?;
        let condition = if AT_LEAST {
            Condition::fail_under(raw)
        } else {
            Condition::fail_over(raw)
        };
        self.0.push(condition.map_err(|e| e.to_string())?);
        Ok(())
    }
    fn shown(&self) -> Option<String> {
        None
    }
    fn python_literal(&self) -> String {
        "None".to_string()
    }
    fn annotation() -> String {
        "Mapping[str, float] | None".to_string()
    }
}

declare! {
    /// What is done with a run once it has run: the CI gates, the
    /// calibration correction and the report; the flags of `assay eval`
    /// and, but for the bounds (Python writes them as `gates`), the
    /// keywords of `assay.evaluate`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct FinishOptions, options FinishOption, field Field::Finish {
        /// Fail when an output's mean is below VALUE (higher-is-better
        /// metrics); METRIC is an output name or a single-output metric id.
        FailUnder fail_under: Bounds<true> = Bounds::default(),
            How::repeated("fail-under", "METRIC=VALUE").command_line_only();
        /// Fail when an output's mean is above VALUE (lower-is-better
        /// metrics).
        FailOver fail_over: Bounds<false> = Bounds::default(),
            How::repeated("fail-over", "METRIC=VALUE").command_line_only();
        /// Fail when more than this fraction (0 to 1) of any output's
        /// outcomes failed.
        MaxFailedFraction max_failed_fraction: Option<f64> = None, How::value("F");
        /// A calibration.json of a binary judgement (from `assay
        /// calibrate`): also report the raw rate and the prevalence
        /// corrected for the judge's sensitivity and specificity, with its
        /// interval.
        Calibration calibration: Option<PathBuf> = None, How::value("FILE");
        /// Also write the run's HTML report, DIR/report.html (see `assay
        /// report`).
        Report report: bool = false, How::switch();
    }
}

impl Scalar for Format {
    const PYTHON: &'static str = "str";
    fn parse(text: &str) -> std::result::Result<Self, String> {
        options::from_str(text)
    }
    fn text(&self) -> String {
        self.to_string()
    }
    fn choices() -> &'static [&'static str] {
        &["jsonl", "json", "csv", "otlp"]
    }
}

impl Scalar for Shard {
    const PYTHON: &'static str = "str";
    fn parse(text: &str) -> std::result::Result<Self, String> {
        options::from_str(text)
    }
    fn text(&self) -> String {
        self.to_string()
    }
}

/// One evaluation, typed.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalConfig {
    pub data: Source,
    /// In output order.
    pub metrics: Vec<AnyId>,
    pub settings: Vec<Setting>,
    pub options: EvalOptions,
    pub judge: JudgeConfig,
}

impl EvalConfig {
    /// A run over `data` (a path, `-` for standard input) with every
    /// other field at its default and no metric yet.
    pub fn new(data: &str) -> EvalConfig {
        EvalConfig {
            data: Source::parse(data),
            metrics: Vec::new(),
            settings: Vec::new(),
            options: EvalOptions::default(),
            judge: JudgeConfig::default(),
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
            )
            .with_max_tokens(options.max_tokens))
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
        ModelChoice::Local(Some(path))
            if assay_classifier::embed::SentenceEncoder::is_needed_for(path.as_ref()) =>
        {
            let model = SentenceFolder::load(path.as_ref(), threads)?;
            Ok(CachedEmbedder::new(
                Arc::new(Offloaded::new(Arc::new(model))),
                cache,
            ))
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

/// A sentence-transformers folder the built-in BERT embedder does not read
/// (an XLM-RoBERTa such as multilingual-e5 or paraphrase-multilingual-
/// MiniLM, or a model pooled by its first token such as bge-m3), run by
/// `assay-classifier`'s encoder.
struct SentenceFolder {
    encoder: assay_classifier::embed::SentenceEncoder,
    identity: assay_llm::ModelIdentity,
}

impl SentenceFolder {
    fn load(path: &std::path::Path, threads: usize) -> std::result::Result<Self, String> {
        let encoder = assay_classifier::embed::SentenceEncoder::load(path, threads)
            .map_err(|e| e.to_string())?;
        let identity = assay_llm::ModelIdentity {
            provider: "local".into(),
            endpoint: encoder.version().to_string(),
            model: encoder.name().to_string(),
            settings: String::new(),
        };
        Ok(SentenceFolder { encoder, identity })
    }
}

impl assay_local::BlockingEmbedder for SentenceFolder {
    fn identity(&self) -> &assay_llm::ModelIdentity {
        &self.identity
    }

    fn embed_blocking(
        &self,
        texts: &[String],
    ) -> std::result::Result<(Vec<Vec<f32>>, u64), assay_llm::Error> {
        self.encoder
            .embed(texts)
            .map_err(|e| assay_llm::Error::new(assay_llm::FailureKind::Server, e.to_string()))
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
    let none = BTreeMap::new();
    let params = |id: &AnyId| given.get(id).unwrap_or(&none);
    let mut metrics = Vec::new();
    let mut judged_ids = Vec::new();
    for id in &ids {
        match id {
            AnyId::Lexical(l) => metrics
                .push(Metric::configure(*l, params(id)).map_err(|e| UsageError::of_param(&e))?),
            AnyId::Judged(j) => judged_ids.push(*j),
        }
    }
    // Lexical metrics read no prompt: parsing the built-in set took a
    // quarter of a one-row ROUGE run. A directory given is still read.
    let prompts = match (&args.judge.prompts, judged_ids.is_empty()) {
        (Some(dir), _) => Some(PromptSet::load_dir(dir)),
        (None, false) => Some(PromptSet::builtin()),
        (None, true) => None,
    }
    .transpose()
    .map_err(|e| UsageError::of(Field::Judge(JudgeOption::Prompts), e))?;
    let run = args.options;
    let threads = threads(run.threads)?;
    check(&args.judge)?;
    let judged = match prompts {
        Some(prompts) if !judged_ids.is_empty() => {
            let judged = judged_ids
                .iter()
                .map(|j| {
                    JudgedMetric::configure(*j, params(&AnyId::Judged(*j)), &prompts)
                        .map_err(|e| UsageError::of_param(&e))
                })
                .collect::<Result<Vec<_>>>()?;
            Some(Arc::new(judged_run(judged, prompts, &args.judge, threads)?))
        }
        _ if args.judge.batch.is_some() => {
            return Err(UsageError::of(
                Field::Judge(JudgeOption::Batch),
                "no judged metric among the metrics: nothing to export",
            ));
        }
        _ => None,
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
    let references = existing_file(run.references, Field::Eval(EvalOption::References))?;
    let logs = existing_file(run.logs, Field::Eval(EvalOption::Logs))?;
    let out = match run.out {
        Some(dir) => dir,
        None => PathBuf::from("runs").join(utc_timestamp(std::time::SystemTime::now())?),
    };
    Ok(RunOptions {
        source: args.data,
        input_format: run.input_format,
        input: InputOptions {
            references,
            logs,
            stitch: if run.stitch { Stitch::On } else { Stitch::Off },
        },
        metrics,
        judged,
        out,
        strict: if run.strict {
            Strictness::StopAtFirst
        } else {
            Strictness::RecordAndContinue
        },
        threads,
        existing: if run.force_new {
            Existing::StartOver
        } else {
            Existing::Resume
        },
        shard: run.shard,
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
        Some(0) => Err(UsageError::of(
            Field::Eval(EvalOption::Threads),
            "must be at least 1",
        )),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// The judge options' own limits, checked whether or not a metric of the
/// run calls the judge, so that a mistake never waits for one that does.
fn check(args: &JudgeConfig) -> Result<()> {
    if args.concurrency == 0 {
        return Err(UsageError::of(
            Field::Judge(JudgeOption::Concurrency),
            "must be at least 1",
        ));
    }
    if args.repeats == 0 {
        return Err(UsageError::of(
            Field::Judge(JudgeOption::Repeats),
            "must be at least 1",
        ));
    }
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(UsageError::of(
            Field::Judge(JudgeOption::Timeout),
            "must be a positive number of seconds",
        ));
    }
    if args.max_tokens == Some(0) {
        return Err(UsageError::of(
            Field::Judge(JudgeOption::MaxTokens),
            "must be at least 1",
        ));
    }
    if args.grounding_label.is_some() && args.grounding.is_none() {
        return Err(UsageError::of(
            Field::Judge(JudgeOption::GroundingLabel),
            "names a label of the grounding model, and no grounding model is given",
        ));
    }
    Ok(())
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
    let judge_spec = args.judge.clone();
    let embedder_spec = match &args.embedder {
        Some(spec) => Some(spec.clone()),
        None if metrics.iter().any(JudgedMetric::needs_embedder) => Some(ModelChoice::Local(None)),
        None => None,
    };
    check(args)?;
    let options = ProviderOptions {
        base_url: args.base_url.clone(),
        api_key: args.api_key.clone(),
        concurrency: args.concurrency,
        rpm: args.rpm,
        tpm: args.tpm,
        max_retries: args.max_retries,
        attempt_timeout: Duration::from_secs_f64(args.timeout),
        max_tokens: args.max_tokens,
        ..ProviderOptions::default()
    };
    let prices = args.prices.table();
    let cache = cache(args.cache.clone())?;
    let limiter = Arc::new(Limiter::from_options(&options));
    let unavailable = |e: String| {
        UsageError::of(
            Field::Judge(JudgeOption::Judge),
            format!("{judge_spec}: {e}"),
        )
    };
    let (judge, export) = match (args.batch.is_some(), &judge_spec, &cache) {
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
                Field::Judge(JudgeOption::Batch),
                "export needs a judge behind an OpenAI-compatible server \
                 (openai:, vllm:, ...), not the in-process local model",
            ))
        }
        (true, _, None) => {
            return Err(UsageError::of(
                Field::Judge(JudgeOption::Batch),
                "export keeps the answers in the cache, so the cache cannot be off",
            ))
        }
    };
    let embedder = match embedder_spec {
        Some(spec) => Some((
            connect_embedder(&spec, &options, cache, limiter, threads).map_err(|e| {
                UsageError::of(Field::Judge(JudgeOption::Embedder), format!("{spec}: {e}"))
            })?,
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
            Field::Judge(JudgeOption::Protocol),
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
                    Field::Judge(JudgeOption::Language),
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
        .map_err(|e| UsageError::of(Field::Judge(JudgeOption::Grounding), e))?;
    Ok(GroundingModel(Arc::new(model)))
}

/// Reads an alignment file (`assay align`): its refitted combiner, named
/// by the file's hash.
pub fn alignment(path: &std::path::Path) -> Result<Combiner> {
    let bad = |e: String| {
        UsageError::of(
            Field::Judge(JudgeOption::Alignment),
            format!("{}: {e}", path.display()),
        )
    };
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
    open_cache(location).map_err(|e| UsageError::of(Field::Judge(JudgeOption::Cache), e))
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
