//! BLEU exactly as nltk 3.10.4 computes it (`nltk.translate.bleu_score`).
//!
//! Structured like sacreBLEU: [`segment_stats`] extracts a segment's
//! sufficient statistics ([`BleuStats`]), statistics add up over a corpus,
//! and [`finalize`] turns them into a score. [`sentence_bleu`] is the
//! finalize of one segment; [`corpus_bleu`] the finalize of their sum.
//!
//! What nltk does, and this module reproduces:
//! - modified precision per order n: hypothesis n-gram counts clipped by the
//!   largest count of that n-gram in any *single* reference; the denominator
//!   is `max(1, #hypothesis n-grams)` per segment, summed over a corpus;
//! - reference length: the one closest to the hypothesis, ties to the shorter;
//!   brevity penalty 1 if c > r, 0 if c = 0, else `exp(1 - r/c)`;
//! - if no unigram matches at all, the score is 0 (before smoothing);
//! - otherwise `bp * exp(fsum(w * ln p for w, p in zip(weights, p_n) if p > 0))`
//!   with `math.fsum` reproduced exactly and Python's Fraction arithmetic done
//!   exactly (so scores are bit-identical, not just close);
//! - a weight vector of any length uses that many orders.
//!
//! Corpus quirk: nltk's `corpus_bleu` hands the smoothing function the
//! references and hypothesis of the *last* pair (method 5 takes that pair's
//! 5-gram precision, method 6 its n-gram counts). [`finalize`] therefore takes
//! the last segment's statistics besides the total.
//!
//! valor-lite reports scores below 1e-9 as 0 (method0 returns tiny positive
//! values such as 2.3e-78 when an order has no match): apply
//! [`zero_below_1e9`] for that policy.

use std::cell::Cell;
use std::fmt;
use std::ops::AddAssign;
use std::str::FromStr;

use crate::tokenize::BleuTokenizer;

mod exact;
pub(crate) mod ngram;

use exact::{fsum, ratio_to_f64, Rational};
use ngram::{closest_ref_len, ngram_count, with_local, Interner, NgramIndex};

/// nltk's default `SmoothingFunction` parameters.
const EPSILON: f64 = 0.1;
const ALPHA: u128 = 5;
const K: u64 = 5;

/// nltk's `SmoothingFunction().methodK` (defaults epsilon 0.1, alpha 5, k 5).
///
/// ```
/// use assay_text::bleu::Smoothing;
/// let s: Smoothing = "method4".parse().unwrap();
/// assert_eq!(s, Smoothing::Method4);
/// assert_eq!(s.to_string(), "method4");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Smoothing {
    /// No smoothing: a zero-match order becomes `sys.float_info.min`.
    #[default]
    Method0,
    /// Zero-match orders get `epsilon / denominator`.
    Method1,
    /// Add 1 to numerator and denominator of every order but the first.
    Method2,
    /// NIST: the k-th zero-match order gets `1 / (2^k * denominator)`.
    Method3,
    /// Like method 3, scaled by `ln(hyp_len) / k` (only when hyp_len > 1).
    Method4,
    /// Average each precision with its neighbours (uses a 5-gram precision).
    Method5,
    /// Interpolate with a prior `p_{n-1}^2 / p_{n-2}` (alpha = 5); fails
    /// when the trigram precision is 0.
    Method6,
    /// Method 4 then method 5.
    Method7,
}

impl Smoothing {
    /// All methods, in order.
    pub const ALL: [Smoothing; 8] = [
        Smoothing::Method0,
        Smoothing::Method1,
        Smoothing::Method2,
        Smoothing::Method3,
        Smoothing::Method4,
        Smoothing::Method5,
        Smoothing::Method6,
        Smoothing::Method7,
    ];

    /// How many n-gram orders the statistics must hold for `n_weights`
    /// weights: methods 5 and 7 also read a 5-gram precision.
    pub fn required_order(self, n_weights: usize) -> usize {
        match self {
            Smoothing::Method5 | Smoothing::Method7 => n_weights.max(5),
            _ => n_weights,
        }
    }
}

