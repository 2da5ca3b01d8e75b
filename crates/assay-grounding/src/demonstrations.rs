//! Demonstrations for LLM judges: labelled claims from a user's own rows,
//! each with the sentence of its texts that speaks of it, and the few
//! nearest a judged statement, which a judge reads as worked examples
//! before it answers (as ragas' `align` and MLflow's MemAlign place
//! people's labels in the prompt). A row's statements share theirs.
//!
//! Nearness is the cosine of the two statements' content-word stems
//! weighted by inverse document frequency over the pool: it needs no
//! embedder, so it holds with any judge and the same statement always
//! gets the same demonstrations.
//!
//! ```
//! use assay_grounding::demonstrations::{Demonstration, Pool};
//! let demo = |statement: &str, verdict: &str| Demonstration {
//!     question: String::new(),
//!     context: "The bridge opened in 1932.".into(),
//!     statement: statement.into(),
//!     verdict: verdict.into(),
//! };
//! let pool = Pool::new(vec![
//!     demo("The bridge opened in 1951.", "no"),
//!     demo("Bananas are yellow.", "idk"),
//!     demo("The bridge opened in 1932.", "yes"),
//! ]);
//! let near = pool.nearest(&["When did the bridge open?"], 2);
//! assert_eq!(near.len(), 2);
//! assert!(near.iter().all(|d| d.statement.contains("bridge")));
//! ```

use crate::words::{is_stop_word, words};
use assay_text::porter::stem;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Demonstrations a judge is shown per row: those nearest any of its
/// statements.
pub const PER_ROW: usize = 3;

/// One labelled claim, as a judge is shown it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Demonstration {
    /// The row's question (empty where it had none).
    pub question: String,
    /// The sentence of the row's question and contexts that holds most
    /// of the claim's content words: what the claim is checked against.
    pub context: String,
    pub statement: String,
    /// `yes` (people found it supported), `no` (unsupported, and its
    /// closest sentence speaks of the same thing) or `idk` (unsupported,
    /// and nothing speaks of it): the faithfulness verdicts' labels.
    pub verdict: String,
}

/// Demonstrations indexed for [`Pool::nearest`].
#[derive(Clone, Debug, Default)]
pub struct Pool {
    items: Vec<Demonstration>,
    /// Each item's statement as unit-length weighted stems.
    vectors: Vec<HashMap<String, f64>>,
    idf: HashMap<String, f64>,
}

/// A text's content-word stems with their counts.
fn stems(text: &str) -> HashMap<String, f64> {
    let mut out = HashMap::new();
    for w in words(text).iter().filter(|w| !is_stop_word(w)) {
        *out.entry(stem(w)).or_insert(0.0) += 1.0;
    }
    out
}

fn unit(mut v: HashMap<String, f64>) -> HashMap<String, f64> {
    let norm = v.values().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 {
        v.values_mut().for_each(|x| *x /= norm);
    }
    v
}

impl Pool {
    pub fn new(items: Vec<Demonstration>) -> Pool {
        let counts: Vec<HashMap<String, f64>> = items.iter().map(|d| stems(&d.statement)).collect();
        let mut df: HashMap<String, f64> = HashMap::new();
        for c in &counts {
            for s in c.keys() {
                *df.entry(s.clone()).or_insert(0.0) += 1.0;
            }
        }
        let n = items.len() as f64;
        let idf: HashMap<String, f64> = df
            .into_iter()
            .map(|(s, d)| (s, ((1.0 + n) / (1.0 + d)).ln() + 1.0))
            .collect();
        let weigh = |c: HashMap<String, f64>, idf: &HashMap<String, f64>| {
            unit(
                c.into_iter()
                    .map(|(s, x)| {
                        let w = idf.get(&s).copied().unwrap_or(0.0);
                        (s, x * w)
                    })
                    .collect(),
            )
        };
        let vectors = counts.into_iter().map(|c| weigh(c, &idf)).collect();
        Pool {
            items,
            vectors,
            idf,
        }
    }

    pub fn items(&self) -> &[Demonstration] {
        &self.items
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The cosine of `statement` with each item.
    fn similarities(&self, statement: &str) -> Vec<f64> {
        let query = unit(
            stems(statement)
                .into_iter()
                .filter_map(|(s, x)| Some((s.clone(), x * self.idf.get(&s)?)))
                .collect(),
        );
        self.vectors
            .iter()
            .map(|v| {
                query
                    .iter()
                    .map(|(s, x)| x * v.get(s).unwrap_or(&0.0))
                    .sum()
            })
            .collect()
    }

    /// The `k` items nearest any of `statements` (an item's nearness is
    /// its largest cosine with one of them), nearest first; ties go to
    /// the earlier item.
    pub fn nearest(&self, statements: &[&str], k: usize) -> Vec<&Demonstration> {
        let mut best = vec![f64::NEG_INFINITY; self.items.len()];
        for s in statements {
            for (b, x) in best.iter_mut().zip(self.similarities(s)) {
                *b = b.max(x);
            }
        }
        let mut order: Vec<usize> = (0..self.items.len()).collect();
        order.sort_by(|&a, &b| best[b].total_cmp(&best[a]).then(a.cmp(&b)));
        order.into_iter().take(k).map(|i| &self.items[i]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo(statement: &str) -> Demonstration {
        Demonstration {
            question: String::new(),
            context: String::new(),
            statement: statement.into(),
            verdict: "yes".into(),
        }
    }

    #[test]
    fn the_nearest_share_the_rarest_words_and_ties_keep_the_pool_order() {
        let pool = Pool::new(vec![
            demo("The river flows north."),
            demo("The museum opened in 1932."),
            demo("The museum closed in 2001."),
            demo("The river is long."),
        ]);
        let near = pool.nearest(&["When did the museum open?"], 2);
        assert_eq!(near[0].statement, "The museum opened in 1932.");
        assert_eq!(near[1].statement, "The museum closed in 2001.");
        // Nothing in common: every cosine is 0, and the pool's order stands.
        let none = pool.nearest(&["Bananas."], 2);
        assert_eq!(none[0].statement, "The river flows north.");
        assert_eq!(none[1].statement, "The museum opened in 1932.");
        // The best of several statements counts.
        let both = pool.nearest(&["Bananas.", "How long is the river?"], 1);
        assert_eq!(both[0].statement, "The river is long.");
        assert!(Pool::default().nearest(&["x"], 3).is_empty());
    }
}
