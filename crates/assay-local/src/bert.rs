//! The local embedder: a BERT encoder (all-MiniLM-L6-v2) in plain Rust.
//!
//! The forward pass is small enough to write out: embeddings, then per
//! layer self-attention and a GELU feed-forward block, each followed by a
//! residual LayerNorm. The texts of a batch are concatenated along the
//! token axis for every dense layer (one large matrix product, no padding)
//! and only attention is computed per text.

use std::path::Path;

use assay_llm::ModelIdentity;
use safetensors::{Dtype, SafeTensors};
use serde_json::Value;

use crate::fingerprint::{dir_identity, file_name};
use crate::spec::{require, KnownEmbedder, LocalSpec};
use crate::wordpiece::WordPiece;
use crate::Error;

/// Maximum tokens per text, `[CLS]` and `[SEP]` included (sentence-transformers'
/// `max_seq_length` for this model).
const MAX_TOKENS: usize = 256;

/// Texts per forward pass.
const BATCH: usize = 32;

/// The files that make the model: all it reads, and all its identity hashes.
const FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

struct Linear {
    /// `[out, in]`, row-major (the PyTorch layout).
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

struct LayerNorm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    up: Linear,
    down: Linear,
    out_norm: LayerNorm,
}

struct Config {
    hidden: usize,
    heads: usize,
    eps: f32,
    max_positions: usize,
}

/// all-MiniLM-L6-v2 (or another BERT checkpoint in the same layout) with
/// mean pooling and L2 normalisation, as sentence-transformers computes it.
pub struct LocalEmbedder {
    identity: ModelIdentity,
    tokenizer: WordPiece,
    config: Config,
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
    /// Threads one call computes on: the call's texts are split among
    /// them, each part in its own forward passes.
    threads: usize,
}

impl LocalEmbedder {
    /// Loads the embedder a spec names: `local` is all-MiniLM-L6-v2.
    pub fn from_spec(spec: &LocalSpec) -> Result<Self, Error> {
        match spec {
            LocalSpec::Default | LocalSpec::Embedder(KnownEmbedder::AllMiniLmL6V2) => {
                let dir = KnownEmbedder::AllMiniLmL6V2.path();
                Self::load(&dir, KnownEmbedder::AllMiniLmL6V2.as_str())
            }
            LocalSpec::File(p) => Self::load(p, &file_name(p)),
            LocalSpec::Judge(j) => Err(Error::Spec {
                spec: spec.to_string(),
                detail: format!("{} is a chat model, not an embedder", j.as_str()),
            }),
        }
    }