impl fmt::Display for Smoothing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = Smoothing::ALL
            .iter()
            .position(|s| s == self)
            .unwrap_or_default();
        write!(f, "method{i}")
    }
}

impl FromStr for Smoothing {
    type Err = BleuError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.strip_prefix("method")
            .filter(|d| d.len() == 1)
            .and_then(|d| d.parse::<usize>().ok())
            .and_then(|i| Smoothing::ALL.get(i).copied())
            .ok_or_else(|| BleuError::UnknownSmoothing(s.to_string()))
    }
}

/// Errors of BLEU computation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BleuError {
    /// A hypothesis came without any reference (nltk raises `ValueError`).
    #[error("a hypothesis has no references")]
    NoReferences,
    /// nltk's method 6 asserts that the trigram precision is non-zero (its
    /// message says "bigrams").
    #[error("smoothing method6 requires a non-zero trigram precision")]
    Method6ZeroTrigram,
    /// Method 6 needs at least three weights (nltk raises `IndexError`).
    #[error("smoothing method6 requires at least 3 weights, got {0}")]
    Method6TooFewOrders(usize),
    /// The statistics hold fewer n-gram orders than the weights and
    /// smoothing need (see [`Smoothing::required_order`]).
    #[error("statistics hold {got} n-gram orders, {needed} needed")]
    MissingOrders {
        /// Orders needed.
        needed: usize,
        /// Orders present.
        got: usize,
    },
    /// Corpus with different numbers of hypotheses and reference sets.
    #[error("{hypotheses} hypotheses but {references} reference sets")]
    LengthMismatch {
        /// Number of hypotheses.
        hypotheses: usize,
        /// Number of reference sets.
        references: usize,
    },
    /// Unknown smoothing name.
    #[error("unknown smoothing {0:?} (expected method0..method7)")]
    UnknownSmoothing(String),
}

/// Sufficient statistics of BLEU for one segment or a sum of segments.
///
/// Index `n - 1` of `numerators`/`denominators` is order n. Statistics to be
/// added up should be computed with the same number of orders.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BleuStats {
    /// Clipped n-gram matches per order.
    pub numerators: Vec<u64>,
    /// `max(1, #hypothesis n-grams)` per order and segment, summed.
    pub denominators: Vec<u64>,
    /// Hypothesis length in tokens.
    pub hyp_len: u64,
    /// Closest reference length in tokens.
    pub ref_len: u64,
}

impl AddAssign<&BleuStats> for BleuStats {
    fn add_assign(&mut self, o: &BleuStats) {
        for (mine, theirs) in [
            (&mut self.numerators, &o.numerators),
            (&mut self.denominators, &o.denominators),
        ] {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), 0);
            }
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
        self.hyp_len += o.hyp_len;
        self.ref_len += o.ref_len;
    }
}

/// Reusable buffers for scoring many segments.
#[derive(Default)]
struct Scratch {
    index: NgramIndex,
    hyp: Vec<u32>,
    reference: Vec<u32>,
}

thread_local! {
    static SCRATCH: Cell<Scratch> = Cell::new(Scratch::default());
}

impl Scratch {
    fn stats<'h, 'r, I, J>(
        &mut self,
        hypothesis: I,
        references: J,
        max_order: usize,
    ) -> Result<BleuStats, BleuError>
    where
        I: IntoIterator<Item = &'h str>,
        J: IntoIterator,
        J::Item: IntoIterator<Item = &'r str>,
    {
        let mut interner = Interner::with_capacity(64);
        interner.insert_all(hypothesis, &mut self.hyp);
        let hyp_len = self.hyp.len();
        self.index.set_hypothesis(&self.hyp, max_order);
        let mut ref_len = None;
        for r in references {
            interner.lookup_all(r, &mut self.reference);
            ref_len = closest_ref_len(hyp_len, ref_len.into_iter().chain([self.reference.len()]));
            self.index.count_reference(&self.reference);
            self.index.merge_reference_max();
        }
        let ref_len = ref_len.ok_or(BleuError::NoReferences)?;
        let mut numerators = vec![0; max_order];
        self.index.add_max_matches(&mut numerators);
        let denominators = (1..=max_order)
            .map(|n| ngram_count(hyp_len, n).max(1))
            .collect();
        Ok(BleuStats {
            numerators,
            denominators,
            hyp_len: hyp_len as u64,
            ref_len: ref_len as u64,
        })
    }
}

