//! The judge layer over any [`ChatModel`]: cache, single-flight, and
//! structured-output extraction, validation and repair. The same layer
//! serves HTTP and in-process models.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use crate::cache::Cache;
use crate::key::RequestKey;
use crate::limits::Limiter;
use crate::model::{
    BoxFuture, ChatModel, ChatRequest, ChatResponse, Embedder, Embeddings, FinishReason, Message,
    ModelIdentity, Source, Usage,
};
use crate::openai::{OpenAiChat, OpenAiEmbedder};
use crate::schema::parse_structured;
use crate::spec::{EmbedderSpec, JudgeSpec, ProviderOptions};
use crate::usage::Call;
use crate::{Error, FailureKind};

type Shared = Arc<OnceCell<Result<ChatResponse, Error>>>;

/// A chat model with cache, single-flight and structured output.
///
/// Every answer to a request with a schema is validated; an invalid one is
/// shown back to the model with the validation error up to
/// `repair_attempts` times, then fails with [`FailureKind::Parse`] carrying
/// the raw text. Only validated answers are cached, and they are in the
/// cache before `chat` returns them.
pub struct Judge {
    model: Arc<dyn ChatModel>,
    cache: Option<Arc<Cache>>,
    repair_attempts: u32,
    max_tokens: Option<u32>,
    in_flight: Mutex<HashMap<RequestKey, Shared>>,
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge")
            .field("model", self.model.identity())
            .field(
                "cache",
                &self.cache.as_ref().map(|c| c.path().to_path_buf()),
            )
            .field("repair_attempts", &self.repair_attempts)
            .finish()
    }
}

impl Judge {
    /// Wraps `model`; `cache` `None` means every request goes upstream.
    pub fn new(model: Arc<dyn ChatModel>, cache: Option<Arc<Cache>>, repair_attempts: u32) -> Self {
        Judge {
            model,
            cache,
            repair_attempts,
            max_tokens: None,
            in_flight: Mutex::new(HashMap::new()),
        }
    }

    /// Caps every answer whose request sets no `max_tokens` at `cap`
    /// tokens (`None`: no cap). The cap is set on the request before it
    /// is keyed, so a cached answer is only served under the same cap: a
    /// small model served locally can repeat a list item until its
    /// context is full, minutes of generation, and the cap ends that.
    pub fn with_max_tokens(mut self, cap: Option<u32>) -> Self {
        self.max_tokens = cap;
        self
    }

    /// `request` with the cap set, where it sets none: what is asked,
    /// keyed and (under batch export) written.
    pub fn capped<'a>(&self, request: &'a ChatRequest) -> std::borrow::Cow<'a, ChatRequest> {
        match self.max_tokens {
            Some(cap) if request.sampling.max_tokens.is_none() => {
                let mut capped = request.clone();
                capped.sampling.max_tokens = Some(cap);
                std::borrow::Cow::Owned(capped)
            }
            _ => std::borrow::Cow::Borrowed(request),
        }
    }

    /// A judge over the OpenAI-compatible provider of `spec`: the key from
    /// `opts.api_key_env`, `opts.repair_attempts` re-asks, and `limiter`
    /// (share one between the judge and the embedder of a run).
    pub fn connect(
        spec: &JudgeSpec,
        opts: &ProviderOptions,
        cache: Option<Arc<Cache>>,
        limiter: Arc<Limiter>,
    ) -> Result<Self, Error> {
        let model = OpenAiChat::new(spec, opts, limiter)?;
        Ok(Judge::new(Arc::new(model), cache, opts.repair_attempts)
            .with_max_tokens(opts.max_tokens))
    }

    /// The key `request` is cached and coalesced under.
    pub fn key(&self, request: &ChatRequest) -> RequestKey {
        RequestKey::chat(self.model.identity(), &self.capped(request))
    }

    /// The cache, if any.
    pub fn cache(&self) -> Option<&Arc<Cache>> {
        self.cache.as_ref()
    }

    /// The cached answer to `request` (marked [`Source::Cache`]), or `None`;
    /// the model is never called. Batch export asks this instead of
    /// [`Judge::chat`], so a miss goes into the batch file, not upstream.
    pub fn lookup(&self, request: &ChatRequest) -> Result<Option<ChatResponse>, Error> {
        self.cached(&self.key(request))
    }

    /// Answers `request`: from the cache, from an identical request already
    /// in flight, or with one upstream call (plus repair re-asks).
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, Error> {
        let request = &*self.capped(request);
        let key = self.key(request);
        // Every call goes through the in-flight table, and only its first
        // caller looks in the cache: one lookup per key, and no window where
        // an answer stored by a finishing call is missed.
        let cell = {
            let mut map = self
                .in_flight
                .lock()
                .map_err(|_| Error::new(FailureKind::Cache, "in-flight table poisoned"))?;
            Arc::clone(map.entry(key.clone()).or_default())
        };
        let mut initialised_here = false;
        let result = cell
            .get_or_init(|| {
                initialised_here = true;
                self.fetch(&key, request)
            })
            .await
            .clone();
        if initialised_here {
            if let Ok(mut map) = self.in_flight.lock() {
                if map.get(&key).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
                    map.remove(&key);
                }
            }
        }
        result.map(|mut resp| {
            if !initialised_here && resp.source == Source::Upstream {
                resp.source = Source::Coalesced;
            }
            resp
        })
    }

    fn cached(&self, key: &RequestKey) -> Result<Option<ChatResponse>, Error> {
        match &self.cache {
            Some(cache) => cache.get_chat(key),
            None => Ok(None),
        }
    }

    async fn fetch(&self, key: &RequestKey, request: &ChatRequest) -> Result<ChatResponse, Error> {
        if let Some(hit) = self.cached(key)? {
            return Ok(hit);
        }
        let mut resp = whole(self.model.complete(request).await?)?;
        if let Some(schema) = &request.schema {
            let mut usage = resp.usage;
            let mut latency = resp.latency;
            // Copied only when a repair needs it: most answers are valid.
            let mut conversation: Option<ChatRequest> = None;
            let mut repairs = 0;
            let value = loop {
                let failure = match parse_structured(&resp.text, schema) {
                    Ok(v) => break v,
                    Err(e) => e,
                };
                if repairs >= self.repair_attempts {
                    return Err(Error::new(FailureKind::Parse, failure).with_raw_output(resp.text));
                }
                repairs += 1;
                let conversation = conversation.get_or_insert_with(|| request.clone());
                conversation
                    .messages
                    .push(Message::assistant(std::mem::take(&mut resp.text)));
                conversation.messages.push(Message::user(format!(
                    "Your previous answer was not accepted: {failure}. \
                     Reply again with only the corrected JSON, no other text."
                )));
                resp = whole(self.model.complete(conversation).await?)?;
                usage += resp.usage;
                latency += resp.latency;
            };
            resp.json = Some(value);
            resp.usage = usage;
            resp.latency = latency;
        }
        if let Some(cache) = &self.cache {
            cache.store_chat(key, &self.model.identity().model, &resp)?;
        }
        Ok(resp)
    }
}

