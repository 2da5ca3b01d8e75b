//! `assay generate`: a test set from documents. [`assay_generate`]
//! prepares the documents and plans every question; this sends each
//! planned question's request to the judge, up to the plan's attempts
//! until one is kept (each retry told why the last candidate was not),
//! embeds each candidate's question for the duplicate check by meaning,
//! asks the critic where there is one, and gathers the rows, the rejected
//! candidates with their reasons, and the questions not made with theirs.
//! Requests are the same for the same documents, settings and seed, so
//! the judge's cache answers a second run, and a run killed half-way is
//! resumed by running it again without paying twice.

use crate::judging::answered;
use crate::{CancelToken, Observer, Result};
use assay_generate::check::Rejection;
use assay_generate::pipeline::{Prepared, CHUNKS_PER_QUESTION, DOCUMENTS_PER_QUESTION};
use assay_generate::plan::Slot;
use assay_generate::request::{Earlier, Request};
use assay_generate::{closed_book, critic, round_trip};
use assay_llm::{
    CachedEmbedder, ChatModel, ChatRequest, ChatResponse, Embedder, Judge, JudgeHistory, Message,
    ModelIdentity, Price, PromptRef, Source, Usage,
};
use futures_util::future::join_all;
use serde_json::{json, Value};

/// What one generation made.
#[derive(Debug, Default)]
pub struct Generated {
    /// The test set's rows.
    pub rows: Vec<Value>,
    /// Each candidate not kept: its question (if the judge wrote one), the
    /// planned slot and the reason.
    pub rejected: Vec<Value>,
    /// One line per planned question not made, with why.
    pub shortfalls: Vec<String>,
    /// Judge answers, and of them those the cache gave.
    pub calls: usize,
    pub cache_hits: usize,
    /// Tokens of the calls made (cache hits cost none).
    pub usage: Usage,
    /// Their cost, where the judge's price is known.
    pub cost: Option<f64>,
    /// What stopped the generation before its end, if anything did: a
    /// budget (`max_calls`, `max_cost`) or `interrupted`.
    pub stopped: Option<&'static str>,
}

