//! String metrics with ragas semantics (`ragas.metrics._string`).
//!
//! - [`exact_match`]: `reference == response`.
//! - [`string_presence`]: `reference in response` (substring test).
//! - [`similarity`]: `1 - normalized_distance(reference, response)` with the
//!   rapidfuzz 3.x distance named by [`StringDistance`].
//!
//! Every measure works on Unicode scalar values, as Python `str` does, so
//! `"é"` is one element whatever its UTF-8 length. Results match rapidfuzz
//! 3.14 to 1e-9, including its edge cases: two empty strings are identical
//! (similarity 1), one empty string against a non-empty one scores 0.
//!
//! ```
//! use assay_text::string::{similarity, StringDistance};
//!
//! let s = similarity("kitten", "sitting", StringDistance::Levenshtein);
//! assert!((s - (1.0 - 3.0 / 7.0)).abs() < 1e-12);
//! let d: StringDistance = "jaro_winkler".parse()?;
//! assert_eq!(d.to_string(), "jaro_winkler");
//! # Ok::<(), assay_text::string::ParseStringDistanceError>(())
//! ```

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::str::FromStr;

/// The distance behind [`similarity`] (ragas `DistanceMeasure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StringDistance {
    /// Levenshtein distance (unit weights) divided by the longer length.
    #[default]
    Levenshtein,
    /// Hamming distance with rapidfuzz's `pad=True`: positions past the end
    /// of the shorter string count as mismatches; divided by the longer length.
    Hamming,
    /// Jaro distance (`1 - Jaro similarity`).
    Jaro,
    /// Jaro-Winkler distance, prefix weight 0.1, common prefix of at most 4.
    JaroWinkler,
}

impl StringDistance {
    /// Every variant, in declaration order.
    pub const ALL: [StringDistance; 4] = [
        StringDistance::Levenshtein,
        StringDistance::Hamming,
        StringDistance::Jaro,
        StringDistance::JaroWinkler,
    ];

    /// The name used by [`FromStr`] and [`fmt::Display`] (ragas' enum value).
    pub fn as_str(self) -> &'static str {
        match self {
            StringDistance::Levenshtein => "levenshtein",
            StringDistance::Hamming => "hamming",
            StringDistance::Jaro => "jaro",
            StringDistance::JaroWinkler => "jaro_winkler",
        }
    }
}

impl fmt::Display for StringDistance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error returned when parsing an unknown [`StringDistance`] name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown string distance {0:?} (expected levenshtein, hamming, jaro or jaro_winkler)")]
pub struct ParseStringDistanceError(pub String);

impl FromStr for StringDistance {
    type Err = ParseStringDistanceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        StringDistance::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| ParseStringDistanceError(s.to_string()))
    }
}

/// ragas `ExactMatch`: whether the two strings are identical.
pub fn exact_match(reference: &str, response: &str) -> bool {
    reference == response
}

/// ragas `StringPresence`: whether `reference` occurs in `response`.
///
/// An empty reference is present in every response, as in Python.
pub fn string_presence(reference: &str, response: &str) -> bool {
    response.contains(reference)
}

/// ragas `NonLLMStringSimilarity`: `1 - normalized_distance(reference, response)`,
/// in `[0, 1]`, 1 for identical strings.
pub fn similarity(reference: &str, response: &str, distance: StringDistance) -> f64 {
    // ASCII text is compared byte by byte with no decoding; anything else as
    // Unicode scalar values, the elements Python's `str` is made of.
    if reference.is_ascii() && response.is_ascii() {
        similarity_of(reference.as_bytes(), response.as_bytes(), distance)
    } else {
        let p: Vec<char> = reference.chars().collect();
        let t: Vec<char> = response.chars().collect();
        similarity_of(&p, &t, distance)
    }
}

fn similarity_of<S: Symbol>(p: &[S], t: &[S], distance: StringDistance) -> f64 {
    // ragas returns `1 - normalized_distance` and rapidfuzz's normalized
    // distance of the Jaro family is itself `1 - similarity`; mirroring both
    // steps keeps the last bits identical.
    match distance {
        StringDistance::Levenshtein => 1.0 - normalize(levenshtein(p, t), p.len().max(t.len())),
        StringDistance::Hamming => 1.0 - normalize(hamming_padded(p, t), p.len().max(t.len())),
        StringDistance::Jaro => 1.0 - (1.0 - jaro(p, t)),
        StringDistance::JaroWinkler => 1.0 - (1.0 - jaro_winkler(p, t, 0.1)),
    }
}