    /// Loads `model.safetensors`, `tokenizer.json` and `config.json` from `dir`.
    pub fn load(dir: &Path, name: &str) -> Result<Self, Error> {
        let what = format!("local embedder {name}");
        let files = FILES.map(|f| dir.join(f));
        for f in &files {
            require(f, &what)?;
        }
        let [weights_path, tokenizer_path, config_path] = files;
        let read_json = |path: &Path| -> Result<Value, Error> {
            let invalid = |detail: String| Error::ModelInvalid {
                path: path.to_owned(),
                detail,
            };
            let bytes = std::fs::read(path).map_err(|e| invalid(e.to_string()))?;
            serde_json::from_slice(&bytes).map_err(|e| invalid(format!("not JSON: {e}")))
        };
        let config_json = read_json(&config_path)?;
        let cfg_invalid = |detail: &str| Error::ModelInvalid {
            path: config_path.clone(),
            detail: detail.to_owned(),
        };
        let get = |key: &str| {
            config_json
                .get(key)
                .and_then(Value::as_u64)
                .map(|v| v as usize)
                .ok_or_else(|| cfg_invalid(&format!("`{key}` missing")))
        };
        if config_json.get("hidden_act").and_then(Value::as_str) != Some("gelu") {
            return Err(cfg_invalid("only `hidden_act: gelu` is supported"));
        }
        let config = Config {
            hidden: get("hidden_size")?,
            heads: get("num_attention_heads")?,
            eps: config_json
                .get("layer_norm_eps")
                .and_then(Value::as_f64)
                .unwrap_or(1e-12) as f32,
            max_positions: get("max_position_embeddings")?,
        };
        let n_layers = get("num_hidden_layers")?;
        let intermediate = get("intermediate_size")?;
        if config.heads == 0 || !config.hidden.is_multiple_of(config.heads) {
            return Err(cfg_invalid(
                "hidden_size is not a multiple of num_attention_heads",
            ));
        }

        let tokenizer =
            WordPiece::from_tokenizer_json(&read_json(&tokenizer_path)?).map_err(|detail| {
                Error::ModelInvalid {
                    path: tokenizer_path.clone(),
                    detail,
                }
            })?;

        let bytes = std::fs::read(&weights_path).map_err(|e| Error::ModelInvalid {
            path: weights_path.clone(),
            detail: e.to_string(),
        })?;
        let w = Weights {
            path: &weights_path,
            st: SafeTensors::deserialize(&bytes).map_err(|e| Error::ModelInvalid {
                path: weights_path.clone(),
                detail: format!("not a valid safetensors file: {e}"),
            })?,
        };
        let h = config.hidden;
        let vocab = w.tensor("embeddings.word_embeddings.weight", None)?;
        if vocab.len() % h != 0 {
            return Err(w.invalid("word embeddings are not a multiple of hidden_size"));
        }
        let word = vocab;
        let position = w.tensor(
            "embeddings.position_embeddings.weight",
            Some(config.max_positions * h),
        )?;
        let token_type = w.tensor("embeddings.token_type_embeddings.weight", None)?;
        if token_type.len() < h {
            return Err(w.invalid("token type embeddings are too small"));
        }
        let embed_norm = w.norm("embeddings.LayerNorm", h)?;
        let mut layers = Vec::with_capacity(n_layers);
        for i in 0..n_layers {
            let p = format!("encoder.layer.{i}");
            layers.push(Layer {
                query: w.linear(&format!("{p}.attention.self.query"), h, h)?,
                key: w.linear(&format!("{p}.attention.self.key"), h, h)?,
                value: w.linear(&format!("{p}.attention.self.value"), h, h)?,
                attn_out: w.linear(&format!("{p}.attention.output.dense"), h, h)?,
                attn_norm: w.norm(&format!("{p}.attention.output.LayerNorm"), h)?,
                up: w.linear(&format!("{p}.intermediate.dense"), h, intermediate)?,
                down: w.linear(&format!("{p}.output.dense"), intermediate, h)?,
                out_norm: w.norm(&format!("{p}.output.LayerNorm"), h)?,
            });
        }
        let identity = ModelIdentity {
            provider: "local".into(),
            endpoint: dir_identity(dir, &FILES).map_err(|e| Error::ModelInvalid {
                path: dir.to_owned(),
                detail: format!("cannot hash it: {e}"),
            })?,
            model: name.to_owned(),
            settings: format!(
                "engine=assay-bert;pooling=mean;normalize=l2;max_tokens={MAX_TOKENS}"
            ),
        };
        Ok(LocalEmbedder {
            identity,
            tokenizer,
            config,
            word,
            position,
            token_type,
            embed_norm,
            layers,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        })
    }

