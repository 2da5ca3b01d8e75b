//! Turns the typed command line into a resolved run.

use crate::batch::Export;
use crate::cli::{BatchMode, EvalArgs, JudgeArgs, OutputFormat, Reasons};
use crate::merge::Shard;
use crate::rundir::Existing;
use anyhow::{bail, Context, Result};
use assay_core::{Format, Source};
use assay_llm::{
    Cache, CacheLocation, CachedEmbedder, Judge, Limiter, ModelSpec, Price, PriceTable,
    ProviderOptions,
};
use assay_local::{
    JudgeOptions as LocalJudgeOptions, LocalEmbedder, LocalJudge, LocalSpec, Offloaded,
};
use assay_metrics::judged::{JudgedMetric, PromptSet};
use assay_metrics::{AnyId, Metric, Setting};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Everything `eval` needs, validated.
pub struct EvalConfig {
    pub source: Source,
    pub input_format: Option<Format>,
    pub metrics: Vec<Metric>,
    /// The judged metrics and their models; `None` when none is asked for.
    pub judged: Option<Arc<JudgedRun>>,
    pub out: PathBuf,
    pub format: OutputFormat,
    pub strict: Strictness,
    pub threads: usize,
    /// What to do with a run already in `out`.
    pub existing: Existing,
    /// `--shard K/N`: only the rows of this shard are scored and written.
    pub shard: Option<Shard>,
}

/// The judged metrics of a run, with their connected models.
pub struct JudgedRun {
    pub metrics: Vec<JudgedMetric>,
    pub prompts: PromptSet,
    pub judge: Judge,
    pub judge_spec: ModelChoice,
    pub embedder: Option<(CachedEmbedder, ModelChoice)>,
    pub options: ProviderOptions,
    pub prices: PriceTable,
    /// How many times each sample is judged (`--repeats`, at least 1).
    pub repeats: u32,
    /// `--batch export`: the judge answers from the cache only, and this
    /// collects the requests it could not answer.
    pub export: Option<Export>,
    /// `--reasons`: whether scored outcomes get a judge-written reason.
    pub reasons: Reasons,
}

/// A `--judge` / `--embedder` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelChoice {
    /// An OpenAI-compatible server: `openai:`, `ollama:`, `vllm:`, `llamacpp:`.
    Http(ModelSpec),
    /// An in-process model, `local` or `local:NAME` (the name, if given).
    Local(Option<String>),
}

impl std::str::FromStr for ModelChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once(':') {
            None if s == "local" => Ok(ModelChoice::Local(None)),
            Some(("local", name)) if !name.is_empty() => {
                Ok(ModelChoice::Local(Some(name.to_string())))
            }
            _ => s
                .parse::<ModelSpec>()
                .map(ModelChoice::Http)
                .map_err(|e| e.to_string()),
        }
    }
}

impl std::fmt::Display for ModelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelChoice::Http(spec) => spec.fmt(f),
            ModelChoice::Local(None) => f.write_str("local"),
            ModelChoice::Local(Some(name)) => write!(f, "local:{name}"),
        }
    }
}

impl ModelChoice {
    /// How manifests and signatures name the model: as typed, except that
    /// a local model file is named without its path, which differs
    /// between machines (see [`LocalSpec::portable`]).
    pub fn portable(&self) -> String {
        match self {
            ModelChoice::Local(_) => self
                .local_spec()
                .map_or_else(|_| self.to_string(), |s| s.portable()),
            ModelChoice::Http(_) => self.to_string(),
        }
    }

    /// The in-process model's spec (`local`, `local:NAME`, `local:PATH`).
    fn local_spec(&self) -> Result<LocalSpec, String> {
        self.to_string()
            .parse::<LocalSpec>()
            .map_err(|e| e.to_string())
    }

    /// Connects the judge: over HTTP, or loads the local model in-process.
    fn judge(
        &self,
        options: &ProviderOptions,
        cache: Option<Arc<Cache>>,
        limiter: Arc<Limiter>,
    ) -> Result<Judge, String> {
        match self {
            ModelChoice::Http(spec) => {
                Judge::connect(spec, options, cache, limiter).map_err(|e| e.to_string())
            }
            ModelChoice::Local(_) => {
                let model =
                    LocalJudge::from_spec(&self.local_spec()?, LocalJudgeOptions::default())
                        .map_err(|e| e.to_string())?;
                Ok(Judge::new(
                    Arc::new(Offloaded::new(Arc::new(model))),
                    cache,
                    options.repair_attempts,
                ))
            }
        }
    }

