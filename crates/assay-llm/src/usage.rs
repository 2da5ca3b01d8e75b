//! Token, request and cost accounting, per metric (scope) and per run.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use crate::model::{ChatResponse, Source, Usage};
use crate::{Error, ErrorKind};

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
                ErrorKind::Config,
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

/// Aggregated usage of a scope or the whole run.
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

#[derive(Debug, Default, Clone)]
struct Tally {
    upstream: u64,
    cache_hits: u64,
    coalesced: u64,
    failures: BTreeMap<String, u64>,
    usage: Usage,
    latencies: Vec<Duration>,
}

/// A thread-safe usage ledger keyed by scope (a metric id) and model.
#[derive(Debug, Default)]
pub struct UsageLedger {
    tallies: Mutex<BTreeMap<(String, String), Tally>>,
}

impl UsageLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    fn with_tally(&self, scope: &str, model: &str, f: impl FnOnce(&mut Tally)) {
        // A poisoned ledger only means another thread panicked mid-update;
        // the counts are still usable.
        let mut map = self.tallies.lock().unwrap_or_else(|p| p.into_inner());
        f(map.entry((scope.to_owned(), model.to_owned())).or_default());
    }

    /// Records an answered call of `model` made for `scope`.
    pub fn record(&self, scope: &str, model: &str, call: impl Into<Call>) {
        let call = call.into();
        self.with_tally(scope, model, |t| match call.source {
            Source::Cache => t.cache_hits += 1,
            Source::Coalesced => t.coalesced += 1,
            Source::Upstream => {
                t.upstream += 1;
                t.usage += call.usage;
                t.latencies.push(call.latency);
            }
        });
    }

    /// Records a failed call of `model` made for `scope`.
    pub fn record_failure(&self, scope: &str, model: &str, error: &Error) {
        self.with_tally(scope, model, |t| {
            *t.failures.entry(error.kind().to_string()).or_default() += 1
        });
    }

    /// The summary of one scope.
    pub fn scope(&self, scope: &str, prices: &PriceTable) -> UsageSummary {
        self.summarise(|s| s == scope, prices)
    }

    /// The summary of every scope together (the run).
    pub fn total(&self, prices: &PriceTable) -> UsageSummary {
        self.summarise(|_| true, prices)
    }

    /// The scopes recorded so far.
    pub fn scopes(&self) -> Vec<String> {
        let map = self.tallies.lock().unwrap_or_else(|p| p.into_inner());
        let mut scopes: Vec<String> = map.keys().map(|(s, _)| s.clone()).collect();
        scopes.dedup();
        scopes
    }

    fn summarise(&self, include: impl Fn(&str) -> bool, prices: &PriceTable) -> UsageSummary {
        let map = self.tallies.lock().unwrap_or_else(|p| p.into_inner());
        let mut total = Tally::default();
        let mut cost = Some(0.0);
        for ((_, model), t) in map.iter().filter(|((s, _), _)| include(s)) {
            total.upstream += t.upstream;
            total.cache_hits += t.cache_hits;
            total.coalesced += t.coalesced;
            total.usage += t.usage;
            total.latencies.extend_from_slice(&t.latencies);
            for (k, n) in &t.failures {
                *total.failures.entry(k.clone()).or_default() += n;
            }
            if t.usage != Usage::default() {
                cost = match (cost, prices.get(model)) {
                    (Some(c), Some(p)) => Some(
                        c + t.usage.prompt_tokens as f64 * p.input_per_million / 1e6
                            + t.usage.completion_tokens as f64 * p.output_per_million / 1e6,
                    ),
                    _ => None,
                };
            }
        }
        total.latencies.sort_unstable();
        UsageSummary {
            requests: total.upstream + total.cache_hits + total.coalesced,
            upstream: total.upstream,
            cache_hits: total.cache_hits,
            coalesced: total.coalesced,
            failures: total.failures,
            prompt_tokens: total.usage.prompt_tokens,
            completion_tokens: total.usage.completion_tokens,
            latency: percentiles(&total.latencies),
            cost,
        }
    }
}

/// Nearest-rank percentiles of sorted durations.
fn percentiles(sorted: &[Duration]) -> Option<Latency> {
    let last = sorted.len().checked_sub(1)?;
    let at = |q: f64| {
        sorted[((q * sorted.len() as f64).ceil() as usize)
            .saturating_sub(1)
            .min(last)]
    };
    Some(Latency {
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        max: sorted[last],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn ledger_aggregates_per_scope_and_run_with_costs() {
        let ledger = UsageLedger::new();
        for ms in 1..=100 {
            ledger.record("faithfulness", "gpt", call(Source::Upstream, 10, 2, ms));
        }
        ledger.record("faithfulness", "gpt", call(Source::Cache, 10, 2, 5));
        ledger.record("bias", "gpt", call(Source::Coalesced, 10, 2, 5));
        ledger.record("bias", "gpt", call(Source::Upstream, 1000, 500, 1000));
        ledger.record_failure("bias", "gpt", &Error::new(ErrorKind::Timeout, "slow"));

        let mut prices = PriceTable::default();
        prices.insert("gpt", "1/2".parse().unwrap());
        let f = ledger.scope("faithfulness", &prices);
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

        let run = ledger.total(&prices);
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
        assert_eq!(ledger.scopes(), ["bias", "faithfulness"]);
        assert_eq!(
            ledger.total(&PriceTable::default()).cost,
            None,
            "no price is assumed"
        );
    }

    #[test]
    fn prices_reject_garbage() {
        for s in ["", "1", "a/b", "-1/2", "1/inf"] {
            assert!(s.parse::<Price>().is_err(), "{s}");
        }
    }
}
