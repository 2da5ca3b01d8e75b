//! The async face of the in-process models.
//!
//! A local model computes for seconds on the calling thread. Run inside an
//! async task, that would stall the runtime's worker: progress, Ctrl-C
//! handling and every HTTP call of the same run would wait with it.
//! [`Offloaded`] implements the `assay-llm` traits by moving each call to
//! tokio's blocking pool, so the runtime keeps serving other work.
//!
//! A model serves one call at a time (one llama.cpp context; the embedder
//! already spreads one batch over every core), so calls wait for their turn
//! in an async queue, not on the blocking pool: with many calls waiting (a
//! sample's steps, or the samples an HTTP judge keeps in flight beside a
//! local embedder) one blocking thread computes instead of each sitting on
//! a lock. A call's latency is measured once it has its turn, so it is the
//! time the model computed for it, not its time in the queue.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Semaphore;

use assay_llm::{
    BoxFuture, ChatModel, ChatRequest, ChatResponse, Embedder, Embeddings, FailureKind,
    ModelIdentity, Usage,
};

use crate::{LocalEmbedder, LocalJudge};

/// A local model behind the async traits; cheap to clone.
///
/// ```no_run
/// use std::sync::Arc;
/// use assay_local::{JudgeOptions, LocalJudge, LocalSpec, Offloaded};
/// let judge = LocalJudge::from_spec(&LocalSpec::Default, JudgeOptions::default()).unwrap();
/// let chat: Arc<dyn assay_llm::ChatModel> = Arc::new(Offloaded::new(Arc::new(judge)));
/// ```
pub struct Offloaded<M> {
    model: Arc<M>,
    /// One permit: the call holding it is the one computing.
    turn: Arc<Semaphore>,
}

impl<M> Clone for Offloaded<M> {
    fn clone(&self) -> Self {
        Offloaded {
            model: Arc::clone(&self.model),
            turn: Arc::clone(&self.turn),
        }
    }
}

impl<M: Send + Sync + 'static> Offloaded<M> {
    /// Puts `model` behind the async traits; clones share its queue.
    pub fn new(model: Arc<M>) -> Self {
        Offloaded {
            model,
            turn: Arc::new(Semaphore::new(1)),
        }
    }

    /// The blocking model itself.
    pub fn model(&self) -> &Arc<M> {
        &self.model
    }

    /// Waits for the model's turn, then runs `work` on the blocking pool.
    /// A panic inside the model becomes an error of this call rather than
    /// of the runtime.
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&M) -> Result<T, assay_llm::Error> + Send + 'static,
    ) -> Result<T, assay_llm::Error> {
        let stopped = |e: &dyn std::fmt::Display| {
            assay_llm::Error::new(FailureKind::Server, format!("the local model stopped: {e}"))
        };
        // The semaphore is never closed, so acquiring only waits.
        let permit = Arc::clone(&self.turn)
            .acquire_owned()
            .await
            .map_err(|e| stopped(&e))?;
        let model = Arc::clone(&self.model);
        // The permit moves into the blocking task: a caller that gives up
        // (a timeout drops this future) cannot let the next call start
        // while this one still computes.
        tokio::task::spawn_blocking(move || {
            let out = work(&model);
            drop(permit);
            out
        })
        .await
        .unwrap_or_else(|e| Err(stopped(&e)))
    }
}

impl ChatModel for Offloaded<LocalJudge> {
    fn identity(&self) -> &ModelIdentity {
        self.model.identity()
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, assay_llm::Error>> {
        let request = request.clone();
        Box::pin(self.run(move |judge| {
            // Measured from here, the call's turn: its compute time.
            let started = Instant::now();
            let answer = judge.answer(&request)?;
            Ok(crate::judge::to_response(
                answer,
                &request,
                started.elapsed(),
            ))
        }))
    }
}

/// An embedder that computes on the calling thread: what [`Offloaded`]
/// puts behind the async [`Embedder`] trait.
pub trait BlockingEmbedder: Send + Sync + 'static {
    fn identity(&self) -> &ModelIdentity;
    /// Unit-length vectors of `texts`, in order, and the tokens read.
    fn embed_blocking(&self, texts: &[String]) -> Result<(Vec<Vec<f32>>, u64), assay_llm::Error>;
}

impl BlockingEmbedder for LocalEmbedder {
    fn identity(&self) -> &ModelIdentity {
        LocalEmbedder::identity(self)
    }

    fn embed_blocking(&self, texts: &[String]) -> Result<(Vec<Vec<f32>>, u64), assay_llm::Error> {
        Ok(LocalEmbedder::embed_blocking(self, texts)?)
    }
}

impl<M: BlockingEmbedder> Embedder for Offloaded<M> {
    fn identity(&self) -> &ModelIdentity {
        self.model.identity()
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Embeddings, assay_llm::Error>> {
        let texts = texts.to_vec();
        Box::pin(self.run(move |embedder| {
            let (vectors, tokens) = embedder.embed_blocking(&texts)?;
            Ok(Embeddings {
                vectors,
                usage: Usage {
                    prompt_tokens: tokens,
                    completion_tokens: 0,
                },
            })
        }))
    }
}