    /// Connects the embedder, likewise.
    fn embedder(
        &self,
        options: &ProviderOptions,
        cache: Option<Arc<Cache>>,
        limiter: Arc<Limiter>,
    ) -> Result<CachedEmbedder, String> {
        match self {
            ModelChoice::Http(spec) => {
                CachedEmbedder::connect(spec, options, cache, limiter).map_err(|e| e.to_string())
            }
            ModelChoice::Local(_) => {
                let model =
                    LocalEmbedder::from_spec(&self.local_spec()?).map_err(|e| e.to_string())?;
                Ok(CachedEmbedder::new(
                    Arc::new(Offloaded::new(Arc::new(model))),
                    cache,
                ))
            }
        }
    }
}

/// What a bad row does to the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strictness {
    /// Record it as a failed outcome and go on.
    RecordAndContinue,
    /// Stop the run with exit code 2.
    StopAtFirst,
}

/// A user error: bad flags or input, exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

pub fn resolve(args: EvalArgs) -> Result<EvalConfig> {
    let usage = |e: &dyn std::fmt::Display| anyhow::Error::new(UsageError(e.to_string()));
    let mut ids: Vec<AnyId> = Vec::new();
    for name in args
        .metrics
        .iter()
        .map(|m| m.trim())
        .filter(|m| !m.is_empty())
    {
        let id: AnyId = name.parse().map_err(|e| usage(&e))?;
        if ids.contains(&id) {
            return Err(usage(&format!("metric '{id}' listed twice")));
        }
        ids.push(id);
    }
    if ids.is_empty() {
        return Err(usage(&"--metrics lists no metric"));
    }
    let mut given: BTreeMap<AnyId, BTreeMap<String, String>> = BTreeMap::new();
    for raw in &args.settings {
        let s: Setting = raw.parse().map_err(|e| usage(&e))?;
        if !ids.contains(&s.metric) {
            return Err(usage(&format!(
                "--set {raw}: metric '{}' is not in --metrics",
                s.metric
            )));
        }
        given.entry(s.metric).or_default().insert(s.param, s.value);
    }
    let prompts = match &args.judge.prompts {
        Some(dir) => PromptSet::load_dir(dir),
        None => PromptSet::builtin(),
    }
    .map_err(|e| usage(&e))?;
    let none = BTreeMap::new();
    let mut metrics = Vec::new();
    let mut judged = Vec::new();
    for id in &ids {
        let params = given.get(id).unwrap_or(&none);
        match id {
            AnyId::Lexical(l) => {
                metrics.push(Metric::configure(*l, params).map_err(|e| usage(&e))?)
            }
            AnyId::Judged(j) => {
                judged.push(JudgedMetric::configure(*j, params, &prompts).map_err(|e| usage(&e))?)
            }
        }
    }
    let judged = if judged.is_empty() {
        if args.judge.batch.is_some() {
            return Err(usage(&"--batch: --metrics lists no judged metric"));
        }
        None
    } else {
        Some(Arc::new(judged_run(judged, prompts, &args.judge)?))
    };
    let input_format = args
        .input_format
        .as_deref()
        .map(|f| f.parse::<Format>().map_err(|e| usage(&e)))
        .transpose()?;
    let threads = match args.threads {
        Some(0) => bail!(UsageError("--threads must be at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let out = match args.out {
        Some(dir) => dir,
        None => PathBuf::from("runs")
            .join(utc_timestamp(std::time::SystemTime::now()).context("system clock")?),
    };
    Ok(EvalConfig {
        source: Source::parse(&args.data),
        input_format,
        metrics,
        judged,
        out,
        format: args.format,
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
        shard: args
            .shard
            .as_deref()
            .map(str::parse::<Shard>)
            .transpose()
            .map_err(|e: String| usage(&e))?,
    })
}

/// Connects the judge (and embedder, if a metric needs one). No default
/// model: a judged metric without `--judge` is a usage error, so that no
/// run calls a paid API unasked.
fn judged_run(
    metrics: Vec<JudgedMetric>,
    prompts: PromptSet,
    args: &JudgeArgs,
) -> Result<JudgedRun> {
    let usage = |e: &dyn std::fmt::Display| anyhow::Error::new(UsageError(e.to_string()));
    // The default is the in-process local model: never a paid cloud API.
    let judge_spec = match args.judge.as_deref() {
        Some(s) => s
            .parse::<ModelChoice>()
            .map_err(|e| usage(&format!("--judge: {e}")))?,
        None => ModelChoice::Local(None),
    };
    let embedder_spec = match &args.embedder {
        Some(s) => Some(
            s.parse::<ModelChoice>()
                .map_err(|e| usage(&format!("--embedder: {e}")))?,
        ),
        None if metrics.iter().any(JudgedMetric::needs_embedder) => Some(ModelChoice::Local(None)),
        None => None,
    };
    if args.concurrency == 0 {
        return Err(usage(&"--concurrency must be at least 1"));
    }
    if args.repeats == 0 {
        return Err(usage(&"--repeats must be at least 1"));
    }
    let mut options = ProviderOptions {
        base_url: args.base_url.clone(),
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
            return Err(usage(&"--timeout must be a positive number of seconds"));
        }
        options.attempt_timeout = Duration::from_secs_f64(secs);
    }
    let mut prices = PriceTable::default();
    for raw in &args.prices {
        let (model, price) = raw
            .rsplit_once('=')
            .ok_or_else(|| usage(&format!("--price {raw}: expected MODEL=IN/OUT")))?;
        prices.insert(model, price.parse::<Price>().map_err(|e| usage(&e))?);
    }
    let cache = open_cache(if args.no_cache {
        CacheLocation::Disabled
    } else {
        args.cache
            .clone()
            .map_or(CacheLocation::Default, CacheLocation::Path)
    })?;
    let limiter = Arc::new(Limiter::from_options(&options));
    let (judge, export) = match (args.batch, &judge_spec, &cache) {
        (None, _, _) => (
            judge_spec
                .judge(&options, cache.clone(), Arc::clone(&limiter))
                .map_err(|e| usage(&format!("--judge {judge_spec}: {e}")))?,
            None,
        ),
        (Some(BatchMode::Export), ModelChoice::Http(spec), Some(cache)) => {
            let (judge, export) =
                Export::judge(spec, &options, Arc::clone(cache), Arc::clone(&limiter))
                    .map_err(|e| usage(&format!("--judge {judge_spec}: {e}")))?;
            (judge, Some(export))
        }
        (Some(BatchMode::Export), ModelChoice::Local(_), _) => {
            return Err(usage(
                &"--batch export needs a judge behind an OpenAI-compatible server \
                  (openai:, vllm:, ...), not the in-process local model",
            ))
        }
        (Some(BatchMode::Export), _, None) => {
            return Err(usage(
                &"--batch export keeps the answers in the cache: drop --no-cache",
            ))
        }
    };
    let embedder = match embedder_spec {
        Some(spec) => Some((
            spec.embedder(&options, cache, limiter)
                .map_err(|e| usage(&format!("--embedder {spec}: {e}")))?,
            spec,
        )),
        None => None,
    };
    Ok(JudgedRun {
        metrics,
        prompts,
        judge,
        judge_spec,
        embedder,
        options,
        prices,
        repeats: args.repeats,
        export,
        reasons: args.reasons,
    })
}

/// Opens the cache, creating its folder.
pub fn open_cache(location: CacheLocation) -> Result<Option<Arc<Cache>>> {
    if let Ok(Some(path)) = location.resolve() {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
    }
    Ok(Cache::open_location(&location)
        .map_err(|e| UsageError(format!("cache: {e}")))?
        .map(Arc::new))
}

/// `20261121T210700Z`: sortable, and safe as a directory name everywhere.
fn utc_timestamp(now: std::time::SystemTime) -> Result<String> {
    let secs = now.duration_since(std::time::UNIX_EPOCH)?.as_secs();
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
            assert_eq!(choice.portable(), recorded, "{typed}");
        }
    }
}
