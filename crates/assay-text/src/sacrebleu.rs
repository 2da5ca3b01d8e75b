//! BLEU as sacreBLEU 2.6.0 computes it: `exp` smoothing, max order 4, with
//! any of its tokenizers that need no external model
//! ([`SacreTokenizer`]: `none`, `13a`, `intl`, `zh`, `char`) and optional
//! lowercasing ([`SacreBleuConfig`]). The free functions use its defaults:
//! tokenizer `13a`, case-sensitive.
//!
//! [`segment_stats`] gives a segment's statistics ([`SacreBleuStats`]), which
//! add up; [`finalize`] scores them. [`sentence_bleu`] turns effective order
//! on, as sacreBLEU's `sentence_bleu` wrapper does; [`corpus_bleu`] leaves it
//! off, as `corpus_bleu` and `BLEU()` do. Scores are on a 0-100 scale.
//!
//! Preprocessing per segment is Python's `str.lower()` when lowercasing
//! ([`python_lower`]), `rstrip()` (Python whitespace), then the tokenizer;
//! tokens are the `str.split()` of its output. The score is
//! `bp * exp(sum(log p_n) / N)` with a plain left-to-right sum and
//! `log(0)` taken as -9999999999, as sacreBLEU does.

use std::borrow::Cow;
use std::fmt;
use std::ops::AddAssign;

use std::cell::Cell;

use crate::bleu::ngram::{closest_ref_len, ngram_count, with_local, Interner, NgramIndex};
use crate::tokenize::{is_python_whitespace, python_lower, python_split, SacreBuf};

pub use crate::tokenize::SacreTokenizer;

/// sacreBLEU's maximum n-gram order.
pub const MAX_ORDER: usize = 4;

/// sacreBLEU's version, as it appears in signatures.
pub const SACREBLEU_VERSION: &str = "2.6.0";

/// Whether only the n-gram orders the hypothesis has count
/// (sacreBLEU's `effective_order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EffectiveOrder {
    /// Stop at the first order with no hypothesis n-grams and average over
    /// the orders reached (sentence BLEU).
    On,
    /// Always average over 4 orders (corpus BLEU).
    Off,
}

impl EffectiveOrder {
    fn signature(self) -> &'static str {
        match self {
            EffectiveOrder::On => "yes",
            EffectiveOrder::Off => "no",
        }
    }
}

/// The `nrefs` field of a sacreBLEU signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NRefs {
    /// Every segment has this many references.
    Fixed(usize),
    /// Segments have different numbers of references (`var`).
    Variable,
    /// One sentence-level score per pair (`per-pair`, used for reporting
    /// sentence scores over a data set).
    PerPair,
}

impl NRefs {
    /// `Fixed(n)` if every segment has `n` references, else `Variable`
    /// (sacreBLEU's rule). An empty corpus gives `Fixed(0)`.
    ///
    /// ```
    /// use assay_text::sacrebleu::NRefs;
    /// assert_eq!(NRefs::of([2, 2]), NRefs::Fixed(2));
    /// assert_eq!(NRefs::of([1, 3]).to_string(), "var");
    /// ```
    pub fn of(counts: impl IntoIterator<Item = usize>) -> NRefs {
        let mut it = counts.into_iter();
        let Some(first) = it.next() else {
            return NRefs::Fixed(0);
        };
        if it.all(|c| c == first) {
            NRefs::Fixed(first)
        } else {
            NRefs::Variable
        }
    }
}

impl fmt::Display for NRefs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NRefs::Fixed(n) => write!(f, "{n}"),
            NRefs::Variable => f.write_str("var"),
            NRefs::PerPair => f.write_str("per-pair"),
        }
    }
}

/// Whether texts are lowercased before scoring (sacreBLEU's `lowercase`,
/// the signature's `case:` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Case {
    /// Case-sensitive (`case:mixed`, the default).
    #[default]
    Mixed,
    /// Python's `str.lower()` first ([`python_lower`]; `case:lc`).
    Lower,
}

impl Case {
    /// `text` as scored.
    ///
    /// ```
    /// use assay_text::sacrebleu::Case;
    /// assert_eq!(Case::Lower.apply("ПРИВЕТ İ"), "привет i\u{307}");
    /// assert_eq!(Case::Mixed.apply("A"), "A");
    /// ```
    pub fn apply(self, text: &str) -> Cow<'_, str> {
        match self {
            Case::Mixed => Cow::Borrowed(text),
            Case::Lower => python_lower(text),
        }
    }
}

