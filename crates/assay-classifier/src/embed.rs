//! Sentence embeddings from a Hugging Face folder of a sentence-transformers
//! model (multilingual-e5, bge-m3, paraphrase-multilingual-MiniLM, ...):
//! its encoder (BERT or XLM-RoBERTa, as candle implements them), its
//! `tokenizer.json` (WordPiece, SentencePiece unigram or byte BPE, read by
//! the `tokenizers` crate), and its pooling (`1_Pooling/config.json`: the
//! mean of the tokens, or the first token), each vector scaled to unit
//! length.

use crate::config::{var_builder, Architecture, ModelConfig};
use crate::{weight_files, weights_hash, Error};
use candle_core::{DType, Device, Tensor};
use candle_transformers::models::{bert, xlm_roberta};
use serde_json::Value;
use std::path::Path;
use tokenizers::{Tokenizer, TruncationParams};

/// How token vectors become the text's vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of the text's tokens (sentence-transformers' default).
    Mean,
    /// The first token's vector (bge-m3).
    First,
}

enum Encoder {
    Bert(bert::BertModel),
    Roberta(xlm_roberta::XLMRobertaModel),
}

/// A sentence-transformers model on the CPU.
pub struct SentenceEncoder {
    encoder: Encoder,
    tokenizer: Tokenizer,
    pooling: Pooling,
    pad: u32,
    /// The folder's name.
    name: String,
    /// The SHA-256 of its weights and its pooling.
    version: String,
    batch: usize,
    pool: rayon::ThreadPool,
}

impl std::fmt::Debug for SentenceEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentenceEncoder")
            .field("identity", &self.identity())
            .field("pooling", &self.pooling)
            .finish()
    }
}

