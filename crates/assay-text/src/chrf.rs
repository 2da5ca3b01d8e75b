//! chrF and chrF++ as sacreBLEU 2.6.0 computes them (`sacrebleu.CHRF`,
//! with `char_order`, `word_order`, `beta`, `lowercase` and `whitespace`;
//! not `eps_smoothing`).
//!
//! - With `lowercase`, both texts go through Python's `str.lower()` first
//!   ([`crate::tokenize::python_lower`]).
//! - Whitespace (Python's set) is removed before extracting character
//!   n-grams, unless `whitespace` is on ([`Whitespace::Included`]: the text
//!   as it is, not even stripped). N-grams are over code points (NFC and
//!   NFD differ).
//! - chrF++ adds word n-grams over `split()` words, where a word longer than
//!   one character has one ASCII punctuation character split off its end
//!   (checked first) or else its start, as a separate word.
//! - Per order the statistics are `[hypothesis n-grams, reference n-grams,
//!   matches]`; the hypothesis count is reported as 0 when the reference has
//!   no n-gram of that order. With several references a segment keeps the
//!   statistics of the reference with the best sentence chrF (strictly
//!   greater, so the first on ties). Statistics add up over a corpus.
//! - Precision and recall are averaged over the orders where both sides
//!   have n-grams ("effective order"), then combined into F-beta, times 100.

use std::ops::AddAssign;

use std::cell::Cell;

use crate::bleu::ngram::{ngram_count, with_local, Interner, NgramIndex};
use crate::sacrebleu::{Case, NRefs, SacreBleuError, SACREBLEU_VERSION};
use crate::tokenize::{is_python_whitespace, python_split};

/// Whether white space takes part in character n-grams (sacreBLEU's
/// `whitespace`, the signature's `space:` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Whitespace {
    /// Removed before extracting character n-grams (`space:no`, the
    /// default).
    #[default]
    Excluded,
    /// Kept, as every other character (`space:yes`).
    Included,
}

/// chrF settings (sacreBLEU's `CHRF(char_order, word_order, beta,
/// lowercase, whitespace)`, without eps smoothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChrfConfig {
    /// Character n-gram orders (sacreBLEU default 6).
    pub char_order: usize,
    /// Word n-gram orders (0 for chrF, 2 for chrF++).
    pub word_order: usize,
    /// Recall weight beta (default 2).
    pub beta: u32,
    /// Lowercasing (`lowercase=`, default off).
    pub case: Case,
    /// White space in character n-grams (`whitespace=`, default excluded).
    pub whitespace: Whitespace,
}

impl ChrfConfig {
    /// chrF: char order 6, word order 0, beta 2.
    pub const CHRF: ChrfConfig = ChrfConfig {
        char_order: 6,
        word_order: 0,
        beta: 2,
        case: Case::Mixed,
        whitespace: Whitespace::Excluded,
    };
    /// chrF++: char order 6, word order 2, beta 2.
    pub const CHRF_PP: ChrfConfig = ChrfConfig {
        char_order: 6,
        word_order: 2,
        beta: 2,
        case: Case::Mixed,
        whitespace: Whitespace::Excluded,
    };

    fn orders(&self) -> usize {
        self.char_order + self.word_order
    }

    /// sacreBLEU's signature for these settings.
    ///
    /// ```
    /// use assay_text::chrf::ChrfConfig;
    /// use assay_text::sacrebleu::NRefs;
    /// assert_eq!(
    ///     ChrfConfig::CHRF_PP.signature(NRefs::Variable),
    ///     "nrefs:var|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0"
    /// );
    /// ```
    pub fn signature(&self, nrefs: NRefs) -> String {
        let space = match self.whitespace {
            Whitespace::Excluded => "no",
            Whitespace::Included => "yes",
        };
        format!(
            "nrefs:{nrefs}|case:{}|eff:yes|nc:{}|nw:{}|space:{space}|version:{SACREBLEU_VERSION}",
            self.case, self.char_order, self.word_order
        )
    }
}

impl Default for ChrfConfig {
    fn default() -> Self {
        ChrfConfig::CHRF
    }
}

/// chrF statistics: per order (characters first, then words)
/// `[hypothesis n-grams, reference n-grams, matches]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChrfStats {
    /// One `[hyp, ref, match]` triple per order.
    pub orders: Vec<[u64; 3]>,
}

impl AddAssign<&ChrfStats> for ChrfStats {
    fn add_assign(&mut self, o: &ChrfStats) {
        if self.orders.len() < o.orders.len() {
            self.orders.resize(o.orders.len(), [0; 3]);
        }
        for (a, b) in self.orders.iter_mut().zip(&o.orders) {
            for k in 0..3 {
                a[k] += b[k];
            }
        }
    }
}