    /// The embedder computing on `threads` threads (at least 1; default:
    /// every core). An embedding does not depend on the count: each text
    /// is encoded on its own (nothing is padded), and a matrix product's
    /// sums run in the same order whatever the rows beside them.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// The token ids the model reads for `text` (`[CLS] ... [SEP]`,
    /// truncated to 256).
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer
            .encode(text, MAX_TOKENS.min(self.config.max_positions))
    }

    /// Provider `local`, the folder's name with the SHA-256 of the files
    /// that make the model (never its path, so the identity is the same on
    /// every machine), and the model's name.
    pub fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    /// Unit-length embeddings of `texts`, in order, with the token count.
    /// The texts are split into one contiguous part per thread, each
    /// encoded in batches of 32.
    pub fn embed_blocking(&self, texts: &[String]) -> Result<(Vec<Vec<f32>>, u64), Error> {
        let max_len = MAX_TOKENS.min(self.config.max_positions);
        let ids: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| self.tokenizer.encode(t, max_len))
            .collect();
        let tokens = ids.iter().map(|i| i.len() as u64).sum::<u64>();
        let part = ids
            .len()
            .div_ceil(self.threads.min(ids.len()).max(1))
            .max(1);
        let encode = |seqs: &[Vec<u32>]| -> Result<Vec<Vec<f32>>, Error> {
            let mut out = Vec::with_capacity(seqs.len());
            for batch in seqs.chunks(BATCH) {
                for v in self.forward(batch)? {
                    out.push(assay_llm::normalize(v).map_err(|e| Error::Engine(e.to_string()))?);
                }
            }
            Ok(out)
        };
        let parts: Vec<Result<Vec<Vec<f32>>, Error>> = if ids.len() <= part {
            vec![encode(&ids)]
        } else {
            std::thread::scope(|scope| {
                let running: Vec<_> = ids
                    .chunks(part)
                    .map(|seqs| scope.spawn(move || encode(seqs)))
                    .collect();
                running
                    .into_iter()
                    .map(|t| {
                        t.join().unwrap_or_else(|_| {
                            Err(Error::Engine("an embedding thread panicked".into()))
                        })
                    })
                    .collect()
            })
        };
        let mut vectors = Vec::with_capacity(texts.len());
        for p in parts {
            vectors.extend(p?);
        }
        Ok((vectors, tokens))
    }

    /// Mean-pooled (not yet normalised) outputs for token id sequences.
    fn forward(&self, seqs: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, Error> {
        let h = self.config.hidden;
        let total: usize = seqs.iter().map(Vec::len).sum();
        let mut x = vec![0f32; total * h];
        let mut row = 0;
        for seq in seqs {
            for (pos, &id) in seq.iter().enumerate() {
                let id = id as usize;
                let w = self.word.get(id * h..(id + 1) * h).ok_or_else(|| {
                    Error::Engine(format!("token id {id} outside the vocabulary"))
                })?;
                let p = &self.position[pos * h..(pos + 1) * h];
                let out = &mut x[row * h..(row + 1) * h];
                for i in 0..h {
                    out[i] = w[i] + p[i] + self.token_type[i];
                }
                row += 1;
            }
        }
        layer_norm(&mut x, &self.embed_norm, self.config.eps);

        let lens: Vec<usize> = seqs.iter().map(Vec::len).collect();
        let mut q = Vec::new();
        let mut k = Vec::new();
        let mut v = Vec::new();
        let mut ctx = vec![0f32; total * h];
        let mut tmp = Vec::new();
        let mut up = Vec::new();
        for layer in &self.layers {
            layer.query.apply(&x, total, &mut q);
            layer.key.apply(&x, total, &mut k);
            layer.value.apply(&x, total, &mut v);
            self.attention(&q, &k, &v, &lens, &mut ctx);
            layer.attn_out.apply(&ctx, total, &mut tmp);
            add_in_place(&mut x, &tmp);
            layer_norm(&mut x, &layer.attn_norm, self.config.eps);
            layer.up.apply(&x, total, &mut up);
            up.iter_mut().for_each(|u| *u = gelu(*u));
            layer.down.apply(&up, total, &mut tmp);
            add_in_place(&mut x, &tmp);
            layer_norm(&mut x, &layer.out_norm, self.config.eps);
        }

        let mut pooled = Vec::with_capacity(seqs.len());
        let mut start = 0;
        for &len in &lens {
            let mut mean = vec![0f32; h];
            for r in start..start + len {
                for (m, xv) in mean.iter_mut().zip(&x[r * h..(r + 1) * h]) {
                    *m += xv;
                }
            }
            let n = len.max(1) as f32;
            mean.iter_mut().for_each(|m| *m /= n);
            pooled.push(mean);
            start += len;
        }
        Ok(pooled)
    }

    /// Multi-head self-attention of each text on its own (no mask needed:
    /// nothing is padded).
    fn attention(&self, q: &[f32], k: &[f32], v: &[f32], lens: &[usize], out: &mut [f32]) {
        let h = self.config.hidden;
        let d = h / self.config.heads;
        let scale = 1.0 / (d as f32).sqrt();
        let mut scores = Vec::new();
        let mut start = 0;
        for &len in lens {
            scores.resize(len * len, 0.0);
            for head in 0..self.config.heads {
                let off = start * h + head * d;
                // scores = Q_h K_h^T * scale   ([len, d] x [d, len])
                // SAFETY: the strides describe sub-matrices inside q, k and
                // scores, whose lengths cover `len` rows of `h` columns.
                unsafe {
                    matrixmultiply::sgemm(
                        len,
                        d,
                        len,
                        scale,
                        q.as_ptr().add(off),
                        h as isize,
                        1,
                        k.as_ptr().add(off),
                        1,
                        h as isize,
                        0.0,
                        scores.as_mut_ptr(),
                        len as isize,
                        1,
                    );
                }
                for r in scores.chunks_mut(len) {
                    softmax(r);
                }
                // out_h = scores V_h   ([len, len] x [len, d])
                // SAFETY: as above, for v and out.
                unsafe {
                    matrixmultiply::sgemm(
                        len,
                        len,
                        d,
                        1.0,
                        scores.as_ptr(),
                        len as isize,
                        1,
                        v.as_ptr().add(off),
                        h as isize,
                        1,
                        0.0,
                        out.as_mut_ptr().add(off),
                        h as isize,
                        1,
                    );
                }
            }
            start += len;
        }
    }
}

