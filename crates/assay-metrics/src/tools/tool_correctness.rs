//! `tool_correctness`: DeepEval 4.3.1 `ToolCorrectnessMetric` without
//! `available_tools` (so no model is asked) — how many of the expected
//! tools were called.
//!
//! Definition (DeepEval `tool_correctness.py`, `_calculate_score`), with
//! called tools `C` (the assistant's `tool_calls` in message order) and
//! expected tools `E` (`reference_tool_calls`); a pair *matches* when the
//! names are equal, and its weight is 1, or with `input_parameters=true`
//! the argument similarity below:
//!
//! - `exact_match=true` (wins over ordering): 1 when |C| = |E| and each
//!   `C[i]` has `E[i]`'s name (and, with `input_parameters`, equal
//!   arguments), else 0; both empty: 1.
//! - `consider_ordering=true`: the best total weight of an order-keeping
//!   pairing (a weighted longest common subsequence, traced back as
//!   DeepEval does), divided by |E|.
//! - neither: for each expected tool in turn, the called tool of highest
//!   weight (first on ties) not yet used, where "used" means equal (name,
//!   arguments under Python equality) to one already taken; the sum of
//!   weights over |E|.
//! - both empty: 1; no expected tool but some called: 0.
//!
//! Argument similarity (`_compare_dicts`): 1 when the objects are equal
//! (Python equality: `1 == 1.0 == True`); else over the union of their
//! keys, each shared key scores 1/|union| when its values are equal, and
//! its nested similarity / |union| when both values are objects.
//!
//! Quirks a user may not expect, all the reference's:
//! - Without `input_parameters` (the default) arguments are ignored: a call
//!   with wrong arguments counts as right.
//! - A repeated call can only be matched once even when the reference
//!   repeats it: calling `f(x)` twice for two expected `f(x)` scores 0.5,
//!   since the second call equals one already used (DeepEval keeps used
//!   calls in a set). Equal names with different arguments are not caught.
//! - Extra calls cost nothing unless `exact_match=true`.
//! - `exact_match=true` ignores `consider_ordering`, and compares arguments
//!   only with `input_parameters=true`.
//! - Only the tool-result order is not checked: DeepEval sees the calls
//!   alone, so a conversation whose tool results are out of place scores.
//! - A call whose arguments are JSON `null` is a call with parameters
//!   `None`: it scores as any call while arguments are ignored, is not
//!   equal to a call with `{}` (the set of used calls, `exact_match` with
//!   `input_parameters`), and where `input_parameters` weighs it against a
//!   call of its name with other parameters DeepEval raises (its
//!   `_compare_dicts` reads `None`): the row fails here, saying so.
//!
//! Empty inputs: 1 when neither side has a call; 0 when calls were made
//! and none expected; 0 when calls were expected and none made.

use super::python::{map_eq, py_eq};
use super::{Tool, Tooled};
use crate::params::{parse_bool, ParamError, ParamSpec, Values};
use crate::spec::Direction;
use crate::unit::{MetricId, MetricSpec};
use assay_core::conversation::{Part, ToolCall};
use assay_core::{Field, Outcome, Signature};
use serde_json::{json, Map, Value};
use std::fmt;

pub const ID: MetricId = MetricId::of(&SPEC);

pub const SPEC: MetricSpec = MetricSpec {
    name: "tool_correctness",
    summary: "share of the expected tools that were called (DeepEval tool correctness)",
    definition: "DeepEval 4.3.1 ToolCorrectnessMetric without available_tools (no model): each expected \
                 tool matched to an unused called tool of the same name, weighted by argument similarity \
                 with input_parameters; a weighted LCS with consider_ordering; all-or-nothing with \
                 exact_match; divided by the number of expected tools. See docs/tool-calls.md.",
    required: &[Field::Messages, Field::ReferenceToolCalls],
    params: &[
        ParamSpec {
            name: "consider_ordering",
            default: "false",
            doc: "DeepEval should_consider_ordering: score the best order-keeping pairing (weighted LCS)",
        },
        ParamSpec {
            name: "exact_match",
            default: "false",
            doc: "DeepEval should_exact_match: 1 only when the calls equal the expected list, position by \
                  position; wins over consider_ordering",
        },
        ParamSpec {
            name: "input_parameters",
            default: "false",
            doc: "DeepEval evaluation_params=[INPUT_PARAMETERS]: weigh each match by argument similarity \
                  (exact equality with exact_match)",
        },
    ],
    direction: Direction::HigherIsBetter,
    empty_inputs: "1 when neither side has a tool call; 0 when only one side has",
    outputs: "tool_correctness",
    added_params: &[],
    configure: |values| Ok(Tooled::unit(Params::configure(values)?)),
};

