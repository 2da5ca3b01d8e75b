//! How many questions of each type, from which document: the mix
//! (`single_hop=0.5,multi_hop=0.3,abstract=0.2`) shared exactly by the
//! largest remainder, and the questions spread over the documents so that
//! no two documents' totals differ by more than one and the types are
//! interleaved across documents (each document gets its share of each
//! type, within one).
//!
//! ```
//! use assay_generate::quota::{quotas, Mix};
//! let mix: Mix = "single_hop=0.5,multi_hop=0.3,abstract=0.2".parse().unwrap();
//! let q = quotas(20, &mix, 3);
//! let per_type: Vec<usize> = (0..3).map(|t| q.iter().map(|d| d[t]).sum()).collect();
//! assert_eq!(per_type, [10, 6, 4]);
//! let per_document: Vec<usize> = q.iter().map(|d| d.iter().sum()).collect();
//! assert_eq!(per_document, [7, 7, 6]);
//! ```

use std::fmt;
use std::str::FromStr;

/// A kind of question, as ragas' synthesizers name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QuestionType {
    /// One chunk, a specific fact (ragas' single-hop specific).
    SingleHop,
    /// Two linked chunks, a specific fact from each (multi-hop specific).
    MultiHop,
    /// Two linked chunks, a question of reasoning or comparison over
    /// their themes (multi-hop abstract).
    Abstract,
    /// One chunk, a conversational scenario: who the user is and what
    /// they want, their first message, and the outcome the conversation
    /// should reach (DeepEval's conversational goldens), for the
    /// conversation metrics.
    Conversation,
}

/// How many question types there are.
pub const TYPES: usize = QuestionType::ALL.len();

impl QuestionType {
    pub const ALL: [QuestionType; 4] = [
        QuestionType::SingleHop,
        QuestionType::MultiHop,
        QuestionType::Abstract,
        QuestionType::Conversation,
    ];

    /// Whether it asks about two linked chunks.
    pub fn linked(self) -> bool {
        matches!(self, QuestionType::MultiHop | QuestionType::Abstract)
    }

    pub fn name(self) -> &'static str {
        match self {
            QuestionType::SingleHop => "single_hop",
            QuestionType::MultiHop => "multi_hop",
            QuestionType::Abstract => "abstract",
            QuestionType::Conversation => "conversation",
        }
    }
}

impl fmt::Display for QuestionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The share of each question type, in [`QuestionType::ALL`]'s order,
/// summing to 1.
#[derive(Clone, Debug, PartialEq)]
pub struct Mix([f64; TYPES]);

impl Mix {
    /// The share of `kind`.
    pub fn share(&self, kind: QuestionType) -> f64 {
        self.0[kind as usize]
    }
}

/// ragas' default query distribution: half single-hop, a quarter each of
/// the multi-hop kinds (conversations only when asked for).
impl Default for Mix {
    fn default() -> Mix {
        Mix([0.5, 0.25, 0.25, 0.0])
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = QuestionType::ALL
            .iter()
            .map(|t| format!("{t}={}", self.share(*t)))
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// The largest difference from 1 a mix's shares may sum to (as typed
/// decimals do not sum exactly).
const SUM_TOLERANCE: f64 = 1e-9;

impl FromStr for Mix {
    type Err = String;

    /// `TYPE=SHARE,...`; a type not named has no share; the shares sum to 1.
    fn from_str(text: &str) -> Result<Mix, String> {
        let mut shares = [0.0; TYPES];
        let mut named = [false; TYPES];
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, share) = part
                .split_once('=')
                .ok_or_else(|| format!("{part:?}: expected TYPE=SHARE"))?;
            let kind = crate::by_name(
                &QuestionType::ALL,
                QuestionType::name,
                name,
                "a question type",
            )?;
            let share: f64 = share
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                .ok_or_else(|| format!("{part:?}: the share is not a number from 0 to 1"))?;
            if std::mem::replace(&mut named[kind as usize], true) {
                return Err(format!("{name:?} is named twice"));
            }
            shares[kind as usize] = share;
        }
        let sum: f64 = shares.iter().sum();
        if (sum - 1.0).abs() > SUM_TOLERANCE {
            return Err(format!("the shares sum to {sum}, not 1"));
        }
        Ok(Mix(shares))
    }
}