/// One element of a compared string: a byte of ASCII text or a `char`.
trait Symbol: Copy + Eq + Hash {
    /// The value if it is below 256 (looked up in a flat table, not hashed).
    fn low(self) -> Option<u8>;
}

impl Symbol for u8 {
    fn low(self) -> Option<u8> {
        Some(self)
    }
}

impl Symbol for char {
    fn low(self) -> Option<u8> {
        u8::try_from(self).ok()
    }
}

/// `distance / maximum`, 0 when both strings are empty (rapidfuzz).
fn normalize(distance: usize, maximum: usize) -> f64 {
    if maximum == 0 {
        0.0
    } else {
        distance as f64 / maximum as f64
    }
}

/// Hamming distance where the length difference counts as mismatches.
fn hamming_padded<S: Symbol>(a: &[S], b: &[S]) -> usize {
    let mismatches = a.iter().zip(b).filter(|(x, y)| x != y).count();
    mismatches + a.len().abs_diff(b.len())
}

/// Bit masks of where each symbol occurs in a pattern, 64 positions per
/// word, for the bit-parallel algorithms.
struct PatternMasks<S> {
    words: usize,
    /// Row of `masks` for symbols below 256; row 0 = absent.
    low: [u32; 256],
    other: HashMap<S, u32>,
    /// Row 0 is all zeros (symbols absent from the pattern).
    masks: Vec<u64>,
}

impl<S: Symbol> PatternMasks<S> {
    fn new(pattern: &[S]) -> Self {
        let words = pattern.len().div_ceil(64);
        let mut masks = Vec::with_capacity(words * (pattern.len().min(32) + 1));
        masks.resize(words, 0);
        let mut this = PatternMasks {
            words,
            low: [0; 256],
            other: HashMap::new(),
            masks,
        };
        for (i, &c) in pattern.iter().enumerate() {
            let row = this.row_or_insert(c);
            this.masks[row * words + i / 64] |= 1u64 << (i % 64);
        }
        this
    }

    fn row_or_insert(&mut self, c: S) -> usize {
        let next = (self.masks.len() / self.words) as u32;
        let slot = match c.low() {
            Some(b) => &mut self.low[usize::from(b)],
            None => self.other.entry(c).or_insert(0),
        };
        if *slot == 0 {
            *slot = next;
            self.masks.resize(self.masks.len() + self.words, 0);
        }
        *slot as usize
    }

    /// The row of `c` in `masks`, 0 if the pattern lacks it.
    fn row(&self, c: S) -> usize {
        let row = match c.low() {
            Some(b) => self.low[usize::from(b)],
            None => self.other.get(&c).copied().unwrap_or(0),
        };
        row as usize
    }

    fn get(&self, c: S) -> &[u64] {
        let row = self.row(c);
        &self.masks[row * self.words..(row + 1) * self.words]
    }
}

/// Levenshtein distance with unit weights.
///
/// Strips the common prefix and suffix, then runs Myers' bit-vector
/// algorithm (Hyyrö's formulation) over 64-row blocks of the shorter
/// string: O(ceil(m / 64) * n) word operations.
fn levenshtein<S: Symbol>(a: &[S], b: &[S]) -> usize {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    let (pattern, text) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if pattern.is_empty() {
        text.len()
    } else if pattern.len() <= 64 {
        levenshtein_word(pattern, text)
    } else {
        levenshtein_blocks(pattern, text)
    }
}

/// Myers/Hyyrö for a pattern of 1 to 64 symbols: one word per column.
fn levenshtein_word<S: Symbol>(pattern: &[S], text: &[S]) -> usize {
    let masks = PatternMasks::new(pattern);
    let last = 1u64 << (pattern.len() - 1);
    let (mut vp, mut vn) = (!0u64, 0u64);
    let mut score = pattern.len();
    for &c in text {
        let eq = masks.get(c)[0];
        let xv = eq | vn;
        let xh = ((eq & vp).wrapping_add(vp) ^ vp) | eq;
        let ph = vn | !(xh | vp);
        let mh = vp & xh;
        if ph & last != 0 {
            score += 1;
        } else if mh & last != 0 {
            score -= 1;
        }
        // Row 0 of the DP table grows by one per column: shift in a +1.
        let ph = (ph << 1) | 1;
        let mh = mh << 1;
        vp = mh | !(xv | ph);
        vn = ph & xv;
    }
    score
}

