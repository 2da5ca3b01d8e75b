//! Batch mode: the judge calls of a run go through a batch service (the
//! OpenAI Batch API, `vllm run-batch`) instead of live requests.
//!
//! `eval --batch export` answers judge calls from the cache only. A miss is
//! not sent: its request is kept, the step is deferred, and the sample
//! writes no judged outcome (it is scored in a later round). Steps that do
//! not read a deferred step still run from the cache, so one export holds
//! every request the run can know now. The requests go to
//! `DIR/batch/round-<n>.requests.jsonl` (`custom_id` = request key), beside
//! `round-<n>.pending.jsonl`, the same requests as assay reads them back.
//! `assay batch import OUTPUT --out DIR` stores the answers in the cache;
//! the next `eval` continues one dependency level further (faithfulness:
//! statements, then verdicts).

use crate::cache::open_cache;
use crate::error::{EngineError, OutputContext, Result};
use crate::log::{read_json, BatchRecord, RunManifest};
use crate::rundir::MANIFEST;
use assay_llm::{
    export_batch, import_batch, Cache, ChatModel, ChatRequest, Judge, Limiter, ModelSpec,
    OpenAiChat, ProviderOptions, RequestKey, Secret, StructuredMode,
};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The folder of a run directory that holds the batch files.
const BATCH_DIR: &str = "batch";
const REQUESTS: &str = ".requests.jsonl";
const PENDING: &str = ".pending.jsonl";

/// The requests an export run could not answer from the cache.
pub struct Export {
    model: Arc<OpenAiChat>,
    cache: PathBuf,
    /// By request key: deduplicated, and written in a stable order.
    deferred: Mutex<BTreeMap<RequestKey, ChatRequest>>,
    samples: AtomicU64,
}

impl Export {
    /// A judge that answers from `cache` only (through [`Judge::lookup`]),
    /// and the export that collects its misses.
    pub fn judge(
        spec: &ModelSpec,
        options: &ProviderOptions,
        cache: Arc<Cache>,
        limiter: Arc<Limiter>,
    ) -> Result<(Judge, Export), assay_llm::Error> {
        let model = Arc::new(offline_client(spec, options, limiter)?);
        let judge = Judge::new(
            Arc::clone(&model) as Arc<dyn ChatModel>,
            Some(Arc::clone(&cache)),
            options.repair_attempts,
        )
        .with_max_tokens(options.max_tokens);
        let export = Export {
            model,
            cache: cache.path().to_path_buf(),
            deferred: Mutex::new(BTreeMap::new()),
            samples: AtomicU64::new(0),
        };
        Ok((judge, export))
    }

    /// Keeps `request` for the batch file.
    pub fn defer(&self, request: &ChatRequest) {
        let key = RequestKey::chat(self.model.identity(), request);
        if let Ok(mut deferred) = self.deferred.lock() {
            deferred.entry(key).or_insert_with(|| request.clone());
        }
    }

    /// Counts a sample whose judged outcomes wait for the batch.
    pub fn defer_sample(&self) {
        self.samples.fetch_add(1, Ordering::Relaxed);
    }

    /// What the manifest records: the mode, and the cache that `batch
    /// import` must fill for the next round to find the answers.
    pub fn record(&self) -> BatchRecord {
        BatchRecord {
            mode: "export".into(),
            cache: self.cache.display().to_string(),
        }
    }

    /// Writes this round's batch files into `out` and returns what to
    /// tell the user: what was written and how to go on.
    pub fn finish(&self, out: &Path) -> Result<String> {
        let deferred = self
            .deferred
            .lock()
            .map_err(|_| EngineError::Internal("the batch export table is poisoned".into()))?;
        if deferred.is_empty() {
            return Ok(
                "batch: every judge request was answered from the cache; this run is complete"
                    .into(),
            );
        }
        let dir = out.join(BATCH_DIR);
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let round = rounds(&dir)?.len() + 1;
        let requests_path = dir.join(format!("round-{round}{REQUESTS}"));
        let pending_path = dir.join(format!("round-{round}{PENDING}"));
        let requests: Vec<ChatRequest> = deferred.values().cloned().collect();
        // The pending file first: a requests file is only ever there with
        // the requests that `batch import` needs to read its answers.
        write_lines(&pending_path, |w| {
            for request in &requests {
                serde_json::to_writer(&mut *w, request)?;
                w.write_all(b"\n")?;
            }
            Ok(())
        })?;
        write_lines(&requests_path, |w| {
            export_batch(&self.model, &requests, w)
                .map(|_| ())
                .map_err(|e| EngineError::Output(e.to_string()))
        })?;
        let model = &self.model.identity().model;
        let output = dir.join(format!("round-{round}.output.jsonl"));
        Ok(format!(
            "batch: round {round}: {} judge requests of {} samples are not in the cache; nothing was sent.\n\
             They are in {requests}. Run them with\n  \
             vllm run-batch -i {requests} -o {output} --model {model}\n\
             or with the OpenAI Batch API (upload the file with purpose \"batch\", create a batch on\n\
             /v1/chat/completions, download its output file to {output}), then\n  \
             assay batch import {output} --out {out}\n\
             and run this eval again with the same --cache (a new --out) to continue.",
            requests.len(),
            self.samples.load(Ordering::Relaxed),
            requests = requests_path.display(),
            output = output.display(),
            out = out.display(),
        ))
    }
}

