//! The judged metrics of one sample: its plan's steps start as soon as the
//! steps they read are done, judge calls go through the `Judge` (cache,
//! single-flight, limiter, retries, schema repair), embeddings through the
//! `CachedEmbedder`. An answer that fits its schema but not its question
//! (a [`Mismatch`]) gets one re-ask showing the model its answer and the
//! problem (single-vote steps; a multi-vote step's mismatch fails at
//! once). Failures become outcomes of the metrics that needed the step;
//! only a run-fatal judge error (`auth`) is returned as an error. Under
//! `--batch export` a judge call missing from the cache defers its step
//! (and the steps that read it), and the sample gives no judged outcome.

use crate::config::JudgedRun;
use assay_core::{Failure, FailureKind, Outcome, Sample};
use assay_llm::{
    CallKind, ChatModel, ChatRequest, ChatResponse, Error, ErrorKind, Message, PromptRef, Scope,
    UsageLedger,
};
use assay_metrics::judged::validate::with_choice_probabilities;
use assay_metrics::judged::{
    render, validate, Inputs, JudgeRequest, JudgedMetric, Mismatch, Outputs, Request, Role, StepKey,
};
use serde_json::Value;
use std::collections::BTreeMap;
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
pub type Judged = Result<Option<Vec<Outcome>>, Error>;

/// What a finished call brings back: the step's position, and the answer
/// (`None`: deferred to the batch file).
type Answer = (usize, Result<Option<Value>, Error>);

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
    let plan = assay_metrics::judged::plan(&run.metrics, &sample);
    let scopes: Vec<Scope> = plan
        .steps
        .iter()
        .map(|s| scope_of(&run.metrics, &sample, &s.key))
        .collect();
    let mut states: Vec<State> = plan.steps.iter().map(|_| State::Waiting).collect();
    let mut requests: Vec<Option<JudgeRequest>> = vec![None; plan.steps.len()];
    let mut repaired = vec![false; plan.steps.len()];
    let mut outputs = Outputs::new();
    let mut calls: JoinSet<Answer> = JoinSet::new();
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
            match request {
                Err(e) => states[i] = State::Failed(internal(&step.key, &e)),
                Ok(Request::Resolved(output)) => {
                    outputs.insert(step.key.clone(), output);
                    states[i] = State::Done;
                }
                Ok(Request::Judge(req)) => {
                    let (run, ledger, scope) =
                        (Arc::clone(&run), Arc::clone(&ledger), scopes[i].clone());
                    let chats =
                        chat_requests(&req, req.messages.iter().map(to_llm).collect(), repeat);
                    calls.spawn(async move { (i, ask(&run, &ledger, &scope, chats).await) });
                    requests[i] = Some(req);
                    states[i] = State::Running;
                }
                Ok(Request::Embed(req)) => {
                    let (run, ledger, scope) =
                        (Arc::clone(&run), Arc::clone(&ledger), scopes[i].clone());
                    calls.spawn(async move {
                        (i, embed(&run, &ledger, &scope, &req.texts).await.map(Some))
                    });
                    states[i] = State::Running;
                }
            }
        }
        let Some(joined) = calls.join_next().await else {
            break;
        };
        let (i, answer) = joined.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        let key = &plan.steps[i].key;
        let answer = match answer {
            Ok(Some(a)) => a,
            Ok(None) => {
                states[i] = State::Deferred;
                continue;
            }
            Err(e) if e.kind().is_run_fatal() => {
                calls.abort_all();
                return Err(e);
            }
            Err(e) => {
                states[i] = State::Failed(judge_failure(&e));
                continue;
            }
        };
        let checked = validate(key, &Inputs::new(&sample, &outputs), &answer);
        match checked {
            Ok(output) => {
                outputs.insert(key.clone(), output);
                states[i] = State::Done;
            }
            Err(mismatch) => match requests[i].as_ref().filter(|r| r.n_votes == 1) {
                Some(req) if !repaired[i] => {
                    repaired[i] = true;
                    let chats = chat_requests(req, repair_conversation(req, &mismatch), repeat);
                    let (run, ledger, scope) =
                        (Arc::clone(&run), Arc::clone(&ledger), scopes[i].clone());
                    calls.spawn(async move { (i, ask(&run, &ledger, &scope, chats).await) });
                }
                _ => {
                    states[i] = State::Failed(Failure {
                        kind: FailureKind::Mismatch,
                        message: format!("{mismatch}; answer: {}", mismatch.answer),
                    })
                }
            },
        }
    }
    if states.iter().any(|s| matches!(s, State::Deferred)) {
        if let Some(export) = &run.export {
            export.defer_sample();
        }
        return Ok(None);
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
    let mut out = Vec::new();
    for metric in &run.metrics {
        match metric.score(&sample, &outputs) {
            Ok(scored) => out.extend(scored.into_iter().map(|(_, o)| o)),
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
                        .iter()
                        .map(|_| Outcome::Failed(failure.clone())),
                );
            }
        }
    }
    Ok(Some(out))
}

/// The steps a metric reads, with the shared-statements form of
/// `context_recall` that the plan may have chosen.
fn metric_steps(metric: &JudgedMetric, sample: &Sample) -> Vec<StepKey> {
    let mut keys = Vec::new();
    for key in metric.steps(sample) {
        if let StepKey::ReferenceRecall(i) = key {
            keys.push(StepKey::ReferenceStatements(i));
            keys.push(StepKey::ReferenceAttribution(i));
        }
        keys.push(key);
    }
    keys
}

