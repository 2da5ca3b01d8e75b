//! `config.json` read once: which network, its labels and limits, and the
//! configuration candle's implementation of it takes.

use crate::Error;
use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use serde_json::{Map, Value};
use std::fmt;
use std::path::{Path, PathBuf};

/// The encoder families a grounding model may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Architecture {
    /// BERT (cross-encoder/nli-MiniLM*, ms-marco cross-encoders).
    Bert,
    /// RoBERTa and XLM-RoBERTa (MiniCheck-RoBERTa-L, cross-encoder/nli-roberta-*).
    Roberta,
    /// DeBERTa-v2 and v3 (MiniCheck-DeBERTa-v3-L, MoritzLaurer's NLI models).
    DebertaV2,
    /// ModernBERT.
    ModernBert,
    /// Vectara's HHEM-2.1-open: a T5 encoder whose first token's two
    /// logits say hallucinated or consistent, reading the pair through
    /// its prompt.
    Hhem,
    /// MiniCheck-Flan-T5: a T5 text-to-text model whose first decoded
    /// token's logits at MiniCheck's two label tokens say unsupported or
    /// supported.
    MiniCheckT5,
}

impl Architecture {
    /// `model_type` values of each family.
    const TYPES: [(&'static str, Architecture); 7] = [
        ("bert", Architecture::Bert),
        ("roberta", Architecture::Roberta),
        ("xlm-roberta", Architecture::Roberta),
        ("deberta-v2", Architecture::DebertaV2),
        ("modernbert", Architecture::ModernBert),
        ("HHEMv2", Architecture::Hhem),
        ("t5", Architecture::MiniCheckT5),
    ];

    fn of(model_type: &str) -> Option<Architecture> {
        Self::TYPES
            .iter()
            .find(|(t, _)| *t == model_type)
            .map(|(_, a)| *a)
    }
}

impl fmt::Display for Architecture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Architecture::Bert => "bert",
            Architecture::Roberta => "roberta",
            Architecture::DebertaV2 => "deberta-v2",
            Architecture::ModernBert => "modernbert",
            Architecture::Hhem => "hhem-v2",
            Architecture::MiniCheckT5 => "minicheck-t5",
        })
    }
}

/// HHEM-2.1-open's prompt (`HHEMv2Config.prompt`).
const HHEM_PROMPT: &str = "<pad> Determine if the hypothesis is true given the premise?\n\nPremise: {text1}\n\nHypothesis: {text2}";

/// MiniCheck-Flan-T5's input: `predict: ` then the document and the claim
/// joined by the end-of-sequence token (MiniCheck's `batch_tokenize`).
const MINICHECK_T5_PROMPT: &str = "predict: {text1}</s>{text2}";

/// Label names that mean "the premise supports the hypothesis".
const SUPPORTED: [&str; 10] = [
    "entailment",
    "entailed",
    "entails",
    "supported",
    "support",
    "consistent",
    "faithful",
    "factual",
    "grounded",
    "yes",
];

/// A model's labels, by index, and the one read as supported.
#[derive(Clone, Debug, PartialEq)]
pub struct Labels {
    pub names: Vec<String>,
    pub supported: usize,
}

impl Labels {
    pub fn supported_name(&self) -> &str {
        &self.names[self.supported]
    }
}

/// What a model's config.json says that assay needs.
pub(crate) struct ModelConfig {
    pub path: PathBuf,
    pub architecture: Architecture,
    pub json: Map<String, Value>,
    pub pad_token_id: u32,
}

impl ModelConfig {
    /// A sequence classifier's (or MiniCheck-Flan-T5's) config.
    pub fn read(dir: &Path) -> Result<ModelConfig, Error> {
        Self::read_as(dir, false)
    }

    /// A sentence encoder's config: BERT or (XLM-)RoBERTa, without a head.
    pub fn read_encoder(dir: &Path) -> Result<ModelConfig, Error> {
        Self::read_as(dir, true)
    }