impl fmt::Display for Case {
    /// sacreBLEU's signature value: `mixed` or `lc`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Case::Mixed => "mixed",
            Case::Lower => "lc",
        })
    }
}

/// sacreBLEU's `BLEU(tokenize=..., lowercase=...)` with its other defaults
/// (`exp` smoothing, max order 4). `Default` is sacreBLEU's default: `13a`,
/// case-sensitive, which is what the free functions of this module use.
///
/// ```
/// use assay_text::sacrebleu::{Case, SacreBleuConfig, SacreTokenizer};
/// let zh = SacreBleuConfig { tokenizer: SacreTokenizer::Zh, case: Case::Mixed };
/// let s = zh.sentence_bleu("猫坐在垫子上。", &["猫坐在垫子上。"]).unwrap();
/// assert_eq!((s.sys_len, s.counts[3]), (7, 4));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SacreBleuConfig {
    /// The tokenizer (`tokenize=`).
    pub tokenizer: SacreTokenizer,
    /// Lowercasing (`lowercase=`).
    pub case: Case,
}

impl SacreBleuConfig {
    /// Statistics of one segment against its references (raw text).
    pub fn segment_stats<R: AsRef<str>>(
        &self,
        hypothesis: &str,
        references: &[R],
    ) -> Result<SacreBleuStats, SacreBleuError> {
        with_local(&SCRATCH, |s| s.stats(hypothesis, references, self))
    }

    /// sacreBLEU `sentence_bleu(hypothesis, references, tokenize=...,
    /// lowercase=...)`: effective order on.
    pub fn sentence_bleu<R: AsRef<str>>(
        &self,
        hypothesis: &str,
        references: &[R],
    ) -> Result<BleuScore, SacreBleuError> {
        Ok(finalize(
            &self.segment_stats(hypothesis, references)?,
            EffectiveOrder::On,
        ))
    }

    /// The summed statistics of a corpus.
    pub fn corpus_stats<H: AsRef<str>, R: AsRef<str>, RS: AsRef<[R]>>(
        &self,
        hypotheses: &[H],
        references: &[RS],
    ) -> Result<SacreBleuStats, SacreBleuError> {
        if hypotheses.len() != references.len() {
            return Err(SacreBleuError::LengthMismatch {
                hypotheses: hypotheses.len(),
                references: references.len(),
            });
        }
        let mut scratch = Scratch::default();
        let mut total = SacreBleuStats::default();
        for (h, rs) in hypotheses.iter().zip(references) {
            total += &scratch.stats(h.as_ref(), rs.as_ref(), self)?;
        }
        Ok(total)
    }

    /// sacreBLEU `corpus_bleu`: statistics summed over segments, effective
    /// order off. Each hypothesis has its own (non-empty) list of references.
    pub fn corpus_bleu<H: AsRef<str>, R: AsRef<str>, RS: AsRef<[R]>>(
        &self,
        hypotheses: &[H],
        references: &[RS],
    ) -> Result<BleuScore, SacreBleuError> {
        Ok(finalize(
            &self.corpus_stats(hypotheses, references)?,
            EffectiveOrder::Off,
        ))
    }

    /// sacreBLEU's BLEU signature for these settings.
    ///
    /// ```
    /// use assay_text::sacrebleu::{Case, EffectiveOrder, NRefs, SacreBleuConfig, SacreTokenizer};
    /// let config = SacreBleuConfig { tokenizer: SacreTokenizer::Intl, case: Case::Lower };
    /// assert_eq!(
    ///     config.signature(NRefs::Fixed(1), EffectiveOrder::Off),
    ///     "nrefs:1|case:lc|eff:no|tok:intl|smooth:exp|version:2.6.0"
    /// );
    /// ```
    pub fn signature(&self, nrefs: NRefs, effective_order: EffectiveOrder) -> String {
        format!(
            "nrefs:{nrefs}|case:{}|eff:{}|tok:{}|smooth:exp|version:{SACREBLEU_VERSION}",
            self.case,
            effective_order.signature(),
            self.tokenizer
        )
    }
}

/// Errors of sacreBLEU-style scoring.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SacreBleuError {
    /// A hypothesis came without any reference.
    #[error("a hypothesis has no references")]
    NoReferences,
    /// Corpus with different numbers of hypotheses and reference sets.
    #[error("{hypotheses} hypotheses but {references} reference sets")]
    LengthMismatch {
        /// Number of hypotheses.
        hypotheses: usize,
        /// Number of reference sets.
        references: usize,
    },
}

