//! Each family's network with its classification head, as candle
//! implements it (BERT's pooler and classifier, and HHEM's head on T5's
//! encoder, are written here: candle has the encoders only).

use crate::config::{tensor_shapes, Architecture, ModelConfig};
use candle_core::{Module, Result, Tensor};
use candle_nn::{linear, Activation, Linear, VarBuilder};
use candle_transformers::models::t5::{self, ActivationWithOptionalGating};
use candle_transformers::models::{bert, debertav2, modernbert, xlm_roberta};
use serde_json::{Map, Value};
use std::path::PathBuf;

pub(crate) enum Network {
    Bert {
        encoder: bert::BertModel,
        pooler: Linear,
        classifier: Linear,
    },
    Roberta(xlm_roberta::XLMRobertaForSequenceClassification),
    DebertaV2 {
        model: Box<debertav2::DebertaV2SeqClassificationModel>,
        token_types: bool,
    },
    ModernBert(modernbert::ModernBertForSequenceClassification),
    Hhem {
        encoder: t5::T5EncoderModel,
        classifier: Linear,
    },
    MiniCheckT5(t5::T5ForConditionalGeneration),
}

/// MiniCheck-Flan-T5's label tokens in T5's vocabulary: `▁` (3) for
/// unsupported and `1` (209) for supported, the first token decoded.
const MINICHECK_LABEL_TOKENS: [u32; 2] = [3, 209];

fn parse<T: serde::de::DeserializeOwned>(config: &ModelConfig) -> Result<T> {
    serde_json::from_value(config.for_candle())
        .map_err(|e| candle_core::Error::Msg(format!("config.json: {e}")))
}

impl Network {
    pub fn load(config: &ModelConfig, vb: VarBuilder, weights: &[PathBuf]) -> Result<Network> {
        let labels = config.label_count();
        Ok(match config.architecture {
            Architecture::Bert => {
                let c: bert::Config = parse(config)?;
                let hidden = c.hidden_size;
                let encoder = bert::BertModel::load(vb.pp("bert"), &c)?;
                Network::Bert {
                    encoder,
                    pooler: linear(hidden, hidden, vb.pp("bert.pooler.dense"))?,
                    classifier: linear(hidden, labels, vb.pp("classifier"))?,
                }
            }
            Architecture::Roberta => {
                let c: xlm_roberta::Config = parse(config)?;
                Network::Roberta(xlm_roberta::XLMRobertaForSequenceClassification::new(
                    labels, &c, vb,
                )?)
            }
            Architecture::DebertaV2 => {
                let c: debertav2::Config = parse(config)?;
                let token_types = c.type_vocab_size > 0;
                // The encoder is under `deberta.`; candle reads the pooler
                // and classifier from the root.
                let model = Box::new(debertav2::DebertaV2SeqClassificationModel::load(
                    vb.pp("deberta"),
                    &c,
                    None,
                )?);
                Network::DebertaV2 { model, token_types }
            }
            Architecture::ModernBert => {
                let c: modernbert::Config = parse(config)?;
                Network::ModernBert(modernbert::ModernBertForSequenceClassification::load(
                    vb, &c,
                )?)
            }
            Architecture::Hhem => {
                if weights
                    .iter()
                    .any(|w| w.extension().is_none_or(|e| e != "safetensors"))
                {
                    return Err(candle_core::Error::Msg(
                        "HHEM's dimensions are read from model.safetensors, which the folder lacks"
                            .into(),
                    ));
                }
                let shapes =
                    tensor_shapes(weights).map_err(|e| candle_core::Error::Msg(e.to_string()))?;
                let c = t5_config(config, &shapes)?;
                let vb = vb.pp("t5");
                Network::Hhem {
                    encoder: t5::T5EncoderModel::load(vb.pp("transformer"), &c)?,
                    classifier: linear(c.d_model, labels, vb.pp("classifier"))?,
                }
            }
            Architecture::MiniCheckT5 => {
                let c: t5::Config = parse(config)?;
                // candle scales tied T5 outputs unlike transformers; flan-t5
                // (MiniCheck's base) ties none.
                if c.tie_word_embeddings {
                    return Err(candle_core::Error::Msg(
                        "a T5 with tied word embeddings is not MiniCheck-Flan-T5".into(),
                    ));
                }
                if MINICHECK_LABEL_TOKENS
                    .iter()
                    .any(|&t| t as usize >= c.vocab_size)
                {
                    return Err(candle_core::Error::Msg(
                        "the vocabulary lacks MiniCheck's label tokens".into(),
                    ));
                }
                Network::MiniCheckT5(t5::T5ForConditionalGeneration::load(vb, &c)?)
            }
        })
    }

