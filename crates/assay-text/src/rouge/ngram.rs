//! N-gram overlap without materialising n-grams: every n-gram of the
//! prediction gets a dense id, built level by level as the pair
//! (id of its leading (n-1)-gram, id of its last token). A reference n-gram
//! can only match if its leading (n-1)-gram matched, so the reference side
//! is a chain of table look-ups that stops at the first miss.

use super::vocab::NONE;

/// Open-addressing map from a packed id pair to a dense id, reused across
/// calls so scoring does not allocate in the steady state.
#[derive(Default)]
struct PairTable {
    keys: Vec<u64>,
    values: Vec<u32>,
    len: u32,
}

/// Cannot be a key: both halves of a real key are below `NONE`.
const EMPTY: u64 = u64::MAX;

fn pack(prefix: u32, last: u32) -> u64 {
    (u64::from(prefix) << 32) | u64::from(last)
}

impl PairTable {
    fn reset(&mut self, expected: usize) {
        let capacity = (expected * 2).next_power_of_two().max(16);
        self.keys.clear();
        self.keys.resize(capacity, EMPTY);
        self.values.clear();
        self.values.resize(capacity, NONE);
        self.len = 0;
    }

    fn slot(&self, key: u64) -> usize {
        // Fibonacci hashing: the high bits of the product are well mixed.
        let mask = self.keys.len() - 1;
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask
    }

    /// The dense id of `key`, inserting it with the next id if new.
    fn get_or_insert(&mut self, key: u64) -> u32 {
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        loop {
            if self.keys[i] == key {
                return self.values[i];
            }
            if self.keys[i] == EMPTY {
                self.keys[i] = key;
                self.values[i] = self.len;
                self.len += 1;
                return self.values[i];
            }
            i = (i + 1) & mask;
        }
    }

    fn get(&self, key: u64) -> u32 {
        if self.keys.is_empty() {
            return NONE;
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        loop {
            if self.keys[i] == key {
                return self.values[i];
            }
            if self.keys[i] == EMPTY {
                return NONE;
            }
            i = (i + 1) & mask;
        }
    }
}

/// The prediction's n-grams for n = 1..=max_n, with their counts.
#[derive(Default)]
pub(super) struct NgramIndex {
    max_n: usize,
    /// `ids[n - 1][i]`: dense id of the n-gram starting at token i.
    ids: Vec<Vec<u32>>,
    /// `counts[n - 1][id]`: occurrences of that n-gram in the prediction.
    counts: Vec<Vec<u32>>,
    /// `tables[n - 2]` for n >= 2.
    tables: Vec<PairTable>,
    /// Reference-side buffers: current level ids and per-id counts.
    level: Vec<u32>,
    seen: Vec<u32>,
}

impl NgramIndex {
    /// Indexes the prediction (tokens as local ids `0..distinct`).
    pub(super) fn build(&mut self, tokens: &[u32], distinct: usize, max_n: usize) {
        self.max_n = max_n;
        self.ids.resize_with(max_n, Vec::new);
        self.counts.resize_with(max_n, Vec::new);
        self.tables
            .resize_with(max_n.saturating_sub(1), PairTable::default);
        if max_n == 0 {
            return;
        }
        self.ids[0].clear();
        self.ids[0].extend_from_slice(tokens);
        self.counts[0].clear();
        self.counts[0].resize(distinct, 0);
        for &t in tokens {
            self.counts[0][t as usize] += 1;
        }
        let mut widest = distinct;
        for n in 2..=max_n {
            let (done, rest) = self.ids.split_at_mut(n - 1);
            let prev = &done[n - 2];
            let cur = &mut rest[0];
            let table = &mut self.tables[n - 2];
            let grams = tokens.len().saturating_sub(n - 1);
            table.reset(grams);
            cur.clear();
            for i in 0..grams {
                cur.push(table.get_or_insert(pack(prev[i], tokens[i + n - 1])));
            }
            let counts = &mut self.counts[n - 1];
            counts.clear();
            counts.resize(table.len as usize, 0);
            for &g in cur.iter() {
                counts[g as usize] += 1;
            }
            widest = widest.max(table.len as usize);
        }
        self.seen.clear();
        self.seen.resize(widest, 0);
    }

    /// For each n = 1..=max_n, calls `hits(n, overlap)` where overlap is
    /// rouge-score's clipped n-gram overlap with `reference` (local ids,
    /// `NONE` for tokens absent from the prediction).
    pub(super) fn overlaps(&mut self, reference: &[u32], mut hits: impl FnMut(usize, usize)) {
        self.level.clear();
        self.level.extend_from_slice(reference);
        for n in 1..=self.max_n {
            if n >= 2 {
                let table = &self.tables[n - 2];
                let grams = reference.len().saturating_sub(n - 1);
                self.level.truncate(grams);
                for (i, id) in self.level.iter_mut().enumerate() {
                    let last = reference[i + n - 1];
                    if *id != NONE && last != NONE {
                        *id = table.get(pack(*id, last));
                    } else {
                        *id = NONE;
                    }
                }
            }
            // Summing min(count_ref, count_pred) over n-grams equals counting
            // each reference occurrence while it is within the prediction's
            // count.
            let counts = &self.counts[n - 1];
            let mut overlap = 0;
            for &id in &self.level {
                if id != NONE {
                    let seen = &mut self.seen[id as usize];
                    *seen += 1;
                    if *seen <= counts[id as usize] {
                        overlap += 1;
                    }
                }
            }
            for &id in &self.level {
                if id != NONE {
                    self.seen[id as usize] = 0;
                }
            }
            hits(n, overlap);
        }
    }

    /// Occurrences of each prediction token (local id), for rougeLsum.
    pub(super) fn unigram_counts(&self) -> &[u32] {
        self.counts.first().map_or(&[], Vec::as_slice)
    }
}