/// Sufficient statistics of sacreBLEU BLEU; they add up over a corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SacreBleuStats {
    /// Hypothesis length in tokens.
    pub sys_len: u64,
    /// Closest reference length (ties to the shorter).
    pub ref_len: u64,
    /// Clipped n-gram matches per order.
    pub counts: [u64; MAX_ORDER],
    /// Hypothesis n-grams per order.
    pub totals: [u64; MAX_ORDER],
}

impl AddAssign<&SacreBleuStats> for SacreBleuStats {
    fn add_assign(&mut self, o: &SacreBleuStats) {
        self.sys_len += o.sys_len;
        self.ref_len += o.ref_len;
        for n in 0..MAX_ORDER {
            self.counts[n] += o.counts[n];
            self.totals[n] += o.totals[n];
        }
    }
}

/// A sacreBLEU `BLEUScore`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BleuScore {
    /// BLEU, 0..100.
    pub score: f64,
    /// Clipped n-gram matches per order.
    pub counts: [u64; MAX_ORDER],
    /// Hypothesis n-grams per order.
    pub totals: [u64; MAX_ORDER],
    /// Smoothed precisions per order, 0..100 (0 past the last order reached).
    pub precisions: [f64; MAX_ORDER],
    /// Brevity penalty.
    pub bp: f64,
    /// Hypothesis length.
    pub sys_len: u64,
    /// Reference length.
    pub ref_len: u64,
}

/// Reusable buffers; one per segment scored would allocate each time.
#[derive(Default)]
pub(crate) struct Scratch {
    hyp_text: SacreBuf,
    ref_text: SacreBuf,
    index: NgramIndex,
    hyp: Vec<u32>,
    reference: Vec<u32>,
}

thread_local! {
    static SCRATCH: Cell<Scratch> = Cell::new(Scratch::default());
}

impl Scratch {
    fn stats<R: AsRef<str>>(
        &mut self,
        hypothesis: &str,
        references: &[R],
        config: &SacreBleuConfig,
    ) -> Result<SacreBleuStats, SacreBleuError> {
        if references.is_empty() {
            return Err(SacreBleuError::NoReferences);
        }
        let hypothesis = config.case.apply(hypothesis);
        let text = self.hyp_text.run(
            config.tokenizer,
            hypothesis.trim_end_matches(is_python_whitespace),
        );
        let mut interner = Interner::with_capacity(64);
        interner.insert_all(python_split(text), &mut self.hyp);
        self.index.set_hypothesis(&self.hyp, MAX_ORDER);
        let mut ref_lens = Vec::with_capacity(references.len());
        for r in references {
            let r = config.case.apply(r.as_ref());
            let text = self
                .ref_text
                .run(config.tokenizer, r.trim_end_matches(is_python_whitespace));
            interner.lookup_all(python_split(text), &mut self.reference);
            ref_lens.push(self.reference.len());
            self.index.count_reference(&self.reference);
            self.index.merge_reference_max();
        }
        let sys_len = self.hyp.len();
        let ref_len = closest_ref_len(sys_len, ref_lens).ok_or(SacreBleuError::NoReferences)?;
        let mut counts = [0; MAX_ORDER];
        self.index.add_max_matches(&mut counts);
        let totals = std::array::from_fn(|i| ngram_count(sys_len, i + 1));
        Ok(SacreBleuStats {
            sys_len: sys_len as u64,
            ref_len: ref_len as u64,
            counts,
            totals,
        })
    }
}

/// Statistics of one segment against its references (raw, untokenized text).
///
/// ```
/// use assay_text::sacrebleu::segment_stats;
/// let s = segment_stats("The cat sat.", &["The cat sat on the mat."]).unwrap();
/// assert_eq!((s.sys_len, s.ref_len), (4, 7));
/// assert_eq!(s.counts, [4, 2, 1, 0]);
/// ```
pub fn segment_stats<R: AsRef<str>>(
    hypothesis: &str,
    references: &[R],
) -> Result<SacreBleuStats, SacreBleuError> {
    SacreBleuConfig::default().segment_stats(hypothesis, references)
}

/// sacreBLEU's `my_log`: `log(0)` is -9999999999.
fn my_log(x: f64) -> f64 {
    if x == 0.0 {
        -9_999_999_999.0
    } else {
        x.ln()
    }
}