/// Levenshtein distance for patterns longer than 64 symbols (`pattern` no
/// longer than `text`): blocked bit-vector DP restricted to a diagonal band.
///
/// A first band is sized from a lower bound of the distance; if the banded
/// result exceeds the band's threshold, that result is an upper bound of the
/// distance and a second band of that size is exact (see [`banded_blocks`]).
fn levenshtein_blocks<S: Symbol>(pattern: &[S], text: &[S]) -> usize {
    let masks = PatternMasks::new(pattern);
    let delta = text.len() - pattern.len();
    let guess = (histogram_lower_bound(&masks, text) * 3 / 2 + 16).max(delta);
    let first = banded_blocks(&masks, pattern.len(), text, guess);
    if first <= guess {
        first
    } else {
        banded_blocks(&masks, pattern.len(), text, first)
    }
}

/// A lower bound of the Levenshtein distance: every symbol that one string
/// holds more often than the other needs its own edit, and one edit removes
/// at most one surplus symbol from each side.
fn histogram_lower_bound<S: Symbol>(masks: &PatternMasks<S>, text: &[S]) -> usize {
    let mut surplus: Vec<isize> = masks
        .masks
        .chunks(masks.words)
        .map(|row| row.iter().map(|w| w.count_ones() as isize).sum())
        .collect();
    let mut text_only = 0usize;
    for &c in text {
        match masks.row(c) {
            0 => text_only += 1,
            r => surplus[r] -= 1,
        }
    }
    let pattern_surplus: usize = surplus.iter().map(|&v| v.max(0).unsigned_abs()).sum();
    let text_surplus: usize = surplus.iter().map(|&v| v.min(0).unsigned_abs()).sum();
    pattern_surplus.max(text_surplus + text_only)
}

/// Blocked Myers/Hyyrö DP over the cells (i, j) that a path of cost at most
/// `k` can visit: `|i - j| + |(m - i) - (n - j)| <= k`, since reaching
/// (i, j) costs at least `|i - j|` and finishing from it at least the
/// second term. Requires `m >= 1` and `m <= n`.
///
/// Blocks outside the band are not computed; the boundary they leave is
/// taken as a real path (a +1 per column above the band, straight down into
/// a block entering it), so every computed value is the cost of some path
/// and never below the true distance. Every cell of an optimal path is in
/// the band when the distance is at most `k`, so then the result is exact;
/// a result above `k` means the distance exceeds `k`, and the result is
/// still an upper bound of it.
fn banded_blocks<S: Symbol>(masks: &PatternMasks<S>, m: usize, text: &[S], k: usize) -> usize {
    let words = masks.words;
    let delta = text.len() - m;
    let k = k.max(delta);
    // Rows of column j inside the band: j - above ..= j + below (1-based).
    let above = (k + delta) / 2;
    let below = (k - delta) / 2;
    let block_of = |row: usize| (row - 1) / 64;
    let last_bit = 1u64 << ((m - 1) % 64);

    // (VP, VN) per block, and the DP value at each block's bottom row; both
    // start as column 0, where row i holds i.
    let mut vecs = vec![(!0u64, 0u64); words];
    let mut scores: Vec<usize> = (0..words).map(|w| ((w + 1) * 64).min(m)).collect();
    let mut first = 0;
    let mut last = block_of((1 + below).min(m));

    for (j, &c) in text.iter().enumerate() {
        let j = j + 1;
        let new_last = block_of((j + below).min(m));
        while last < new_last {
            // The entering block continues the previous block's bottom cell
            // straight down, as it stood at column j - 1.
            last += 1;
            let rows = if last + 1 == words { m - last * 64 } else { 64 };
            vecs[last] = (!0, 0);
            scores[last] = scores[last - 1] + rows;
        }
        first = first.max(block_of(j.saturating_sub(above).max(1)));

        let eq_words = masks.get(c);
        // +1 per column above the band (exactly row 0's values at the top).
        let (mut hp_carry, mut hn_carry) = (1u64, 0u64);
        for w in first..=last {
            let (vp, vn) = vecs[w];
            let x = eq_words[w] | hn_carry;
            let d0 = ((x & vp).wrapping_add(vp) ^ vp) | x | vn;
            let hp = vn | !(d0 | vp);
            let hn = d0 & vp;
            let (hp_out, hn_out) = if w + 1 == words {
                (u64::from(hp & last_bit != 0), u64::from(hn & last_bit != 0))
            } else {
                (hp >> 63, hn >> 63)
            };
            let hp = (hp << 1) | hp_carry;
            let hn = (hn << 1) | hn_carry;
            vecs[w] = (hn | !(d0 | hp), hp & d0);
            scores[w] = scores[w] + hp_out as usize - hn_out as usize;
            (hp_carry, hn_carry) = (hp_out, hn_out);
        }
    }
    scores[words - 1]
}