/// Asks `judge` (whose price is `price`, where known) for each of
/// `prepared`'s planned questions, until its options' budget of calls or
/// cost is spent; the questions a budget leaves are named as not made.
/// Each question is embedded by `embedder`, where given, for the
/// duplicate check by meaning. `observer` is told of the progress at
/// each tenth of the plan; `cancel` stops the generation as a spent
/// budget does (`interrupted`), with what was made kept.
pub fn generate(
    judge: &Judge,
    embedder: Option<&CachedEmbedder>,
    price: Option<Price>,
    prepared: &mut Prepared<'_>,
    observer: &mut dyn Observer,
    cancel: &CancelToken,
) -> Result<Generated> {
    let budget = (prepared.options.max_calls, prepared.options.max_cost);
    if budget.1.is_some() && price.is_none() && !judge.identity().provider.starts_with("local") {
        return Err(crate::EngineError::Usage(format!(
            "--max-cost: the price of {} is not known; give it with --price MODEL=IN/OUT",
            judge.identity().model
        )));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            crate::EngineError::Internal(format!("cannot start the async runtime: {e}"))
        })?;
    prepared.judge = signature_name(judge.identity());
    prepared.embedder = embedder.map(|e| signature_name(e.identity()));
    let mut done = Generated::default();
    let mut asker = Asker {
        rt: &rt,
        judge,
        cancel,
        price,
        history: JudgeHistory::NothingAnswered,
    };
    let attempts = prepared.options.attempts.max(1);
    let slots = prepared.slots.clone();
    // Every question's first request is sent at once (the judge's own
    // concurrency limit applies), so that a remote judge answers them in
    // parallel; the answers are then taken in the plan's order, so the set
    // is the one a question-by-question run makes. Not under a budget,
    // which counts each call as it is made, nor to an in-process judge,
    // which answers one at a time anyway.
    let local = judge.identity().provider.starts_with("local");
    let mut firsts: Vec<Option<_>> = if budget == (None, None) && !local {
        let requests: Vec<Option<ChatRequest>> = slots
            .iter()
            .map(|s| {
                s.as_ref()
                    .ok()
                    .map(|slot| chat_request(prepared, slot, 0, None))
            })
            .collect();
        let all = join_all(requests.iter().map(|r| async move {
            match r {
                Some(r) => Some(judge.chat(r).await),
                None => None,
            }
        }));
        // Interrupted, the answers already in are in the judge's cache.
        rt.block_on(async {
            tokio::select! {
                answers = all => answers,
                () = cancel.cancelled() => Vec::new(),
            }
        })
    } else {
        Vec::new()
    };
    let mut told = 0;
    // Documents given a question moved from another, each at most one.
    let mut full: Vec<usize> = Vec::new();
    for (index, planned) in slots.iter().enumerate() {
        let tenth = index * 10 / slots.len().max(1);
        if tenth > told {
            told = tenth;
            observer.note(&format!(
                "generate: {} of {} questions asked, {} made, {} judge answers",
                index,
                slots.len(),
                done.rows.len(),
                done.calls
            ));
        }
        if done.stopped.is_none() {
            done.stopped = spent(&done, budget, cancel);
        }
        if let Some(why) = done.stopped {
            let document = match planned {
                Ok(slot) => slot.document,
                Err(shortfall) => shortfall.document(),
            };
            done.shortfalls.push(format!(
                "{}: {}",
                prepared.documents[document].name,
                stopped_before(why)
            ));
            continue;
        }
        let slot = match planned {
            Ok(slot) => slot,
            Err(shortfall) => {
                done.shortfalls.push(format!(
                    "{}: {shortfall}",
                    prepared.documents[shortfall.document()].name
                ));
                continue;
            }
        };
        let own = prepared.documents[slot.document].name.clone();
        let mut kept = false;
        // The last rejected candidate's question and why, for the next
        // attempt's request.
        let mut earlier: Option<(Option<String>, Rejection)> = None;
        // The chunks asked about in turn, each for `attempts` candidates:
        // the slot's own and others of its document, then those of one
        // other document not yet given a question beyond its quota.
        let mut tries = chunks_of(prepared, slot);
        if let Some(away) = prepared.elsewhere(slot, &full) {
            tries.extend(chunks_of(prepared, &away));
        }
        let mut chunks = 0;
        for attempt in 0..attempts * tries.len() {
            let slot = &tries[attempt / attempts];
            if attempt % attempts == 0 {
                chunks += 1;
                earlier = None;
            }
            let document = &prepared.documents[slot.document].name;
            done.stopped = spent(&done, budget, cancel);
            if done.stopped.is_some() {
                break;
            }
            let rejected = |candidate: Value, reason: Value| {
                json!({
                    "document": document,
                    "question_type": slot.kind.name(),
                    "attempt": attempt + 1,
                    "candidate": candidate,
                    "rejection": reason,
                })
            };
            let told = earlier.as_ref().map(|(question, why)| Earlier {
                question: question.as_deref(),
                why,
            });
            let asked = match firsts.get_mut(index).and_then(Option::take) {
                Some(outcome) if attempt == 0 => asker.count(outcome, &mut done)?,
                _ => asker.ask(
                    &chat_request(prepared, slot, attempt % attempts, told),
                    &mut done,
                )?,
            };
            let json = match asked {
                Asked::Answered(json) => json,
                Asked::Failed(error) => {
                    let reason = json!({"reason": "judge", "error": error});
                    done.rejected.push(rejected(Value::Null, reason));
                    continue;
                }
                Asked::Interrupted => {
                    done.stopped = Some("interrupted");
                    break;
                }
            };
            let embedding = match (embedder, json["question"].as_str()) {
                (Some(e), Some(question)) => Some(embedded(&rt, e, question)?),
                _ => None,
            };
            let checked = match prepared.check(slot, &json, embedding, told) {
                Ok(checked) => checked,
                Err(rejection) => {
                    let reason = serde_json::to_value(&rejection).unwrap_or(Value::Null);
                    let question = json["question"].as_str().map(String::from);
                    done.rejected.push(rejected(json, reason));
                    earlier = Some((question, rejection));
                    continue;
                }
            };
            // The calls a candidate that passed the checks needing none
            // is sent to, each only where the one before passed.
            let question = checked.question();
            let further: [Option<(Request, Verdict<'_>)>; 3] = [
                prepared.options.critic.map(|min| {
                    let verdict: Verdict = Box::new(move |v| critic::verdict(v, min).map(drop));
                    (critic::request(question), verdict)
                }),
                prepared.options.closed_book.then(|| {
                    let verdict: Verdict = Box::new(|v| checked.read(closed_book::verdict, v));
                    (closed_book::request(question), verdict)
                }),
                prepared.round_trip_request(slot, question).map(|request| {
                    let verdict: Verdict = Box::new(|v| checked.read(round_trip::verdict, v));
                    (request, verdict)
                }),
            ];
            let mut criticised = Ok(());
            let mut interrupted = false;
            for (request, verdict) in further.into_iter().flatten() {
                criticised = match asker.ask(&to_chat(request), &mut done)? {
                    Asked::Answered(answer) => verdict(&answer),
                    Asked::Failed(error) => Err(Rejection::Judge { error }),
                    Asked::Interrupted => {
                        interrupted = true;
                        break;
                    }
                };
                if criticised.is_err() {
                    break;
                }
            }
            if interrupted {
                done.stopped = Some("interrupted");
                break;
            }
            match criticised {
                Ok(()) => {
                    if slot.document != tries[0].document {
                        full.push(slot.document);
                    }
                    done.rows.push(prepared.keep(checked));
                    kept = true;
                    break;
                }
                Err(rejection) => {
                    let reason = serde_json::to_value(&rejection).unwrap_or(Value::Null);
                    let question = json["question"].as_str().map(String::from);
                    done.rejected.push(rejected(json, reason));
                    earlier = Some((question, rejection));
                }
            }
        }
        if !kept {
            let documents = match tries.last() {
                Some(last) if last.document != slot.document => {
                    format!(" of {DOCUMENTS_PER_QUESTION} documents")
                }
                _ => String::new(),
            };
            done.shortfalls.push(match done.stopped {
                Some(why) => format!("{own}: {}", stopped_before(why)),
                None => format!(
                    "{own}: {}: no candidate kept in {} attempts over {chunks} chunk{}{documents}",
                    slot.kind,
                    attempts * chunks,
                    if chunks == 1 { "" } else { "s" }
                ),
            });
        }
    }
    Ok(done)
}

