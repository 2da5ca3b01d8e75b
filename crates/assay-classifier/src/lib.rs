//! Grounding models in process: a sequence classifier (an NLI
//! cross-encoder, MiniCheck, a fine-tuned grounding model) loaded from a
//! Hugging Face folder, run on the CPU, asked "does this text support
//! this claim?".
//!
//! - [`Classifier::load`] reads `config.json`, `tokenizer.json` and the
//!   weights (`model.safetensors`, sharded safetensors, or
//!   `pytorch_model.bin`) and checks them before anything is judged: a
//!   missing file, an architecture or label set it cannot read, or a model
//!   larger than the memory free is an [`Error`] naming the folder.
//! - [`Classifier::logits`] is the model's raw output for (premise,
//!   hypothesis) pairs, read as the tokenizer's text pair with only the
//!   premise truncated, as MiniCheck and the NLI cross-encoders read them.
//! - [`Classifier::verify`] is the recipe for long texts
//!   ([`windows`]): the sources cut into windows that fit the model, each
//!   claim scored against every window in batches, a claim's support its
//!   best window, which is kept as the evidence.
//!
//! The runtime is candle's model implementations (BERT, RoBERTa and
//! XLM-RoBERTa, DeBERTa-v2/v3, ModernBERT, and T5 for Vectara's
//! HHEM-2.1-open and MiniCheck-Flan-T5) and the `tokenizers` crate,
//! which reads `tokenizer.json` as the Python tokenizer does; both are
//! checked against `transformers` on tiny models of each architecture
//! (`tests/fixtures`, made by `scripts/fixtures/grounding-models.py`).
//!
//! ```no_run
//! use assay_classifier::{Classifier, Options};
//! let model = Classifier::load("models/nli-deberta-v3-base".as_ref(), &Options::default())?;
//! let verdicts = model.verify(
//!     &["Sydney is the capital of Australia."],
//!     &["Canberra is the capital city of Australia. Sydney is its largest city."],
//! )?;
//! assert!(verdicts[0].probability < 0.5);
//! # Ok::<(), assay_classifier::Error>(())
//! ```

mod config;
pub mod embed;
mod network;
pub mod windows;

pub use assay_grounding::Verified;
pub use config::{Architecture, Labels};

use candle_core::{DType, Device, Tensor};
use config::ModelConfig;
use network::Network;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use tokenizers::{Encoding, Tokenizer, TruncationParams, TruncationStrategy};

/// What can go wrong loading or running a model; each names the folder
/// or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("grounding model {dir}: no {file} ({hint})")]
    Missing {
        dir: PathBuf,
        file: String,
        hint: String,
    },
    #[error("grounding model {}: {detail}", path.display())]
    Invalid { path: PathBuf, detail: String },
    #[error("grounding model {}: {detail}", dir.display())]
    Unsupported { dir: PathBuf, detail: String },
    #[error(
        "grounding model {}: the weights need about {need_mib} MiB and {free_mib} MiB of memory are free",
        dir.display()
    )]
    Memory {
        dir: PathBuf,
        need_mib: u64,
        free_mib: u64,
    },
    #[error("grounding model {name}: {detail}")]
    Run { name: String, detail: String },
}

/// How to load a model.
#[derive(Clone, Debug)]
pub struct Options {
    /// The label that means "supported", by name or index; by default the
    /// one `id2label` names so (entailment, supported, consistent, ...).
    pub label: Option<String>,
    /// CPU threads a call computes on.
    pub threads: usize,
    /// Tokens of a (window, claim) pair, special tokens included; at most
    /// the model's own limit.
    pub max_tokens: usize,
    /// Pairs per forward pass.
    pub batch: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            label: None,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_tokens: 512,
            batch: 16,
        }
    }
}

/// A sequence classifier and its tokenizer.
pub struct Classifier {
    name: String,
    identity: String,
    architecture: Architecture,
    labels: Labels,
    network: Network,
    /// Truncates the premise only.
    tokenizer: Tokenizer,
    /// For a hypothesis too long to leave the premise a token: both
    /// truncated, longest first.
    fallback: Tokenizer,
    /// No truncation, for counting, and for a model that reads the pair
    /// through a prompt.
    plain: Tokenizer,
    /// HHEM's prompt, `{text1}` the premise and `{text2}` the hypothesis;
    /// `None`: the pair is the tokenizer's text pair.
    prompt: Option<String>,
    window: usize,
    pad: u32,
    batch: usize,
    pool: rayon::ThreadPool,
}

