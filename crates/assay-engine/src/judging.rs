//! The judged metrics of one sample: its plan's steps start as soon as the
//! steps they read are done, judge calls go through the `Judge` (cache,
//! single-flight, schema repair) to its model (an HTTP model's limiter and
//! retries, or an in-process model's one-call-at-a-time queue), embeddings
//! through the `CachedEmbedder`. An answer that fits its schema but not
//! its question (a [`Mismatch`]) is shown back to the judge with the
//! problem, at most `repair_attempts` times, then fails as a `mismatch`
//! carrying the answer; a step that draws several votes, or asks one item
//! at a time, has each vote or item checked and repaired on its own.
//! Failures become outcomes of the metrics that needed the step; only a
//! run-fatal judge error ([`assay_llm::Error::is_run_fatal`]: refused
//! credentials, or a judge that cannot be reached or used and has answered
//! nothing yet) is returned as an error. Under `--batch export` a judge
//! call missing from the cache defers its step (and the steps that read
//! it), and the sample gives no judged outcome.
//!
//! With `--reasons llm`, each scored outcome then gets one more call for a
//! prose reason ([`assay_metrics::judged::reason`]), checked and repaired
//! the same way; its failure leaves the score and its composed reason.

use crate::options::{JudgedRun, Reasons};
use crate::EngineError;
use assay_core::{Failure, FailureKind, Outcome, Sample};
use assay_llm::{
    CallKind, ChatModel, ChatRequest, ChatResponse, Error, Message, ModelIdentity, PromptRef,
    Scope, UsageLedger,
};
use assay_metrics::judged::likelihood::reply_answer;
use assay_metrics::judged::validate::{with_choice_probabilities, without_choice_probabilities};
use assay_metrics::judged::{
    reason, render, validate, validate_vote, Inputs, ItemRequests, JudgeRequest, JudgedMetric,
    Mismatch, Outputs, Problem, PromptId, Request, StepKey, StepOutput,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use tokio::task::JoinSet;

/// A step's state in a sample's run.
enum State {
    Waiting,
    Running,
    Done,
    Failed(Failure),
    /// Waits for the batch file (`--batch export`).
    Deferred,
}

/// A sample's judged outcomes (`None`: deferred to the batch file), or the
/// run-fatal judge error that stops the run.
pub type Judged = Result<Option<Vec<Outcome>>, Unavailable>;

/// A judge failure that stops the run ([`Error::is_run_fatal`]), and the
/// endpoint it came from.
#[derive(Debug, Clone)]
pub struct Unavailable {
    /// The failing model's endpoint (its base URL).
    pub endpoint: String,
    pub error: Error,
}

impl Unavailable {
    /// The engine's error for it: one line naming the endpoint and the
    /// cause, and `kept`, what the run keeps.
    pub(crate) fn into_engine_error(self, kept: &str) -> EngineError {
        let (e, endpoint) = (&self.error, &self.endpoint);
        let message = match e.kind() {
            FailureKind::Auth => format!(
                "the judge at {endpoint} refused the credentials ({e}); check OPENAI_API_KEY / \
                 ASSAY_API_KEY. The run stopped at once; {kept}"
            ),
            _ => format!(
                "the judge at {endpoint} cannot be used ({e}) and answered nothing in this run. \
                 The run stopped at once; {kept}; once it is up, the same command resumes"
            ),
        };
        EngineError::JudgeUnavailable {
            endpoint: self.endpoint,
            kind: self.error.kind(),
            message,
        }
    }
}

/// The outcome of one call of a command that asks the judge prompt by
/// prompt (`prompts adapt`, `generate`): its answer or its error, after
/// which the judge counts as having answered; or, when the judge can
/// serve nothing (it refused the key, or failed before any answer in a
/// way no retry fixes), the engine's error that stops the command, saying
/// what is `kept`.
pub(crate) fn answered(
    outcome: Result<assay_llm::ChatResponse, assay_llm::Error>,
    judge: &assay_llm::Judge,
    history: &mut assay_llm::JudgeHistory,
    kept: &str,
) -> Result<Result<assay_llm::ChatResponse, assay_llm::Error>, EngineError> {
    use assay_llm::ChatModel;
    match outcome {
        Ok(answer) => {
            *history = assay_llm::JudgeHistory::Answered;
            Ok(Ok(answer))
        }
        Err(error) if error.is_run_fatal(*history) => Err(Unavailable {
            endpoint: judge.identity().endpoint.clone(),
            error,
        }
        .into_engine_error(kept)),
        Err(e) => Ok(Err(e)),
    }
}

/// How a call ended, repairs included.
enum Asked<T> {
    Valid(T),
    /// Missing from the cache under `--batch export`: in the batch file.
    Deferred,
    Failed(Failure),
    /// A run-fatal judge error.
    Fatal(Unavailable),
}

impl<T> Asked<T> {
    /// `next` of a valid answer; any other outcome as it is.
    fn and_then<U>(self, next: impl FnOnce(T) -> Asked<U>) -> Asked<U> {
        match self {
            Asked::Valid(v) => next(v),
            Asked::Deferred => Asked::Deferred,
            Asked::Failed(f) => Asked::Failed(f),
            Asked::Fatal(e) => Asked::Fatal(e),
        }
    }
}

impl<T> Asked<T> {
    /// A failed call of `model`: run-fatal given what it answered so far
    /// in this run, or the failure of the call's outcomes.
    fn failed(e: Error, ledger: &UsageLedger, model: &ModelIdentity) -> Self {
        if e.is_run_fatal(ledger.history(&model.model)) {
            Asked::Fatal(Unavailable {
                endpoint: model.endpoint.clone(),
                error: e,
            })
        } else {
            Asked::Failed(judge_failure(&e))
        }
    }
}

/// Scores `sample` with every judged metric of `run`: one outcome per
/// output, in the order of [`JudgedMetric::outputs`] over the metrics;
/// `None` when a step was deferred to the batch file. `repeat` (0-based,
/// `--repeats`) picks the seeds of its judge calls.
pub async fn judge_sample(
    run: Arc<JudgedRun>,
    ledger: Arc<UsageLedger>,
    sample: Arc<Sample>,
    repeat: u32,
) -> Judged {
    let plan = assay_metrics::judged::plan(&run.metrics, &sample, run.prompts.protocol());
    let reads: Vec<(String, Vec<StepKey>)> = run
        .metrics
        .iter()
        .map(|m| (m.id().to_string(), metric_steps(m, &sample)))
        .collect();
    let scopes: Vec<Scope> = plan
        .steps
        .iter()
        .map(|s| scope_of(&reads, &s.key))
        .collect();
    let mut states: Vec<State> = plan.steps.iter().map(|_| State::Waiting).collect();
    let mut outputs = Outputs::new();
    let mut calls: JoinSet<(usize, Asked<StepOutput>)> = JoinSet::new();
    loop {
        // Steps come dependencies first, so one pass in order starts every
        // step whose inputs are ready, resolved steps included.
        for (i, step) in plan.steps.iter().enumerate() {
            if !matches!(states[i], State::Waiting) {
                continue;
            }
            if step
                .deps
                .iter()
                .any(|d| matches!(states[*d], State::Deferred))
            {
                states[i] = State::Deferred;
                continue;
            }
            if let Some(f) = step.deps.iter().find_map(|d| match &states[*d] {
                State::Failed(f) => Some(f.clone()),
                _ => None,
            }) {
                states[i] = State::Failed(f);
                continue;
            }
            if !step.deps.iter().all(|d| matches!(states[*d], State::Done)) {
                continue;
            }
            let request = render(&run.prompts, &step.key, &Inputs::new(&sample, &outputs));
            // What the call's answer is checked against: the outputs the
            // step reads, copied so the call can run on its own.
            let read: Outputs = step
                .deps
                .iter()
                .filter_map(|d| {
                    let key = &plan.steps[*d].key;
                    outputs.get(key).map(|o| (key.clone(), o.clone()))
                })
                .collect();
            let (run, ledger, sample) =
                (Arc::clone(&run), Arc::clone(&ledger), Arc::clone(&sample));
            match request {
                Err(e) => states[i] = State::Failed(internal(&step.key, &e)),
                Ok(Request::Resolved(output)) => {
                    outputs.insert(step.key.clone(), output);
                    states[i] = State::Done;
                }
                Ok(request @ (Request::Judge(_) | Request::Items(_))) => {
                    let scope = scopes[i].clone();
                    calls.spawn(async move {
                        let asker = Asker {
                            run: &run,
                            ledger: &ledger,
                            scope: &scope,
                        };
                        let inputs = Inputs::new(&sample, &read);
                        (i, asker.request(&request, &inputs, repeat).await)
                    });
                    states[i] = State::Running;
                }
                Ok(Request::Embed(req)) => {
                    let scope = scopes[i].clone();
                    calls.spawn(async move {
                        let asked = match embed(&run, &ledger, &scope, &req.texts).await {
                            Ok(answer) => {
                                match validate(&req.step, &Inputs::new(&sample, &read), &answer) {
                                    Ok(output) => Asked::Valid(output),
                                    Err(m) => Asked::Failed(mismatch_failure(
                                        &format!("step {}", m.step),
                                        &m.problem,
                                        &m.answer,
                                    )),
                                }
                            }
                            Err(e) => match &run.embedder {
                                Some((embedder, _)) => {
                                    use assay_llm::Embedder;
                                    Asked::failed(e, &ledger, embedder.identity())
                                }
                                None => Asked::Failed(judge_failure(&e)),
                            },
                        };
                        (i, asked)
                    });
                    states[i] = State::Running;
                }
            }
        }
        let Some(joined) = calls.join_next().await else {
            break;
        };
        let (i, asked) = joined.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        states[i] = match asked {
            Asked::Valid(output) => {
                outputs.insert(plan.steps[i].key.clone(), output);
                State::Done
            }
            Asked::Deferred => State::Deferred,
            Asked::Failed(f) => State::Failed(f),
            Asked::Fatal(e) => {
                calls.abort_all();
                return Err(e);
            }
        };
    }
    if states.iter().any(|s| matches!(s, State::Deferred)) {
        return deferred(&run);
    }
    let failures: BTreeMap<&StepKey, &Failure> = plan
        .steps
        .iter()
        .zip(&states)
        .filter_map(|(s, st)| match st {
            State::Failed(f) => Some((&s.key, f)),
            _ => None,
        })
        .collect();
    // (metric position, output name, outcome), in output order.
    let mut out: Vec<(usize, String, Outcome)> = Vec::new();
    for (m, metric) in run.metrics.iter().enumerate() {
        match metric.score(&sample, &outputs) {
            Ok(scored) => out.extend(scored.into_iter().map(|(name, o)| (m, name, o))),
            Err(e) => {
                let failure = metric_steps(metric, &sample)
                    .iter()
                    .find_map(|k| failures.get(k))
                    .map_or_else(
                        || Failure {
                            kind: FailureKind::Undefined,
                            message: format!("internal: {e}"),
                        },
                        |f| (*f).clone(),
                    );
                out.extend(
                    metric
                        .outputs()
                        .into_iter()
                        .map(|name| (m, name, Outcome::Failed(failure.clone()))),
                );
            }
        }
    }
    match run.reasons {
        Reasons::Composed => Ok(Some(out.into_iter().map(|(_, _, o)| o).collect())),
        Reasons::Llm => explain(run, ledger, &sample, out, repeat).await,
    }
}

/// The outcomes with the judge-written reason of each scored one (see
/// [`reason::explained`]); the calls run at once, under the judge's limits.
async fn explain(
    run: Arc<JudgedRun>,
    ledger: Arc<UsageLedger>,
    sample: &Sample,
    outcomes: Vec<(usize, String, Outcome)>,
    repeat: u32,
) -> Judged {
    let mut calls: JoinSet<(usize, Asked<String>)> = JoinSet::new();
    for (o, (m, name, outcome)) in outcomes.iter().enumerate() {
        let Some(req) = reason::request(&run.prompts, &run.metrics[*m], name, outcome, sample)
        else {
            continue;
        };
        let (run, ledger) = (Arc::clone(&run), Arc::clone(&ledger));
        let (scope, what) = (
            Scope::new([run.metrics[*m].id().to_string()]),
            format!("reason of {name}"),
        );
        calls.spawn(async move {
            let asker = Asker {
                run: &run,
                ledger: &ledger,
                scope: &scope,
            };
            let chat = chat_request(req.prompt_id, req.prompt_version, req.messages.clone())
                .with_schema(req.schema);
            (
                o,
                asker
                    .checked(&what, seeded(chat, 0.0, u64::from(repeat)), reason::check)
                    .await,
            )
        });
    }
    let mut written: Vec<Option<Result<String, Failure>>> = vec![None; outcomes.len()];
    let mut waiting = false;
    while let Some(joined) = calls.join_next().await {
        let (o, asked) = joined.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        match asked {
            Asked::Valid(text) => written[o] = Some(Ok(text)),
            Asked::Deferred => waiting = true,
            Asked::Failed(f) => written[o] = Some(Err(f)),
            Asked::Fatal(e) => {
                calls.abort_all();
                return Err(e);
            }
        }
    }
    if waiting {
        return deferred(&run);
    }
    Ok(Some(
        outcomes
            .into_iter()
            .zip(written)
            .map(|((_, _, outcome), w)| match w {
                Some(w) => reason::explained(outcome, w),
                None => outcome,
            })
            .collect(),
    ))
}

/// Answers each metric's once-per-run steps ([`JudgedMetric::setup`]) and
/// hands it the output or the failure, before any sample. Under `--batch
/// export` such a step must be in the cache already: the samples' requests
/// depend on its answer.
pub(crate) async fn set_up(run: &JudgedRun, ledger: &UsageLedger) -> crate::Result<()> {
    let sample = Sample::default();
    let outputs = Outputs::new();
    let inputs = Inputs::new(&sample, &outputs);
    for (metric, step) in run
        .metrics
        .iter()
        .flat_map(|m| m.setup().into_iter().map(move |s| (m, s)))
    {
        let scope = Scope::new([metric.id().to_string()]);
        let asker = Asker {
            run,
            ledger,
            scope: &scope,
        };
        let asked = match render(&run.prompts, &step, &inputs) {
            Ok(request) => asker.request(&request, &inputs, 0).await,
            Err(e) => Asked::Failed(internal(&step, &e)),
        };
        match asked {
            Asked::Valid(output) => metric.set_up(&step, Ok(&output)),
            Asked::Failed(failure) => metric.set_up(&step, Err(&failure)),
            Asked::Deferred => {
                return Err(EngineError::Usage(format!(
                    "{}: step {step} is not in the cache, and every sample's request needs its \
                     answer; under --batch export give its result as a parameter (see `assay \
                     metrics`), or run once without --batch export",
                    metric.id()
                )))
            }
            Asked::Fatal(stop) => {
                return Err(stop.into_engine_error("no sample was scored yet"));
            }
        }
    }
    Ok(())
}

/// A sample deferred to the batch file: no judged outcome this round.
fn deferred(run: &JudgedRun) -> Judged {
    if let Some(export) = &run.export {
        export.defer_sample();
    }
    Ok(None)
}

/// The steps a metric reads, with the two-step form of a step (the
/// shared-statements form of `context_recall`) that the plan may have
/// chosen.
fn metric_steps(metric: &JudgedMetric, sample: &Sample) -> Vec<StepKey> {
    let mut keys = Vec::new();
    for key in metric.steps(sample) {
        if let Some((first, second)) = key.split() {
            keys.push(first);
            keys.push(second);
        }
        keys.push(key);
    }
    keys
}

/// The metrics a step's usage is counted under: every metric of the run
/// that reads it (the ledger splits a shared step's calls among them), of
/// each metric's name and [`metric_steps`].
fn scope_of(reads: &[(String, Vec<StepKey>)], key: &StepKey) -> Scope {
    Scope::new(
        reads
            .iter()
            .filter(|(_, keys)| keys.contains(key))
            .map(|(name, _)| name.clone()),
    )
}

/// A chat request of prompt `id` at `version` (its cache key's prompt part).
fn chat_request(id: PromptId, version: u32, messages: Vec<Message>) -> ChatRequest {
    ChatRequest::new(
        PromptRef {
            id: id.name().to_string(),
            version: version.to_string(),
        },
        messages,
    )
}

fn seeded(mut chat: ChatRequest, temperature: f64, seed: u64) -> ChatRequest {
    chat.sampling.temperature = temperature;
    chat.sampling.seed = Some(seed);
    chat
}

/// One chat request per vote, each with its own seed so votes can differ.
/// Repeat r's votes take the seeds after those of repeat r - 1, so repeat
/// 0 keeps seeds 0..n (and the cache of runs made before `--repeats`).
fn chat_requests(req: &JudgeRequest, repeat: u32) -> Vec<ChatRequest> {
    let n_votes = req.n_votes.max(1);
    let chat = chat_request(req.prompt_id, req.prompt_version, req.messages.clone())
        .with_schema(req.schema.clone());
    (0..n_votes)
        .map(|vote| {
            let seed = u64::from(repeat) * u64::from(n_votes) + u64::from(vote);
            seeded(chat.clone(), req.temperature, seed)
        })
        .collect()
}

/// The conversation again, with the model's answer and what is wrong with it.
fn repair_conversation(messages: &[Message], answer: &Value, problem: &Problem) -> Vec<Message> {
    let mut messages = messages.to_vec();
    messages.push(Message::assistant(answer.to_string()));
    messages.push(Message::user(format!(
        "Your answer does not fit the question: {problem}. Reply again with only the corrected JSON."
    )));
    messages
}

/// A `mismatch` failure with the answer as evidence.
fn mismatch_failure(what: &dyn fmt::Display, problem: &Problem, answer: &Value) -> Failure {
    Failure {
        kind: FailureKind::Mismatch,
        message: format!("{what}: {problem}; answer: {answer}"),
    }
}

/// The judge calls of one sample's metric: `scope` is the metric its usage
/// is counted under.
struct Asker<'a> {
    run: &'a JudgedRun,
    ledger: &'a UsageLedger,
    scope: &'a Scope,
}