/// `slot` and the other chunks of its document it falls back to
/// ([`Prepared::fallback`]), in the order they are asked about.
fn chunks_of(prepared: &Prepared<'_>, slot: &Slot) -> Vec<Slot> {
    std::iter::once(slot.clone())
        .chain((1..CHUNKS_PER_QUESTION).map_while(|n| prepared.fallback(slot, n)))
        .collect()
}

/// A model as a test set's signature names it: its provider and model,
/// not its endpoint, whose port or path differs between machines.
pub fn signature_name(model: &ModelIdentity) -> String {
    format!("{}:{}", model.provider, model.model)
}

/// `question`'s unit vector. An embedder that fails stops the generation:
/// what was made is in the judge's cache, and the same command resumes.
fn embedded(
    rt: &tokio::runtime::Runtime,
    embedder: &CachedEmbedder,
    question: &str,
) -> Result<Vec<f32>> {
    let stopped = |why: String| {
        crate::EngineError::Usage(format!(
            "the embedder {} could not embed a question ({why}); the judge's answers so far \
             are cached and the same command resumes",
            signature_name(embedder.identity())
        ))
    };
    let texts = [question.to_string()];
    let embeddings = rt
        .block_on(embedder.embed(&texts))
        .map_err(|e| stopped(e.to_string()))?;
    embeddings
        .vectors
        .into_iter()
        .next()
        .ok_or_else(|| stopped("no vector came back".to_string()))
}