/// Jaro similarity exactly as rapidfuzz computes it: greedy matching of each
/// `t` character to the first unmatched equal `p` character within
/// `max(len) / 2 - 1` positions, and half the transpositions rounded down.
fn jaro<S: Symbol>(p: &[S], t: &[S]) -> f64 {
    if p.is_empty() && t.is_empty() {
        return 1.0;
    }
    if p.is_empty() || t.is_empty() {
        return 0.0;
    }
    if p.len() == 1 && t.len() == 1 {
        return if p[0] == t[0] { 1.0 } else { 0.0 };
    }
    let (common, transpositions) = jaro_matches(p, t);
    if common == 0 {
        return 0.0;
    }
    let common_f = common as f64;
    let mut sim = common_f / p.len() as f64;
    sim += common_f / t.len() as f64;
    sim += (common_f - transpositions as f64) / common_f;
    sim / 3.0
}

/// The match window of Jaro: `max(len) / 2 - 1`, at least 0.
fn jaro_bound<S>(p: &[S], t: &[S]) -> usize {
    (p.len().max(t.len()) / 2).saturating_sub(1)
}

/// Jaro's (matches, transpositions / 2 rounded down).
///
/// Bit-parallel: the candidates for `t[j]` are the bits of its pattern mask
/// inside the window that are not matched yet, and the greedy choice is the
/// lowest of them, so each `t` character costs O(window / 64) word
/// operations instead of O(window) comparisons.
fn jaro_matches<S: Symbol>(p: &[S], t: &[S]) -> (usize, usize) {
    if p.is_empty() {
        return (0, 0);
    }
    let bound = jaro_bound(p, t);
    let masks = PatternMasks::new(p);
    let mut p_flag = vec![0u64; masks.words];
    let mut t_matched = Vec::with_capacity(t.len().min(p.len()));
    for (j, &c) in t.iter().enumerate() {
        let lo = j.saturating_sub(bound);
        let hi = (j + bound).min(p.len() - 1);
        if lo > hi {
            // Later positions only move the window further right.
            break;
        }
        let eq = masks.get(c);
        for w in lo / 64..=hi / 64 {
            let mut candidates = eq[w] & !p_flag[w];
            if w == lo / 64 {
                candidates &= !0u64 << (lo % 64);
            }
            if w == hi / 64 {
                candidates &= !0u64 >> (63 - hi % 64);
            }
            if candidates != 0 {
                p_flag[w] |= candidates & candidates.wrapping_neg();
                t_matched.push(c);
                break;
            }
        }
    }
    // Matched pattern characters in order, paired with matched text
    // characters in order; each mismatch is half a transposition.
    let p_common = p_flag.iter().enumerate().flat_map(|(w, &bits)| {
        (0..64)
            .filter(move |b| bits >> b & 1 == 1)
            .map(move |b| p[w * 64 + b])
    });
    let half = p_common.zip(&t_matched).filter(|(x, y)| x != *y).count();
    (t_matched.len(), half / 2)
}

