//! Allocation-light n-gram matching shared by BLEU (nltk, sacreBLEU) and chrF.
//!
//! Texts are sequences of `u32` symbols (interned tokens, or code points).
//! Every n-gram of the hypothesis gets a dense id built from its prefix's id
//! and its last symbol, so an n-gram is one `u64` hash lookup whatever its
//! length. References are only looked up: a reference n-gram whose prefix is
//! not in the hypothesis cannot match and is skipped without hashing.

use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::thread::LocalKey;

/// Prefix of a unigram key.
const ROOT: u32 = u32::MAX;
/// A symbol or n-gram that does not occur in the hypothesis.
pub(crate) const ABSENT: u32 = u32::MAX - 1;

/// A fast non-cryptographic hasher (folded 64x64->128 multiply). Inputs are
/// texts being scored, not adversarial keys for a long-lived server map.
#[derive(Default, Clone, Copy)]
pub(crate) struct FoldHasher(u64);

const MUL: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline]
fn fold(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

impl Hasher for FoldHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.0 = fold(self.0 ^ u64::from_le_bytes(w), MUL);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.0 = fold(
                self.0 ^ u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59),
                MUL,
            );
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.0 = fold(self.0 ^ u64::from(i), MUL);
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.0 = fold(self.0 ^ u64::from(i), MUL);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = fold(self.0 ^ i, MUL);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.0 = fold(self.0 ^ i as u64, MUL);
    }
}

/// A `HashMap` with [`FoldHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FoldHasher>>;

/// Maps strings to dense `u32` symbols: the hypothesis's tokens are
/// inserted, references' tokens only looked up ([`ABSENT`] if unseen).
pub(crate) struct Interner<'a> {
    map: FastMap<&'a str, u32>,
}

impl<'a> Interner<'a> {
    /// An interner sized for about `n` distinct tokens.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Interner {
            map: FastMap::with_capacity_and_hasher(n, Default::default()),
        }
    }

    pub(crate) fn insert_all(
        &mut self,
        tokens: impl IntoIterator<Item = &'a str>,
        out: &mut Vec<u32>,
    ) {
        out.clear();
        for t in tokens {
            let next = self.map.len() as u32;
            out.push(*self.map.entry(t).or_insert(next));
        }
    }

    pub(crate) fn lookup_all<'b>(
        &self,
        tokens: impl IntoIterator<Item = &'b str>,
        out: &mut Vec<u32>,
    ) {
        out.clear();
        out.extend(
            tokens
                .into_iter()
                .map(|t| self.map.get(t).copied().unwrap_or(ABSENT)),
        );
    }
}

/// Open-addressing table from n-gram keys to ids, reused across segments
/// (linear probing, power-of-two size, at most half full).
#[derive(Default)]
struct IdTable {
    /// Key and id side by side: one cache access per probe.
    slots: Vec<(u64, u32)>,
    /// `64 - log2(capacity)`.
    shift: u32,
}

/// Never a real key: that would need both halves to be `u32::MAX`, and
/// symbols are below [`ABSENT`].
const EMPTY: u64 = u64::MAX;

impl IdTable {
    /// Empties the table, sized for up to `n` keys.
    fn reset(&mut self, n: usize) {
        let cap = (n * 2).next_power_of_two().max(16);
        self.shift = 64 - cap.trailing_zeros();
        if self.slots.len() != cap {
            self.slots = vec![(EMPTY, 0); cap];
        } else {
            self.slots.fill((EMPTY, 0));
        }
    }

    /// Fibonacci hashing: the top bits of the product depend on every key bit.
    #[inline]
    fn slot(&self, k: u64) -> usize {
        (k.wrapping_mul(MUL) >> self.shift) as usize
    }

