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
            let mask = &self.masks[t as usize * words..][..words];
            let mut carry = false;
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

/// rouge-score's `_summary_level_lcs` hit count, with reusable buffers.
#[derive(Default)]
pub(super) struct SummaryLcs {
    table: Vec<u32>,
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
                for c in sentences(prediction, pred_line_ends) {
                    self.mark_lcs(r, c);
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