    fn read_as(dir: &Path, encoder: bool) -> Result<ModelConfig, Error> {
        let path = dir.join("config.json");
        if !path.is_file() {
            return Err(Error::Missing {
                dir: dir.to_owned(),
                file: "config.json".into(),
                hint: "download the whole model folder, not only its weights".into(),
            });
        }
        let invalid = |detail: String| Error::Invalid {
            path: path.clone(),
            detail,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| invalid(e.to_string()))?;
        let json: Map<String, Value> =
            serde_json::from_str(&text).map_err(|e| invalid(format!("not a JSON object: {e}")))?;
        let model_type = json
            .get("model_type")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("no model_type".into()))?;
        let known: Vec<&str> = Architecture::TYPES.iter().map(|(t, _)| *t).collect();
        let architecture = Architecture::of(model_type).ok_or_else(|| Error::Unsupported {
            dir: dir.to_owned(),
            detail: format!(
                "model_type {model_type:?} is not an architecture assay runs (it runs {})",
                known.join(", ")
            ),
        })?;
        // A T5 grounding model is MiniCheck's text-to-text one; every other
        // family is read through its sequence classification head.
        let head = match architecture {
            Architecture::MiniCheckT5 => "T5ForConditionalGeneration",
            _ => "ForSequenceClassification",
        };
        if encoder && !matches!(architecture, Architecture::Bert | Architecture::Roberta) {
            return Err(Error::Unsupported {
                dir: dir.to_owned(),
                detail: format!(
                    "an embedder is a BERT or (XLM-)RoBERTa encoder, not {architecture}"
                ),
            });
        }
        if let (false, Some(archs)) = (encoder, json.get("architectures").and_then(Value::as_array))
        {
            let heads: Vec<&str> = archs.iter().filter_map(Value::as_str).collect();
            if !heads.is_empty() && !heads.iter().any(|h| h.ends_with(head)) {
                return Err(Error::Unsupported {
                    dir: dir.to_owned(),
                    detail: format!(
                        "{} is not a sequence classifier: a grounding model scores a \
                         (context, claim) pair with a ...ForSequenceClassification head \
                         (or is MiniCheck-Flan-T5, a T5ForConditionalGeneration)",
                        heads.join(", ")
                    ),
                });
            }
        }
        let pad_token_id = json
            .get("pad_token_id")
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32;
        Ok(ModelConfig {
            path,
            architecture,
            json,
            pad_token_id,
        })
    }

    /// The label names by index, and which means supported: `named` (a
    /// name or an index) or the one `id2label` calls so.
    pub fn labels(&self, dir: &Path, named: Option<&str>) -> Result<Labels, Error> {
        let invalid = |detail: String| Error::Invalid {
            path: self.path.clone(),
            detail,
        };
        // transformers leaves out labels that are its defaults, LABEL_0 ...
        let count = self
            .json
            .get("num_labels")
            .and_then(Value::as_u64)
            .unwrap_or(2) as usize;
        let defaults: Map<String, Value> = (0..count)
            .map(|i| (i.to_string(), Value::from(format!("LABEL_{i}"))))
            .collect();
        // HHEM's config names no labels: its class 1 is consistent.
        // MiniCheck-Flan-T5's are its two label tokens, whatever the config
        // says.
        let fixed = |names: [&str; 2]| -> Map<String, Value> {
            names
                .iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), Value::from(*v)))
                .collect()
        };
        let (hhem, minicheck) = (
            fixed(["hallucinated", "consistent"]),
            fixed(["unsupported", "supported"]),
        );
        let map = match self.json.get("id2label") {
            _ if self.architecture == Architecture::MiniCheckT5 => &minicheck,
            None if self.architecture == Architecture::Hhem => &hhem,
            None => &defaults,
            Some(Value::Object(m)) => m,
            Some(_) => return Err(invalid("id2label is not an object".into())),
        };
        let mut names = vec![String::new(); map.len()];
        for (k, v) in map {
            let i: usize = k
                .parse()
                .ok()
                .filter(|i| *i < names.len())
                .ok_or_else(|| invalid(format!("id2label has the key {k:?}")))?;
            names[i] = v.as_str().unwrap_or_default().to_string();
        }
        if names.len() < 2 {
            return Err(invalid(format!(
                "{} label: a grounding model needs at least two",
                names.len()
            )));
        }
        let found = match named {
            Some(n) => names
                .iter()
                .position(|l| l.eq_ignore_ascii_case(n))
                .or_else(|| n.parse::<usize>().ok().filter(|i| *i < names.len())),
            None => names
                .iter()
                .position(|l| SUPPORTED.contains(&l.to_ascii_lowercase().as_str())),
        };
        let supported = found.ok_or_else(|| Error::Unsupported {
            dir: dir.to_owned(),
            detail: match named {
                Some(n) => format!("no label {n:?} among {names:?}"),
                None => format!(
                    "none of the labels {names:?} says supported ({}): name the one that \
                     does with --grounding-label (MiniCheck's LABEL_1, say)",
                    SUPPORTED.join(", ")
                ),
            },
        })?;
        Ok(Labels { names, supported })
    }

    /// How many labels the head has.
    pub fn label_count(&self) -> usize {
        match self.json.get("id2label").and_then(Value::as_object) {
            Some(m) => m.len(),
            None => self
                .json
                .get("num_labels")
                .and_then(Value::as_u64)
                .unwrap_or(2) as usize,
        }
    }

    /// Tokens the model can read in one pair.
    pub fn max_tokens(&self) -> usize {
        let positions = self
            .json
            .get("max_position_embeddings")
            .and_then(Value::as_u64)
            .unwrap_or(512) as usize;
        match self.architecture {
            // Positions start after the padding index.
            Architecture::Roberta => positions.saturating_sub(self.pad_token_id as usize + 1),
            _ => positions,
        }
    }

    /// The prompt a model that reads the pair as one text formats, its
    /// `{text1}` the premise and `{text2}` the hypothesis (HHEM's own,
    /// unless its config gives another).
    pub fn prompt(&self) -> Option<String> {
        match self.architecture {
            Architecture::Hhem => Some(
                self.get("prompt")
                    .and_then(Value::as_str)
                    .unwrap_or(HHEM_PROMPT)
                    .to_string(),
            ),
            Architecture::MiniCheckT5 => Some(MINICHECK_T5_PROMPT.to_string()),
            _ => None,
        }
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.json.get(key)
    }

    /// This config with the keys candle's `Config` of the family wants
    /// under the names it wants them (transformers 5 renamed some).
    pub fn for_candle(&self) -> Value {
        let mut json = self.json.clone();
        let mut default = |key: &str, value: Value| {
            json.entry(key.to_string()).or_insert(value);
        };
        match self.architecture {
            Architecture::Bert => {
                default("classifier_dropout", Value::Null);
            }
            Architecture::Roberta => {
                default("position_embedding_type", "absolute".into());
            }
            Architecture::DebertaV2 | Architecture::Hhem => {}
            Architecture::MiniCheckT5 => {
                // Keys older T5 configs leave out, at T5's values.
                default("initializer_factor", 1.0.into());
                default("dropout_rate", 0.0.into());
                default("is_encoder_decoder", true.into());
                default("decoder_start_token_id", 0.into());
            }
            Architecture::ModernBert => {
                let eps = self.get("norm_eps").cloned().unwrap_or(1e-5.into());
                default("layer_norm_eps", eps);
                let theta = |kind: &str, fallback: f64| {
                    self.get("rope_parameters")
                        .and_then(|r| r.get(kind))
                        .and_then(|r| r.get("rope_theta"))
                        .cloned()
                        .unwrap_or(fallback.into())
                };
                default("global_rope_theta", theta("full_attention", 160_000.0));
                default("local_rope_theta", theta("sliding_attention", 10_000.0));
                // candle reads label2id's ids as strings.
                if let Some(Value::Object(m)) = json.get_mut("label2id") {
                    for v in m.values_mut() {
                        if let Value::Number(n) = v {
                            *v = Value::String(n.to_string());
                        }
                    }
                }
            }
        }
        Value::Object(json)
    }
}

