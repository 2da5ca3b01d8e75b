//! Each family's network with its classification head, as candle
//! implements it (BERT's pooler and classifier are written here: candle
//! has the encoder only).

use crate::config::{Architecture, ModelConfig};
use candle_core::{Module, Result, Tensor};
use candle_nn::{linear, Linear, VarBuilder};
use candle_transformers::models::{bert, debertav2, modernbert, xlm_roberta};

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
}

fn parse<T: serde::de::DeserializeOwned>(config: &ModelConfig) -> Result<T> {
    serde_json::from_value(config.for_candle())
        .map_err(|e| candle_core::Error::Msg(format!("config.json: {e}")))
}

impl Network {
    pub fn load(config: &ModelConfig, vb: VarBuilder) -> Result<Network> {
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
        }
    }
}
