//! Longest common subsequences: a bit-parallel length for rougeL, and
//! rouge-score's exact table backtrack for rougeLsum's union LCS.

use super::vocab::NONE;

/// LCS lengths against a fixed prediction, 64 prediction positions per
/// machine word (Crochemore et al. 2001), so a reference costs
/// O(len(reference) * len(prediction) / 64) instead of a full DP table.
#[derive(Default)]
pub(super) struct BitLcs {
    words: usize,
    /// `masks[t * words..][..words]`: positions of local token t in the
    /// prediction.
    masks: Vec<u64>,
    v: Vec<u64>,
}

impl BitLcs {
    pub(super) fn build(&mut self, prediction: &[u32], distinct: usize) {
        self.words = prediction.len().div_ceil(64);
        self.masks.clear();
        self.masks.resize(distinct * self.words, 0);
        for (i, &t) in prediction.iter().enumerate() {
            self.masks[t as usize * self.words + i / 64] |= 1u64 << (i % 64);
        }
    }

    /// The positions of local token `t` among prediction positions
    /// `start..start + len` (`len <= 64`), as bits `0..len`.
    fn window(&self, t: u32, start: usize, len: usize) -> u64 {
        let Some(mask) = self.masks.get(t as usize * self.words..) else {
            return 0;
        };
        let (word, offset) = (start / 64, start % 64);
        let mut bits = mask.get(word).map_or(0, |w| w >> offset);
        if offset > 0 && word + 1 < self.words {
            bits |= mask.get(word + 1).map_or(0, |w| w << (64 - offset));
        }
        bits & low_bits(len)
    }

    /// LCS length between the prediction and `reference` (local ids).
    pub(super) fn length(&mut self, reference: &[u32]) -> usize {
        let words = self.words;
        self.v.clear();
        self.v.resize(words, !0);
        for &t in reference {
            if t == NONE {
                // No match anywhere: the row is unchanged.
                continue;
            }
            let from = t as usize * words;
            let Some(mask) = self.masks.get(from..from + words) else {
                continue;
            };
            let mut carry = false;
            // lcs_step across words, carrying the addition.
            for (v, &m) in self.v.iter_mut().zip(mask) {
                let u = *v & m;
                let (sum, c1) = v.overflowing_add(u);
                let (sum, c2) = sum.overflowing_add(u64::from(carry));
                carry = c1 || c2;
                *v = sum | (*v & !m);
            }
        }
        // Bits above the prediction's length stay set, so every zero bit is
        // one LCS position.
        self.v.iter().map(|v| v.count_zeros() as usize).sum()
    }
}

/// Bits `0..n` set (all of them for n >= 64).
fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        !0
    } else {
        (1u64 << n) - 1
    }
}

/// One step of the bit-vector LCS recurrence (Crochemore et al. 2001):
/// `v` is a DP row in which a zero bit j means "the row value rises at
/// column j", `m` the columns holding the current token.
fn lcs_step(v: u64, m: u64) -> u64 {
    v.wrapping_add(v & m) | (v & !m)
}

/// rouge-score's `_summary_level_lcs` hit count, with reusable buffers.
#[derive(Default)]
pub(super) struct SummaryLcs {
    table: Vec<u32>,
    rows: Vec<u64>,
    marked: Vec<bool>,
    left_pred: Vec<u32>,
    left_ref: Vec<u32>,
}

/// The `\n`-separated sentences of one text that have tokens, as slices of
/// its token list.
pub(super) fn sentences<'a>(
    tokens: &'a [u32],
    line_ends: &'a [u32],
) -> impl Iterator<Item = &'a [u32]> {
    let mut start = 0;
    line_ends.iter().map(move |&end| {
        let end = end as usize;
        let s = tokens.get(start..end).unwrap_or(&[]);
        start = end;
        s
    })
}

impl SummaryLcs {
    /// Union-LCS hits between reference and prediction sentences.
    ///
    /// For each reference sentence, the positions of the LCS against every
    /// prediction sentence are united and walked in order; a position is a
    /// hit while its token has unused occurrences in both whole texts.
    /// `pred_counts` are the prediction's token counts by local id.
    pub(super) fn hits(
        &mut self,
        reference: &[u32],
        ref_line_ends: &[u32],
        prediction: &[u32],
        pred_line_ends: &[u32],
        pred_counts: &[u32],
        pred_bits: &BitLcs,
    ) -> usize {
        self.left_pred.clear();
        self.left_pred.extend_from_slice(pred_counts);
        self.left_ref.clear();
        self.left_ref.resize(pred_counts.len(), 0);
        for &t in reference {
            if let Some(c) = self.left_ref.get_mut(t as usize) {
                *c += 1;
            }
        }
        let mut hits = 0;
        for r in sentences(reference, ref_line_ends) {
            self.marked.clear();
            self.marked.resize(r.len(), false);
            if r.iter().any(|&t| t != NONE) {
                let mut start = 0;
                for c in sentences(prediction, pred_line_ends) {
                    if c.len() <= 64 {
                        self.mark_lcs_bits(r, c, pred_bits, start);
                    } else {
                        self.mark_lcs(r, c);
                    }
                    start += c.len();
                }
            }
            for (&t, &m) in r.iter().zip(&self.marked) {
                if !m {
                    continue;
                }
                let t = t as usize;
                if let (Some(p), Some(q)) = (self.left_pred.get(t), self.left_ref.get(t)) {
                    if *p > 0 && *q > 0 {
                        hits += 1;
                        self.left_pred[t] -= 1;
                        self.left_ref[t] -= 1;
                    }
                }
            }
        }
        hits
    }

