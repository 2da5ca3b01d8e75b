//! The local chat judge: a GGUF model run by llama.cpp, schema-constrained,
//! greedy at temperature zero and a seeded draw above it.

use std::fs::File;
use std::io::Read;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use assay_llm::{
    ChatRequest, ChatResponse, ChoicePoint, FinishReason, Message, ModelIdentity, Role, Source,
    TokenLogprob, Usage,
};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use serde_json::Value;

use crate::fingerprint::{file_identity, file_name};
use crate::grammar::{closed_choices, schema_to_grammar, value_schema_at};
use crate::spec::{require, KnownJudge, LocalSpec};
use crate::Error;

/// Bumped whenever a change here can change an answer; part of the identity
/// (and so of cache keys). 3: choice probabilities carried per JSON
/// Pointer (also for choices opened inside a token), small integer ranges
/// decoded as closed choices. 4: a JSON string that starts repeating
/// itself is closed (see [`LOOP_WINDOW`]). 5: a number's exponent has at
/// most two digits, and a `\u` escape of a surrogate comes in a pair (the
/// grammar allowed `6686E425` and a lone `\udcca`, which no JSON parser
/// reads).
const DECODER_VERSION: u32 = 5;

/// Bytes that, once a JSON string being written ends with them a second
/// time, mark a loop: a greedy decoder that repeats itself that far goes
/// on repeating until the token limit, and the answer would be lost as
/// `truncated`. The string is closed there instead, and the answer goes
/// on (a reason cut at its repeat, then the verdict).
const LOOP_WINDOW: usize = 64;

/// Whether the KV cache of the previous call is reused for the longest
/// common prompt prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrefixCaching {
    /// Reuse it (the default): a shared instruction is read once.
    #[default]
    Enabled,
    /// Read every prompt from scratch (for measurements).
    Disabled,
}

/// Settings of a [`LocalJudge`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeOptions {
    /// CPU threads for llama.cpp (default: the available parallelism).
    /// Part of the judge's identity: llama.cpp splits its sums among the
    /// threads, so another count changes probabilities in the second or
    /// third decimal (`summary_coherence` on the example: 0.3536 with 2,
    /// 0.3513 with 1, 0.3408 with 3).
    pub threads: usize,
    /// Context window in tokens (capped at the model's training context).
    pub context: u32,
    /// Completion budget when a request sets none.
    pub max_tokens: u32,
    /// KV prefix reuse between calls.
    pub prefix_caching: PrefixCaching,
    /// Prompts are read in chunks of this many tokens that start at
    /// absolute positions multiple of it (default 64). llama.cpp's results
    /// depend slightly on how tokens are grouped into batches; with fixed,
    /// aligned chunks every token is computed in the same group whether or
    /// not a prefix came from the cache, so prefix caching never changes an
    /// answer. A reused prefix is rounded down to a chunk boundary: smaller
    /// chunks reuse more. On 2 cores 64 reads prompts as fast as 256 (146
    /// tokens/s for the 0.5B judge, 70 for the 1.5B), while 32 is 13%
    /// slower; per-item calls differ only in a short tail, so the rounding
    /// is most of what each one reads.
    pub chunk: u32,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        JudgeOptions {
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            context: 8192,
            max_tokens: 1024,
            prefix_caching: PrefixCaching::Enabled,
            chunk: 64,
        }
    }
}

/// Everything one local call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalAnswer {
    /// The generated text.
    pub text: String,
    /// Why generation stopped.
    pub finish_reason: FinishReason,
    /// Prompt length in tokens.
    pub prompt_tokens: usize,
    /// Of those, how many were served from the KV cache of the previous call.
    pub reused_tokens: usize,
    /// Generated tokens.
    pub completion_tokens: usize,
    /// Closed choices met in the answer, in order.
    pub choices: Vec<ChoicePoint>,
    /// For a scored reply ([`LocalJudge::score_reply`]): each of its tokens
    /// with its log-probability; empty for a generated answer.
    pub scored: Vec<TokenLogprob>,
    /// Time spent reading the prompt tokens that were not reused.
    pub prompt_time: Duration,
    /// Time spent generating (decoding, masking, choosing).
    pub generation_time: Duration,
}

/// A GGUF chat model in-process: greedy decoding, output constrained to
/// the request's JSON Schema, prefix caching between calls.
///
/// Calls are serialised (one context, one KV cache); each call runs on the
/// calling thread, so an async caller should give it a blocking-friendly
/// thread. The CPU is the bottleneck either way.
pub struct LocalJudge {
    identity: ModelIdentity,
    // Declared before `model`: the context inside borrows the model and
    // must be dropped first.
    session: Mutex<Session>,
    pieces: Vec<Vec<u8>>,
    template: LlamaChatTemplate,
    bos: Option<LlamaToken>,
    options: JudgeOptions,
    n_ctx: usize,
    chunk: usize,
    model: Box<LlamaModel>,
}

struct Session {
    ctx: LlamaContext<'static>,
    /// The tokens whose keys and values are in the cache, in order.
    cached: Vec<LlamaToken>,
}

fn backend() -> Result<&'static LlamaBackend, Error> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let mut b = LlamaBackend::init().map_err(|e| e.to_string())?;
            // A library never prints; llama.cpp logs to stderr by default.
            b.void_logs();
            Ok(b)
        })
        .as_ref()
        .map_err(|e| Error::Engine(format!("llama.cpp backend: {e}")))
}

impl LocalJudge {
    /// Loads the judge a spec names: `local` is the default
    /// (Qwen2.5-Coder-0.5B-Instruct).
    pub fn from_spec(spec: &LocalSpec, options: JudgeOptions) -> Result<Self, Error> {
        match spec {
            LocalSpec::Default => Self::known(KnownJudge::Qwen25Coder05b, options),
            LocalSpec::Judge(j) => Self::known(*j, options),
            LocalSpec::File(p) => {
                let file = file_name(p);
                let name = Path::new(&file)
                    .file_stem()
                    .map_or_else(|| file.clone(), |s| s.to_string_lossy().into_owned());
                Self::load(p, &name, options)
            }
            LocalSpec::Embedder(e) => Err(Error::Spec {
                spec: spec.to_string(),
                detail: format!("{} is an embedder, not a chat model", e.as_str()),
            }),
        }
    }