/// How calls are paired with expected tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// Each expected tool takes its best unused call.
    AnyOrder,
    /// A weighted longest common subsequence.
    Ordered,
    /// Position by position, all or nothing.
    Exact,
}

/// Whether a match is weighed by its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arguments {
    Ignored,
    Compared,
}

/// Where DeepEval raises: `input_parameters` weighs a call whose
/// arguments are `null` against a call of its name with other arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NullCompared {
    /// The tool's name.
    pub name: String,
}

impl fmt::Display for NullCompared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tool_correctness with input_parameters=true compares a '{}' call whose arguments are \
             null with one whose arguments are not; DeepEval raises there (AttributeError in \
             _compare_dicts)",
            self.name
        )
    }
}

impl Tool for Params {
    fn id(&self) -> MetricId {
        ID
    }

    fn needs(&self) -> &'static [Part] {
        &[]
    }

    fn params_json(&self) -> Value {
        self.json()
    }

    fn signature(&self) -> Signature {
        Params::signature(self)
    }

    fn score_calls(&self, called: &[&ToolCall], expected: &[ToolCall]) -> Result<Outcome, String> {
        self.score(called, expected).map_err(|e| e.to_string())
    }
}

#[derive(Clone, Debug)]
pub struct Params {
    pub pairing: Pairing,
    pub arguments: Arguments,
    /// `consider_ordering` as given, kept for the manifest though
    /// `exact_match` overrides it.
    consider_ordering: bool,
}

impl Params {
    pub fn configure(values: &Values) -> Result<Params, ParamError> {
        let consider_ordering = values.get("consider_ordering", parse_bool)?;
        let exact = values.get("exact_match", parse_bool)?;
        let arguments = if values.get("input_parameters", parse_bool)? {
            Arguments::Compared
        } else {
            Arguments::Ignored
        };
        let pairing = match (exact, consider_ordering) {
            (true, _) => Pairing::Exact,
            (false, true) => Pairing::Ordered,
            (false, false) => Pairing::AnyOrder,
        };
        Ok(Params {
            pairing,
            arguments,
            consider_ordering,
        })
    }

    pub fn json(&self) -> Value {
        json!({
            "consider_ordering": self.consider_ordering,
            "exact_match": self.pairing == Pairing::Exact,
            "input_parameters": self.arguments == Arguments::Compared,
        })
    }

    pub fn signature(&self) -> Signature {
        let pairing = match self.pairing {
            Pairing::AnyOrder => "any-order",
            Pairing::Ordered => "lcs",
            Pairing::Exact => "exact",
        };
        let args = match self.arguments {
            Arguments::Ignored => "ignored",
            Arguments::Compared => "compared",
        };
        Signature::new(ID.name(), 2)
            .with("pairing", pairing)
            .with("args", args)
            .with("ref", "deepeval-4.3.1")
    }

    /// The pure score, or where DeepEval would raise.
    pub fn score(
        &self,
        called: &[&ToolCall],
        expected: &[ToolCall],
    ) -> Result<Outcome, NullCompared> {
        let value = if called.is_empty() && expected.is_empty() {
            1.0
        } else {
            match self.pairing {
                Pairing::Exact => self.exact(called, expected),
                _ if expected.is_empty() => 0.0,
                Pairing::Ordered => self.weighted_lcs(called, expected)? / expected.len() as f64,
                Pairing::AnyOrder => self.any_order(called, expected)? / expected.len() as f64,
            }
        };
        Ok(Outcome::scored(
            value,
            json!({"called": called.len(), "expected": expected.len()}),
        ))
    }

    /// The weight of a pair whose names are equal.
    fn weight(&self, expected: &ToolCall, called: &ToolCall) -> Result<f64, NullCompared> {
        match self.arguments {
            Arguments::Ignored => Ok(1.0),
            Arguments::Compared if same_params(expected, called) => Ok(1.0),
            Arguments::Compared if expected.null_args || called.null_args => Err(NullCompared {
                name: called.name.clone(),
            }),
            Arguments::Compared => Ok(compare_dicts(&expected.args, &called.args)),
        }
    }

    fn exact(&self, called: &[&ToolCall], expected: &[ToolCall]) -> f64 {
        let all = called.len() == expected.len()
            && called.iter().zip(expected).all(|(c, e)| {
                c.name == e.name && (self.arguments == Arguments::Ignored || same_params(c, e))
            });
        if all {
            1.0
        } else {
            0.0
        }
    }

    /// `_calculate_non_exact_match_score`'s sum.
    fn any_order(&self, called: &[&ToolCall], expected: &[ToolCall]) -> Result<f64, NullCompared> {
        let mut total = 0.0;
        let mut used: Vec<&ToolCall> = Vec::new();
        for e in expected {
            let mut best = (0.0, None);
            for c in called {
                // DeepEval's set of used calls: equal calls count as used.
                if used.iter().any(|u| u.name == c.name && same_params(u, c)) {
                    continue;
                }
                if e.name == c.name {
                    let w = self.weight(e, c)?;
                    if w > best.0 {
                        best = (w, Some(*c));
                    }
                }
            }
            if let (w, Some(c)) = best {
                total += w;
                used.push(c);
            }
        }
        Ok(total)
    }

