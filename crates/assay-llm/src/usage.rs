//! Token, request and cost accounting, per metric (scope) and per run.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use crate::model::{ChatResponse, Source, Usage};
use crate::{Error, FailureKind, JudgeHistory};

/// Prices of one model in currency units per million tokens.
///
/// Parsed from `INPUT/OUTPUT`, e.g. `0.15/0.60`:
/// ```
/// use assay_llm::Price;
/// let p: Price = "0.15/0.6".parse().unwrap();
/// assert_eq!((p.input_per_million, p.output_per_million), (0.15, 0.6));
/// assert_eq!(p.to_string(), "0.15/0.6");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Price of a million prompt tokens.
    pub input_per_million: f64,
    /// Price of a million completion tokens.
    pub output_per_million: f64,
}

impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.input_per_million, self.output_per_million)
    }
}

impl FromStr for Price {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || {
            Error::new(
                FailureKind::Config,
                format!("price {s:?} must be INPUT/OUTPUT per million tokens"),
            )
        };
        let (i, o) = s.split_once('/').ok_or_else(bad)?;
        let parse = |x: &str| {
            x.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
        };
        Ok(Price {
            input_per_million: parse(i).ok_or_else(bad)?,
            output_per_million: parse(o).ok_or_else(bad)?,
        })
    }
}

/// Prices by model name. No price is assumed: a model missing here has no cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable(BTreeMap<String, Price>);

impl Price {
    /// What `usage` costs at this price.
    pub fn cost(&self, usage: Usage) -> f64 {
        usage.prompt_tokens as f64 * self.input_per_million / 1e6
            + usage.completion_tokens as f64 * self.output_per_million / 1e6
    }
}

impl PriceTable {
    /// Sets the price of `model`.
    pub fn insert(&mut self, model: impl Into<String>, price: Price) {
        self.0.insert(model.into(), price);
    }

    /// The price of `model`, if known.
    pub fn get(&self, model: &str) -> Option<Price> {
        self.0.get(model).copied()
    }
}

/// One answered call, as the ledger sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Call {
    /// Where the answer came from.
    pub source: Source,
    /// Tokens of the call.
    pub usage: Usage,
    /// Its latency.
    pub latency: Duration,
}

impl From<&ChatResponse> for Call {
    fn from(r: &ChatResponse) -> Self {
        Call {
            source: r.source,
            usage: r.usage,
            latency: r.latency,
        }
    }
}

/// Latency percentiles over upstream calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Latency {
    /// Median.
    pub p50: Duration,
    /// 90th percentile.
    pub p90: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// Slowest.
    pub max: Duration,
}

/// What a call asked the provider for. The ledger keeps them apart: judge
/// calls and embedding requests are counted, and priced, separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CallKind {
    /// A chat completion (a judge call).
    Chat,
    /// An embeddings request.
    Embedding,
}

/// The metrics a call was made for: the one that needed it, or every
/// metric of the run that reads a shared step. Sorted, without repeats.
///
/// ```
/// use assay_llm::Scope;
/// let s = Scope::new(["faithfulness", "answer_correctness", "faithfulness"]);
/// assert_eq!(s.metrics(), ["answer_correctness", "faithfulness"]);
/// assert!(s.contains("faithfulness") && !s.contains("bias"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Scope(Vec<String>);

impl Scope {
    /// The scope of `metrics`.
    pub fn new<S: Into<String>>(metrics: impl IntoIterator<Item = S>) -> Scope {
        let mut ids: Vec<String> = metrics.into_iter().map(Into::into).collect();
        ids.sort_unstable();
        ids.dedup();
        Scope(ids)
    }

    /// The metrics, sorted.
    pub fn metrics(&self) -> &[String] {
        &self.0
    }

    /// Whether `metric` is one of them.
    pub fn contains(&self, metric: &str) -> bool {
        self.0.iter().any(|m| m == metric)
    }
}

