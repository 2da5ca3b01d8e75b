//! The judge layer over any [`ChatModel`]: cache, single-flight, and
//! structured-output extraction, validation and repair. The same layer
//! serves HTTP and in-process models.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use crate::cache::Cache;
use crate::key::RequestKey;
use crate::model::{
    BoxFuture, ChatModel, ChatRequest, ChatResponse, Embedder, Embeddings, Message, ModelIdentity,
    Source, Usage,
};
use crate::schema::parse_structured;
use crate::{Error, ErrorKind};

type Shared = Arc<OnceCell<Result<ChatResponse, Error>>>;

/// A chat model with cache, single-flight and structured output.
///
/// Every answer to a request with a schema is validated; an invalid one is
/// shown back to the model with the validation error up to
/// `repair_attempts` times, then fails with [`ErrorKind::Parse`] carrying
/// the raw text. Only validated answers are cached, and they are in the
/// cache before `chat` returns them.
pub struct Judge {
    model: Arc<dyn ChatModel>,
    cache: Option<Arc<Cache>>,
    repair_attempts: u32,
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
            in_flight: Mutex::new(HashMap::new()),
        }
    }

    /// The key `request` is cached and coalesced under.
    pub fn key(&self, request: &ChatRequest) -> RequestKey {
        RequestKey::chat(self.model.identity(), request)
    }

    /// The cache, if any.
    pub fn cache(&self) -> Option<&Arc<Cache>> {
        self.cache.as_ref()
    }

    /// Answers `request`: from the cache, from an identical request already
    /// in flight, or with one upstream call (plus repair re-asks).
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, Error> {
        let key = self.key(request);
        if let Some(hit) = self.cached(&key)? {
            return Ok(hit);
        }
        let cell = {
            let mut map = self
                .in_flight
                .lock()
                .map_err(|_| Error::new(ErrorKind::Cache, "in-flight table poisoned"))?;
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
            if !initialised_here {
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
        // A caller that found nothing may have raced with one that just
        // finished and left the in-flight table.
        if let Some(hit) = self.cached(key)? {
            return Ok(hit);
        }
        let mut resp = self.model.complete(request).await?;
        if let Some(schema) = &request.schema {
            let mut usage = resp.usage;
            let mut latency = resp.latency;
            let mut conversation = request.clone();
            let mut repairs = 0;
            let value = loop {
                let failure = match parse_structured(&resp.text, schema) {
                    Ok(v) => break v,
                    Err(e) => e,
                };
                if repairs >= self.repair_attempts {
                    return Err(Error::new(ErrorKind::Parse, failure).with_raw_output(resp.text));
                }
                repairs += 1;
                conversation
                    .messages
                    .push(Message::assistant(std::mem::take(&mut resp.text)));
                conversation.messages.push(Message::user(format!(
                    "Your previous answer was not accepted: {failure}. \
                     Reply again with only the corrected JSON, no other text."
                )));
                resp = self.model.complete(&conversation).await?;
                usage += resp.usage;
                latency += resp.latency;
            };
            resp.json = Some(value);
            resp.usage = usage;
            resp.latency = latency;
        }
        if let Some(cache) = &self.cache {
            cache.put_chat(key, &self.model.identity().model, &resp)?;
        }
        Ok(resp)
    }
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

/// An embedder whose vectors are cached per text.
pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    cache: Option<Arc<Cache>>,
}

impl std::fmt::Debug for CachedEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedEmbedder")
            .field("inner", self.inner.identity())
            .finish()
    }
}

impl CachedEmbedder {
    /// Wraps `inner`; `cache` `None` passes every text through.
    pub fn new(inner: Arc<dyn Embedder>, cache: Option<Arc<Cache>>) -> Self {
        CachedEmbedder { inner, cache }
    }

    async fn embed_cached(&self, texts: &[String]) -> Result<Embeddings, Error> {
        let Some(cache) = &self.cache else {
            return self.inner.embed(texts).await;
        };
        let identity = self.inner.identity();
        let keys: Vec<RequestKey> = texts
            .iter()
            .map(|t| RequestKey::embedding(identity, t))
            .collect();
        let mut vectors: Vec<Option<Vec<f32>>> = Vec::with_capacity(texts.len());
        for key in &keys {
            vectors.push(cache.get_embedding(key)?);
        }
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| vectors[i].is_none()).collect();
        let mut usage = Usage::default();
        if !missing.is_empty() {
            let wanted: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
            let fresh = self.inner.embed(&wanted).await?;
            if fresh.vectors.len() != missing.len() {
                return Err(Error::new(
                    ErrorKind::InvalidResponse,
                    "embedder returned the wrong number of vectors",
                ));
            }
            usage = fresh.usage;
            for (&i, v) in missing.iter().zip(fresh.vectors) {
                cache.put_embedding(&keys[i], &identity.model, &v)?;
                vectors[i] = Some(v);
            }
        }
        Ok(Embeddings {
            vectors: vectors.into_iter().flatten().collect(),
            usage,
        })
    }
}

impl Embedder for CachedEmbedder {
    fn identity(&self) -> &ModelIdentity {
        self.inner.identity()
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Embeddings, Error>> {
        Box::pin(self.embed_cached(texts))
    }
}