impl std::fmt::Debug for Classifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Classifier")
            .field("identity", &self.identity)
            .field("architecture", &self.architecture)
            .field("labels", &self.labels)
            .field("window", &self.window)
            .finish()
    }
}

impl Classifier {
    /// Loads the model in `dir`, checking every file first.
    pub fn load(dir: &Path, options: &Options) -> Result<Classifier, Error> {
        if !dir.is_dir() {
            return Err(Error::Invalid {
                path: dir.to_owned(),
                detail: "not a folder: give the folder a Hugging Face download made, \
                         with config.json, tokenizer.json and the weights"
                    .into(),
            });
        }
        let config = ModelConfig::read(dir)?;
        let labels = config.labels(dir, options.label.as_deref())?;
        let tokenizer_path = dir.join("tokenizer.json");
        if !tokenizer_path.is_file() {
            return Err(Error::Missing {
                dir: dir.to_owned(),
                file: "tokenizer.json".into(),
                hint: if config.architecture == Architecture::Hhem {
                    "HHEM ships none: put google/flan-t5-base's tokenizer.json in the folder"
                } else {
                    "save it with AutoTokenizer.from_pretrained(...).save_pretrained(DIR), \
                     which writes tokenizer.json for every fast tokenizer"
                }
                .into(),
            });
        }
        let weights = weight_files(dir)?;
        let size: u64 = weights
            .iter()
            .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
            .sum();
        check_memory(dir, size)?;
        let window = options.max_tokens.min(config.max_tokens());
        let invalid_tokenizer = |detail: String| Error::Invalid {
            path: tokenizer_path.clone(),
            detail,
        };
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| invalid_tokenizer(e.to_string()))?;
        tokenizer.with_padding(None);
        let mut fallback = tokenizer.clone();
        let mut plain = tokenizer.clone();
        plain
            .with_truncation(None)
            .map_err(|e| invalid_tokenizer(e.to_string()))?;
        let truncation = |strategy| TruncationParams {
            max_length: window,
            strategy,
            ..TruncationParams::default()
        };
        tokenizer
            .with_truncation(Some(truncation(TruncationStrategy::OnlyFirst)))
            .map_err(|e| invalid_tokenizer(e.to_string()))?;
        fallback
            .with_truncation(Some(truncation(TruncationStrategy::LongestFirst)))
            .map_err(|e| invalid_tokenizer(e.to_string()))?;
        let device = Device::Cpu;
        let vb = config::var_builder(&weights, &device)?;
        let network = Network::load(&config, vb, &weights).map_err(|e| Error::Invalid {
            path: weights[0].clone(),
            detail: format!(
                "the weights do not fit config.json's {}: {e}",
                config.architecture
            ),
        })?;
        let name = dir.file_name().map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let identity = format!(
            "{name}@sha256:{}/label={}",
            weights_hash(&weights)?,
            labels.supported_name()
        );
        let pool = thread_pool(&name, options.threads)?;
        Ok(Classifier {
            name,
            identity,
            architecture: config.architecture,
            labels,
            network,
            tokenizer,
            fallback,
            plain,
            prompt: config.prompt(),
            window,
            pad: config.pad_token_id,
            batch: options.batch.max(1),
            pool,
        })
    }

    /// The folder's name, the SHA-256 of its weights and the label read as
    /// supported: what signatures and cache keys name it by.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    pub fn architecture(&self) -> Architecture {
        self.architecture
    }

    pub fn labels(&self) -> &Labels {
        &self.labels
    }

    /// Tokens of a pair, special tokens included.
    pub fn window(&self) -> usize {
        self.window
    }

    /// The pair as the model reads it: the tokenizer's text pair, the
    /// premise truncated to fit (both, longest first, where the hypothesis
    /// alone leaves the premise no room); or, for a model that reads it
    /// through a prompt (HHEM), the prompt filled in, the premise cut after
    /// as many of its tokens as let the whole fit.
    pub fn encode(&self, premise: &str, hypothesis: &str) -> Result<Encoding, Error> {
        let tokenizing = |e: tokenizers::Error| self.run_error(format!("tokenizing: {e}"));
        let Some(prompt) = &self.prompt else {
            return self
                .tokenizer
                .encode((premise, hypothesis), true)
                .or_else(|_| self.fallback.encode((premise, hypothesis), true))
                .map_err(tokenizing);
        };
        let read = |premise: &str| {
            self.plain
                .encode(fill(prompt, premise, hypothesis), true)
                .map_err(tokenizing)
        };
        let whole = read(premise)?;
        if whole.len() <= self.window {
            return Ok(whole);
        }
        // The premise's tokens end at these byte offsets.
        let ends: Vec<usize> = (self.plain.encode(premise, false).map_err(tokenizing)?)
            .get_offsets()
            .iter()
            .map(|o| o.1)
            .collect();
        let mut keep = ends.len().saturating_sub(whole.len() - self.window);
        loop {
            let cut = keep
                .checked_sub(1)
                .and_then(|k| premise.get(..ends[k]))
                .unwrap_or("");
            let encoding = read(cut)?;
            if encoding.len() <= self.window || keep == 0 {
                return Ok(encoding);
            }
            keep -= 1;
        }
    }

    /// Tokens of `text` alone, without special tokens.
    pub fn count_tokens(&self, text: &str) -> Result<usize, Error> {
        self.plain
            .encode(text, false)
            .map(|e| e.len())
            .map_err(|e| self.run_error(format!("tokenizing: {e}")))
    }

    /// The model's logits for each (premise, hypothesis) pair, in order
    /// (for ModernBERT, whose candle head ends in a softmax, the logarithms
    /// of its probabilities: the logits less their log-sum-exp).
    pub fn logits(&self, pairs: &[(&str, &str)]) -> Result<Vec<Vec<f32>>, Error> {
        let encodings = pairs
            .iter()
            .map(|(p, h)| self.encode(p, h))
            .collect::<Result<Vec<_>, _>>()?;
        // Batches of similar lengths pad least.
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let mut out = vec![Vec::new(); encodings.len()];
        for chunk in order.chunks(self.batch) {
            let batch: Vec<&Encoding> = chunk.iter().map(|&i| &encodings[i]).collect();
            let rows = self
                .pool
                .install(|| self.forward(&batch))
                .map_err(|e| self.run_error(e.to_string()))?;
            for (&i, row) in chunk.iter().zip(rows) {
                out[i] = row;
            }
        }
        Ok(out)
    }

    /// P(supported) for each (premise, hypothesis) pair: the softmax of
    /// the logits at the supported label.
    pub fn support(&self, pairs: &[(&str, &str)]) -> Result<Vec<f64>, Error> {
        let index = self.labels.supported;
        Ok(self
            .logits(pairs)?
            .iter()
            .map(|row| softmax(row)[index])
            .collect())
    }

    fn forward(&self, batch: &[&Encoding]) -> candle_core::Result<Vec<Vec<f32>>> {
        let width = batch.iter().map(|e| e.len()).max().unwrap_or(0);
        let (mut ids, mut mask, mut types) = (Vec::new(), Vec::new(), Vec::new());
        for e in batch {
            let pad = width - e.len();
            ids.extend(
                e.get_ids()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(self.pad, pad)),
            );
            mask.extend(
                e.get_attention_mask()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(0, pad)),
            );
            types.extend(
                e.get_type_ids()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(0, pad)),
            );
        }
        let shape = (batch.len(), width);
        let device = Device::Cpu;
        let ids = Tensor::from_vec(ids, shape, &device)?;
        let mask = Tensor::from_vec(mask, shape, &device)?;
        let types = Tensor::from_vec(types, shape, &device)?;
        let logits = self.network.forward(&ids, &mask, &types)?;
        logits.to_dtype(DType::F32)?.to_vec2::<f32>()
    }

    fn run_error(&self, detail: String) -> Error {
        Error::Run {
            name: self.name.clone(),
            detail,
        }
    }
}