/// The answer, unless it was cut off at the token limit: that is a
/// `truncated` failure carrying the text, whatever the model. (The HTTP
/// provider reports it so itself; an in-process model returns the cut
/// answer, which would otherwise read as a `parse` failure.)
fn whole(resp: ChatResponse) -> Result<ChatResponse, Error> {
    if resp.finish_reason == FinishReason::Length {
        return Err(
            Error::new(FailureKind::Truncated, "the answer hit the token limit")
                .with_raw_output(resp.text),
        );
    }
    Ok(resp)
}

impl ChatModel for Judge {
    fn identity(&self) -> &ModelIdentity {
        self.model.identity()
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, Error>> {
        Box::pin(self.chat(request))
    }
}

/// An embedder with a per-text cache and per-text single-flight: a text
/// already being embedded by another call is waited for, not sent again.
pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    cache: Option<Arc<Cache>>,
    in_flight: Mutex<HashMap<RequestKey, (Arc<EmbedFlight>, usize)>>,
}

/// One upstream embeddings call that other callers may share. Any waiter
/// can run it, so the call survives the cancellation of the one that
/// started it.
struct EmbedFlight {
    texts: Vec<String>,
    keys: Vec<RequestKey>,
    result: OnceCell<Result<Arc<Flown>, Error>>,
}

/// A finished upstream embeddings call and how long it took.
struct Flown {
    embeddings: Embeddings,
    latency: Duration,
}

impl std::fmt::Debug for CachedEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedEmbedder")
            .field("inner", self.inner.identity())
            .finish()
    }
}

impl CachedEmbedder {
    /// A cached embedder over the OpenAI-compatible provider of `spec`.
    pub fn connect(
        spec: &EmbedderSpec,
        opts: &ProviderOptions,
        cache: Option<Arc<Cache>>,
        limiter: Arc<Limiter>,
    ) -> Result<Self, Error> {
        let inner = OpenAiEmbedder::new(spec, opts, limiter)?;
        Ok(CachedEmbedder::new(Arc::new(inner), cache))
    }

    /// Wraps `inner`; `cache` `None` still coalesces concurrent texts.
    pub fn new(inner: Arc<dyn Embedder>, cache: Option<Arc<Cache>>) -> Self {
        CachedEmbedder {
            inner,
            cache,
            in_flight: Mutex::new(HashMap::new()),
        }
    }

    /// The cached vector of `key`, if there is a cache and it holds one.
    fn cached(&self, key: &RequestKey) -> Result<Option<Vec<f32>>, Error> {
        match &self.cache {
            Some(cache) => cache.get_embedding(key),
            None => Ok(None),
        }
    }