/// The metrics a step's usage is counted under: every metric of the run
/// that reads it (the ledger splits a shared step's calls among them).
fn scope_of(metrics: &[JudgedMetric], sample: &Sample, key: &StepKey) -> Scope {
    Scope::new(
        metrics
            .iter()
            .filter(|m| metric_steps(m, sample).contains(key))
            .map(|m| m.id().to_string()),
    )
}

fn to_llm(m: &assay_metrics::judged::Message) -> Message {
    match m.role {
        Role::System => Message::system(m.content.clone()),
        Role::User => Message::user(m.content.clone()),
        Role::Assistant => Message::assistant(m.content.clone()),
    }
}

/// One chat request per vote, each with its own seed so votes can differ.
/// Repeat r's votes take the seeds after those of repeat r - 1, so repeat
/// 0 keeps seeds 0..n (and the cache of runs made before `--repeats`).
fn chat_requests(req: &JudgeRequest, messages: Vec<Message>, repeat: u32) -> Vec<ChatRequest> {
    let n_votes = req.n_votes.max(1);
    (0..n_votes)
        .map(|vote| {
            let mut chat = ChatRequest::new(
                PromptRef {
                    id: req.prompt_id.name().to_string(),
                    version: req.prompt_version.to_string(),
                },
                messages.clone(),
            )
            .with_schema(req.schema.clone());
            chat.sampling.temperature = req.temperature;
            chat.sampling.seed = Some(u64::from(repeat) * u64::from(n_votes) + u64::from(vote));
            chat
        })
        .collect()
}

/// The request again, with the model's answer and what is wrong with it.
fn repair_conversation(req: &JudgeRequest, mismatch: &Mismatch) -> Vec<Message> {
    let mut messages: Vec<Message> = req.messages.iter().map(to_llm).collect();
    messages.push(Message::assistant(mismatch.answer.to_string()));
    messages.push(Message::user(format!(
        "Your answer does not fit the question: {}. Reply again with only the corrected JSON.",
        mismatch.problem
    )));
    messages
}

/// Asks every vote; one vote's answer is the answer, several are a JSON
/// array. Under `--batch export` every vote missing from the cache is
/// deferred (all of them, so one batch file holds them) and the answer is
/// `None`.
async fn ask(
    run: &JudgedRun,
    ledger: &UsageLedger,
    scope: &Scope,
    chats: Vec<ChatRequest>,
) -> Result<Option<Value>, Error> {
    let model = run.judge.identity().model.clone();
    let mut answers = Vec::with_capacity(chats.len());
    let mut deferred = false;
    for chat in &chats {
        let answer = match &run.export {
            None => run.judge.chat(chat).await,
            Some(export) => match run.judge.lookup(chat) {
                Ok(Some(resp)) => Ok(resp),
                Ok(None) => {
                    export.defer(chat);
                    deferred = true;
                    continue;
                }
                Err(e) => Err(e),
            },
        };
        match answer {
            Ok(resp) => {
                ledger.record(scope, &model, CallKind::Chat, &resp);
                let resp = with_probabilities(resp);
                answers.push(resp.json.ok_or_else(|| {
                    Error::new(ErrorKind::InvalidResponse, "no JSON answer")
                        .with_raw_output(resp.text)
                })?);
            }
            Err(e) => {
                ledger.record_failure(scope, &model, CallKind::Chat, &e);
                return Err(e);
            }
        }
    }
    if deferred {
        return Ok(None);
    }
    Ok(Some(if answers.len() == 1 {
        answers.pop().unwrap_or_default()
    } else {
        Value::Array(answers)
    }))
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
        return Err(Error::new(ErrorKind::Config, "no --embedder given"));
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
    let kind = match e.kind() {
        ErrorKind::Auth => FailureKind::Auth,
        ErrorKind::RateLimited => FailureKind::RateLimited,
        ErrorKind::Timeout => FailureKind::Timeout,
        ErrorKind::Server => FailureKind::Server,
        ErrorKind::Connection => FailureKind::Connection,
        ErrorKind::Rejected => FailureKind::Rejected,
        ErrorKind::InvalidResponse => FailureKind::InvalidResponse,
        ErrorKind::Truncated => FailureKind::Truncated,
        ErrorKind::ContentFilter => FailureKind::ContentFilter,
        ErrorKind::Parse => FailureKind::Parse,
        ErrorKind::Cache => FailureKind::Cache,
        ErrorKind::Config => FailureKind::Config,
    };
    let message = match e.raw_output() {
        Some(raw) => format!("{}; answer: {raw}", e.detail()),
        None => e.detail().to_string(),
    };
    Failure { kind, message }
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
    fn failure_kinds_are_named_as_the_judge_errors() {
        for kind in ErrorKind::ALL {
            assert_eq!(
                judge_failure(&Error::new(kind, "x")).kind.name(),
                kind.as_str()
            );
        }
        let parse = Error::new(ErrorKind::Parse, "not JSON").with_raw_output("oops");
        assert_eq!(judge_failure(&parse).message, "not JSON; answer: oops");
    }
}