impl Asker<'_> {
    /// The output of a judge request (one call, votes or items); a
    /// resolved request is its output. Embedding requests go to
    /// [`embed`], not here.
    async fn request(
        &self,
        request: &Request,
        inputs: &Inputs<'_>,
        repeat: u32,
    ) -> Asked<StepOutput> {
        match request {
            Request::Judge(req) => self.step(req, inputs, repeat).await,
            Request::Items(req) => self.items(req, inputs).await,
            Request::Resolved(output) => Asked::Valid(output.clone()),
            Request::Embed(req) => {
                Asked::Failed(internal(&req.step, &"an embedding step asks no judge"))
            }
        }
    }

    /// A judge step's output: one checked answer, or, for a step that draws
    /// several votes, each vote checked (and repaired) on its own, then
    /// all of them together. Every vote missing from the cache under
    /// `--batch export` is deferred, so one batch file holds them all.
    async fn step(
        &self,
        req: &JudgeRequest,
        inputs: &Inputs<'_>,
        repeat: u32,
    ) -> Asked<StepOutput> {
        let what = format!("step {}", req.step);
        let problem = |m: Mismatch| *m.problem;
        let mut chats = chat_requests(req, repeat);
        if chats.len() == 1 {
            let chat = chats.remove(0);
            return self
                .checked(&what, chat, |a| {
                    validate(&req.step, inputs, a).map_err(problem)
                })
                .await;
        }
        let votes = chats
            .into_iter()
            .enumerate()
            .map(|(v, chat)| (format!("{what}, vote {}", v + 1), chat))
            .collect();
        let check = |a: &Value| validate_vote(&req.step, inputs, a).map_err(problem);
        self.each(votes, check)
            .await
            .and_then(|votes| self.combined(&req.step, inputs, Value::Array(votes)))
    }

    /// A step asked one item at a time: each item's answer checked (and
    /// repaired) on its own, then all of them as the list's answer. The
    /// items go one after another, so an in-process judge reads what they
    /// share (instruction, examples, often the contexts) from its prefix
    /// cache.
    async fn items(&self, req: &ItemRequests, inputs: &Inputs<'_>) -> Asked<StepOutput> {
        let what = format!("step {}", req.step);
        let items = req
            .items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let chat = chat_request(item.prompt_id, item.prompt_version, item.messages.clone());
                let chat = match &item.continuation {
                    Some(reply) => chat.with_continuation(reply.clone()),
                    None => chat.with_schema(item.schema.clone()),
                };
                (format!("{what}, item {}", i + 1), chat)
            })
            .collect();
        self.each(items, |a| req.check_item(a))
            .await
            .and_then(|answers| match req.join(answers) {
                Ok(all) => self.combined(&req.step, inputs, all),
                Err(problem) => Asked::Failed(Failure {
                    kind: FailureKind::Mismatch,
                    message: format!("{what}: {problem}"),
                }),
            })
    }

    /// The answers of several calls of one step, each checked with `check`
    /// (and repaired) on its own; every call missing from the cache under
    /// `--batch export` is deferred, so one batch file holds them all.
    async fn each(
        &self,
        calls: Vec<(String, ChatRequest)>,
        check: impl Fn(&Value) -> Result<(), Problem>,
    ) -> Asked<Vec<Value>> {
        let mut answers = Vec::with_capacity(calls.len());
        let mut waiting = false;
        for (what, chat) in calls {
            match self
                .checked(&what, chat, |a| check(a).map(|()| a.clone()))
                .await
            {
                Asked::Valid(answer) => answers.push(answer),
                Asked::Deferred => waiting = true,
                Asked::Failed(f) => return Asked::Failed(f),
                Asked::Fatal(e) => return Asked::Fatal(e),
            }
        }
        if waiting {
            return Asked::Deferred;
        }
        Asked::Valid(answers)
    }

    /// The step's output from its calls' answers put together.
    fn combined(&self, step: &StepKey, inputs: &Inputs<'_>, all: Value) -> Asked<StepOutput> {
        match validate(step, inputs, &all) {
            Ok(output) => Asked::Valid(output),
            Err(m) => Asked::Failed(mismatch_failure(&format!("step {step}"), &m.problem, &all)),
        }
    }

    /// Asks `chat` and checks the answer with `check`. An answer that does
    /// not fit is shown back to the judge with the problem, at most
    /// `repair_attempts` times, then becomes a `mismatch` failure of
    /// `what` carrying the last answer.
    async fn checked<T>(
        &self,
        what: &(dyn fmt::Display + Sync),
        mut chat: ChatRequest,
        check: impl Fn(&Value) -> Result<T, Problem>,
    ) -> Asked<T> {
        let asked = chat.messages.clone();
        let mut repairs = 0;
        loop {
            let answer = match self.ask(&chat).await {
                Ok(Some(answer)) => answer,
                Ok(None) => return Asked::Deferred,
                Err(e) => return Asked::failed(e, self.ledger, self.run.judge.identity()),
            };
            match check(&answer) {
                Ok(valid) => return Asked::Valid(valid),
                // The judge is shown, and the evidence keeps, its answer as
                // written: without the choice probabilities put beside it.
                Err(problem) if repairs < self.run.options.repair_attempts => {
                    repairs += 1;
                    let written = without_choice_probabilities(&answer);
                    chat.messages = repair_conversation(&asked, &written, &problem);
                }
                Err(problem) => {
                    let written = without_choice_probabilities(&answer);
                    return Asked::Failed(mismatch_failure(what, &problem, &written));
                }
            }
        }
    }

    /// The JSON answer to `chat`, its usage in the ledger; `None` under
    /// `--batch export` when the cache lacks it (it goes into the batch
    /// file instead).
    async fn ask(&self, chat: &ChatRequest) -> Result<Option<Value>, Error> {
        let run = self.run;
        let model = &run.judge.identity().model;
        let answer = match &run.export {
            None => run.judge.chat(chat).await,
            Some(export) => match run.judge.lookup(chat) {
                Ok(Some(resp)) => Ok(resp),
                Ok(None) => {
                    export.defer(&run.judge.capped(chat));
                    return Ok(None);
                }
                Err(e) => Err(e),
            },
        };
        match answer {
            Ok(resp) => {
                self.ledger.record(self.scope, model, CallKind::Chat, &resp);
                let resp = with_probabilities(resp);
                if chat.continuation.is_some() {
                    let tokens = resp.logprobs.ok_or_else(|| {
                        Error::new(
                            FailureKind::InvalidResponse,
                            "no log-probabilities for the reply it was asked to score",
                        )
                    })?;
                    return Ok(Some(reply_answer(
                        tokens.iter().map(|t| (t.token.as_str(), t.logprob)),
                    )));
                }
                resp.json.map(Some).ok_or_else(|| {
                    Error::new(FailureKind::InvalidResponse, "no JSON answer")
                        .with_raw_output(resp.text)
                })
            }
            Err(e) => {
                self.ledger
                    .record_failure(self.scope, model, CallKind::Chat, &e);
                Err(e)
            }
        }
    }
}