/// Statistics of one tokenized segment for n-gram orders `1..=max_order`.
///
/// ```
/// use assay_text::bleu::segment_stats;
/// let hyp = ["the", "the", "cat"];
/// let stats = segment_stats(&hyp, &[["the", "cat"]], 2).unwrap();
/// assert_eq!(stats.numerators, [2, 1]);
/// assert_eq!(stats.denominators, [3, 2]);
/// assert_eq!((stats.hyp_len, stats.ref_len), (3, 2));
/// ```
pub fn segment_stats<S: AsRef<str>, R: AsRef<[S]>>(
    hypothesis: &[S],
    references: &[R],
    max_order: usize,
) -> Result<BleuStats, BleuError> {
    with_local(&SCRATCH, |s| {
        s.stats(
            hypothesis.iter().map(AsRef::as_ref),
            references
                .iter()
                .map(|r| r.as_ref().iter().map(AsRef::as_ref)),
            max_order,
        )
    })
}

/// A precision value as nltk holds it: a Fraction, or a float once a
/// smoothing method produced one. Python's mixed arithmetic turns a Fraction
/// into a float as soon as it meets one.
#[derive(Debug, Clone, Copy)]
enum P {
    /// Exact rational (nltk's Fraction). `raw` keeps the unnormalised
    /// numerator and denominator that nltk's methods read; only the
    /// precisions nltk builds itself have them, not results of arithmetic.
    Frac {
        value: Rational,
        raw: Option<(u64, u64)>,
    },
    Float(f64),
}

impl P {
    fn frac(num: u64, den: u64) -> P {
        match Rational::new(u128::from(num), u128::from(den)) {
            Some(value) => P::Frac {
                value,
                raw: Some((num, den)),
            },
            None => P::Float(ratio_to_f64(u128::from(num), u128::from(den))),
        }
    }

    fn exact(value: Rational) -> P {
        P::Frac { value, raw: None }
    }

    fn to_f64(self) -> f64 {
        match self {
            P::Frac { value, .. } => value.to_f64(),
            P::Float(f) => f,
        }
    }

    fn is_zero(self) -> bool {
        match self {
            P::Frac { value, .. } => value.is_zero(),
            P::Float(f) => f == 0.0,
        }
    }

    /// Exact when both are fractions. Falls back to floats if `u128`
    /// overflows, which needs corpus-sized denominators under methods 5-7.
    fn combine(
        self,
        o: P,
        exact: impl Fn(Rational, Rational) -> Option<Rational>,
        float: impl Fn(f64, f64) -> f64,
    ) -> P {
        if let (P::Frac { value: a, .. }, P::Frac { value: b, .. }) = (self, o) {
            if let Some(v) = exact(a, b) {
                return P::exact(v);
            }
        }
        P::Float(float(self.to_f64(), o.to_f64()))
    }

    fn add(self, o: P) -> P {
        self.combine(o, Rational::checked_add, |a, b| a + b)
    }

    fn mul(self, o: P) -> P {
        self.combine(o, Rational::checked_mul, |a, b| a * b)
    }

    fn div(self, o: P) -> P {
        self.combine(o, Rational::checked_div, |a, b| a / b)
    }

    fn int(n: u128) -> P {
        P::exact(Rational::int(n))
    }
}

/// Everything a smoothing method may read besides the precisions.
struct SmoothingInput<'a> {
    /// Total hypothesis length (nltk's `hyp_len`).
    hyp_len: u64,
    /// Unsmoothed numerators (nltk's `p_i.numerator`).
    numerators: &'a [u64],
    /// The last segment (nltk's `references`/`hypothesis` at corpus level).
    last: &'a BleuStats,
}