/// Jaro-Winkler similarity: Jaro boosted by the common prefix (at most 4
/// characters) when the Jaro similarity exceeds 0.7.
fn jaro_winkler<S: Symbol>(p: &[S], t: &[S], prefix_weight: f64) -> f64 {
    let prefix = p.iter().zip(t).take(4).take_while(|(x, y)| x == y).count();
    let mut sim = jaro(p, t);
    if sim > 0.7 {
        sim += prefix as f64 * prefix_weight * (1.0 - sim);
    }
    sim
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Textbook O(n*m) Levenshtein, the oracle for the bit-parallel version.
    fn levenshtein_dp(a: &[char], b: &[char]) -> usize {
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, x) in a.iter().enumerate() {
            let mut diag = row[0];
            row[0] = i + 1;
            for (j, y) in b.iter().enumerate() {
                let next = (diag + usize::from(x != y))
                    .min(row[j] + 1)
                    .min(row[j + 1] + 1);
                diag = row[j + 1];
                row[j + 1] = next;
            }
        }
        row[b.len()]
    }

    /// Small deterministic xorshift generator so the test needs no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn string(&mut self, max_len: u64, alphabet: &[char]) -> Vec<char> {
            let len = self.next() % (max_len + 1);
            (0..len)
                .map(|_| alphabet[(self.next() % alphabet.len() as u64) as usize])
                .collect()
        }
    }

    #[test]
    fn bit_parallel_levenshtein_equals_dp_across_block_boundaries() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let alphabets: [&[char]; 3] = [
            &['a', 'b'],
            &['a', 'b', 'c', 'd', 'é'],
            &['x', '字', '🙂', 'y'],
        ];
        for round in 0..3000 {
            let alphabet = alphabets[round % alphabets.len()];
            let max_len = [5, 70, 200][round % 3];
            let a = rng.string(max_len, alphabet);
            let b = rng.string(max_len, alphabet);
            assert_eq!(
                levenshtein(&a, &b),
                levenshtein_dp(&a, &b),
                "{a:?} vs {b:?}"
            );
        }
    }

    /// Direct transcription of the greedy Jaro matching, the oracle for the
    /// bit-parallel version.
    fn jaro_matches_naive(p: &[char], t: &[char]) -> (usize, usize) {
        let bound = jaro_bound(p, t);
        let mut p_matched = vec![false; p.len()];
        let mut t_common = Vec::new();
        for (j, &c) in t.iter().enumerate() {
            let lo = j.saturating_sub(bound);
            let hi = (j + bound + 1).min(p.len());
            if let Some(i) = (lo..hi).find(|&i| !p_matched[i] && p[i] == c) {
                p_matched[i] = true;
                t_common.push(c);
            }
        }
        let p_common = p.iter().zip(&p_matched).filter(|(_, &m)| m).map(|(c, _)| c);
        let half = p_common.zip(&t_common).filter(|(x, y)| x != y).count();
        (t_common.len(), half / 2)
    }

    #[test]
    fn bit_parallel_jaro_equals_naive_matching() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let alphabets: [&[char]; 3] = [
            &['a', 'b'],
            &['a', 'b', 'c', 'd', 'é'],
            &['x', '字', '🙂', 'y'],
        ];
        for round in 0..3000 {
            let alphabet = alphabets[round % alphabets.len()];
            let max_len = [5, 70, 300][round % 3];
            let a = rng.string(max_len, alphabet);
            let b = rng.string(max_len, alphabet);
            if a.is_empty() || b.is_empty() {
                continue;
            }
            assert_eq!(
                jaro_matches(&a, &b),
                jaro_matches_naive(&a, &b),
                "{a:?} vs {b:?}"
            );
        }
    }

    #[test]
    fn banded_levenshtein_is_exact_within_its_threshold_and_an_upper_bound_beyond() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let alphabets: [&[char]; 2] = [&['a', 'b', 'c'], &['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']];
        for round in 0..2000 {
            let alphabet = alphabets[round % alphabets.len()];
            let base = rng.string(260, alphabet);
            // Mostly similar pairs (few edits) and some unrelated ones.
            let other = if round % 4 == 0 {
                rng.string(260, alphabet)
            } else {
                let mut b = base.clone();
                for _ in 0..rng.next() % 40 {
                    let pos = (rng.next() % (b.len() as u64 + 1)) as usize;
                    let c = alphabet[(rng.next() % alphabet.len() as u64) as usize];
                    match rng.next() % 3 {
                        0 if pos < b.len() => b[pos] = c,
                        1 => b.insert(pos, c),
                        _ if pos < b.len() => {
                            b.remove(pos);
                        }
                        _ => {}
                    }
                }
                b
            };
            let (p, t) = if base.len() <= other.len() {
                (&base, &other)
            } else {
                (&other, &base)
            };
            if p.is_empty() {
                continue;
            }
            let want = levenshtein_dp(p, t);
            let masks = PatternMasks::new(p);
            let k = (rng.next() % (t.len() as u64 + 1)) as usize;
            let got = banded_blocks(&masks, p.len(), t, k);
            assert!(got >= want, "{got} < {want}");
            if got <= k.max(t.len() - p.len()) {
                assert_eq!(got, want, "k = {k}");
            }
            assert_eq!(levenshtein(p, t), want);
        }
    }

    #[test]
    fn names_round_trip() {
        for d in StringDistance::ALL {
            assert_eq!(d.to_string().parse::<StringDistance>(), Ok(d));
        }
        assert!("Levenshtein".parse::<StringDistance>().is_err());
    }

    #[test]
    fn presence_and_exact_match() {
        assert!(string_presence("", "abc"));
        assert!(string_presence("bc", "abc"));
        assert!(!string_presence("abcd", "abc"));
        assert!(exact_match("é", "é"));
        assert!(!exact_match("e\u{301}", "é"));
    }
}