    /// The id of `k`, inserting `next` if absent. Callers never insert more
    /// keys than [`Self::reset`] was sized for, so a free slot exists.
    #[inline]
    fn get_or_insert(&mut self, k: u64, next: u32) -> u32 {
        let mask = self.slots.len() - 1;
        let mut i = self.slot(k);
        loop {
            let (at, id) = self.slots[i];
            if at == k {
                return id;
            }
            if at == EMPTY {
                self.slots[i] = (k, next);
                return next;
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of `k`, or [`ABSENT`].
    #[inline]
    fn get(&self, k: u64) -> u32 {
        if self.slots.is_empty() {
            return ABSENT;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.slot(k);
        loop {
            let (at, id) = self.slots[i];
            if at == k {
                return id;
            }
            if at == EMPTY {
                return ABSENT;
            }
            i = (i + 1) & mask;
        }
    }
}

/// The hypothesis's n-grams with their counts, and per-reference counts of
/// those n-grams.
#[derive(Default)]
pub(crate) struct NgramIndex {
    map: IdTable,
    /// Count in the hypothesis, by n-gram id.
    hyp_count: Vec<u32>,
    /// Order (0-based), by n-gram id.
    order: Vec<u32>,
    /// Count in the current reference, by n-gram id.
    ref_count: Vec<u32>,
    /// Max count over the references seen so far, by n-gram id.
    max_ref: Vec<u32>,
    /// Ids whose `ref_count` is non-zero.
    touched: Vec<u32>,
    /// Id of the n-gram minus its first symbol, by n-gram id (orders >= 2).
    suffix: Vec<u32>,
    /// Ids of the hypothesis n-grams by position and order, then of the
    /// reference n-grams starting at the current position.
    chain: Vec<u32>,
    /// Hypothesis counts not yet matched by the current reference.
    budget: Vec<u32>,
    max_order: usize,
}

/// Enumerates the n-grams of a reference that occur in the hypothesis.
struct Walk<'a> {
    map: &'a IdTable,
    suffix: &'a [u32],
    max_order: usize,
}

impl Walk<'_> {
    /// Calls `visit(order, id)` (order 0-based) for every n-gram of
    /// `reference` of orders `1..=max_order` present in the hypothesis.
    ///
    /// `chain[..len]` holds the ids of the n-grams at position i of orders
    /// 1..=len, the longest run present in the hypothesis. Moving to i + 1,
    /// those minus their first symbol are the n-grams at i + 1 of orders
    /// 1..len, found through `suffix` without hashing; only longer ones
    /// need a lookup.
    #[inline]
    fn run(&self, reference: &[u32], chain: &mut Vec<u32>, mut visit: impl FnMut(usize, u32)) {
        chain.clear();
        chain.resize(self.max_order, ABSENT);
        let mut len = 0;
        for i in 0..reference.len() {
            if len > 0 {
                for m in 0..len - 1 {
                    chain[m] = self.suffix[chain[m + 1] as usize];
                }
                len -= 1;
            }
            while len < self.max_order && i + len < reference.len() {
                let symbol = reference[i + len];
                if symbol == ABSENT {
                    break;
                }
                let prefix = if len == 0 { ROOT } else { chain[len - 1] };
                let id = self.map.get(key(prefix, symbol));
                if id == ABSENT {
                    // No longer n-gram from here can be in the hypothesis.
                    break;
                }
                chain[len] = id;
                len += 1;
            }
            for (order, &id) in chain[..len].iter().enumerate() {
                visit(order, id);
            }
        }
    }
}

#[inline]
fn key(prefix: u32, symbol: u32) -> u64 {
    (u64::from(prefix) << 32) | u64::from(symbol)
}

impl NgramIndex {
    /// Registers every n-gram of orders `1..=max_order` of `hyp`, replacing
    /// any previous hypothesis.
    pub(crate) fn set_hypothesis(&mut self, hyp: &[u32], max_order: usize) {
        self.map.reset(hyp.len() * max_order);
        self.hyp_count.clear();
        self.order.clear();
        self.max_order = max_order;
        // Position-major: extend the n-gram starting at i one symbol at a
        // time; `chain[i * max_order + n]` is the id of order n at i.
        self.chain.clear();
        self.chain.resize(hyp.len() * max_order, ABSENT);
        for i in 0..hyp.len() {
            let mut prefix = ROOT;
            for (n, &symbol) in hyp[i..].iter().take(max_order).enumerate() {
                let next = self.hyp_count.len() as u32;
                let id = self.map.get_or_insert(key(prefix, symbol), next);
                if id == next {
                    self.hyp_count.push(0);
                    self.order.push(n as u32);
                }
                self.hyp_count[id as usize] += 1;
                self.chain[i * max_order + n] = id;
                prefix = id;
            }
        }
        // The n-gram of order n + 1 at i, minus its first symbol, is the one
        // of order n at i + 1.
        self.suffix.clear();
        self.suffix.resize(self.hyp_count.len(), ABSENT);
        for i in 0..hyp.len().saturating_sub(1) {
            for n in 1..max_order.min(hyp.len() - i) {
                let id = self.chain[i * max_order + n];
                self.suffix[id as usize] = self.chain[(i + 1) * max_order + n - 1];
            }
        }
        self.ref_count.clear();
        self.ref_count.resize(self.hyp_count.len(), 0);
        self.max_ref.clear();
        self.max_ref.resize(self.hyp_count.len(), 0);
        self.touched.clear();
    }

    /// Counts the hypothesis n-grams occurring in `reference` (symbols the
    /// hypothesis lacks are [`ABSENT`]) into the per-reference counts.
    pub(crate) fn count_reference(&mut self, reference: &[u32]) {
        self.reset_reference();
        let (ref_count, touched) = (&mut self.ref_count, &mut self.touched);
        let walk = Walk {
            map: &self.map,
            suffix: &self.suffix,
            max_order: self.max_order,
        };
        walk.run(reference, &mut self.chain, |_, id| {
            let c = &mut ref_count[id as usize];
            if *c == 0 {
                touched.push(id);
            }
            *c += 1;
        });
    }

    /// Adds, per order, the hypothesis counts clipped by `reference`'s to
    /// `matches`: each reference occurrence consumes one unit of the
    /// hypothesis count, so no per-reference counts are kept.
    pub(crate) fn add_clipped_matches(&mut self, reference: &[u32], matches: &mut [u64]) {
        self.budget.clear();
        self.budget.extend_from_slice(&self.hyp_count);
        let budget = &mut self.budget;
        let walk = Walk {
            map: &self.map,
            suffix: &self.suffix,
            max_order: self.max_order,
        };
        walk.run(reference, &mut self.chain, |order, id| {
            let b = &mut budget[id as usize];
            let hit = u32::from(*b > 0);
            *b -= hit;
            if let Some(m) = matches.get_mut(order) {
                *m += u64::from(hit);
            }
        });
    }

    fn reset_reference(&mut self) {
        for &id in &self.touched {
            self.ref_count[id as usize] = 0;
        }
        self.touched.clear();
    }

    /// Folds the current reference's counts into the max over references.
    pub(crate) fn merge_reference_max(&mut self) {
        for &id in &self.touched {
            let i = id as usize;
            self.max_ref[i] = self.max_ref[i].max(self.ref_count[i]);
        }
    }

    /// Adds, per order, the hypothesis counts clipped by the max count in
    /// any single reference (merged with [`Self::merge_reference_max`]).
    pub(crate) fn add_max_matches(&self, matches: &mut [u64]) {
        let per_id = self.hyp_count.iter().zip(&self.max_ref).zip(&self.order);
        for ((&h, &r), &order) in per_id {
            if let Some(slot) = matches.get_mut(order as usize) {
                *slot += u64::from(h.min(r));
            }
        }
    }
}

/// Runs `f` with this thread's scratch buffers in `key`, taken out of the
/// thread-local for the call (a nested call just gets empty ones), so
/// scoring many segments does not allocate per segment.
pub(crate) fn with_local<S: Default, T>(
    key: &'static LocalKey<Cell<S>>,
    f: impl FnOnce(&mut S) -> T,
) -> T {
    let mut scratch = key.try_with(Cell::take).unwrap_or_default();
    let out = f(&mut scratch);
    // Fails only during thread teardown, when the buffers can just be dropped.
    let _ = key.try_with(|c| c.set(scratch));
    out
}

/// Number of n-grams of order `n` (1-based) in a sequence of `len` symbols.
#[inline]
pub(crate) fn ngram_count(len: usize, n: usize) -> u64 {
    (len + 1).saturating_sub(n) as u64
}

/// The reference length closest to `hyp_len`, ties going to the shorter
/// one (nltk and sacreBLEU agree). `None` without references.
pub(crate) fn closest_ref_len(
    hyp_len: usize,
    ref_lens: impl IntoIterator<Item = usize>,
) -> Option<usize> {
    ref_lens
        .into_iter()
        .min_by_key(|&r| (r.abs_diff(hyp_len), r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipped_matches_against_max_reference() {
        // hyp: a a b ; refs: "a b" and "a a"
        let mut idx = NgramIndex::default();
        idx.set_hypothesis(&[0, 0, 1], 2);
        idx.count_reference(&[0, 1]);
        idx.merge_reference_max();
        idx.count_reference(&[0, 0]);
        idx.merge_reference_max();
        let mut m = [0u64; 2];
        idx.add_max_matches(&mut m);
        // unigrams: a min(2, max(1,2)) + b min(1, 1) = 3; bigrams: "a a" 1, "a b" 1
        assert_eq!(m, [3, 2]);
        let mut last = [0u64; 2];
        idx.add_clipped_matches(&[0, 0], &mut last);
        assert_eq!(last, [2, 1]);
    }

    #[test]
    fn absent_symbols_break_ngrams() {
        let mut idx = NgramIndex::default();
        idx.set_hypothesis(&[0, 1, 2], 3);
        let mut m = [0u64; 3];
        idx.add_clipped_matches(&[0, ABSENT, 1, 2], &mut m);
        assert_eq!(m, [3, 1, 0]);
        // Clipping: "a a a" against hypothesis "a b c" matches one "a".
        let mut m = [0u64; 3];
        idx.add_clipped_matches(&[0, 0, 0], &mut m);
        assert_eq!(m, [1, 0, 0]);
    }

    #[test]
    fn closest_ref_len_ties_to_shorter() {
        assert_eq!(closest_ref_len(12, [13, 11]), Some(11));
        assert_eq!(closest_ref_len(12, [11, 13]), Some(11));
        assert_eq!(closest_ref_len(7, [11, 8, 6, 7]), Some(7));
        assert_eq!(closest_ref_len(3, []), None);
    }
}