/// Aggregated usage of a metric or the whole run, in whole calls.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageSummary {
    /// Answers obtained (upstream + coalesced + cache hits).
    pub requests: u64,
    /// Answers that needed an upstream call.
    pub upstream: u64,
    /// Answers served from the cache.
    pub cache_hits: u64,
    /// Answers shared with an identical request in flight.
    pub coalesced: u64,
    /// Calls that failed, by error kind.
    pub failures: BTreeMap<String, u64>,
    /// Prompt tokens paid for (upstream calls only).
    pub prompt_tokens: u64,
    /// Completion tokens paid for (upstream calls only).
    pub completion_tokens: u64,
    /// Latency percentiles of upstream calls; `None` when there were none.
    pub latency: Option<Latency>,
    /// Cost from the price table; `None` when a model that was paid for has no price.
    pub cost: Option<f64>,
}

/// A metric's share of the run's usage: each call counts as 1/n for each
/// of the n metrics of its [`Scope`], so the shares of all metrics add up
/// to the run's totals. Fractional by nature.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageShare {
    /// Share of the answers obtained.
    pub requests: f64,
    /// Share of the upstream calls.
    pub upstream: f64,
    /// Share of the cache hits.
    pub cache_hits: f64,
    /// Share of the coalesced answers.
    pub coalesced: f64,
    /// Share of the prompt tokens paid for.
    pub prompt_tokens: f64,
    /// Share of the completion tokens paid for.
    pub completion_tokens: f64,
    /// Share of the cost; `None` when a model that was paid for has no price.
    pub cost: Option<f64>,
}

#[derive(Debug, Default, Clone)]
struct Tally {
    upstream: u64,
    cache_hits: u64,
    coalesced: u64,
    failures: BTreeMap<String, u64>,
    usage: Usage,
    latencies: Latencies,
}

impl Tally {
    fn requests(&self) -> u64 {
        self.upstream + self.cache_hits + self.coalesced
    }

    /// The cost of this tally's tokens, `None` when they have no price.
    fn cost(&self, model: &str, prices: &PriceTable) -> Option<f64> {
        if self.usage == Usage::default() {
            return Some(0.0);
        }
        prices.get(model).map(|p| p.cost(self.usage))
    }
}

type Key = (Scope, String, CallKind);

/// A thread-safe usage ledger keyed by scope (the metrics a call served),
/// model and kind of call.
#[derive(Debug, Default)]
pub struct UsageLedger {
    tallies: Mutex<BTreeMap<Key, Tally>>,
}