impl Linear {
    /// `out = x W^T + b` for `rows` rows of `x`.
    fn apply(&self, x: &[f32], rows: usize, out: &mut Vec<f32>) {
        out.clear();
        out.resize(rows * self.outputs, 0.0);
        for r in out.chunks_mut(self.outputs) {
            r.copy_from_slice(&self.bias);
        }
        debug_assert!(x.len() >= rows * self.inputs);
        // SAFETY: x holds `rows` rows of `inputs` values, the weight is
        // `[outputs, inputs]` read transposed, and out holds `rows` rows of
        // `outputs` values.
        unsafe {
            matrixmultiply::sgemm(
                rows,
                self.inputs,
                self.outputs,
                1.0,
                x.as_ptr(),
                self.inputs as isize,
                1,
                self.weight.as_ptr(),
                1,
                self.inputs as isize,
                1.0,
                out.as_mut_ptr(),
                self.outputs as isize,
                1,
            );
        }
    }
}

struct Weights<'a> {
    path: &'a Path,
    st: SafeTensors<'a>,
}

impl Weights<'_> {
    fn invalid(&self, detail: &str) -> Error {
        Error::ModelInvalid {
            path: self.path.to_owned(),
            detail: detail.to_owned(),
        }
    }

    /// An f32 tensor, optionally of an exact element count.
    fn tensor(&self, name: &str, len: Option<usize>) -> Result<Vec<f32>, Error> {
        let t = self
            .st
            .tensor(name)
            .map_err(|e| self.invalid(&format!("tensor {name}: {e}")))?;
        if t.dtype() != Dtype::F32 {
            return Err(self.invalid(&format!("tensor {name} is {:?}, expected F32", t.dtype())));
        }
        let values: Vec<f32> = t
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if let Some(n) = len {
            if values.len() != n {
                return Err(self.invalid(&format!(
                    "tensor {name} has {} values, expected {n}",
                    values.len()
                )));
            }
        }
        Ok(values)
    }

    fn linear(&self, prefix: &str, inputs: usize, outputs: usize) -> Result<Linear, Error> {
        Ok(Linear {
            weight: self.tensor(&format!("{prefix}.weight"), Some(inputs * outputs))?,
            bias: self.tensor(&format!("{prefix}.bias"), Some(outputs))?,
            inputs,
            outputs,
        })
    }

    fn norm(&self, prefix: &str, h: usize) -> Result<LayerNorm, Error> {
        Ok(LayerNorm {
            weight: self.tensor(&format!("{prefix}.weight"), Some(h))?,
            bias: self.tensor(&format!("{prefix}.bias"), Some(h))?,
        })
    }
}

fn add_in_place(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

fn layer_norm(x: &mut [f32], norm: &LayerNorm, eps: f32) {
    let h = norm.weight.len();
    for row in x.chunks_mut(h) {
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, w), b) in row.iter_mut().zip(&norm.weight).zip(&norm.bias) {
            *v = (*v - mean) * inv * w + b;
        }
    }
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    for v in row.iter_mut() {
        *v /= sum;
    }
}

/// The exact (erf) GELU that BERT uses.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

/// erf to about 1e-7 (Abramowitz and Stegun 7.1.26 is too coarse for a
/// 1e-4 cosine check after six layers, so this uses the complementary-error
/// Chebyshev fit of Numerical Recipes, `erfcc`).
fn erf(x: f32) -> f32 {
    let z = f64::from(x).abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    let r = 1.0 - erfc;
    (if x >= 0.0 { r } else { -r }) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (-2.0, -0.995_322_3),
            (3.5, 0.999_999_3),
        ] {
            assert!((erf(x) - want).abs() < 2e-7, "erf({x}) = {}", erf(x));
        }
    }

    #[test]
    fn softmax_and_layer_norm_are_normalised() {
        let mut r = vec![1.0, 2.0, 3.0];
        softmax(&mut r);
        assert!((r.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        let norm = LayerNorm {
            weight: vec![1.0; 4],
            bias: vec![0.0; 4],
        };
        let mut x = vec![1.0, 2.0, 3.0, 4.0];
        layer_norm(&mut x, &norm, 1e-12);
        assert!(x.iter().sum::<f32>().abs() < 1e-5);
        assert!((x.iter().map(|v| v * v).sum::<f32>() / 4.0 - 1.0).abs() < 1e-4);
    }
}