/// sacreBLEU's `compute_bleu` with `exp` smoothing.
///
/// ```
/// use assay_text::sacrebleu::{finalize, segment_stats, EffectiveOrder};
/// let s = segment_stats("a b c", &["a b c"]).unwrap();
/// // exp(ln(100)) is 100.00000000000004, in sacreBLEU too.
/// assert_eq!(finalize(&s, EffectiveOrder::On).score, 100.00000000000004);
/// // Without effective order the missing 4-gram order zeroes the score.
/// assert!(finalize(&s, EffectiveOrder::Off).score < 1e-9);
/// ```
pub fn finalize(stats: &SacreBleuStats, effective_order: EffectiveOrder) -> BleuScore {
    let (sys_len, ref_len) = (stats.sys_len, stats.ref_len);
    let bp = if sys_len < ref_len {
        if sys_len > 0 {
            (1.0 - ref_len as f64 / sys_len as f64).exp()
        } else {
            0.0
        }
    } else {
        1.0
    };
    let mut precisions = [0.0; MAX_ORDER];
    let result = |score, precisions| BleuScore {
        score,
        counts: stats.counts,
        totals: stats.totals,
        precisions,
        bp,
        sys_len,
        ref_len,
    };
    if stats.counts.iter().all(|&c| c == 0) {
        return result(0.0, precisions);
    }
    let mut smooth_mteval = 1.0;
    let mut eff_order = MAX_ORDER;
    for (n, precision) in precisions.iter_mut().enumerate() {
        let (count, total) = (stats.counts[n], stats.totals[n]);
        if total == 0 {
            break;
        }
        if effective_order == EffectiveOrder::On {
            eff_order = n + 1;
        }
        *precision = if count == 0 {
            smooth_mteval *= 2.0;
            100.0 / (smooth_mteval * total as f64)
        } else {
            100.0 * count as f64 / total as f64
        };
    }
    let log_sum = precisions[..eff_order]
        .iter()
        .fold(0.0, |acc, &p| acc + my_log(p));
    result(bp * (log_sum / eff_order as f64).exp(), precisions)
}

/// sacreBLEU `sentence_bleu(hypothesis, references)`: effective order on.
///
/// ```
/// use assay_text::sacrebleu::sentence_bleu;
/// let s = sentence_bleu("The cat sat on the mat.", &["The cat sat on a mat."]).unwrap();
/// assert!((s.score - 48.892302243490086).abs() < 1e-9);
/// ```
pub fn sentence_bleu<R: AsRef<str>>(
    hypothesis: &str,
    references: &[R],
) -> Result<BleuScore, SacreBleuError> {
    SacreBleuConfig::default().sentence_bleu(hypothesis, references)
}

/// sacreBLEU `corpus_bleu`: statistics summed over segments, effective
/// order off. Each hypothesis has its own (non-empty) list of references.
pub fn corpus_bleu<H: AsRef<str>, R: AsRef<str>, RS: AsRef<[R]>>(
    hypotheses: &[H],
    references: &[RS],
) -> Result<BleuScore, SacreBleuError> {
    SacreBleuConfig::default().corpus_bleu(hypotheses, references)
}

/// The summed statistics of a corpus.
pub fn corpus_stats<H: AsRef<str>, R: AsRef<str>, RS: AsRef<[R]>>(
    hypotheses: &[H],
    references: &[RS],
) -> Result<SacreBleuStats, SacreBleuError> {
    SacreBleuConfig::default().corpus_stats(hypotheses, references)
}

/// sacreBLEU's BLEU signature for the default settings.
///
/// ```
/// use assay_text::sacrebleu::{bleu_signature, EffectiveOrder, NRefs};
/// assert_eq!(
///     bleu_signature(NRefs::Variable, EffectiveOrder::Off),
///     "nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
/// );
/// ```
pub fn bleu_signature(nrefs: NRefs, effective_order: EffectiveOrder) -> String {
    SacreBleuConfig::default().signature(nrefs, effective_order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_hypothesis_scores_zero() {
        let s = sentence_bleu("", &["a b"]).unwrap();
        assert_eq!((s.score, s.bp, s.sys_len, s.ref_len), (0.0, 0.0, 0, 2));
    }

    #[test]
    fn no_references_is_an_error() {
        let refs: [&str; 0] = [];
        assert_eq!(sentence_bleu("a", &refs), Err(SacreBleuError::NoReferences));
    }

    #[test]
    fn exp_smoothing_of_zero_match_orders() {
        // 3 unigram matches of 3, then no bigram/trigram matches.
        let s = sentence_bleu("a b c", &["c b a"]).unwrap();
        assert_eq!(s.precisions, [100.0, 100.0 / 4.0, 100.0 / 4.0, 0.0]);
        let want = ((100f64).ln() + 25f64.ln() + 25f64.ln()) / 3.0;
        assert_eq!(s.score, want.exp());
    }
}