    /// Loads one of the models of `scripts/fetch-models.sh`.
    pub fn known(model: KnownJudge, options: JudgeOptions) -> Result<Self, Error> {
        // A model not fetched by default: its name says how to get it.
        let name = if model.fetched_on_demand() {
            format!("{0} (scripts/fetch-models.sh --with {0})", model.as_str())
        } else {
            model.as_str().to_owned()
        };
        Self::load(&model.path(), &name, options)
    }

    /// Loads a GGUF chat model (llama, qwen2 or gemma family) and uses the
    /// chat template stored in it.
    pub fn load(path: &Path, name: &str, options: JudgeOptions) -> Result<Self, Error> {
        require(path, &format!("local judge model {name}"))?;
        check_gguf_header(path)?;
        let backend = backend()?;
        let invalid = |detail: String| Error::ModelInvalid {
            path: path.to_owned(),
            detail,
        };
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| invalid(format!("llama.cpp could not load it: {e}")))?;
        let model = Box::new(model);
        let template = model
            .chat_template(None)
            .map_err(|e| invalid(format!("no usable chat template: {e}")))?;
        let vocab = model.vocab();
        let pieces: Vec<Vec<u8>> = vocab
            .tokens()
            .map(|t| vocab.token_to_piece(t, false, None))
            .collect();
        let bos = vocab.should_add_bos().then(|| vocab.bos());
        let n_ctx = options.context.min(model.n_ctx_train()).max(256);
        let chunk = options.chunk.clamp(1, n_ctx) as usize;
        let threads = i32::try_from(options.threads.max(1)).unwrap_or(i32::MAX);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(chunk as u32)
            .with_n_ubatch(chunk as u32)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        // SAFETY: the context refers to the model, which lives in a Box that
        // is never moved out of or replaced, and `LocalJudge` declares the
        // session (owner of the context) before the model, so the context
        // is dropped first.
        let model_ref: &'static LlamaModel = unsafe { &*(model.as_ref() as *const LlamaModel) };
        let ctx = model_ref
            .new_context(backend, params)
            .map_err(|e| Error::Engine(format!("cannot create a context: {e}")))?;
        let identity = ModelIdentity {
            provider: "local".into(),
            endpoint: file_identity(path).map_err(|e| invalid(format!("cannot hash it: {e}")))?,
            model: name.to_owned(),
            settings: format!(
                "engine=llama.cpp;decoder=v{DECODER_VERSION};decoding=greedy-or-seeded;grammar=compact-json;n_ctx={n_ctx};chunk={chunk};threads={threads}"
            ),
        };
        Ok(LocalJudge {
            identity,
            session: Mutex::new(Session {
                ctx,
                cached: Vec::new(),
            }),
            pieces,
            template,
            bos,
            options,
            n_ctx: n_ctx as usize,
            chunk,
            model,
        })
    }

    /// Provider `local`, the model's file name and SHA-256 (never its path,
    /// so the identity is the same on every machine), its name, and the
    /// decoding settings that can change its answers (part of every cache
    /// key).
    pub fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    /// The options the judge was loaded with.
    pub fn options(&self) -> &JudgeOptions {
        &self.options
    }

    /// The prompt text the model sees for `messages` (its own chat
    /// template, with the assistant turn opened).
    pub fn render(&self, messages: &[Message]) -> Result<String, Error> {
        let chat = messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                LlamaChatMessage::new(role.into(), m.content.clone()).map_err(|e| {
                    Error::Engine(format!("message cannot be passed to llama.cpp: {e}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| Error::Engine(format!("chat template failed: {e}")))
    }

    /// Tokens of a rendered prompt, with BOS when the model wants one.
    pub fn tokenize(&self, text: &str) -> Vec<LlamaToken> {
        let vocab = self.model.vocab();
        let mut tokens = Vec::with_capacity(text.len() / 3 + 2);
        if let Some(bos) = self.bos {
            let bos_text = self.piece_text(bos, &vocab);
            if bos_text.is_empty() || !text.starts_with(&bos_text) {
                tokens.push(bos);
            }
        }
        tokens.extend(vocab.tokenize(text.as_bytes(), false, true));
        tokens
    }

    fn piece_text(&self, t: LlamaToken, vocab: &llama_cpp_2::vocab::LlamaVocab<'_>) -> String {
        String::from_utf8_lossy(&vocab.token_to_piece(t, true, None)).into_owned()
    }

    /// Answers a request synchronously (scores its continuation, when it
    /// has one); the trait method wraps this.
    pub fn answer(&self, request: &ChatRequest) -> Result<LocalAnswer, Error> {
        let prompt = self.render(&request.messages)?;
        let tokens = self.tokenize(&prompt);
        match &request.continuation {
            Some(reply) => self.score_reply(&tokens, reply),
            None => self.answer_tokens(&tokens, request),
        }
    }

    /// Answers from prompt tokens given directly (the request's messages
    /// are ignored; its schema, budget and stop sequences apply). For
    /// callers that render prompts themselves, and for benchmarks.
    pub fn answer_tokens(
        &self,
        prompt: &[LlamaToken],
        request: &ChatRequest,
    ) -> Result<LocalAnswer, Error> {
        if prompt.is_empty() {
            return Err(Error::Engine("empty prompt".into()));
        }
        if prompt.len() >= self.n_ctx {
            return Err(Error::PromptTooLong {
                tokens: prompt.len(),
                limit: self.n_ctx,
            });
        }
        let schema = request.schema.as_ref();
        let grammar = match schema {
            Some(s) => {
                let g = schema_to_grammar(s)?;
                Some(
                    LlamaSampler::grammar(&self.model, g.as_str(), crate::grammar::Grammar::ROOT)
                        .map_err(|e| Error::Schema(format!("llama.cpp refused the grammar: {e}")))?,
                )
            }
            None => None,
        };
        let budget = request
            .sampling
            .max_tokens
            .unwrap_or(self.options.max_tokens) as usize;
        let budget = budget.min(self.n_ctx - prompt.len());

        // At least one prompt token is decoded, for the logits of the first
        // generated token.
        let (mut guard, reused) = self.session_for(prompt, prompt.len() - 1)?;
        let session = &mut *guard;
        let decoder = Decoder::new(
            grammar,
            seeded_sampler(&request.sampling),
            schema,
            &self.pieces,
        );
        let result = self.run(
            session,
            prompt,
            reused,
            budget,
            decoder,
            &request.sampling.stop,
        );
        if result.is_err() {
            // The cache may hold a partial batch: start clean next time.
            session.ctx.clear_kv_cache();
            session.cached.clear();
        }
        let run = result?;
        Ok(LocalAnswer {
            text: run.text,
            finish_reason: run.finish_reason,
            prompt_tokens: prompt.len(),
            reused_tokens: reused,
            completion_tokens: run.generated,
            choices: run.choices,
            scored: Vec::new(),
            prompt_time: run.prompt_time,
            generation_time: run.generation_time,
        })
    }

    fn run(
        &self,
        session: &mut Session,
        prompt: &[LlamaToken],
        reused: usize,
        budget: usize,
        mut decoder: Decoder<'_>,
        stops: &[String],
    ) -> Result<Run, Error> {
        let started = Instant::now();
        let engine = |e: &dyn std::fmt::Display| Error::Engine(e.to_string());
        let mut batch = LlamaBatch::new(self.chunk, 1);
        let last = prompt.len() - 1;
        self.read_tokens(
            session,
            &mut batch,
            prompt,
            reused,
            last..prompt.len(),
            |_, _| {},
        )?;

        let prompt_time = started.elapsed();
        let started = Instant::now();
        let vocab = self.model.vocab();
        let mut logit_idx = batch.n_tokens() - 1;
        let mut generated = 0usize;
        let mut finish = FinishReason::Length;
        while generated < budget {
            let token = decoder.next_token(session.ctx.get_logits_ith(logit_idx))?;
            if vocab.is_eog(token) {
                finish = FinishReason::Stop;
                break;
            }
            decoder.accept(token);
            generated += 1;
            if let Some(cut) = find_stop(&decoder.out, stops) {
                decoder.out.truncate(cut);
                finish = FinishReason::Stop;
                break;
            }
            batch.clear();
            let pos = prompt.len() + generated - 1;
            batch
                .add(token, pos as i32, &[0], true)
                .map_err(|e| engine(&e))?;
            session.ctx.decode(&mut batch).map_err(|e| engine(&e))?;
            session.cached.push(token);
            logit_idx = 0;
        }
        Ok(Run {
            text: String::from_utf8_lossy(&decoder.out).into_owned(),
            finish_reason: finish,
            generated,
            choices: decoder.choices,
            prompt_time,
            generation_time: started.elapsed(),
        })
    }
}

/// Chooses each generated token from the model's logits: greedy, or a
/// seeded draw; under the schema's grammar when there is one, following
/// each closed choice to report its probabilities and closing a JSON
/// string that loops. What it has written is `out`. Apart from the model
/// so that any logits can drive it (the tests drive it with random ones).
struct Decoder<'a> {
    grammar: Option<LlamaSampler>,
    sampler: Option<LlamaSampler>,
    schema: Option<&'a Value>,
    pieces: &'a [Vec<u8>],
    out: Vec<u8>,
    choices: Vec<ChoicePoint>,
    pending: Option<PendingChoice>,
}

impl<'a> Decoder<'a> {
    fn new(
        grammar: Option<LlamaSampler>,
        sampler: Option<LlamaSampler>,
        schema: Option<&'a Value>,
        pieces: &'a [Vec<u8>],
    ) -> Self {
        Decoder {
            // Choices are followed under the schema's grammar only.
            schema: schema.filter(|_| grammar.is_some()),
            grammar,
            sampler,
            pieces,
            out: Vec::new(),
            choices: Vec::new(),
            pending: None,
        }
    }

    /// The next token, chosen from `logits` (one per token of the
    /// vocabulary); an end-of-generation token ends the answer.
    fn next_token(&mut self, logits: &[f32]) -> Result<LlamaToken, Error> {
        if self.pending.is_none() {
            if let Some(s) = self.schema {
                let text = String::from_utf8_lossy(&self.out);
                if let Some((pointer, sub)) = value_schema_at(&text, s) {
                    if let Some(options) = closed_choices(sub) {
                        self.pending = Some(PendingChoice {
                            pointer,
                            options,
                            prefix: String::new(),
                        });
                    }
                }
            }
        }
        if let Some(g) = self.grammar.as_mut() {
            if self.pending.is_none() && repeating_string(&self.out, LOOP_WINDOW) {
                if let Some(token) = closing_quote(logits, g, self.pieces) {
                    return Ok(token);
                }
            }
        }
        Ok(match (self.grammar.as_mut(), self.sampler.as_mut()) {
            (None, None) => argmax(logits),
            (None, Some(sampler)) => sample(
                logits
                    .iter()
                    .enumerate()
                    .map(|(i, &l)| LlamaTokenData::new(LlamaToken(i as i32), l, 0.0))
                    .collect(),
                sampler,
            )?,
            (Some(g), None) if self.pending.is_none() => constrained_argmax(logits, g)?,
            (Some(g), sampler) => {
                let masked = masked_candidates(logits, g);
                let token = match sampler {
                    Some(sampler) => sample(masked.clone(), sampler)?,
                    None => argmax_data(&masked)
                        .ok_or_else(|| Error::Engine("grammar allows no token".into()))?,
                };
                if let Some(p) = self.pending.as_mut() {
                    match p.observe(&masked, token, self.pieces) {
                        Observed::Open => {}
                        Observed::Decided(done) => {
                            self.choices.push(done);
                            self.pending = None;
                        }
                        Observed::NotWritten => self.pending = None,
                    }
                }
                token
            }
        })
    }

    /// Writes `token`, as [`Decoder::next_token`] chose it (not an end of
    /// generation).
    fn accept(&mut self, token: LlamaToken) {
        if let Some(g) = self.grammar.as_mut() {
            // Only tokens the grammar allowed reach this point.
            g.accept(token);
        }
        let piece = self.pieces.get(token.0 as usize).map_or(&[][..], |p| p);
        if let (None, Some(s)) = (&self.pending, self.schema) {
            self.pending = choice_inside(&self.out, piece, s);
        }
        self.out.extend_from_slice(piece);
    }
}

impl LocalJudge {
    /// The session, locked, and how many of the first `tokens` its KV
    /// cache already holds: at most `limit`, rounded down to a chunk
    /// boundary.
    fn session_for(
        &self,
        tokens: &[LlamaToken],
        limit: usize,
    ) -> Result<(std::sync::MutexGuard<'_, Session>, usize), Error> {
        let guard = self
            .session
            .lock()
            .map_err(|_| Error::Engine("an earlier call panicked inside the engine".into()))?;
        let reused = match self.options.prefix_caching {
            PrefixCaching::Enabled => common_prefix(&guard.cached, tokens),
            PrefixCaching::Disabled => 0,
        };
        Ok((guard, reused.min(limit) / self.chunk * self.chunk))
    }

    /// Reads `tokens[from..]` into the session's KV cache (what is before
    /// `from` is kept) in chunks that start at multiples of the chunk
    /// size, and hands `each` the logits at every position of `wanted`
    /// as soon as its chunk is read. The logits of the last position read
    /// stay in the context, at the last index of `batch`.
    fn read_tokens(
        &self,
        session: &mut Session,
        batch: &mut LlamaBatch,
        tokens: &[LlamaToken],
        from: usize,
        wanted: std::ops::Range<usize>,
        mut each: impl FnMut(usize, &[f32]),
    ) -> Result<(), Error> {
        let engine = |e: &dyn std::fmt::Display| Error::Engine(e.to_string());
        session
            .ctx
            .kv_cache_seq_rm(0, Some(from as u32), None)
            .map_err(|e| engine(&e))?;
        session.cached.truncate(from);
        for (ci, chunk) in tokens[from..].chunks(self.chunk).enumerate() {
            batch.clear();
            let start = from + ci * self.chunk;
            for (i, t) in chunk.iter().enumerate() {
                let pos = start + i;
                batch
                    .add(*t, pos as i32, &[0], wanted.contains(&pos))
                    .map_err(|e| engine(&e))?;
            }
            session.ctx.decode(batch).map_err(|e| engine(&e))?;
            session.cached.extend_from_slice(chunk);
            for i in 0..chunk.len() {
                if wanted.contains(&(start + i)) {
                    each(start + i, session.ctx.get_logits_ith(i as i32));
                }
            }
        }
        Ok(())
    }

    /// The log-probability of each token of `reply` read as the model's
    /// answer to the rendered `prompt`, with the token's text (see
    /// [`assay_llm::ChatRequest::continuation`]). Nothing is generated; the
    /// prompt's prefix is reused from the previous call as for
    /// [`LocalJudge::answer_tokens`].
    pub fn score_reply(&self, prompt: &[LlamaToken], reply: &str) -> Result<LocalAnswer, Error> {
        if prompt.is_empty() {
            return Err(Error::Engine("empty prompt".into()));
        }
        let reply_tokens = self.model.vocab().tokenize(reply.as_bytes(), false, false);
        let all: Vec<LlamaToken> = prompt.iter().chain(&reply_tokens).copied().collect();
        if all.len() >= self.n_ctx {
            return Err(Error::PromptTooLong {
                tokens: all.len(),
                limit: self.n_ctx,
            });
        }
        // The logits that predict the reply's first token come from the
        // prompt's last one, which is therefore read again.
        let (mut guard, reused) = self.session_for(&all, prompt.len() - 1)?;
        let session = &mut *guard;
        let started = Instant::now();
        let mut batch = LlamaBatch::new(self.chunk, 1);
        let mut logprobs = Vec::with_capacity(reply_tokens.len());
        let read = self.read_tokens(
            session,
            &mut batch,
            &all,
            reused,
            prompt.len() - 1..all.len() - 1,
            |pos, logits| logprobs.push(log_softmax_at(logits, all[pos + 1])),
        );
        if read.is_err() {
            session.ctx.clear_kv_cache();
            session.cached.clear();
        }
        read?;
        let texts = token_texts(reply_tokens.iter().map(|t| {
            self.pieces
                .get(t.0 as usize)
                .map_or(&[][..], |p| p.as_slice())
        }));
        Ok(LocalAnswer {
            text: reply.to_owned(),
            finish_reason: FinishReason::Stop,
            prompt_tokens: all.len(),
            reused_tokens: reused,
            completion_tokens: 0,
            choices: Vec::new(),
            scored: texts
                .into_iter()
                .zip(logprobs)
                .map(|(token, logprob)| TokenLogprob {
                    token,
                    logprob,
                    top: Vec::new(),
                })
                .collect(),
            prompt_time: started.elapsed(),
            generation_time: Duration::ZERO,
        })
    }
}

/// The natural-log probability of `token` under `logits`.
fn log_softmax_at(logits: &[f32], token: LlamaToken) -> f64 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = logits.iter().map(|&l| f64::from(l - max).exp()).sum();
    let at = logits
        .get(token.0 as usize)
        .copied()
        .unwrap_or(f32::NEG_INFINITY);
    f64::from(at - max) - sum.ln()
}

/// Each token's text, such that they put together are the bytes put
/// together: a character split over several tokens is given whole to the
/// token that ends it, the others getting "".
fn token_texts<'a>(pieces: impl Iterator<Item = &'a [u8]>) -> Vec<String> {
    let mut pending: Vec<u8> = Vec::new();
    pieces
        .map(|piece| {
            pending.extend_from_slice(piece);
            match std::str::from_utf8(&pending) {
                Ok(text) => {
                    let text = text.to_owned();
                    pending.clear();
                    text
                }
                // An unfinished character: wait for the rest.
                Err(e) if e.error_len().is_none() => String::new(),
                Err(_) => String::from_utf8_lossy(&std::mem::take(&mut pending)).into_owned(),
            }
        })
        .collect()
}