    /// `_compute_weighted_lcs`'s total, traced back as DeepEval does.
    fn weighted_lcs(
        &self,
        called: &[&ToolCall],
        expected: &[ToolCall],
    ) -> Result<f64, NullCompared> {
        let (m, n) = (expected.len(), called.len());
        let mut dp = vec![vec![0.0f64; n + 1]; m + 1];
        for i in 1..=m {
            for j in 1..=n {
                let (e, c) = (&expected[i - 1], called[j - 1]);
                let keep = dp[i - 1][j].max(dp[i][j - 1]);
                dp[i][j] = if e.name != c.name {
                    keep
                } else {
                    let w = self.weight(e, c)?;
                    // Python's max(a, b, x + w if w > 0 else 0): first of equals.
                    let take = if w > 0.0 { dp[i - 1][j - 1] + w } else { 0.0 };
                    py_max(keep, take)
                };
            }
        }
        let (mut i, mut j, mut total) = (m, n, 0.0);
        while i > 0 && j > 0 {
            if dp[i][j] == dp[i - 1][j] {
                i -= 1;
            } else if dp[i][j] == dp[i][j - 1] {
                j -= 1;
            } else {
                total += dp[i][j] - dp[i - 1][j - 1];
                i -= 1;
                j -= 1;
            }
        }
        Ok(total)
    }
}

/// DeepEval's `==` between two calls' parameters: `None` (null arguments)
/// equals only `None`, objects compare as Python's dicts.
fn same_params(a: &ToolCall, b: &ToolCall) -> bool {
    a.null_args == b.null_args && map_eq(&a.args, &b.args)
}

/// Python's `max(a, b)`: `a` unless `b` is greater.
fn py_max(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// DeepEval's `_compare_dicts` (without exact match).
fn compare_dicts(a: &Map<String, Value>, b: &Map<String, Value>) -> f64 {
    if map_eq(a, b) {
        return 1.0;
    }
    let union = a.len() + b.keys().filter(|k| !a.contains_key(*k)).count();
    let mut score = 0.0;
    for (k, x) in a {
        let Some(y) = b.get(k) else { continue };
        if py_eq(x, y) {
            score += 1.0 / union as f64;
        } else if let (Value::Object(x), Value::Object(y)) = (x, y) {
            score += compare_dicts(x, y) / union as f64;
        }
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::call;

    fn value(p: &Params, c: &[ToolCall], e: &[ToolCall]) -> f64 {
        match p.score(&c.iter().collect::<Vec<_>>(), e) {
            Ok(Outcome::Scored { value, .. }) => value,
            other => panic!("{other:?}"),
        }
    }

    fn params(pairing: Pairing, arguments: Arguments) -> Params {
        Params {
            pairing,
            arguments,
            consider_ordering: pairing == Pairing::Ordered,
        }
    }

    /// DeepEval's documentation example: one of two expected tools called.
    #[test]
    fn worked_examples() {
        let web = call("WebSearch", json!({}));
        let qa = call("QueryAnalysis", json!({}));
        let tools = call("ToolQuery", json!({}));
        let any = params(Pairing::AnyOrder, Arguments::Ignored);
        assert_eq!(
            value(&any, &[web.clone(), tools], &[web.clone(), qa.clone()]),
            0.5
        );
        let ordered = params(Pairing::Ordered, Arguments::Ignored);
        assert_eq!(
            value(
                &ordered,
                &[qa.clone(), web.clone()],
                &[web.clone(), qa.clone()]
            ),
            0.5
        );
        // The repeated call is used once.
        let x = call("f", json!({"a": 1}));
        assert_eq!(
            value(&any, &[x.clone(), x.clone()], &[x.clone(), x.clone()]),
            0.5
        );
        let args = params(Pairing::AnyOrder, Arguments::Compared);
        let nested = call("f", json!({"a": 1, "b": {"c": 1, "d": 2}}));
        let other = call("f", json!({"a": 1.0, "b": {"c": 1, "d": 3}}));
        assert_eq!(value(&args, &[other], &[nested]), 0.75);
        // Null arguments: not equal to `{}`, so both calls are used; where
        // they are weighed, DeepEval raises.
        let null = call("f", Value::Null);
        let empty = call("f", json!({}));
        let both = [null.clone(), empty.clone()];
        assert_eq!(value(&any, &both, &[empty.clone(), empty.clone()]), 1.0);
        let err = args.score(&[&null], &[empty]).unwrap_err();
        assert_eq!(err.name, "f");
    }
}