/// The weights as f32 on `device`.
pub(crate) fn var_builder(
    files: &[PathBuf],
    device: &Device,
) -> Result<VarBuilder<'static>, Error> {
    let invalid = |e: candle_core::Error| Error::Invalid {
        path: files[0].clone(),
        detail: e.to_string(),
    };
    if files[0].extension().is_some_and(|e| e == "bin") {
        return VarBuilder::from_pth(&files[0], DType::F32, device).map_err(invalid);
    }
    // SAFETY: the files are mapped read-only; assay never writes them, and
    // a model folder changed while a run reads it is outside what it
    // promises (the weights' hash is taken at load).
    unsafe { VarBuilder::from_mmaped_safetensors(files, DType::F32, device) }.map_err(invalid)
}

/// The shapes of the tensors in safetensors `files`, by name, read from
/// their headers.
pub(crate) fn tensor_shapes(files: &[PathBuf]) -> Result<Map<String, Value>, Error> {
    let mut shapes = Map::new();
    for path in files {
        let invalid = |detail: String| Error::Invalid {
            path: path.clone(),
            detail,
        };
        let mut file = std::fs::File::open(path).map_err(|e| invalid(e.to_string()))?;
        let mut len = [0u8; 8];
        std::io::Read::read_exact(&mut file, &mut len).map_err(|e| invalid(e.to_string()))?;
        let len = u64::from_le_bytes(len);
        if len > 100 << 20 {
            return Err(invalid(format!("a safetensors header of {len} bytes")));
        }
        let mut header = vec![0u8; len as usize];
        std::io::Read::read_exact(&mut file, &mut header).map_err(|e| invalid(e.to_string()))?;
        let header: Map<String, Value> = serde_json::from_slice(&header)
            .map_err(|e| invalid(format!("safetensors header: {e}")))?;
        for (name, entry) in header {
            if let Some(shape) = entry.get("shape") {
                shapes.insert(name, shape.clone());
            }
        }
    }
    Ok(shapes)
}