/// What one generation produced.
struct Run {
    text: String,
    finish_reason: FinishReason,
    generated: usize,
    choices: Vec<ChoicePoint>,
    prompt_time: Duration,
    generation_time: Duration,
}

/// A closed choice being decoded: the options still possible and what of
/// the value has been written so far.
struct PendingChoice {
    pointer: String,
    options: Vec<String>,
    prefix: String,
}

/// What one step did to a [`PendingChoice`].
enum Observed {
    /// The chosen token leaves more than one option open.
    Open,
    /// The chosen token commits to a strict subset of the options.
    Decided(ChoicePoint),
    /// The chosen token writes none of the options: the value was not
    /// written (an array closed where its next item could have begun).
    NotWritten,
}

impl PendingChoice {
    /// Looks at one constrained step.
    fn observe(
        &mut self,
        masked: &[LlamaTokenData],
        chosen: LlamaToken,
        pieces: &[Vec<u8>],
    ) -> Observed {
        let consistent = |token: LlamaToken| -> Vec<usize> {
            let piece = pieces
                .get(token.0 as usize)
                .map(|p| String::from_utf8_lossy(p))
                .unwrap_or_default();
            let s = format!("{}{piece}", self.prefix);
            self.options
                .iter()
                .enumerate()
                .filter(|(_, o)| o.starts_with(&s) || s.starts_with(o.as_str()))
                .map(|(i, _)| i)
                .collect()
        };
        let chosen_set = consistent(chosen);
        if chosen_set.is_empty() {
            return Observed::NotWritten;
        }
        let viable: Vec<usize> = (0..self.options.len())
            .filter(|&i| self.options[i].starts_with(&self.prefix))
            .collect();
        if chosen_set.len() >= viable.len() && viable.len() > 1 {
            // Still a shared prefix (e.g. the opening quote): not decided yet.
            if let Some(p) = pieces.get(chosen.0 as usize) {
                self.prefix.push_str(&String::from_utf8_lossy(p));
            }
            return Observed::Open;
        }
        let max = masked
            .iter()
            .map(LlamaTokenData::logit)
            .fold(f32::NEG_INFINITY, f32::max);
        let mut mass = vec![0f64; self.options.len()];
        for d in masked.iter().filter(|d| d.logit().is_finite()) {
            let set = consistent(d.id());
            if set.is_empty() {
                continue;
            }
            let p = f64::from(d.logit() - max).exp() / set.len() as f64;
            for i in set {
                mass[i] += p;
            }
        }
        let total: f64 = mass.iter().sum();
        let probabilities = self
            .options
            .iter()
            .zip(&mass)
            .map(|(o, m)| (o.clone(), if total > 0.0 { m / total } else { 0.0 }))
            .collect();
        Observed::Decided(ChoicePoint {
            pointer: std::mem::take(&mut self.pointer),
            probabilities,
        })
    }
}