/// `n` shared in proportion to `weights` by the largest remainder: each
/// gets the whole part of its quota, and the units left go to the largest
/// fractional parts (the earlier of equals first).
///
/// ```
/// use assay_generate::quota::apportion;
/// assert_eq!(apportion(10, &[0.5, 0.3, 0.2]), [5, 3, 2]);
/// assert_eq!(apportion(7, &[0.5, 0.3, 0.2]), [4, 2, 1]); // 3.5, 2.1, 1.4
/// assert_eq!(apportion(2, &[1.0, 1.0, 1.0]), [1, 1, 0]);
/// ```
pub fn apportion(n: usize, weights: &[f64]) -> Vec<usize> {
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return vec![0; weights.len()];
    }
    let quotas: Vec<f64> = weights.iter().map(|w| n as f64 * w / total).collect();
    let mut counts: Vec<usize> = quotas.iter().map(|q| q.floor() as usize).collect();
    let left = n - counts.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        let (fa, fb) = (quotas[a] - quotas[a].floor(), quotas[b] - quotas[b].floor());
        fb.total_cmp(&fa).then(a.cmp(&b))
    });
    for &i in order.iter().take(left) {
        counts[i] += 1;
    }
    counts
}

/// For each of `documents` documents, how many questions of each type
/// (in [`QuestionType::ALL`]'s order): `size` questions in all, each
/// type's total its largest-remainder share of the mix, each document's
/// total within one of every other's (the earlier documents take the
/// extra ones). The types are laid out in one interleaved sequence (each
/// next question is of the type furthest behind its share) and the
/// documents take consecutive runs of it, so each document's mix is the
/// mix within one question of each type.
pub fn quotas(size: usize, mix: &Mix, documents: usize) -> Vec<[usize; TYPES]> {
    if documents == 0 {
        return Vec::new();
    }
    let per_type = apportion(size, &mix.0);
    let mut sequence = Vec::with_capacity(size);
    let mut placed = [0usize; TYPES];
    for _ in 0..size {
        // Webster's rule: the type whose next question is furthest behind.
        let next = (0..TYPES)
            .filter(|&t| placed[t] < per_type[t])
            .min_by(|&a, &b| {
                let key = |t: usize| (placed[t] as f64 + 0.5) / per_type[t] as f64;
                key(a).total_cmp(&key(b)).then(a.cmp(&b))
            })
            .unwrap_or(0);
        placed[next] += 1;
        sequence.push(next);
    }
    let per_document = apportion(size, &vec![1.0; documents]);
    let mut out = Vec::with_capacity(documents);
    let mut at = 0;
    for n in per_document {
        let mut counts = [0; TYPES];
        for &t in &sequence[at..at + n] {
            counts[t] += 1;
        }
        at += n;
        out.push(counts);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_is_read_and_checked() {
        let mix: Mix = "abstract=0.2, single_hop=0.8".parse().unwrap();
        assert_eq!(
            mix.to_string(),
            "single_hop=0.8,multi_hop=0,abstract=0.2,conversation=0"
        );
        let e = |t: &str| t.parse::<Mix>().unwrap_err();
        assert_eq!(e("single_hop=0.5"), "the shares sum to 0.5, not 1");
        assert!(e("singlehop=1").starts_with("\"singlehop\": not a question type"));
        assert_eq!(
            e("single_hop=1,single_hop=0"),
            "\"single_hop\" is named twice"
        );
        assert!(e("single_hop=-1,abstract=2").contains("not a number from 0 to 1"));
        assert_eq!(
            "single_hop=0.1,multi_hop=0.2,abstract=0.7"
                .parse::<Mix>()
                .unwrap()
                .share(QuestionType::Abstract),
            0.7
        );
    }

    /// 20 questions of the mix 0.5/0.3/0.2 over 3 documents: 10/6/4 by
    /// type, 7/7/6 by document; the interleaved sequence is
    /// s m a s s m s a m s s m s a s m s s a m (Webster's order), cut
    /// after 7 and 14.
    #[test]
    fn worked_example_twenty_over_three_documents() {
        let mix: Mix = "single_hop=0.5,multi_hop=0.3,abstract=0.2".parse().unwrap();
        assert_eq!(
            quotas(20, &mix, 3),
            [[4, 2, 1, 0], [3, 2, 2, 0], [3, 2, 1, 0]]
        );
    }

    #[test]
    fn totals_are_exact_for_every_size_and_document_count() {
        let mix = Mix::default();
        for size in 0..60 {
            for documents in 1..9 {
                let q = quotas(size, &mix, documents);
                let per_type: Vec<usize> = (0..3).map(|t| q.iter().map(|d| d[t]).sum()).collect();
                assert_eq!(per_type, apportion(size, &[0.5, 0.25, 0.25]));
                let totals: Vec<usize> = q.iter().map(|d| d.iter().sum()).collect();
                let (lo, hi) = (totals.iter().min().unwrap(), totals.iter().max().unwrap());
                assert!(hi - lo <= 1, "{size} over {documents}: {totals:?}");
                for (t, &n) in per_type.iter().enumerate() {
                    for d in &q {
                        let fair = n as f64 * d.iter().sum::<usize>() as f64 / size.max(1) as f64;
                        assert!(
                            (d[t] as f64 - fair).abs() < 1.5,
                            "{size}/{documents}: {q:?}"
                        );
                    }
                }
            }
        }
        assert!(quotas(5, &mix, 0).is_empty());
    }
}
