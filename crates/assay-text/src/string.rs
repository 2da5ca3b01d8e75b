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
    let p: Vec<char> = reference.chars().collect();
    let t: Vec<char> = response.chars().collect();
    // ragas returns `1 - normalized_distance` and rapidfuzz's normalized
    // distance of the Jaro family is itself `1 - similarity`; mirroring both
    // steps keeps the last bits identical.
    match distance {
        StringDistance::Levenshtein => 1.0 - normalize(levenshtein(&p, &t), p.len().max(t.len())),
        StringDistance::Hamming => 1.0 - normalize(hamming_padded(&p, &t), p.len().max(t.len())),
        StringDistance::Jaro => 1.0 - (1.0 - jaro(&p, &t)),
        StringDistance::JaroWinkler => 1.0 - (1.0 - jaro_winkler(&p, &t, 0.1)),
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
fn hamming_padded(a: &[char], b: &[char]) -> usize {
    let mismatches = a.iter().zip(b).filter(|(x, y)| x != y).count();
    mismatches + a.len().abs_diff(b.len())
}

/// Bit masks of where each character occurs in a pattern, 64 positions per
/// word, for the bit-parallel Levenshtein.
struct PatternMasks {
    words: usize,
    /// Row index + 1 into `masks` for ASCII characters; 0 = absent.
    ascii: [u32; 128],
    other: HashMap<char, u32>,
    /// Row 0 is all zeros (characters absent from the pattern).
    masks: Vec<u64>,
}

impl PatternMasks {
    fn new(pattern: &[char]) -> Self {
        let words = pattern.len().div_ceil(64);
        let mut this = PatternMasks {
            words,
            ascii: [0; 128],
            other: HashMap::new(),
            masks: vec![0; words],
        };
        for (i, &c) in pattern.iter().enumerate() {
            let row = this.row_or_insert(c);
            this.masks[row * words + i / 64] |= 1u64 << (i % 64);
        }
        this
    }

    fn row_or_insert(&mut self, c: char) -> usize {
        let next = (self.masks.len() / self.words) as u32;
        let slot = match u8::try_from(c) {
            Ok(b) if b.is_ascii() => &mut self.ascii[usize::from(b)],
            _ => self.other.entry(c).or_insert(0),
        };
        if *slot == 0 {
            *slot = next;
            self.masks.resize(self.masks.len() + self.words, 0);
        }
        *slot as usize
    }

    fn get(&self, c: char) -> &[u64] {
        let row = match u8::try_from(c) {
            Ok(b) if b.is_ascii() => self.ascii[usize::from(b)],
            _ => self.other.get(&c).copied().unwrap_or(0),
        } as usize;
        &self.masks[row * self.words..(row + 1) * self.words]
    }
}

/// Levenshtein distance with unit weights.
///
/// Strips the common prefix and suffix, then runs Myers' bit-vector
/// algorithm (Hyyrö's formulation) over 64-row blocks of the shorter
/// string: O(ceil(m / 64) * n) word operations.
fn levenshtein(a: &[char], b: &[char]) -> usize {
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
        return text.len();
    }

    let masks = PatternMasks::new(pattern);
    let words = masks.words;
    let mut vp = vec![!0u64; words];
    let mut vn = vec![0u64; words];
    let last_bit = 1u64 << ((pattern.len() - 1) % 64);
    let mut score = pattern.len();

    for &c in text {
        let eq_words = masks.get(c);
        // Row 0 of the DP table grows by one per column: carry +1 into block 0.
        let mut carry: i8 = 1;
        for w in 0..words {
            let high = if w + 1 == words { last_bit } else { 1u64 << 63 };
            let (pv, mv) = (vp[w], vn[w]);
            let mut eq = eq_words[w];
            let xv = eq | mv;
            if carry < 0 {
                eq |= 1;
            }
            let xh = ((eq & pv).wrapping_add(pv) ^ pv) | eq;
            let mut ph = mv | !(xh | pv);
            let mut mh = pv & xh;
            let out: i8 = if ph & high != 0 {
                1
            } else if mh & high != 0 {
                -1
            } else {
                0
            };
            ph <<= 1;
            mh <<= 1;
            if carry < 0 {
                mh |= 1;
            } else if carry > 0 {
                ph |= 1;
            }
            vp[w] = mh | !(xv | ph);
            vn[w] = ph & xv;
            carry = out;
        }
        // `carry` is now the horizontal delta of the last pattern row.
        score = score.wrapping_add_signed(isize::from(carry));
    }
    score
}

/// Jaro similarity exactly as rapidfuzz computes it: greedy matching of each
/// `t` character to the first unmatched equal `p` character within
/// `max(len) / 2 - 1` positions, and half the transpositions rounded down.
fn jaro(p: &[char], t: &[char]) -> f64 {
    if p.is_empty() && t.is_empty() {
        return 1.0;
    }
    if p.is_empty() || t.is_empty() {
        return 0.0;
    }
    if p.len() == 1 && t.len() == 1 {
        return if p[0] == t[0] { 1.0 } else { 0.0 };
    }
    let bound = (p.len().max(t.len()) / 2).saturating_sub(1);

    let mut p_matched = vec![false; p.len()];
    let mut t_matched = vec![false; t.len()];
    let mut common = 0usize;
    for (j, &c) in t.iter().enumerate() {
        let lo = j.saturating_sub(bound);
        let hi = (j + bound + 1).min(p.len());
        if lo >= hi {
            // Later columns only move the window further right.
            break;
        }
        if let Some(i) = (lo..hi).find(|&i| !p_matched[i] && p[i] == c) {
            p_matched[i] = true;
            t_matched[j] = true;
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }

    let p_common = p.iter().zip(&p_matched).filter(|(_, &m)| m).map(|(c, _)| c);
    let t_common = t.iter().zip(&t_matched).filter(|(_, &m)| m).map(|(c, _)| c);
    let transpositions = p_common.zip(t_common).filter(|(x, y)| x != y).count() / 2;

    let common_f = common as f64;
    let mut sim = common_f / p.len() as f64;
    sim += common_f / t.len() as f64;
    sim += (common_f - transpositions as f64) / common_f;
    sim / 3.0
}

/// Jaro-Winkler similarity: Jaro boosted by the common prefix (at most 4
/// characters) when the Jaro similarity exceeds 0.7.
fn jaro_winkler(p: &[char], t: &[char], prefix_weight: f64) -> f64 {
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
