//! The run log: `manifest.json`, `summary.json` and the outcome records of
//! `results.jsonl` ([`OutcomeRecord`]), as types that write and read them.
//! Readers accept run directories of earlier versions of the same
//! `format_version`: fields added since are optional.

use crate::error::{EngineError, OutputContext, Result};
use crate::shard::Shard;
use assay_core::dataset::InputOptions;
use assay_core::{Accumulator, Format, InputReport, Stitch, Summary};
use assay_llm::ModelIdentity;
use assay_metrics::judged::{ragas_score, MetricMean, Protocol};
use assay_metrics::{CorpusScore, Direction};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

pub use assay_core::OutcomeRecord;

/// Reads a run directory's JSON file as its type: a usage error naming
/// the file when it is missing or not of the run-log format.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| EngineError::Usage(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| EngineError::Usage(format!("{}: {e}", path.display())))
}

/// Writes a run directory's JSON file whole or not at all: through a
/// temporary file beside it, renamed over it, so a crash never leaves a
/// torn file for [`read_json`] to meet.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let mut text =
        serde_json::to_vec_pretty(value).with_context(|| format!("cannot serialise {name}"))?;
    text.push(b'\n');
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// `manifest.json`: what the run is, enough to reproduce its numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunManifest {
    pub format_version: u32,
    pub assay_version: String,
    /// The commit assay was built from, when built from a checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_revision: Option<String>,
    pub input: InputRecord,
    /// Lexical metrics first, then judged ones.
    pub metrics: Vec<MetricRecord>,
    /// Runs with judged metrics only (`null` otherwise).
    pub judge: Option<JudgeRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "shard_text")]
    pub shard: Option<Shard>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchRecord>,
    /// A merged run: the shards it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<MergedShard>>,
}

/// The input of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputRecord {
    /// As given (`-` for standard input).
    pub path: String,
    /// Of the file's bytes; `None` for standard input.
    pub sha256: Option<String>,
    /// The format the rows were read in. Absent in manifests written
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    /// The references file joined onto the rows (`--references`): its
    /// content decides numbers as the input's does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<FileRecord>,
    /// The OTLP logs export whose GenAI events gave the spans their
    /// messages (`--logs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<FileRecord>,
    /// `off` when an OTLP export's calls were not stitched
    /// (`--no-stitch`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stitch: Option<Stitch>,
}

/// A file a run read, by its path as given and its content's hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileRecord {
    pub path: String,
    pub sha256: String,
}

impl InputRecord {
    /// How the run read its input, to read it again the same way (a
    /// merge's corpus scores, the report's fields): its references and
    /// logs joined, its calls stitched or not. An error names a side file
    /// that cannot be read or has changed since the run.
    pub fn options(&self) -> std::result::Result<InputOptions, String> {
        let unchanged = |f: &FileRecord| {
            let now = assay_core::hash::sha256_file(Path::new(&f.path))
                .map_err(|e| format!("cannot read {}: {e}", f.path))?;
            if now == f.sha256 {
                Ok(PathBuf::from(&f.path))
            } else {
                Err(format!("{} changed since the run", f.path))
            }
        };
        Ok(InputOptions {
            references: self.references.as_ref().map(unchanged).transpose()?,
            logs: self.logs.as_ref().map(unchanged).transpose()?,
            stitch: self.stitch.unwrap_or_default(),
        })
    }
}

/// One metric of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricRecord {
    pub id: String,
    /// Every parameter, defaults included, in the form `--set` takes
    /// (lists as arrays).
    pub params: Map<String, Value>,
    pub signature: String,
    pub outputs: Vec<String>,
}

/// The judge (and embedder) of a run with judged metrics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeRecord {
    /// As `--judge` names it; a local model file by its file name.
    pub spec: String,
    pub identity: ModelIdentity,
    pub sampling: Sampling,
    pub embedder: Option<EmbedderRecord>,
    pub prompts: Vec<PromptRecord>,
}

/// How the judge is sampled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    pub temperature: f64,
    pub seed: u64,
    /// How the steps that draw several votes are sampled.
    pub votes: String,
    pub repeats: u32,
    pub repeat_seeds: String,
    /// How closed verdicts were asked (`listed` or `per-item`); absent in
    /// runs made before there was a choice, which were listed.
    #[serde(default, skip_serializing_if = "is_listed")]
    pub protocol: Protocol,
}

fn is_listed(p: &Protocol) -> bool {
    *p == Protocol::Listed
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EmbedderRecord {
    pub spec: String,
    pub identity: ModelIdentity,
}

/// A prompt file the run used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptRecord {
    pub id: String,
    pub version: u32,
    pub sha256: String,
}

/// A batch-export run: the cache that `batch import` fills.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchRecord {
    pub mode: String,
    pub cache: String,
}

/// One shard of a merged run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergedShard {
    pub shard: String,
    pub dir: String,
}