/// `prompt` with `{text1}` replaced by `premise` and `{text2}` by
/// `hypothesis`, in one pass, as Python's `str.format` fills them.
fn fill(prompt: &str, premise: &str, hypothesis: &str) -> String {
    let mut out = String::with_capacity(prompt.len() + premise.len() + hypothesis.len());
    let mut rest = prompt;
    loop {
        let next = [("{text1}", premise), ("{text2}", hypothesis)]
            .into_iter()
            .filter_map(|(slot, text)| rest.find(slot).map(|at| (at, slot, text)))
            .min_by_key(|(at, _, _)| *at);
        match next {
            Some((at, slot, text)) => {
                out.push_str(&rest[..at]);
                out.push_str(text);
                rest = &rest[at + slot.len()..];
            }
            None => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// The softmax of `logits`, in f64.
pub fn softmax(logits: &[f32]) -> Vec<f64> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let exps: Vec<f64> = logits.iter().map(|&x| (x as f64 - max).exp()).collect();
    let sum: f64 = exps.iter().sum();
    exps.iter().map(|e| e / sum).collect()
}

/// The weight files of `dir`: one safetensors file, the shards its index
/// names, or a PyTorch pickle.
pub(crate) fn weight_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let single = dir.join("model.safetensors");
    if single.is_file() {
        return Ok(vec![single]);
    }
    let index = dir.join("model.safetensors.index.json");
    if index.is_file() {
        let invalid = |detail: String| Error::Invalid {
            path: index.clone(),
            detail,
        };
        let text = std::fs::read_to_string(&index).map_err(|e| invalid(e.to_string()))?;
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| invalid(format!("not JSON: {e}")))?;
        let map = json
            .get("weight_map")
            .and_then(|m| m.as_object())
            .ok_or_else(|| invalid("no weight_map".into()))?;
        let mut files: Vec<PathBuf> = map
            .values()
            .filter_map(|v| v.as_str())
            .map(|f| dir.join(f))
            .collect();
        files.sort();
        files.dedup();
        if let Some(missing) = files.iter().find(|f| !f.is_file()) {
            return Err(Error::Missing {
                dir: dir.to_owned(),
                file: missing.display().to_string(),
                hint: "the index names a shard that is not there".into(),
            });
        }
        return Ok(files);
    }
    let pickle = dir.join("pytorch_model.bin");
    if pickle.is_file() {
        return Ok(vec![pickle]);
    }
    let onnx = dir.join("model.onnx").is_file() || dir.join("onnx").is_dir();
    Err(Error::Missing {
        dir: dir.to_owned(),
        file: "weights".into(),
        hint: if onnx {
            "found an ONNX export only; assay reads the safetensors the export was made from \
             (download the model's model.safetensors)"
                .into()
        } else {
            "expected model.safetensors, model.safetensors.index.json with its shards, \
             or pytorch_model.bin"
                .into()
        },
    })
}