fn smooth(method: Smoothing, p: &mut [P], input: &SmoothingInput<'_>) -> Result<(), BleuError> {
    let raw = |p: &P| match *p {
        P::Frac { raw, .. } => raw,
        P::Float(_) => None,
    };
    match method {
        Smoothing::Method0 => {
            for x in p.iter_mut() {
                if raw(x).is_some_and(|(n, _)| n == 0) {
                    *x = P::Float(f64::MIN_POSITIVE);
                }
            }
        }
        Smoothing::Method1 => {
            for x in p.iter_mut() {
                if let Some((0, d)) = raw(x) {
                    *x = P::Float((0.0 + EPSILON) / d as f64);
                }
            }
        }
        Smoothing::Method2 => {
            for x in p.iter_mut().skip(1) {
                if let Some((n, d)) = raw(x) {
                    *x = P::frac(n + 1, d + 1);
                }
            }
        }
        Smoothing::Method3 => {
            let mut k = 1;
            for x in p.iter_mut() {
                if let Some((0, d)) = raw(x) {
                    // 1 / (2^k * d): the product is exact in binary floating point.
                    *x = P::Float(1.0 / (d as f64 * 2f64.powi(k)));
                    k += 1;
                }
            }
        }
        Smoothing::Method4 => method4(p, input.hyp_len, &raw),
        Smoothing::Method5 => method5(p, input.last)?,
        Smoothing::Method6 => method6(p, input.numerators, input.last)?,
        Smoothing::Method7 => {
            method4(p, input.hyp_len, &raw);
            method5(p, input.last)?;
        }
    }
    Ok(())
}

fn method4(p: &mut [P], hyp_len: u64, raw: &impl Fn(&P) -> Option<(u64, u64)>) {
    let mut k: i32 = 1;
    for x in p.iter_mut() {
        if let Some((0, d)) = raw(x) {
            if hyp_len > 1 {
                let scale = 2f64.powi(k) * K as f64;
                let numerator = 1.0 / (scale / (hyp_len as f64).ln());
                *x = P::Float(numerator / d as f64);
                k += 1;
            }
        }
    }
}

fn method5(p: &mut [P], last: &BleuStats) -> Result<(), BleuError> {
    let fifth = match (last.numerators.get(4), last.denominators.get(4)) {
        (Some(&n), Some(&d)) => P::frac(n, d),
        _ => {
            return Err(BleuError::MissingOrders {
                needed: 5,
                got: last.numerators.len(),
            })
        }
    };
    let Some(&first) = p.first() else {
        return Ok(());
    };
    let mut plus1: Vec<P> = p.to_vec();
    plus1.push(fifth);
    let mut m = first.add(P::int(1));
    for i in 0..p.len() {
        let v = m.add(p[i]).add(plus1[i + 1]).div(P::int(3));
        p[i] = v;
        m = v;
    }
    Ok(())
}

fn method6(p: &mut [P], numerators: &[u64], last: &BleuStats) -> Result<(), BleuError> {
    match p.get(2) {
        None => return Err(BleuError::Method6TooFewOrders(p.len())),
        Some(x) if x.is_zero() => return Err(BleuError::Method6ZeroTrigram),
        Some(_) => {}
    }
    for i in 2..p.len() {
        let m = numerators.get(i).copied().unwrap_or_default();
        let l = ngram_count(last.hyp_len as usize, i + 1);
        let alpha = P::int(ALPHA);
        p[i] = if p[i - 2].is_zero() {
            // pi0 is the int 0: (m + 0) / (l + alpha) is int / int.
            P::Float(ratio_to_f64(u128::from(m), u128::from(l) + ALPHA))
        } else {
            let pi0 = p[i - 1].mul(p[i - 1]).div(p[i - 2]);
            P::int(u128::from(m))
                .add(alpha.mul(pi0))
                .div(P::int(u128::from(l) + ALPHA))
        };
    }
    Ok(())
}