/// A shard as `--shard` writes it: `2/3`.
mod shard_text {
    use crate::shard::Shard;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(shard: &Option<Shard>, s: S) -> Result<S::Ok, S::Error> {
        match shard {
            Some(shard) => s.collect_str(shard),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Shard>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| text.parse().map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// One metric output (`rouge1`, `bleu`, ...) and its statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputSummary {
    pub name: String,
    pub metric: String,
    pub direction: Direction,
    #[serde(flatten)]
    pub summary: Summary,
    /// The judge usage of the output's metric (judged metrics only; the
    /// outputs of one metric share it).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub usage: Option<OutputUsage>,
    /// The spread over repeats, under `--repeats N` with N > 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<RepeatSpread>,
}

/// Tokens and cost of one judged metric: its share of the judge and
/// embedding calls (a call shared by n metrics counts 1/n for each, so the
/// figures can be fractional).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputUsage {
    pub prompt_tokens: f64,
    pub completion_tokens: f64,
    /// Absent when a model that was paid for has no `--price`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

/// `ragas_score` in `summary.json`: the harmonic mean of the means of the
/// run's higher-is-better judged outputs (lexical outputs do not count:
/// ragas defines it over its LLM-guided metrics), or why there is none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RagasSummary {
    /// `None` (JSON `null`) when it cannot be computed.
    pub value: Option<f64>,
    /// The outputs whose means it used (or had, when too few).
    pub metrics: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl RagasSummary {
    /// Over the judged outputs that have a mean; outputs with nothing
    /// scored have no mean to take and are left out.
    pub(crate) fn of(judged: &[OutputSummary]) -> RagasSummary {
        let means: Vec<MetricMean<'_>> = judged
            .iter()
            .filter_map(|o| {
                o.summary.stats.as_ref().map(|st| MetricMean {
                    name: &o.name,
                    mean: st.mean,
                    direction: o.direction,
                })
            })
            .collect();
        match ragas_score(&means) {
            Ok(score) => RagasSummary {
                value: Some(score.value),
                metrics: score.metrics,
                reason: None,
            },
            Err(e) => RagasSummary {
                value: None,
                metrics: means
                    .iter()
                    .filter(|m| m.direction == Direction::HigherIsBetter)
                    .map(|m| m.name.to_string())
                    .collect(),
                reason: Some(e.to_string()),
            },
        }
    }
}

/// How much a judged output's mean moves from one judging to the next:
/// the judge's noise, as `--repeats` measures it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepeatSpread {
    pub n: u32,
    /// The mean of each repeat; `null` where a repeat scored nothing.
    pub means: Vec<Option<f64>>,
    /// Population standard deviation of the means that exist.
    pub std_of_means: Option<f64>,
    pub max_minus_min: Option<f64>,
}

impl RepeatSpread {
    pub(crate) fn of<'a>(repeats: impl Iterator<Item = &'a Accumulator>) -> RepeatSpread {
        let means: Vec<Option<f64>> = repeats.map(|a| a.summary().stats.map(|s| s.mean)).collect();
        let present: Vec<f64> = means.iter().flatten().copied().collect();
        let n = present.len() as f64;
        let mean = present.iter().sum::<f64>() / n;
        let (lo, hi) = present
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(*v), hi.max(*v))
            });
        let any = !present.is_empty();
        RepeatSpread {
            n: means.len() as u32,
            std_of_means: any
                .then(|| (present.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt()),
            max_minus_min: any.then_some(hi - lo),
            means,
        }
    }
}

/// `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub format_version: u32,
    pub rows: u64,
    pub outputs: Vec<OutputSummary>,
    pub corpus: Vec<CorpusScore>,
    /// Why `corpus` lacks scores it would have (a merge whose input
    /// cannot be read again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus_note: Option<String>,
    /// Judge usage per metric and for the run (judged metrics only); a
    /// merge keeps each shard's as it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    /// Runs with judged metrics only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ragas_score: Option<RagasSummary>,
    /// Per judged metric of the run, its measured agreement with people
    /// under the run's protocol, beside the best trivial baseline
    /// (`assay_metrics::judged::measured`); an empty list when none was
    /// measured. Runs with judged metrics only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<Vec<assay_metrics::judged::measured::Agreement>>,
    /// Per judged metric of the run, the local judge's verdicts on the
    /// plain conversations under the run's protocol, and whether it
    /// declined for them (`assay_metrics::judged::fitness`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fitness: Option<Vec<assay_metrics::judged::fitness::Fitness>>,
    /// The prevalence corrected with a judge calibration (`assay eval
    /// --calibration`), added after the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<Value>,
    /// What the dataset layer did to the input: calls stitched into
    /// conversations, references joined (and what found none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<InputReport>,
    /// False when the run stopped before its input ended (Ctrl-C, a bad
    /// row under `--strict`, a refused key): the same command resumes it.
    pub complete: bool,
}