/// A closed choice whose value starts inside `piece`, the token about to
/// follow `before`, and that the piece leaves undecided: the choice with
/// what of its value the piece already wrote. Tokens such as `":"` end a
/// member's key and open its value at once, so the value's start falls
/// inside them. (A piece that also decides the choice leaves no step to
/// read probabilities at; such a choice goes unreported.)
fn choice_inside(before: &[u8], piece: &[u8], schema: &Value) -> Option<PendingChoice> {
    let before = String::from_utf8_lossy(before);
    let piece = String::from_utf8_lossy(piece);
    piece.char_indices().skip(1).find_map(|(k, _)| {
        let (pointer, sub) = value_schema_at(&format!("{before}{}", &piece[..k]), schema)?;
        let options = closed_choices(sub)?;
        let prefix = &piece[k..];
        let open = options.iter().filter(|o| o.starts_with(prefix)).count();
        (open > 1).then(|| PendingChoice {
            pointer,
            options,
            prefix: prefix.to_owned(),
        })
    })
}

/// The full vocabulary with the grammar's mask applied (disallowed tokens
/// get a logit of minus infinity).
fn masked_candidates(logits: &[f32], grammar: &mut LlamaSampler) -> Vec<LlamaTokenData> {
    let data: Vec<LlamaTokenData> = logits
        .iter()
        .enumerate()
        .map(|(i, &l)| LlamaTokenData::new(LlamaToken(i as i32), l, 0.0))
        .collect();
    let mut arr = LlamaTokenDataArray::new(data, false);
    arr.apply_sampler(grammar);
    arr.data
}