/// The provider's client for its identity (the request keys) and request
/// bodies only: batch mode sends nothing, so it needs no API key, and the
/// placeholder it gets could not authenticate a request if one were made.
fn offline_client(
    spec: &ModelSpec,
    options: &ProviderOptions,
    limiter: Arc<Limiter>,
) -> Result<OpenAiChat, assay_llm::Error> {
    let placeholder = Secret::new("batch-mode-sends-nothing");
    OpenAiChat::with_key(spec, options, Some(placeholder), limiter)
}

/// The pending files of a run's batch folder, oldest round first.
fn rounds(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found: Vec<(u64, PathBuf)> = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", dir.display())),
    };
    for entry in entries {
        let path = entry?.path();
        let round = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("round-")?.strip_suffix(PENDING))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(round) = round {
            found.push((round, path));
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

/// Writes a file through a temporary name, so a half-written batch file is
/// never taken for a whole one.
fn write_lines(path: &Path, fill: impl FnOnce(&mut BufWriter<File>) -> Result<()>) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut w = BufWriter::new(
        File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?,
    );
    fill(&mut w).with_context(|| format!("cannot write {}", tmp.display()))?;
    w.flush()
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// `assay batch import FILE --out DIR [--cache PATH]`: reconnects the judge
/// that the export of DIR used (the request keys depend on its provider,
/// endpoint, model and settings), stores every valid answer of FILE in the
/// cache and reports what it did. Failed answers stay out of the cache and
/// are exported again by the next round. Returns the lines to show.
pub fn import(file: &Path, out: &Path, cache: Option<PathBuf>) -> Result<String> {
    let usage = EngineError::Usage;
    let manifest_path = out.join(MANIFEST);
    let manifest: RunManifest = read_json(&manifest_path)?;
    let not_exported = |what: &str| {
        usage(format!(
            "{}: no {what} (was this run made with --batch export?)",
            manifest_path.display()
        ))
    };
    let judge = manifest
        .judge
        .as_ref()
        .ok_or_else(|| not_exported("judge"))?;
    let spec: ModelSpec = judge
        .spec
        .parse()
        .map_err(|e| usage(format!("{}: judge: {e}", manifest_path.display())))?;
    let mode: StructuredMode = judge
        .identity
        .settings
        .strip_prefix("structured=")
        .unwrap_or_default()
        .parse()
        .map_err(|e| usage(format!("{}: judge settings: {e}", manifest_path.display())))?;
    let options = ProviderOptions {
        base_url: Some(judge.identity.endpoint.clone()),
        structured_mode: Some(mode),
        ..ProviderOptions::default()
    };
    let cache_path = match cache {
        Some(path) => path,
        None => PathBuf::from(
            &manifest
                .batch
                .as_ref()
                .ok_or_else(|| not_exported("batch"))?
                .cache,
        ),
    };
    let model = offline_client(&spec, &options, Arc::new(Limiter::from_options(&options)))
        .map_err(|e| usage(format!("judge {spec}: {e}")))?;
    if model.identity() != &judge.identity {
        return Err(usage(format!(
            "{}: the judge {spec} reconnects as {:?}, not as the manifest records it",
            manifest_path.display(),
            model.identity()
        )));
    }
    let mut requests: Vec<ChatRequest> = Vec::new();
    for pending in rounds(&out.join(BATCH_DIR))? {
        let reader = BufReader::new(
            File::open(&pending).with_context(|| format!("cannot read {}", pending.display()))?,
        );
        for (n, line) in reader.lines().enumerate() {
            let line = line.with_context(|| format!("cannot read {}", pending.display()))?;
            requests.push(
                serde_json::from_str(&line)
                    .map_err(|e| usage(format!("{}:{}: {e}", pending.display(), n + 1)))?,
            );
        }
    }
    if requests.is_empty() {
        return Err(usage(format!(
            "{} holds no exported requests",
            out.join(BATCH_DIR).display()
        )));
    }
    let cache = open_cache(assay_llm::CacheLocation::Path(cache_path))?
        .ok_or_else(|| usage("no cache to import into".into()))?;
    let input = BufReader::new(
        File::open(file).map_err(|e| usage(format!("cannot read {}: {e}", file.display())))?,
    );
    let report = import_batch(&model, &cache, &requests, input)
        .map_err(|e| usage(format!("{}: {}", file.display(), e.detail())))?;
    let mut text = format!(
        "stored {} answers in {}; {} failed; {} matched no exported request\n",
        report.stored,
        cache.path().display(),
        report.failed.len(),
        report.unknown
    );
    for (key, e) in &report.failed {
        text.push_str(&format!(
            "failed {}: {}: {} (exported again next round)\n",
            key.as_str(),
            e.kind(),
            e.detail()
        ));
    }
    Ok(text)
}