impl UsageLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    fn with_tally(&self, scope: &Scope, model: &str, kind: CallKind, f: impl FnOnce(&mut Tally)) {
        // A poisoned ledger only means another thread panicked mid-update;
        // the counts are still usable.
        let mut map = self.tallies.lock().unwrap_or_else(|p| p.into_inner());
        f(map
            .entry((scope.clone(), model.to_owned(), kind))
            .or_default());
    }

    /// Records an answered call of `model` made for `scope`.
    pub fn record(&self, scope: &Scope, model: &str, kind: CallKind, call: impl Into<Call>) {
        let call = call.into();
        self.with_tally(scope, model, kind, |t| match call.source {
            Source::Cache => t.cache_hits += 1,
            Source::Coalesced => t.coalesced += 1,
            Source::Upstream => {
                t.upstream += 1;
                t.usage += call.usage;
                t.latencies.record(call.latency);
            }
        });
    }

    /// Records a failed call of `model` made for `scope`.
    pub fn record_failure(&self, scope: &Scope, model: &str, kind: CallKind, error: &Error) {
        self.with_tally(scope, model, kind, |t| {
            *t.failures.entry(error.kind().to_string()).or_default() += 1
        });
    }

    /// Whether `model` has answered any call of this ledger's run
    /// upstream (an answer shared with an identical call in flight
    /// counts; one from the cache does not: it says nothing of the
    /// endpoint now).
    pub fn history(&self, model: &str) -> JudgeHistory {
        let map = self.tallies.lock().unwrap_or_else(|p| p.into_inner());
        let answered = map
            .iter()
            .any(|((_, m, _), t)| m == model && t.upstream + t.coalesced > 0);
        if answered {
            JudgeHistory::Answered
        } else {
            JudgeHistory::NothingAnswered
        }
    }

    /// Every call of `kind` that served `metric`, shared ones in full: the
    /// calls of the steps it read, as if it had run alone.
    pub fn alone(&self, metric: &str, kind: CallKind, prices: &PriceTable) -> UsageSummary {
        self.summarise(|s, k| k == kind && s.contains(metric), prices)
    }

    /// The run's calls of `kind`, each once.
    pub fn total(&self, kind: CallKind, prices: &PriceTable) -> UsageSummary {
        self.summarise(|_, k| k == kind, prices)
    }

    /// `metric`'s share of the calls of `kind`: a call shared by n
    /// metrics counts 1/n for each.
    pub fn share(&self, metric: &str, kind: CallKind, prices: &PriceTable) -> UsageShare {
        let map = self.tallies.lock().unwrap_or_else(|p| p.into_inner());
        let mut share = UsageShare {
            requests: 0.0,
            upstream: 0.0,
            cache_hits: 0.0,
            coalesced: 0.0,
            prompt_tokens: 0.0,
            completion_tokens: 0.0,
            cost: Some(0.0),
        };
        for ((scope, model, _), t) in map
            .iter()
            .filter(|((s, _, k), _)| *k == kind && s.contains(metric))
        {
            let n = scope.metrics().len() as f64;
            share.requests += t.requests() as f64 / n;
            share.upstream += t.upstream as f64 / n;
            share.cache_hits += t.cache_hits as f64 / n;
            share.coalesced += t.coalesced as f64 / n;
            share.prompt_tokens += t.usage.prompt_tokens as f64 / n;
            share.completion_tokens += t.usage.completion_tokens as f64 / n;
            share.cost = share
                .cost
                .zip(t.cost(model, prices))
                .map(|(a, c)| a + c / n);
        }
        share
    }

    /// The calls of `kind` the run would have made if no step were shared:
    /// each call once per metric of its scope.
    pub fn calls_if_unshared(&self, kind: CallKind) -> u64 {
        let map = self.tallies.lock().unwrap_or_else(|p| p.into_inner());
        map.iter()
            .filter(|((_, _, k), _)| *k == kind)
            .map(|((s, _, _), t)| t.requests() * s.metrics().len() as u64)
            .sum()
    }

    fn summarise(
        &self,
        include: impl Fn(&Scope, CallKind) -> bool,
        prices: &PriceTable,
    ) -> UsageSummary {
        let map = self.tallies.lock().unwrap_or_else(|p| p.into_inner());
        let mut total = Tally::default();
        let mut cost = Some(0.0);
        for ((_, model, _), t) in map.iter().filter(|((s, _, k), _)| include(s, *k)) {
            total.upstream += t.upstream;
            total.cache_hits += t.cache_hits;
            total.coalesced += t.coalesced;
            total.usage += t.usage;
            total.latencies.add(&t.latencies);
            for (k, n) in &t.failures {
                *total.failures.entry(k.clone()).or_default() += n;
            }
            cost = cost.zip(t.cost(model, prices)).map(|(a, c)| a + c);
        }
        UsageSummary {
            requests: total.requests(),
            upstream: total.upstream,
            cache_hits: total.cache_hits,
            coalesced: total.coalesced,
            failures: total.failures,
            prompt_tokens: total.usage.prompt_tokens,
            completion_tokens: total.usage.completion_tokens,
            latency: total.latencies.percentiles(),
            cost,
        }
    }
}

/// Upstream latencies, counted by their value in microseconds cut to
/// three significant digits: percentiles within 0.1% of the exact ones, in
/// memory that does not grow with the number of calls (at most 900 values
/// a decade; a run of millions of calls kept every latency before).
#[derive(Debug, Default, Clone)]
struct Latencies {
    counts: BTreeMap<u64, u64>,
    n: u64,
    max: Duration,
}

impl Latencies {
    fn record(&mut self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        *self.counts.entry(three_digits(micros)).or_default() += 1;
        self.n += 1;
        self.max = self.max.max(latency);
    }