/// Greedy choice under the grammar. The unconstrained best token is tried
/// first: when the grammar allows it, it is also the constrained best, and
/// the (costly) mask over the whole vocabulary is skipped.
fn constrained_argmax(logits: &[f32], grammar: &mut LlamaSampler) -> Result<LlamaToken, Error> {
    let best = argmax(logits);
    let mut one = LlamaTokenDataArray::new(
        vec![LlamaTokenData::new(best, logits[best.0 as usize], 0.0)],
        false,
    );
    one.apply_sampler(grammar);
    if one.data.first().is_some_and(|d| d.logit().is_finite()) {
        return Ok(best);
    }
    argmax_data(&masked_candidates(logits, grammar))
        .ok_or_else(|| Error::Engine("grammar allows no token".into()))
}

/// The sampler of a request with a temperature above zero: llama.cpp's own
/// temperature and seeded draw, so the same seed gives the same answer.
/// `None` (greedy) at temperature zero.
fn seeded_sampler(sampling: &assay_llm::Sampling) -> Option<LlamaSampler> {
    (sampling.temperature > 0.0).then(|| {
        let seed = sampling.seed.unwrap_or(0);
        LlamaSampler::chain_simple([
            LlamaSampler::temp(sampling.temperature as f32),
            // The draw takes 32 bits: fold the seed so no half is ignored.
            LlamaSampler::dist((seed ^ (seed >> 32)) as u32),
        ])
    })
}

