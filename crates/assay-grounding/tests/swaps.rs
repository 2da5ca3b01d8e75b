//! The default verdict gets plain swaps right: `data/swaps.jsonl` holds
//! hand-written claims that put another name, place, number, date, unit
//! or polarity in the slot of their context's matching sentence (the
//! wrong word mostly named in another sentence of the context, which
//! defeats word counting), each beside its correct twin.

use assay_grounding::{Model, Support};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Row {
    pair: u32,
    kind: String,
    supported: bool,
    claim: String,
    context: Vec<String>,
    note: String,
}

fn rows() -> Vec<Row> {
    include_str!("../data/swaps.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("swaps.jsonl line {}: {e}", i + 1))
        })
        .collect()
}

#[test]
fn the_set_is_at_least_fifty_swaps_each_with_its_twin() {
    let rows = rows();
    let mut pairs: BTreeMap<u32, Vec<&Row>> = BTreeMap::new();
    for r in &rows {
        pairs.entry(r.pair).or_default().push(r);
    }
    assert!(pairs.len() >= 50, "{} pairs", pairs.len());
    for (pair, twins) in &pairs {
        let labels: Vec<bool> = twins.iter().map(|r| r.supported).collect();
        assert_eq!(labels, [false, true], "pair {pair}: a swap, then its twin");
        assert_eq!(twins[0].kind, twins[1].kind, "pair {pair}");
        assert_eq!(twins[0].context, twins[1].context, "pair {pair}");
    }
    let kinds = ["names", "places", "numbers", "dates", "units", "polarity"];
    for kind in kinds {
        let n = pairs.values().filter(|t| t[0].kind == kind).count();
        assert!(n >= 5, "{kind}: {n} pairs");
    }
    assert!(rows.iter().all(|r| kinds.contains(&r.kind.as_str())));
    // Word counting is defeated where the wrong word is in the context,
    // in another sentence than the matching one: most of the swaps.
    let elsewhere = rows
        .iter()
        .filter(|r| !r.supported && r.context.len() > 1)
        .count();
    assert!(elsewhere * 4 >= pairs.len() * 3, "{elsewhere}");
}

#[test]
fn every_swap_is_contradicted_and_every_twin_supported() {
    let model = Model::builtin();
    let rows = rows();
    let wrong: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let support = Support::new(r.context.iter().map(String::as_str));
            let j = model.judge(&r.claim, &support);
            (j.supported() != r.supported).then(|| {
                format!(
                    "pair {} ({}, {}; {}): \"{}\" judged {}: {}",
                    r.pair,
                    r.kind,
                    if r.supported { "twin" } else { "swap" },
                    r.note,
                    r.claim,
                    if j.supported() {
                        "supported"
                    } else {
                        "unsupported"
                    },
                    j.reason()
                )
            })
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} rows judged wrong:\n{}",
        wrong.len(),
        rows.len(),
        wrong.join("\n")
    );
}

/// A swap is contradicted by a named slot, not by chance: its reason
/// says what the closest sentence says instead.
#[test]
fn every_swap_names_what_the_context_says_instead() {
    let model = Model::builtin();
    for r in rows().iter().filter(|r| !r.supported) {
        let support = Support::new(r.context.iter().map(String::as_str));
        let j = model.judge(&r.claim, &support);
        assert!(
            j.features.conflict.is_some(),
            "pair {}: \"{}\": {}",
            r.pair,
            r.claim,
            j.reason()
        );
    }
}