/// The answer's JSON with the judge's choice probabilities beside the
/// choices they belong to, where validation reads them.
fn with_probabilities(mut resp: ChatResponse) -> ChatResponse {
    if let (Some(json), Some(choices)) = (&mut resp.json, &resp.choice_probabilities) {
        *json = with_choice_probabilities(
            std::mem::take(json),
            choices
                .iter()
                .map(|c| (c.pointer.as_str(), &c.probabilities[..])),
        );
    }
    resp
}

async fn embed(
    run: &JudgedRun,
    ledger: &UsageLedger,
    scope: &Scope,
    texts: &[String],
) -> Result<Value, Error> {
    let Some((embedder, _)) = &run.embedder else {
        return Err(Error::new(FailureKind::Config, "no --embedder given"));
    };
    use assay_llm::Embedder;
    let model = embedder.identity().model.clone();
    let out = match embedder.embed_call(texts).await {
        Ok((out, call)) => {
            ledger.record(scope, &model, CallKind::Embedding, call);
            out
        }
        Err(e) => {
            ledger.record_failure(scope, &model, CallKind::Embedding, &e);
            return Err(e);
        }
    };
    Ok(Value::Array(
        out.vectors
            .iter()
            .map(|v| Value::from(v.iter().map(|x| f64::from(*x)).collect::<Vec<f64>>()))
            .collect(),
    ))
}

/// A judge error as an outcome's failure, with the raw answer as evidence.
fn judge_failure(e: &Error) -> Failure {
    let message = match e.raw_output() {
        Some(raw) => format!("{}; answer: {raw}", e.detail()),
        None => e.detail().to_string(),
    };
    Failure {
        kind: e.kind(),
        message,
    }
}

fn internal(key: &StepKey, e: &dyn std::fmt::Display) -> Failure {
    Failure {
        kind: FailureKind::Undefined,
        message: format!("internal: step {key}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judge_failure_keeps_its_kind_and_the_raw_answer() {
        let parse = Error::new(FailureKind::Parse, "not JSON").with_raw_output("oops");
        let failure = judge_failure(&parse);
        assert_eq!(failure.kind, FailureKind::Parse);
        assert_eq!(failure.message, "not JSON; answer: oops");
    }
}