    /// [`Self::mark_lcs`] for a prediction sentence of at most 64 tokens
    /// (prediction positions `start..start + c.len()`): each DP row is one
    /// bit-vector, and a table entry is a popcount of its low bits, so the
    /// same backtrack runs without the quadratic table.
    fn mark_lcs_bits(&mut self, r: &[u32], c: &[u32], pred_bits: &BitLcs, start: usize) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the feature it is compiled for was just found.
            return unsafe { self.mark_lcs_bits_popcnt(r, c, pred_bits, start) };
        }
        self.mark_lcs_bits_with(r, c, pred_bits, start);
    }

    /// The same with the CPU's popcount instruction: x86-64's baseline
    /// lacks it, and the backtrack takes two popcounts a step, which
    /// otherwise cost a dozen instructions each.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn mark_lcs_bits_popcnt(&mut self, r: &[u32], c: &[u32], pred_bits: &BitLcs, start: usize) {
        self.mark_lcs_bits_with(r, c, pred_bits, start);
    }

    #[inline(always)]
    fn mark_lcs_bits_with(&mut self, r: &[u32], c: &[u32], pred_bits: &BitLcs, start: usize) {
        self.rows.clear();
        let mut v = !0u64;
        self.rows.push(v);
        for &t in r {
            if t != NONE {
                v = lcs_step(v, pred_bits.window(t, start, c.len()));
            }
            self.rows.push(v);
        }
        // table[i][j]: the zero bits of row i below column j.
        let table = |rows: &[u64], i: usize, j: usize| (!rows[i] & low_bits(j)).count_ones();
        let (mut i, mut j) = (r.len(), c.len());
        // Where what is left has no common token (table[i][j] is 0), the
        // walk would mark nothing more.
        while i > 0 && j > 0 && !self.rows[i] & low_bits(j) != 0 {
            if r[i - 1] == c[j - 1] {
                self.marked[i - 1] = true;
                i -= 1;
                j -= 1;
            } else if table(&self.rows, i, j - 1) > table(&self.rows, i - 1, j) {
                j -= 1;
            } else {
                i -= 1;
            }
        }
    }

    /// Marks the reference positions of the LCS that rouge-score's
    /// `_backtrack_norec` reads out of the full DP table. Its tie-break
    /// (left only when strictly better than up) picks one LCS among many,
    /// and the union depends on which.
    fn mark_lcs(&mut self, r: &[u32], c: &[u32]) {
        let cols = c.len() + 1;
        self.table.clear();
        self.table.resize((r.len() + 1) * cols, 0);
        for i in 1..=r.len() {
            for j in 1..=c.len() {
                self.table[i * cols + j] = if r[i - 1] == c[j - 1] {
                    self.table[(i - 1) * cols + j - 1] + 1
                } else {
                    self.table[(i - 1) * cols + j].max(self.table[i * cols + j - 1])
                };
            }
        }
        let (mut i, mut j) = (r.len(), c.len());
        while i > 0 && j > 0 {
            if r[i - 1] == c[j - 1] {
                self.marked[i - 1] = true;
                i -= 1;
                j -= 1;
            } else if self.table[i * cols + j - 1] > self.table[(i - 1) * cols + j] {
                j -= 1;
            } else {
                i -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny deterministic generator, enough for shuffled test inputs.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    /// The bit-vector backtrack marks exactly what the table backtrack
    /// marks, for sentences anywhere in the prediction (including across
    /// 64-bit word boundaries), and the LCS lengths agree.
    #[test]
    fn bit_vector_backtrack_matches_table() {
        let mut rng = Lcg(7);
        for round in 0..3000 {
            let alphabet = 1 + rng.below(6) as u32;
            let pred_len = 1 + rng.below(200) as usize;
            let prediction: Vec<u32> = (0..pred_len)
                .map(|_| rng.below(alphabet as u64) as u32)
                .collect();
            let mut bits = BitLcs::default();
            bits.build(&prediction, alphabet as usize);
            let start = rng.below(pred_len as u64) as usize;
            let len = (1 + rng.below(64) as usize).min(pred_len - start);
            let c = &prediction[start..start + len];
            let r: Vec<u32> = (0..rng.below(40))
                .map(|_| match rng.below(alphabet as u64 + 1) as u32 {
                    t if t == alphabet => NONE,
                    t => t,
                })
                .collect();
            let mut table = SummaryLcs {
                marked: vec![false; r.len()],
                ..SummaryLcs::default()
            };
            table.mark_lcs(&r, c);
            let mut vector = SummaryLcs {
                marked: vec![false; r.len()],
                ..SummaryLcs::default()
            };
            vector.mark_lcs_bits(&r, c, &bits, start);
            assert_eq!(table.marked, vector.marked, "round {round}");
            let mut full = SummaryLcs {
                marked: vec![false; r.len()],
                ..SummaryLcs::default()
            };
            full.mark_lcs(&r, &prediction);
            let lcs = full.marked.iter().filter(|&&m| m).count();
            assert_eq!(bits.length(&r), lcs, "round {round}");
        }
    }
}