    /// Logits `[batch, labels]` for ids, attention mask and token types,
    /// each `[batch, tokens]` of u32.
    pub fn forward(&self, ids: &Tensor, mask: &Tensor, types: &Tensor) -> Result<Tensor> {
        match self {
            Network::Bert {
                encoder,
                pooler,
                classifier,
            } => {
                let hidden = encoder.forward(ids, types, Some(mask))?;
                let first = hidden.get_on_dim(1, 0)?.contiguous()?;
                classifier.forward(&pooler.forward(&first)?.tanh()?)
            }
            Network::Roberta(model) => model.forward(ids, mask, &types.zeros_like()?),
            Network::DebertaV2 { model, token_types } => {
                let types = token_types.then(|| types.clone());
                model.forward(ids, types, Some(mask.clone()))
            }
            // candle's head ends in a softmax: its logarithm is the logits
            // less their log-sum-exp, the same distribution.
            Network::ModernBert(model) => model.forward(ids, mask)?.log(),
            Network::Hhem {
                encoder,
                classifier,
            } => each_alone(ids, mask, |ids| {
                let hidden = encoder.clone().forward(ids)?;
                classifier.forward(&hidden.get_on_dim(1, 0)?)
            }),
            Network::MiniCheckT5(model) => {
                let labels = Tensor::new(&MINICHECK_LABEL_TOKENS, ids.device())?;
                each_alone(ids, mask, |ids| {
                    let start = Tensor::zeros((1, 1), candle_core::DType::U32, ids.device())?;
                    // A fresh copy: the decoder keeps its cache in itself.
                    let logits = model.clone().forward(ids, &start)?;
                    logits.index_select(&labels, 1)
                })
            }
        }
    }
}

/// `row` of each text of the batch, read alone and unpadded: candle's T5
/// takes no attention mask.
fn each_alone(
    ids: &Tensor,
    mask: &Tensor,
    row: impl Fn(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    let lengths = mask.sum(1)?.to_vec1::<u32>()?;
    let rows = lengths
        .iter()
        .enumerate()
        .map(|(i, &n)| row(&ids.get(i)?.narrow(0, 0, n as usize)?.unsqueeze(0)?))
        .collect::<Result<Vec<_>>>()?;
    Tensor::cat(&rows, 0)
}

/// candle's configuration of HHEM's T5 encoder, read from the shapes of
/// its weights: HHEM's config.json names only the model it was tuned from
/// (flan-t5-base), whose dimensions the weights carry.
fn t5_config(config: &ModelConfig, shapes: &Map<String, Value>) -> Result<t5::Config> {
    let dims = |name: &str| -> Option<Vec<usize>> {
        shapes
            .get(&format!("t5.transformer.{name}"))?
            .as_array()?
            .iter()
            .map(|d| d.as_u64().map(|d| d as usize))
            .collect()
    };
    let need = |name: &str| {
        dims(name)
            .filter(|d| d.len() == 2)
            .ok_or_else(|| candle_core::Error::Msg(format!("no 2-d tensor t5.transformer.{name}")))
    };
    let attention = "encoder.block.0.layer.0.SelfAttention";
    let embeddings = need("shared.weight").or_else(|_| need("encoder.embed_tokens.weight"))?;
    let bias = need(&format!("{attention}.relative_attention_bias.weight"))?;
    let query = need(&format!("{attention}.q.weight"))?;
    let gated = dims("encoder.block.0.layer.1.DenseReluDense.wi_0.weight").is_some();
    let ff = if gated {
        need("encoder.block.0.layer.1.DenseReluDense.wi_0.weight")?
    } else {
        need("encoder.block.0.layer.1.DenseReluDense.wi.weight")?
    };
    let layers = (0..)
        .take_while(|i| {
            dims(&format!("encoder.block.{i}.layer.0.SelfAttention.q.weight")).is_some()
        })
        .count();
    let number = |key: &str, default: f64| {
        config
            .json
            .get(key)
            .and_then(Value::as_f64)
            .unwrap_or(default)
    };
    let heads = bias[1];
    Ok(t5::Config {
        vocab_size: embeddings[0],
        d_model: embeddings[1],
        d_kv: query[0] / heads.max(1),
        d_ff: ff[0],
        num_layers: layers,
        num_decoder_layers: None,
        num_heads: heads,
        relative_attention_num_buckets: bias[0],
        relative_attention_max_distance: number("relative_attention_max_distance", 128.0) as usize,
        dropout_rate: 0.0,
        layer_norm_epsilon: number("layer_norm_epsilon", 1e-6),
        initializer_factor: 1.0,
        // T5's gated feed-forward is flan-t5's gated-gelu (gelu_new).
        feed_forward_proj: ActivationWithOptionalGating {
            gated,
            activation: if gated {
                Activation::NewGelu
            } else {
                Activation::Relu
            },
        },
        tie_word_embeddings: true,
        is_decoder: false,
        is_encoder_decoder: true,
        use_cache: false,
        pad_token_id: config.pad_token_id as usize,
        eos_token_id: 1,
        decoder_start_token_id: Some(0),
    })
}