/// A seeded draw among candidates (disallowed ones carry a logit of minus
/// infinity and so a probability of zero).
fn sample(
    candidates: Vec<LlamaTokenData>,
    sampler: &mut LlamaSampler,
) -> Result<LlamaToken, Error> {
    let mut arr = LlamaTokenDataArray::new(candidates, false);
    arr.apply_sampler(sampler);
    arr.selected_token()
        .ok_or_else(|| Error::Engine("the sampler chose no token".into()))
}

/// Index of the largest logit; ties go to the lowest id, so decoding is
/// deterministic.
fn argmax(logits: &[f32]) -> LlamaToken {
    let mut best = 0usize;
    for (i, &l) in logits.iter().enumerate() {
        if l > logits[best] {
            best = i;
        }
    }
    LlamaToken(best as i32)
}

fn argmax_data(data: &[LlamaTokenData]) -> Option<LlamaToken> {
    let mut best: Option<&LlamaTokenData> = None;
    for d in data.iter().filter(|d| d.logit().is_finite()) {
        if best.is_none_or(|b| d.logit() > b.logit()) {
            best = Some(d);
        }
    }
    best.map(LlamaTokenData::id)
}

/// Where the content of the JSON string that `out` leaves open begins,
/// or `None` when no string is open.
fn open_string(out: &[u8]) -> Option<usize> {
    let (mut start, mut escaped) = (None, false);
    for (i, &b) in out.iter().enumerate() {
        match start {
            Some(_) if escaped => escaped = false,
            Some(_) if b == b'\\' => escaped = true,
            Some(_) if b == b'"' => start = None,
            Some(_) => {}
            None if b == b'"' => start = Some(i + 1),
            None => {}
        }
    }
    start
}

/// Whether the JSON string that `out` leaves open ends with `window` bytes
/// that it already holds before.
fn repeating_string(out: &[u8], window: usize) -> bool {
    let Some(start) = open_string(out) else {
        return false;
    };
    let text = &out[start..];
    text.len() > window && {
        let tail = &text[text.len() - window..];
        text[..text.len() - 1].windows(window).any(|w| w == tail)
    }
}

/// The likeliest token the grammar allows that closes the open string.
fn closing_quote(
    logits: &[f32],
    grammar: &mut LlamaSampler,
    pieces: &[Vec<u8>],
) -> Option<LlamaToken> {
    let closing: Vec<LlamaTokenData> = masked_candidates(logits, grammar)
        .into_iter()
        .filter(|d| {
            pieces
                .get(d.id().0 as usize)
                .is_some_and(|p| p.first() == Some(&b'"'))
        })
        .collect();
    argmax_data(&closing)
}

fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Byte offset of the first stop sequence in `out`, if any.
fn find_stop(out: &[u8], stops: &[String]) -> Option<usize> {
    stops
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| out.windows(s.len()).position(|w| w == s.as_bytes()))
        .min()
}

/// Refuses files that are not GGUF before llama.cpp sees them.
fn check_gguf_header(path: &Path) -> Result<(), Error> {
    let invalid = |detail: String| Error::ModelInvalid {
        path: path.to_owned(),
        detail,
    };
    let mut head = [0u8; 8];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .map_err(|e| invalid(format!("cannot read its header: {e}")))?;
    if &head[..4] != b"GGUF" {
        return Err(invalid("not a GGUF file".into()));
    }
    let version = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if !(2..=3).contains(&version) {
        return Err(invalid(format!("unsupported GGUF version {version}")));
    }
    Ok(())
}