/// ASCII punctuation (`string.punctuation`).
fn is_punct(b: u8) -> bool {
    b.is_ascii_punctuation()
}

/// sacreBLEU's `_remove_punctuation`: splits one punctuation character off
/// the end, or else the start, of each word longer than one character.
fn words(text: &str) -> impl Iterator<Item = &str> {
    python_split(text).flat_map(|w| {
        let bytes = w.as_bytes();
        let single = w.chars().nth(1).is_none();
        let cut = if single {
            None
        } else if bytes.last().copied().is_some_and(is_punct) {
            Some(w.len() - 1)
        } else if bytes.first().copied().is_some_and(is_punct) {
            Some(1)
        } else {
            None
        };
        match cut {
            Some(i) => [Some(&w[..i]), Some(&w[i..])],
            None => [Some(w), None],
        }
        .into_iter()
        .flatten()
    })
}

/// The F-beta score of statistics (sacreBLEU's `_compute_f_score` without
/// eps smoothing), 0..100.
fn f_score(orders: &[[u64; 3]], beta: u32) -> f64 {
    let factor = f64::from(beta) * f64::from(beta);
    let (mut prec, mut rec, mut effective) = (0.0, 0.0, 0u32);
    for &[hyp, reference, matches] in orders {
        if hyp > 0 && reference > 0 {
            prec += matches as f64 / hyp as f64;
            rec += matches as f64 / reference as f64;
            effective += 1;
        }
    }
    if effective > 0 {
        prec /= f64::from(effective);
        rec /= f64::from(effective);
    }
    if prec + rec != 0.0 {
        let score = (1.0 + factor) * prec * rec / (factor * prec + rec);
        100.0 * score
    } else {
        0.0
    }
}

/// Reusable buffers for scoring many segments.
#[derive(Default)]
struct Scratch {
    chars: NgramIndex,
    words: NgramIndex,
    hyp: Vec<u32>,
    reference: Vec<u32>,
    stats: Vec<[u64; 3]>,
    matches: Vec<u64>,
}

thread_local! {
    static SCRATCH: Cell<Scratch> = Cell::new(Scratch::default());
}

fn push_chars(text: &str, whitespace: Whitespace, out: &mut Vec<u32>) {
    out.clear();
    if whitespace == Whitespace::Included {
        out.extend(text.chars().map(u32::from));
    } else if text.is_ascii() {
        let kept = text
            .bytes()
            .filter(|&b| !is_python_whitespace(char::from(b)));
        out.extend(kept.map(u32::from));
    } else {
        let kept = text.chars().filter(|&c| !is_python_whitespace(c));
        out.extend(kept.map(u32::from));
    }
}

impl Scratch {
    fn stats<R: AsRef<str>>(
        &mut self,
        hypothesis: &str,
        references: &[R],
        config: &ChrfConfig,
    ) -> Result<ChrfStats, SacreBleuError> {
        if references.is_empty() {
            return Err(SacreBleuError::NoReferences);
        }
        let (nc, nw) = (config.char_order, config.word_order);
        let hypothesis = config.case.apply(hypothesis);
        let hypothesis = hypothesis.as_ref();
        push_chars(hypothesis, config.whitespace, &mut self.hyp);
        let hyp_chars = self.hyp.len();
        self.chars.set_hypothesis(&self.hyp, nc);
        // Words only for chrF++ (capacity 0 does not allocate).
        let mut interner = Interner::with_capacity(if nw > 0 { 64 } else { 0 });
        let mut hyp_words = 0;
        if nw > 0 {
            interner.insert_all(words(hypothesis), &mut self.hyp);
            hyp_words = self.hyp.len();
            self.words.set_hypothesis(&self.hyp, nw);
        }
        let mut best: Option<(f64, ChrfStats)> = None;
        for r in references {
            let r = config.case.apply(r.as_ref());
            let r = r.as_ref();
            self.stats.clear();
            self.stats.resize(nc + nw, [0; 3]);
            push_chars(r, config.whitespace, &mut self.reference);
            fill_totals(&mut self.stats[..nc], hyp_chars, self.reference.len());
            add_matches(
                &mut self.chars,
                &self.reference,
                &mut self.stats[..nc],
                &mut self.matches,
            );
            if nw > 0 {
                interner.lookup_all(words(r), &mut self.reference);
                fill_totals(&mut self.stats[nc..], hyp_words, self.reference.len());
                add_matches(
                    &mut self.words,
                    &self.reference,
                    &mut self.stats[nc..],
                    &mut self.matches,
                );
            }
            let f = f_score(&self.stats, config.beta);
            if best.as_ref().is_none_or(|(b, _)| f > *b) {
                best = Some((
                    f,
                    ChrfStats {
                        orders: self.stats.clone(),
                    },
                ));
            }
        }
        best.map(|(_, s)| s).ok_or(SacreBleuError::NoReferences)
    }
}