    /// Embeds `texts` like [`Embedder::embed`], and says how, for the usage
    /// ledger: [`Source::Upstream`] with its tokens and latency when this
    /// call sent texts upstream, [`Source::Coalesced`] when it only waited
    /// for calls already in flight, [`Source::Cache`] when every vector was
    /// cached.
    pub async fn embed_call(&self, texts: &[String]) -> Result<(Embeddings, Call), Error> {
        let identity = self.inner.identity();
        let keys: Vec<RequestKey> = texts
            .iter()
            .map(|t| RequestKey::embedding(identity, t))
            .collect();
        let mut vectors: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (slot, key) in vectors.iter_mut().zip(&keys) {
            *slot = self.cached(key)?;
        }
        // Each missing text joins a flight: another caller's, or the one
        // this call starts for all texts nobody is fetching yet.
        let mut joined: Vec<(usize, Arc<EmbedFlight>, usize)> = Vec::new();
        let mut own: Option<Arc<EmbedFlight>> = None;
        {
            let mut map = self
                .in_flight
                .lock()
                .map_err(|_| Error::new(FailureKind::Cache, "in-flight table poisoned"))?;
            let mut fresh = EmbedFlight {
                texts: Vec::new(),
                keys: Vec::new(),
                result: OnceCell::new(),
            };
            let mut fresh_slots: Vec<(usize, usize)> = Vec::new();
            let mut fresh_index: HashMap<&RequestKey, usize> = HashMap::new();
            let missing: Vec<usize> = (0..texts.len()).filter(|&i| vectors[i].is_none()).collect();
            for i in missing {
                if let Some((flight, j)) = map.get(&keys[i]) {
                    joined.push((i, Arc::clone(flight), *j));
                } else if let Some(v) = self.cached(&keys[i])? {
                    // A flight that landed between the lookup above and
                    // this lock left its vector in the cache and its key
                    // out of the table: asked again, it would be paid
                    // twice.
                    vectors[i] = Some(v);
                } else if let Some(&j) = fresh_index.get(&keys[i]) {
                    fresh_slots.push((i, j));
                } else {
                    fresh_index.insert(&keys[i], fresh.keys.len());
                    fresh_slots.push((i, fresh.keys.len()));
                    fresh.texts.push(texts[i].clone());
                    fresh.keys.push(keys[i].clone());
                }
            }
            if !fresh.keys.is_empty() {
                let flight = Arc::new(fresh);
                for (j, key) in flight.keys.iter().enumerate() {
                    map.insert(key.clone(), (Arc::clone(&flight), j));
                }
                joined.extend(
                    fresh_slots
                        .into_iter()
                        .map(|(i, j)| (i, Arc::clone(&flight), j)),
                );
                own = Some(flight);
            }
        }
        let mut call = Call {
            source: if joined.is_empty() {
                Source::Cache
            } else {
                Source::Coalesced
            },
            usage: Usage::default(),
            latency: Duration::ZERO,
        };
        let mut outcome = Ok(());
        for (i, flight, j) in &joined {
            match self.fly(flight).await {
                Ok(done) => vectors[*i] = done.embeddings.vectors.get(*j).cloned(),
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        if let Some(flight) = own {
            if let Some(Ok(done)) = flight.result.get() {
                call = Call {
                    source: Source::Upstream,
                    usage: done.embeddings.usage,
                    latency: done.latency,
                };
            }
            if let Ok(mut map) = self.in_flight.lock() {
                for key in &flight.keys {
                    if map.get(key).is_some_and(|(f, _)| Arc::ptr_eq(f, &flight)) {
                        map.remove(key);
                    }
                }
            }
        }
        outcome?;
        let vectors = vectors
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| Error::new(FailureKind::InvalidResponse, "an embedding is missing"))?;
        let usage = call.usage;
        Ok((Embeddings { vectors, usage }, call))
    }

    /// Runs `flight` (or waits for whoever runs it); its vectors are in the
    /// cache before anyone gets them.
    async fn fly(&self, flight: &EmbedFlight) -> Result<Arc<Flown>, Error> {
        flight
            .result
            .get_or_init(|| async {
                let start = Instant::now();
                let out = self.inner.embed(&flight.texts).await?;
                let latency = start.elapsed();
                if out.vectors.len() != flight.texts.len() {
                    return Err(Error::new(
                        FailureKind::InvalidResponse,
                        "embedder returned the wrong number of vectors",
                    ));
                }
                if let Some(cache) = &self.cache {
                    let model = &self.inner.identity().model;
                    for (key, v) in flight.keys.iter().zip(&out.vectors) {
                        cache.put_embedding(key, model, v)?;
                    }
                }
                Ok(Arc::new(Flown {
                    embeddings: out,
                    latency,
                }))
            })
            .await
            .clone()
    }
}

impl Embedder for CachedEmbedder {
    fn identity(&self) -> &ModelIdentity {
        self.inner.identity()
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Embeddings, Error>> {
        Box::pin(async move { self.embed_call(texts).await.map(|(e, _)| e) })
    }
}