    fn add(&mut self, other: &Latencies) {
        for (value, count) in &other.counts {
            *self.counts.entry(*value).or_default() += count;
        }
        self.n += other.n;
        self.max = self.max.max(other.max);
    }

    /// Nearest-rank percentiles (of the cut values; the maximum exact).
    fn percentiles(&self) -> Option<Latency> {
        if self.n == 0 {
            return None;
        }
        let at = |q: f64| {
            let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
            let mut seen = 0;
            let value = self
                .counts
                .iter()
                .find(|(_, count)| {
                    seen += **count;
                    seen >= rank
                })
                .map_or(0, |(value, _)| *value);
            Duration::from_micros(value)
        };
        Some(Latency {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: self.max,
        })
    }
}

/// `n` with every digit after its first three set to 0.
fn three_digits(n: u64) -> u64 {
    let (mut kept, mut scale) = (n, 1);
    while kept >= 1000 {
        kept /= 10;
        scale *= 10;
    }
    kept * scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use CallKind::{Chat, Embedding};

    fn call(source: Source, p: u64, c: u64, ms: u64) -> Call {
        Call {
            source,
            usage: Usage {
                prompt_tokens: p,
                completion_tokens: c,
            },
            latency: Duration::from_millis(ms),
        }
    }

    #[test]
    fn a_model_has_answered_once_an_upstream_call_of_it_is_recorded() {
        let ledger = UsageLedger::new();
        let faith = Scope::new(["faithfulness"]);
        let refused = Error::new(FailureKind::Connection, "refused");
        ledger.record_failure(&faith, "gpt", Chat, &refused);
        ledger.record(&faith, "gpt", Chat, call(Source::Cache, 1, 1, 1));
        ledger.record(&faith, "emb", Embedding, call(Source::Upstream, 1, 0, 1));
        assert_eq!(ledger.history("gpt"), JudgeHistory::NothingAnswered);
        ledger.record(&faith, "gpt", Chat, call(Source::Coalesced, 1, 1, 1));
        assert_eq!(ledger.history("gpt"), JudgeHistory::Answered);
    }

    #[test]
    fn latencies_keep_bounded_counts_and_percentiles_within_a_thousandth() {
        // A million calls from 1 ms to 100 s, in a scrambled order.
        let mut latencies = Latencies::default();
        let mut all = Vec::new();
        for i in 0..1_000_000u64 {
            let micros = 1_000 + (i * 7_919_993) % 100_000_000;
            latencies.record(Duration::from_micros(micros));
            all.push(micros);
        }
        // Five decades of microseconds, at most 900 values each.
        assert!(
            latencies.counts.len() <= 5 * 900,
            "{}",
            latencies.counts.len()
        );
        all.sort_unstable();
        let exact = |q: f64| all[((q * all.len() as f64).ceil() as usize).clamp(1, all.len()) - 1];
        let got = latencies.percentiles().unwrap();
        for (q, value) in [(0.5, got.p50), (0.9, got.p90), (0.99, got.p99)] {
            let (want, got) = (exact(q) as f64, value.as_micros() as f64);
            assert!(
                got <= want && want - got <= want * 1e-3,
                "p{q}: {got} against {want}"
            );
        }
        assert_eq!(got.max, Duration::from_micros(*all.last().unwrap()));
        assert_eq!(three_digits(123_456), 123_000);
        assert_eq!(three_digits(999), 999);
    }

    #[test]
    fn ledger_aggregates_per_metric_and_run_with_costs() {
        let ledger = UsageLedger::new();
        let (faith, bias) = (Scope::new(["faithfulness"]), Scope::new(["bias"]));
        for ms in 1..=100 {
            ledger.record(&faith, "gpt", Chat, call(Source::Upstream, 10, 2, ms));
        }
        ledger.record(&faith, "gpt", Chat, call(Source::Cache, 10, 2, 5));
        ledger.record(&bias, "gpt", Chat, call(Source::Coalesced, 10, 2, 5));
        ledger.record(&bias, "gpt", Chat, call(Source::Upstream, 1000, 500, 1000));
        ledger.record_failure(
            &bias,
            "gpt",
            Chat,
            &Error::new(FailureKind::Timeout, "slow"),
        );
        ledger.record(&bias, "emb", Embedding, call(Source::Upstream, 7, 0, 3));

        let mut prices = PriceTable::default();
        prices.insert("gpt", "1/2".parse().unwrap());
        let f = ledger.alone("faithfulness", Chat, &prices);
        assert_eq!(
            (f.requests, f.upstream, f.cache_hits, f.coalesced),
            (101, 100, 1, 0)
        );
        assert_eq!((f.prompt_tokens, f.completion_tokens), (1000, 200));
        let lat = f.latency.unwrap();
        assert_eq!(
            (lat.p50, lat.p90, lat.p99, lat.max),
            (
                Duration::from_millis(50),
                Duration::from_millis(90),
                Duration::from_millis(99),
                Duration::from_millis(100)
            )
        );
        assert!((f.cost.unwrap() - (1000.0 * 1.0 + 200.0 * 2.0) / 1e6).abs() < 1e-15);

        let run = ledger.total(Chat, &prices);
        assert_eq!(
            (
                run.requests,
                run.upstream,
                run.prompt_tokens,
                run.completion_tokens
            ),
            (103, 101, 2000, 700)
        );
        assert_eq!(run.failures.get("timeout"), Some(&1));
        assert_eq!(
            ledger.total(Chat, &PriceTable::default()).cost,
            None,
            "no price is assumed"
        );
        let emb = ledger.total(Embedding, &prices);
        assert_eq!((emb.requests, emb.prompt_tokens), (1, 7));
        assert_eq!(emb.cost, None, "the embedder has no price");
    }

    #[test]
    fn shared_calls_are_split_evenly_and_the_shares_add_up() {
        let ledger = UsageLedger::new();
        let shared = Scope::new(["a", "b", "c"]);
        ledger.record(&shared, "m", Chat, call(Source::Upstream, 30, 6, 1));
        ledger.record(&shared, "m", Chat, call(Source::Cache, 0, 0, 0));
        ledger.record(
            &Scope::new(["a"]),
            "m",
            Chat,
            call(Source::Upstream, 1, 1, 1),
        );
        let mut prices = PriceTable::default();
        prices.insert("m", "3/6".parse().unwrap());

        let close = |x: f64, want: f64| assert!((x - want).abs() < 1e-12, "{x} != {want}");
        let a = ledger.share("a", Chat, &prices);
        close(a.requests, 5.0 / 3.0);
        close(a.upstream, 4.0 / 3.0);
        close(a.cache_hits, 1.0 / 3.0);
        close(a.prompt_tokens, 11.0);
        close(a.completion_tokens, 3.0);
        let b = ledger.share("b", Chat, &prices);
        close(b.requests, 2.0 / 3.0);
        close(b.prompt_tokens, 10.0);

        let run = ledger.total(Chat, &prices);
        let shares: Vec<UsageShare> = ["a", "b", "c"]
            .iter()
            .map(|m| ledger.share(m, Chat, &prices))
            .collect();
        let sum = |f: fn(&UsageShare) -> f64| shares.iter().map(f).sum::<f64>();
        close(sum(|s| s.requests), run.requests as f64);
        close(sum(|s| s.prompt_tokens), run.prompt_tokens as f64);
        close(sum(|s| s.cost.unwrap()), run.cost.unwrap());

        assert_eq!(ledger.alone("a", Chat, &prices).requests, 3);
        assert_eq!(ledger.alone("b", Chat, &prices).requests, 2);
        assert_eq!(ledger.calls_if_unshared(Chat), 2 * 3 + 1);
        assert_eq!(ledger.calls_if_unshared(Embedding), 0);
    }

    #[test]
    fn prices_reject_garbage() {
        for s in ["", "1", "a/b", "-1/2", "1/inf"] {
            assert!(s.parse::<Price>().is_err(), "{s}");
        }
    }
}