/// The BLEU score of (summed) statistics, as nltk's `corpus_bleu`.
///
/// `last` is the last segment's statistics, read by smoothing methods 5
/// and 6 (for a single sentence, pass the same statistics twice). Both must
/// hold at least [`Smoothing::required_order`] orders.
///
/// ```
/// use assay_text::bleu::{finalize, segment_stats, Smoothing};
/// let hyp = ["a", "cat", "sat", "here"];
/// let stats = segment_stats(&hyp, &[["a", "cat", "sat", "there"]], 4).unwrap();
/// let w = [0.25; 4];
/// // No 4-gram matches: method0 gives a tiny positive number, method1 smooths.
/// assert!(finalize(&stats, &stats, &w, Smoothing::Method0).unwrap() < 1e-9);
/// let s1 = finalize(&stats, &stats, &w, Smoothing::Method1).unwrap();
/// assert!((s1 - 0.3976353643835253).abs() < 1e-12);
/// ```
pub fn finalize(
    total: &BleuStats,
    last: &BleuStats,
    weights: &[f64],
    smoothing: Smoothing,
) -> Result<f64, BleuError> {
    let needed = smoothing.required_order(weights.len());
    let got = total.numerators.len().min(total.denominators.len());
    let got_last = last.numerators.len().min(last.denominators.len());
    if got.min(got_last) < needed {
        return Err(BleuError::MissingOrders {
            needed,
            got: got.min(got_last),
        });
    }
    if weights.is_empty() || total.numerators[0] == 0 {
        return Ok(0.0);
    }
    let mut p: Vec<P> = (0..weights.len())
        .map(|i| P::frac(total.numerators[i], total.denominators[i]))
        .collect();
    let input = SmoothingInput {
        hyp_len: total.hyp_len,
        numerators: &total.numerators,
        last,
    };
    smooth(smoothing, &mut p, &input)?;
    let log_sum = fsum(weights.iter().zip(&p).filter_map(|(&w, &p)| {
        let p = p.to_f64();
        (p > 0.0).then(|| w * p.ln())
    }));
    Ok(brevity_penalty(total.ref_len, total.hyp_len) * log_sum.exp())
}

/// nltk's `brevity_penalty(closest_ref_len, hyp_len)`.
fn brevity_penalty(ref_len: u64, hyp_len: u64) -> f64 {
    if hyp_len > ref_len {
        1.0
    } else if hyp_len == 0 {
        0.0
    } else {
        (1.0 - ref_len as f64 / hyp_len as f64).exp()
    }
}

/// valor-lite's reporting policy: scores below 1e-9 are reported as 0.
pub fn zero_below_1e9(score: f64) -> f64 {
    if score < 1e-9 {
        0.0
    } else {
        score
    }
}

/// Settings of BLEU on raw text.
#[derive(Debug, Clone, PartialEq)]
pub struct BleuConfig {
    /// Weights per order (nltk default `(0.25,) * 4`).
    pub weights: Vec<f64>,
    /// Smoothing method (default no smoothing).
    pub smoothing: Smoothing,
    /// Tokenizer (default `str.split()`).
    pub tokenizer: BleuTokenizer,
}

impl Default for BleuConfig {
    fn default() -> Self {
        BleuConfig {
            weights: vec![0.25; 4],
            smoothing: Smoothing::Method0,
            tokenizer: BleuTokenizer::Whitespace,
        }
    }
}

impl BleuConfig {
    fn max_order(&self) -> usize {
        self.smoothing.required_order(self.weights.len())
    }
}

/// nltk `sentence_bleu` on raw texts, tokenized with `config.tokenizer`.
///
/// ```
/// use assay_text::bleu::{sentence_bleu, BleuConfig};
/// let s = sentence_bleu("the cat sat on the mat", &["the cat sat on a mat"], &BleuConfig::default()).unwrap();
/// assert!((s - 0.5372849659117709).abs() < 1e-12);
/// ```
pub fn sentence_bleu<R: AsRef<str>>(
    hypothesis: &str,
    references: &[R],
    config: &BleuConfig,
) -> Result<f64, BleuError> {
    let tok = config.tokenizer;
    let stats = with_local(&SCRATCH, |s| {
        s.stats(
            tok.tokens(hypothesis),
            references.iter().map(|r| tok.tokens(r.as_ref())),
            config.max_order(),
        )
    })?;
    finalize(&stats, &stats, &config.weights, config.smoothing)
}