/// The judge, asked one request at a time, each answer counted.
struct Asker<'a> {
    rt: &'a tokio::runtime::Runtime,
    judge: &'a Judge,
    cancel: &'a CancelToken,
    price: Option<Price>,
    history: JudgeHistory,
}

/// What one request came to.
enum Asked {
    /// The answer's JSON (null when it had none).
    Answered(Value),
    /// The call failed: the candidate is rejected, the run goes on.
    Failed(String),
    /// Stopped while the judge was answering.
    Interrupted,
}

impl Asker<'_> {
    /// Sends `request`, unless the run is interrupted first, and counts
    /// its answer in `done`.
    fn ask(&mut self, request: &ChatRequest, done: &mut Generated) -> Result<Asked> {
        let outcome = self.rt.block_on(async {
            tokio::select! {
                outcome = self.judge.chat(request) => Some(outcome),
                () = self.cancel.cancelled() => None,
            }
        });
        match outcome {
            Some(outcome) => self.count(outcome, done),
            None => Ok(Asked::Interrupted),
        }
    }

    /// Counts the answer of a request already sent in `done` (its tokens
    /// and cost unless the cache gave it); a judge that cannot be reached
    /// at all stops the run.
    fn count(
        &mut self,
        outcome: std::result::Result<ChatResponse, assay_llm::Error>,
        done: &mut Generated,
    ) -> Result<Asked> {
        let kept_so_far = "the judge's answers so far are cached";
        let answer = match answered(outcome, self.judge, &mut self.history, kept_so_far)? {
            Ok(answer) => answer,
            Err(e) => return Ok(Asked::Failed(e.to_string())),
        };
        done.calls += 1;
        if answer.source == Source::Cache {
            done.cache_hits += 1;
        } else {
            done.usage += answer.usage;
        }
        done.cost = self.price.map(|p| p.cost(done.usage));
        Ok(Asked::Answered(answer.json.unwrap_or(Value::Null)))
    }
}

/// The judge's request for attempt `attempt` of `slot`, told of the
/// `earlier` attempt's rejection.
fn chat_request(
    prepared: &Prepared<'_>,
    slot: &Slot,
    attempt: usize,
    earlier: Option<Earlier<'_>>,
) -> ChatRequest {
    to_chat(prepared.request(slot, attempt, earlier))
}

/// What a further call's answer decides of a candidate.
type Verdict<'a> = Box<dyn Fn(&Value) -> std::result::Result<(), Rejection> + 'a>;

/// A generation request as the judge's chat request.
fn to_chat(r: Request) -> ChatRequest {
    let mut request = ChatRequest::new(
        PromptRef {
            id: r.prompt.clone(),
            version: r.version.to_string(),
        },
        vec![Message::system(r.system), Message::user(r.user)],
    )
    .with_schema(r.schema);
    if let Some(draw) = r.draw {
        request.sampling.temperature = draw.temperature;
        request.sampling.seed = Some(draw.seed);
    }
    request
}

/// Why a question was not asked: what stopped the generation.
fn stopped_before(why: &str) -> String {
    match why {
        "interrupted" => "interrupted before this question".to_string(),
        budget => format!("budget: stopped at {budget} before this question"),
    }
}

/// What stops the generation now: an interruption, or the budget (of
/// answers, of cost) that `done` has spent.
fn spent(
    done: &Generated,
    (max_calls, max_cost): (Option<usize>, Option<f64>),
    cancel: &CancelToken,
) -> Option<&'static str> {
    if cancel.is_cancelled() {
        Some("interrupted")
    } else if max_calls.is_some_and(|m| done.calls >= m) {
        Some("max_calls")
    } else if max_cost.is_some_and(|m| done.cost.unwrap_or(0.0) >= m) {
        Some("max_cost")
    } else {
        None
    }
}