impl SentenceEncoder {
    /// Loads the model in `dir`, computing on `threads` CPU threads.
    pub fn load(dir: &Path, threads: usize) -> Result<SentenceEncoder, Error> {
        let config = ModelConfig::read_encoder(dir)?;
        let tokenizer_path = dir.join("tokenizer.json");
        let invalid_tokenizer = |detail: String| Error::Invalid {
            path: tokenizer_path.clone(),
            detail,
        };
        if !tokenizer_path.is_file() {
            return Err(Error::Missing {
                dir: dir.to_owned(),
                file: "tokenizer.json".into(),
                hint: "save it with AutoTokenizer.from_pretrained(...).save_pretrained(DIR)".into(),
            });
        }
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| invalid_tokenizer(e.to_string()))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens(dir, &config),
                ..TruncationParams::default()
            }))
            .map_err(|e| invalid_tokenizer(e.to_string()))?;
        let weights = weight_files(dir)?;
        let vb = var_builder(&weights, &Device::Cpu)?;
        let load = || -> candle_core::Result<Encoder> {
            let parse = |e: serde_json::Error| candle_core::Error::Msg(e.to_string());
            // Saved alone, the encoder's weights are at the root; saved with
            // a head, under the family's name.
            let root = "embeddings.word_embeddings.weight";
            let vb = match ["bert", "roberta"]
                .into_iter()
                .find(|p| !vb.contains_tensor(root) && vb.pp(*p).contains_tensor(root))
            {
                Some(prefix) => vb.pp(prefix),
                None => vb.clone(),
            };
            Ok(match config.architecture {
                Architecture::Roberta => {
                    let c: xlm_roberta::Config =
                        serde_json::from_value(config.for_candle()).map_err(parse)?;
                    Encoder::Roberta(xlm_roberta::XLMRobertaModel::new(&c, vb)?)
                }
                _ => {
                    let c: bert::Config =
                        serde_json::from_value(config.for_candle()).map_err(parse)?;
                    Encoder::Bert(bert::BertModel::load(vb, &c)?)
                }
            })
        };
        let encoder = load().map_err(|e| Error::Invalid {
            path: weights[0].clone(),
            detail: format!("the weights do not fit config.json: {e}"),
        })?;
        let name = dir.file_name().map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let pooling = pooling(dir)?;
        let version = format!(
            "sha256:{}/pool={}",
            weights_hash(&weights)?,
            match pooling {
                Pooling::Mean => "mean",
                Pooling::First => "first",
            }
        );
        let pool = crate::thread_pool(&name, threads)?;
        Ok(SentenceEncoder {
            encoder,
            tokenizer,
            pooling,
            pad: config.pad_token_id,
            name,
            version,
            batch: 16,
            pool,
        })
    }

    /// Whether `dir` is a model folder that the built-in BERT embedder
    /// (`assay-local`'s, mean-pooled, WordPiece) does not read: one whose
    /// model is not a BERT, or that is pooled by its first token.
    pub fn is_needed_for(dir: &Path) -> bool {
        let json = |file: &str| -> Option<Value> {
            serde_json::from_str(&std::fs::read_to_string(dir.join(file)).ok()?).ok()
        };
        let not_bert = json("config.json")
            .and_then(|c| c.get("model_type")?.as_str().map(|t| t != "bert"))
            .unwrap_or(false);
        let first_token = json("1_Pooling/config.json")
            .and_then(|p| p.get("pooling_mode_cls_token")?.as_bool())
            .unwrap_or(false);
        dir.is_dir() && (not_bert || first_token)
    }

    /// The folder's name, the SHA-256 of its weights and its pooling.
    pub fn identity(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }

    /// The folder's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The SHA-256 of its weights and its pooling: what tells two folders
    /// of one name apart.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Token ids of `text` as the model reads it.
    pub fn ids(&self, text: &str) -> Result<Vec<u32>, Error> {
        self.tokenizer
            .encode(text, true)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| self.run_error(format!("tokenizing: {e}")))
    }

    /// Unit-length vectors of `texts`, in order, and the tokens read.
    pub fn embed(&self, texts: &[String]) -> Result<(Vec<Vec<f32>>, u64), Error> {
        let ids = texts
            .iter()
            .map(|t| self.ids(t))
            .collect::<Result<Vec<_>, _>>()?;
        let tokens = ids.iter().map(|i| i.len() as u64).sum();
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(self.batch) {
            let rows = self
                .pool
                .install(|| self.forward(chunk))
                .map_err(|e| self.run_error(e.to_string()))?;
            out.extend(rows);
        }
        Ok((out, tokens))
    }

    fn forward(&self, batch: &[Vec<u32>]) -> candle_core::Result<Vec<Vec<f32>>> {
        let width = batch.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let (mut ids, mut mask) = (Vec::new(), Vec::new());
        for row in batch {
            let pad = width - row.len();
            ids.extend(
                row.iter()
                    .copied()
                    .chain(std::iter::repeat_n(self.pad, pad)),
            );
            mask.extend(std::iter::repeat_n(1u32, row.len()).chain(std::iter::repeat_n(0, pad)));
        }
        let device = Device::Cpu;
        let shape = (batch.len(), width);
        let ids = Tensor::from_vec(ids, shape, &device)?;
        let mask = Tensor::from_vec(mask, shape, &device)?;
        let types = ids.zeros_like()?;
        let hidden = match &self.encoder {
            Encoder::Bert(m) => m.forward(&ids, &types, Some(&mask))?,
            Encoder::Roberta(m) => m.forward(&ids, &mask, &types, None, None, None)?,
        };
        let pooled = match self.pooling {
            Pooling::First => hidden.get_on_dim(1, 0)?,
            Pooling::Mean => {
                let weights = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                let summed = hidden.broadcast_mul(&weights)?.sum(1)?;
                let counts = weights.sum(1)?.clamp(1e-9, f64::MAX)?;
                summed.broadcast_div(&counts)?
            }
        };
        let norms = pooled
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12, f64::MAX)?;
        pooled
            .broadcast_div(&norms)?
            .to_dtype(DType::F32)?
            .to_vec2::<f32>()
    }

    fn run_error(&self, detail: String) -> Error {
        Error::Run {
            name: self.identity(),
            detail,
        }
    }
}

/// The pooling `1_Pooling/config.json` names; the mean where the folder has
/// none (a bare encoder, as sentence-transformers itself pools one).
fn pooling(dir: &Path) -> Result<Pooling, Error> {
    let path = dir.join("1_Pooling/config.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(Pooling::Mean);
    };
    let json: Value = serde_json::from_str(&text).map_err(|e| Error::Invalid {
        path: path.clone(),
        detail: format!("not JSON: {e}"),
    })?;
    let on = |key: &str| json.get(key).and_then(Value::as_bool).unwrap_or(false);
    match (on("pooling_mode_mean_tokens"), on("pooling_mode_cls_token")) {
        (true, false) => Ok(Pooling::Mean),
        (false, true) => Ok(Pooling::First),
        _ => Err(Error::Unsupported {
            dir: dir.to_owned(),
            detail: format!(
                "{}: assay pools by the mean of the tokens or the first token, one of them",
                path.display()
            ),
        }),
    }
}

/// Tokens per text: sentence-transformers' `max_seq_length`, else the
/// model's positions, at most 512.
fn max_tokens(dir: &Path, config: &ModelConfig) -> usize {
    std::fs::read_to_string(dir.join("sentence_bert_config.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|j| j.get("max_seq_length").and_then(Value::as_u64))
        .map_or_else(|| config.max_tokens(), |n| n as usize)
        .min(512)
}