/// The trait's response; `latency` is the time the call computed (its
/// wait for the engine excluded).
pub(crate) fn to_response(
    answer: LocalAnswer,
    request: &ChatRequest,
    latency: Duration,
) -> ChatResponse {
    let json = request
        .schema
        .as_ref()
        .and_then(|s| assay_llm::schema::parse_structured(&answer.text, s).ok());
    let choice_probabilities = (!answer.choices.is_empty()).then_some(answer.choices);
    ChatResponse {
        text: answer.text,
        json,
        finish_reason: answer.finish_reason,
        usage: Usage {
            prompt_tokens: answer.prompt_tokens as u64,
            completion_tokens: answer.completion_tokens as u64,
        },
        latency,
        source: Source::Upstream,
        logprobs: request.continuation.is_some().then_some(answer.scored),
        choice_probabilities,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_character_split_over_tokens_goes_whole_to_the_token_that_ends_it() {
        // "ë" is 0xC3 0xAB; "€" is 0xE2 0x82 0xAC, split over three tokens.
        let pieces: [&[u8]; 6] = [b"Bront", b"\xC3", b"\xAB!", b"\xE2", b"\x82", b"\xAC"];
        let texts = token_texts(pieces.into_iter());
        assert_eq!(texts, ["Bront", "", "ë!", "", "", "€"]);
        // A byte that can never start a character is shown, not held back.
        assert_eq!(
            token_texts([&b"a\xFF"[..], b"b"].into_iter()),
            ["a\u{FFFD}", "b"]
        );
    }

    #[test]
    fn a_string_repeating_its_own_bytes_is_a_loop() {
        assert_eq!(open_string(br#"{"reason":"ab"#), Some(11));
        assert_eq!(
            open_string(br#"{"reason":"a\"b"#),
            Some(11),
            "an escaped quote"
        );
        assert_eq!(open_string(br#"{"reason":"ab","#), None);
        let sentence = "The summary omits the final. ";
        let twice = format!(r#"{{"reason":"{}{}"#, sentence, sentence);
        // 8 bytes repeat (a 29-byte sentence twice), 30 do not yet.
        assert!(repeating_string(twice.as_bytes(), 8));
        assert!(repeating_string(twice.as_bytes(), 29));
        assert!(!repeating_string(twice.as_bytes(), 30));
        // The repeat must lie inside the open string: the same bytes in a
        // closed string before it are another item, not a loop.
        let items = format!(r#"["{}","{}"#, sentence, sentence.trim_end());
        assert!(!repeating_string(items.as_bytes(), 20));
        assert!(!repeating_string(twice.as_bytes(), 200));
    }

    #[test]
    fn a_choice_opened_inside_a_token_is_still_followed() {
        let schema = json!({
            "type": "object",
            "properties": {"reason": {"type": "string"}, "verdict": {"enum": ["yes", "no"]}}
        });
        let p = choice_inside(br#"{"reason":"fine"#, br#"","verdict":""#, &schema).unwrap();
        assert_eq!((p.pointer.as_str(), p.prefix.as_str()), ("/verdict", "\""));
        assert_eq!(p.options, ["\"yes\"", "\"no\""]);
        // A piece that writes the whole value decides it: nothing to follow.
        assert!(choice_inside(br#"{"reason":"fine"#, br#"","verdict":"no"#, &schema).is_none());
        // A piece inside a string opens no value.
        assert!(choice_inside(br#"{"reason":"#, br#""a: b"#, &schema).is_none());
    }

    /// Found by the property below: after `[`, the next value of an array
    /// of closed choices may not come (`]`); a choice was then reported
    /// at `/aa/0` for an empty array.
    #[test]
    fn an_array_closed_where_a_choice_could_begin_reports_no_choice() {
        let pieces: Vec<Vec<u8>> = vec![b"]".to_vec(), b"0".to_vec(), b"1".to_vec()];
        let masked: Vec<LlamaTokenData> = (0..3)
            .map(|i| LlamaTokenData::new(LlamaToken(i), 1.0, 0.0))
            .collect();
        let choice = || PendingChoice {
            pointer: "/aa/0".into(),
            options: vec!["0".into(), "1".into()],
            prefix: String::new(),
        };
        assert!(matches!(
            choice().observe(&masked, LlamaToken(0), &pieces),
            Observed::NotWritten
        ));
        let Observed::Decided(point) = choice().observe(&masked, LlamaToken(2), &pieces) else {
            panic!("writing 1 decides the choice");
        };
        assert_eq!(point.pointer, "/aa/0");
        assert_eq!(point.probabilities, [("0".into(), 0.5), ("1".into(), 0.5)]);
    }

    /// The decoder driven by random logits instead of a model's: under the
    /// grammar of a random schema of the shapes the prompts use, whatever
    /// it finishes parses and satisfies the schema, and each closed choice
    /// it reports is one the answer made, with probabilities summing to 1.
    mod props {
        use super::*;
        use proptest::prelude::*;

        fn config(default_cases: u32) -> ProptestConfig {
            let cases = std::env::var("PROPTEST_CASES")
                .ok()
                .and_then(|n| n.parse().ok());
            ProptestConfig::with_cases(cases.unwrap_or(default_cases))
        }

        fn judge() -> &'static LocalJudge {
            static J: OnceLock<LocalJudge> = OnceLock::new();
            J.get_or_init(|| {
                let options = JudgeOptions {
                    threads: 1,
                    ..JudgeOptions::default()
                };
                LocalJudge::known(KnownJudge::Smollm2135m, options)
                    .unwrap_or_else(|e| panic!("cannot load the small judge: {e}"))
            })
        }

        /// Values and names with what a grammar must escape.
        fn word() -> impl Strategy<Value = String> {
            prop_oneof![
                "[a-z]{1,6}",
                Just("yes".to_owned()),
                Just("y".to_owned()),
                Just("a \"quoted\" \\ word".to_owned()),
                Just("naïve €".to_owned()),
            ]
        }

        fn leaf() -> impl Strategy<Value = Value> {
            prop_oneof![
                Just(json!({"type": "string"})),
                Just(json!({"type": "boolean"})),
                Just(json!({"type": "number"})),
                Just(json!({"type": "integer"})),
                (-2i64..3, 1i64..8).prop_map(
                    |(lo, k)| json!({"type": "integer", "minimum": lo, "maximum": lo + k})
                ),
                prop::collection::btree_set(word(), 1..4)
                    .prop_map(|v| json!({"enum": v.into_iter().collect::<Vec<_>>()})),
                Just(json!({"enum": [0, 1]})),
                word().prop_map(|w| json!({"const": w})),
            ]
        }

        fn object(inner: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
            (
                prop::collection::btree_map(word(), inner, 1..4),
                any::<prop::sample::Index>(),
                any::<bool>(),
            )
                .prop_map(|(properties, cut, reversed)| {
                    let mut names: Vec<&String> = properties.keys().collect();
                    if reversed {
                        names.reverse();
                    }
                    names.truncate(cut.index(names.len() + 1));
                    json!({"type": "object", "properties": properties, "required": names})
                })
        }

        /// An object, as every prompt's answer is, of leaves, arrays and
        /// objects nested up to three deep.
        fn schema() -> impl Strategy<Value = Value> {
            let value = leaf().prop_recursive(3, 12, 3, |inner| {
                prop_oneof![
                    (inner.clone(), 0u64..3, proptest::option::of(0u64..3)).prop_map(
                        |(items, min, extra)| {
                            let mut a = json!({"type": "array", "items": items, "minItems": min});
                            if let Some(extra) = extra {
                                a["maxItems"] = json!(min + extra);
                            }
                            a
                        }
                    ),
                    object(inner),
                ]
            });
            object(value)
        }

        /// The grammar of an object with one member `w` of `value`'s
        /// schema, having accepted `written` one character token at a time.
        struct Written {
            grammar: LlamaSampler,
        }

        impl Written {
            fn new(value: Value, written: &str) -> Self {
                let judge = judge();
                let schema =
                    json!({"type": "object", "properties": {"w": value}, "required": ["w"]});
                let grammar = schema_to_grammar(&schema).unwrap();
                let mut grammar = LlamaSampler::grammar(
                    &judge.model,
                    grammar.as_str(),
                    crate::grammar::Grammar::ROOT,
                )
                .unwrap();
                for c in written.chars() {
                    grammar.accept(Self::token(&c.to_string()));
                }
                Written { grammar }
            }

            fn token(text: &str) -> LlamaToken {
                let at = judge().pieces.iter().position(|p| p == text.as_bytes());
                LlamaToken(at.unwrap_or_else(|| panic!("no token {text:?}")) as i32)
            }

            fn accept(&mut self, text: &str) {
                self.grammar.accept(Self::token(text));
            }

            fn allows(&mut self, text: &str) -> bool {
                let mut one = LlamaTokenDataArray::new(
                    vec![LlamaTokenData::new(Self::token(text), 0.0, 0.0)],
                    false,
                );
                one.apply_sampler(&mut self.grammar);
                one.data[0].logit().is_finite()
            }
        }

        /// Found by the property below: the grammar let a number's
        /// exponent take three digits, and `6686E425` is beyond what a
        /// JSON parser reads as a number. After `{"w":1E42` a digit is
        /// refused and the object may close.
        #[test]
        fn a_number_s_exponent_stops_at_two_digits() {
            let mut g = Written::new(json!({"type": "number"}), r#"{"w":1E42"#);
            assert!(!g.allows("5"), "a third exponent digit");
            assert!(g.allows("}"));
        }

        /// Found by the property below: the grammar let a string hold a
        /// lone surrogate escape (`\uddca`), which no JSON parser reads.
        /// A low surrogate cannot come first, and after a high one only
        /// its low one may follow.
        #[test]
        fn a_surrogate_escape_comes_in_a_pair() {
            let mut g = Written::new(json!({"type": "string"}), r#"{"w":"\ud"#);
            assert!(!g.allows("c"), "a low surrogate first");
            for c in ["8", "0", "0"] {
                g.accept(c);
            }
            assert!(!g.allows("\""), "a lone high surrogate");
            assert!(g.allows("\\"), "its low surrogate's escape");
        }

        proptest! {
            #![proptest_config(config(12))]

            #[test]
            fn finished_answers_parse_and_satisfy_their_schema(
                schema in schema(),
                seed in any::<u64>(),
                closing in 1u64..8,
                seeded in any::<bool>(),
            ) {
                let judge = judge();
                let vocab = judge.model.vocab();
                let n = judge.pieces.len();
                let eog: Vec<bool> = (0..n).map(|i| vocab.is_eog(LlamaToken(i as i32))).collect();
                // Tokens that end something (a string, a number, an array,
                // an object, the answer) are favoured on one step in
                // `closing` out of 8, so answers finish, their strings
                // some tokens long.
                let ends: Vec<bool> = (0..n)
                    .map(|i| eog[i] || judge.pieces[i].first().is_some_and(|b| b"\"]},".contains(b)))
                    .collect();
                let grammar = schema_to_grammar(&schema).unwrap();
                let sampler = seeded.then(|| {
                    seeded_sampler(&assay_llm::Sampling {
                        temperature: 1.0,
                        seed: Some(seed),
                        ..assay_llm::Sampling::default()
                    })
                    .unwrap()
                });
                let grammar = LlamaSampler::grammar(&judge.model, grammar.as_str(), crate::grammar::Grammar::ROOT).unwrap();
                let mut decoder = Decoder::new(Some(grammar), sampler, Some(&schema), &judge.pieces);
                // The logits of each step, from the case's seed.
                let mut rng = assay_core::aggregate::SplitMix64(seed);
                let mut finished = false;
                for _ in 0..400 {
                    let favour = rng.next_u64() % 8 < closing;
                    let logits: Vec<f32> = (0..n)
                        .map(|i| {
                            let u = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
                            if favour && ends[i] { u + 1.0 } else { u }
                        })
                        .collect();
                    let token = decoder.next_token(&logits).unwrap();
                    if eog[token.0 as usize] {
                        finished = true;
                        break;
                    }
                    decoder.accept(token);
                }
                let text = String::from_utf8_lossy(&decoder.out).into_owned();
                prop_assume!(finished, "unfinished after 400 tokens: {}", text);
                let value: Value = serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("{e}: {text}"));
                assay_llm::schema::validate(&value, &schema)
                    .unwrap_or_else(|e| panic!("{e}: {text}"));
                for choice in &decoder.choices {
                    let written = value.pointer(&choice.pointer).unwrap_or_else(|| {
                        panic!("a choice at {} is not in {text}", choice.pointer)
                    });
                    let written_text = written.to_string();
                    let p = choice
                        .probabilities
                        .iter()
                        .find(|(o, _)| *o == written_text)
                        .map(|(_, p)| *p);
                    prop_assert!(p.is_some_and(|p| p > 0.0), "{written} at {} has no probability: {:?}", choice.pointer, choice.probabilities);
                    let total: f64 = choice.probabilities.iter().map(|(_, p)| p).sum();
                    prop_assert!((total - 1.0).abs() < 1e-9, "{total}");
                }
            }
        }
    }
}