fn fill_totals(stats: &mut [[u64; 3]], hyp_len: usize, ref_len: usize) {
    for (i, s) in stats.iter_mut().enumerate() {
        let r = ngram_count(ref_len, i + 1);
        s[0] = if r > 0 {
            ngram_count(hyp_len, i + 1)
        } else {
            0
        };
        s[1] = r;
    }
}

/// Sets the match counts (third field) of `stats` from `index` and `reference`.
fn add_matches(
    index: &mut NgramIndex,
    reference: &[u32],
    stats: &mut [[u64; 3]],
    matches: &mut Vec<u64>,
) {
    matches.clear();
    matches.resize(stats.len(), 0);
    index.add_clipped_matches(reference, matches);
    for (s, m) in stats.iter_mut().zip(matches.iter()) {
        s[2] = *m;
    }
}

/// Statistics of one segment (raw text) against its references.
///
/// ```
/// use assay_text::chrf::{segment_stats, ChrfConfig};
/// let s = segment_stats("ab c", &["abc"], &ChrfConfig::CHRF).unwrap();
/// assert_eq!(&s.orders[..4], &[[3, 3, 3], [2, 2, 2], [1, 1, 1], [0, 0, 0]]);
/// ```
pub fn segment_stats<R: AsRef<str>>(
    hypothesis: &str,
    references: &[R],
    config: &ChrfConfig,
) -> Result<ChrfStats, SacreBleuError> {
    with_local(&SCRATCH, |s| s.stats(hypothesis, references, config))
}

/// The chrF score (0..100) of (summed) statistics.
pub fn finalize(stats: &ChrfStats, config: &ChrfConfig) -> f64 {
    f_score(&stats.orders, config.beta)
}

/// sacreBLEU `sentence_chrf(hypothesis, references, ...)`, 0..100.
///
/// ```
/// use assay_text::chrf::{sentence_chrf, ChrfConfig};
/// let s = sentence_chrf("the cat", &["the cat"], &ChrfConfig::CHRF).unwrap();
/// assert_eq!(s, 100.0);
/// ```
pub fn sentence_chrf<R: AsRef<str>>(
    hypothesis: &str,
    references: &[R],
    config: &ChrfConfig,
) -> Result<f64, SacreBleuError> {
    Ok(finalize(
        &segment_stats(hypothesis, references, config)?,
        config,
    ))
}

/// The summed statistics of a corpus.
pub fn corpus_stats<H: AsRef<str>, R: AsRef<str>, RS: AsRef<[R]>>(
    hypotheses: &[H],
    references: &[RS],
    config: &ChrfConfig,
) -> Result<ChrfStats, SacreBleuError> {
    if hypotheses.len() != references.len() {
        return Err(SacreBleuError::LengthMismatch {
            hypotheses: hypotheses.len(),
            references: references.len(),
        });
    }
    let mut scratch = Scratch::default();
    let mut total = ChrfStats {
        orders: vec![[0; 3]; config.orders()],
    };
    for (h, rs) in hypotheses.iter().zip(references) {
        total += &scratch.stats(h.as_ref(), rs.as_ref(), config)?;
    }
    Ok(total)
}

/// sacreBLEU `corpus_chrf`: the score of the summed statistics, 0..100.
pub fn corpus_chrf<H: AsRef<str>, R: AsRef<str>, RS: AsRef<[R]>>(
    hypotheses: &[H],
    references: &[RS],
    config: &ChrfConfig,
) -> Result<f64, SacreBleuError> {
    Ok(finalize(
        &corpus_stats(hypotheses, references, config)?,
        config,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<&str> {
        words(s).collect()
    }

    #[test]
    fn punctuation_is_split_off_words() {
        assert_eq!(
            w("(hi) ok. ,x ! é! a.b"),
            ["(hi", ")", "ok", ".", ",", "x", "!", "é", "!", "a.b"]
        );
        assert_eq!(w("é .. 'quoted'"), ["é", ".", ".", "'quoted", "'"]);
    }

    #[test]
    fn best_reference_wins_first_on_ties() {
        let cfg = ChrfConfig::CHRF;
        let s = segment_stats("abc", &["xyz", "abc", "abc"], &cfg).unwrap();
        assert_eq!(s.orders[0], [3, 3, 3]);
        assert_eq!(finalize(&s, &cfg), 100.0);
    }

    #[test]
    fn empty_texts() {
        let cfg = ChrfConfig::CHRF_PP;
        assert_eq!(sentence_chrf("", &[""], &cfg).unwrap(), 0.0);
        assert_eq!(sentence_chrf("abc", &[" "], &cfg).unwrap(), 0.0);
        let refs: [&str; 0] = [];
        assert_eq!(
            sentence_chrf("a", &refs, &cfg),
            Err(SacreBleuError::NoReferences)
        );
    }
}
