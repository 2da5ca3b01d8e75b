//! A sample's judge work: the steps of its metrics, each once, in
//! dependency order.

use crate::judged::metric::JudgedMetric;
use crate::judged::prompt::Protocol;
use crate::judged::step::StepKey;
use crate::judged::steps;
use assay_core::{Sample, SkipReason};
use std::collections::BTreeMap;

/// One step of a sample's plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedStep {
    pub key: StepKey,
    /// Positions in [`Plan::steps`] of the steps it waits for (all earlier).
    pub deps: Vec<usize>,
    /// 1 + the longest chain of dependencies before it.
    pub depth: usize,
}

/// One sample's judge work: every step once, dependencies first.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Plan {
    pub steps: Vec<PlannedStep>,
    /// Metrics (by position in the `metrics` argument) that will not run,
    /// and why; their outcomes are [`assay_core::Outcome::Skipped`].
    pub skipped: Vec<(usize, SkipReason)>,
}

impl Plan {
    /// The longest dependency chain: the least number of sequential calls.
    pub fn depth(&self) -> usize {
        self.steps.iter().map(|s| s.depth).max().unwrap_or(0)
    }

    /// How many steps need a judge prompt (embedding steps excluded).
    pub fn judge_steps(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.key.prompt().is_some())
            .count()
    }
}

/// The deduplicated steps of `metrics` on `sample` when verdicts are
/// asked under `protocol`.
pub fn plan(metrics: &[JudgedMetric], sample: &Sample, protocol: Protocol) -> Plan {
    let mut out = Plan::default();
    let mut wanted: Vec<StepKey> = Vec::new();
    for (m, metric) in metrics.iter().enumerate() {
        match metric.precheck(sample) {
            Some(why) => out.skipped.push((m, why)),
            None => wanted.extend(metric.steps(sample)),
        }
    }
    // A step that does two steps' work in one call (context_recall's
    // statements and verdicts) is split when its first part is wanted
    // anyway: judging those shared statements costs the same one call and
    // keeps one set of statements. Under the per-item protocol it is split
    // whenever its second part has an item form, so that each statement is
    // asked alone.
    let per_item = |second: &StepKey| {
        second
            .prompt()
            .and_then(|id| protocol.item_forms(id))
            .is_some()
    };
    let mut index: BTreeMap<StepKey, usize> = BTreeMap::new();
    for key in wanted.clone() {
        let key = match key.split() {
            Some((first, second)) if wanted.contains(&first) || per_item(&second) => second,
            _ => key,
        };
        add_step(&mut out, &mut index, key);
    }
    out
}

fn add_step(plan: &mut Plan, index: &mut BTreeMap<StepKey, usize>, key: StepKey) -> usize {
    if let Some(i) = index.get(&key) {
        return *i;
    }
    let needs = match &key {
        StepKey::Unit(unit) => unit.0.deps(),
        StepKey::Embed(text) => steps::embed_deps(*text),
    };
    let deps: Vec<usize> = needs
        .into_iter()
        .map(|d| add_step(plan, index, d))
        .collect();
    let depth = 1 + deps.iter().map(|d| plan.steps[*d].depth).max().unwrap_or(0);
    plan.steps.push(PlannedStep {
        key: key.clone(),
        deps,
        depth,
    });
    index.insert(key, plan.steps.len() - 1);
    plan.steps.len() - 1
}