/// The first 16 hex digits of the SHA-256 of the weight files, in order.
pub(crate) fn weights_hash(files: &[PathBuf]) -> Result<String, Error> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    for path in files {
        let invalid = |e: std::io::Error| Error::Invalid {
            path: path.clone(),
            detail: e.to_string(),
        };
        let mut file = std::fs::File::open(path).map_err(invalid)?;
        loop {
            let n = file.read(&mut buf).map_err(invalid)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
    }
    Ok(hasher
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// A model is read into memory as f32: a half-precision file doubles.
fn check_memory(dir: &Path, weights_bytes: u64) -> Result<(), Error> {
    let Some(free) = available_memory() else {
        return Ok(());
    };
    // Weights, their f32 copy where stored in half precision, and the
    // activations of a batch.
    let need = weights_bytes.saturating_mul(2) + (256 << 20);
    if need > free {
        return Err(Error::Memory {
            dir: dir.to_owned(),
            need_mib: need >> 20,
            free_mib: free >> 20,
        });
    }
    Ok(())
}

/// `MemAvailable` of /proc/meminfo, where there is one.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The model `name`'s pool of `threads` CPU threads (at least one).
pub(crate) fn thread_pool(name: &str, threads: usize) -> Result<rayon::ThreadPool, Error> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| Error::Run {
            name: name.to_string(),
            detail: format!("threads: {e}"),
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_prompt_is_filled_in_one_pass() {
        let prompt = "<pad> P: {text1}\n\nH: {text2}";
        assert_eq!(
            super::fill(prompt, "a {text2}", "b"),
            "<pad> P: a {text2}\n\nH: b"
        );
        assert_eq!(super::fill("{text2}{text1}", "x", "y"), "yx");
    }
}