/// nltk `corpus_bleu` on raw texts: one reference set per hypothesis.
/// Returns 0 for an empty corpus.
///
/// ```
/// use assay_text::bleu::{corpus_bleu, BleuConfig};
/// let hyps = ["the cat sat on the mat", "a dog"];
/// let refs = [vec!["the cat sat on a mat"], vec!["a dog barked"]];
/// let s = corpus_bleu(&hyps, &refs, &BleuConfig::default()).unwrap();
/// assert!(s > 0.0 && s < 1.0);
/// ```
pub fn corpus_bleu<H: AsRef<str>, R: AsRef<str>, RS: AsRef<[R]>>(
    hypotheses: &[H],
    references: &[RS],
    config: &BleuConfig,
) -> Result<f64, BleuError> {
    if hypotheses.len() != references.len() {
        return Err(BleuError::LengthMismatch {
            hypotheses: hypotheses.len(),
            references: references.len(),
        });
    }
    let (max_order, tok) = (config.max_order(), config.tokenizer);
    let mut total = BleuStats::default();
    let mut last = BleuStats::default();
    with_local(&SCRATCH, |s| {
        for (h, rs) in hypotheses.iter().zip(references) {
            let refs = rs.as_ref().iter().map(|r| tok.tokens(r.as_ref()));
            last = s.stats(tok.tokens(h.as_ref()), refs, max_order)?;
            total += &last;
        }
        Ok::<_, BleuError>(())
    })?;
    if hypotheses.is_empty() {
        return Ok(0.0);
    }
    finalize(&total, &last, &config.weights, config.smoothing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoothing_names_round_trip() {
        for s in Smoothing::ALL {
            assert_eq!(s.to_string().parse::<Smoothing>(), Ok(s));
        }
        for bad in ["method8", "method", "Method1", "method01", "m1"] {
            assert!(bad.parse::<Smoothing>().is_err(), "{bad}");
        }
    }

    #[test]
    fn no_references_is_an_error() {
        let refs: [&[&str]; 0] = [];
        assert_eq!(
            segment_stats(&["a"], &refs, 4),
            Err(BleuError::NoReferences)
        );
    }

    #[test]
    fn zero_unigram_matches_score_zero_before_smoothing() {
        let stats = segment_stats(&["x", "y", "z"], &[["a", "b", "c"]], 5).unwrap();
        for s in Smoothing::ALL {
            assert_eq!(finalize(&stats, &stats, &[0.25; 4], s), Ok(0.0), "{s}");
        }
    }

    #[test]
    fn method6_needs_trigram_matches() {
        let stats = segment_stats(&["a", "b", "c"], &[["a", "b", "d"]], 4).unwrap();
        assert_eq!(
            finalize(&stats, &stats, &[0.25; 4], Smoothing::Method6),
            Err(BleuError::Method6ZeroTrigram)
        );
        assert_eq!(
            finalize(&stats, &stats, &[0.5; 2], Smoothing::Method6),
            Err(BleuError::Method6TooFewOrders(2))
        );
    }

    #[test]
    fn missing_orders_are_reported() {
        let stats = segment_stats(&["a", "b"], &[["a", "b"]], 4).unwrap();
        assert_eq!(
            finalize(&stats, &stats, &[0.25; 4], Smoothing::Method5),
            Err(BleuError::MissingOrders { needed: 5, got: 4 })
        );
    }

    #[test]
    fn valor_policy() {
        assert_eq!(zero_below_1e9(2.3e-78), 0.0);
        assert_eq!(zero_below_1e9(0.5), 0.5);
    }
}
