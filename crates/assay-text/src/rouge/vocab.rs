//! rouge-score's tokenizer, and the scorer's token interner with its
//! memoised stems.

use crate::porter;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::Stemming;

/// Marks "no token / not in the prediction" in id arrays.
pub(super) const NONE: u32 = u32::MAX;

/// Past this many cached entries the interner starts afresh at the next
/// call, so a long-lived scorer's memory stays bounded.
const CACHE_LIMIT: usize = 1 << 16;

/// Calls `emit` with every rouge-score token of `text` (no stemming):
/// the maximal runs of `[a-z0-9]` after Python's `str.lower()`. Any other
/// character separates tokens, including what lowercasing produces besides
/// ASCII (`İ` lowercases to `i` + U+0307, so it ends a token after `i`).
pub(super) fn for_each_raw_token(text: &str, buf: &mut Vec<u8>, mut emit: impl FnMut(&[u8])) {
    buf.clear();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() {
            buf.push(b.to_ascii_lowercase());
            i += 1;
        } else if b.is_ascii() {
            flush(buf, &mut emit);
            i += 1;
        } else {
            // A non-ASCII character: only its lowercase form can contribute
            // (KELVIN SIGN -> `k`), so decode it and look at that.
            let ch = text.get(i..).and_then(|rest| rest.chars().next());
            let Some(ch) = ch else {
                break;
            };
            for lower in ch.to_lowercase() {
                if lower.is_ascii_alphanumeric() {
                    buf.push(lower as u8);
                } else {
                    flush(buf, &mut emit);
                }
            }
            i += ch.len_utf8();
        }
    }
    flush(buf, &mut emit);
}

fn flush(buf: &mut Vec<u8>, emit: &mut impl FnMut(&[u8])) {
    if !buf.is_empty() {
        emit(buf);
        buf.clear();
    }
}

/// A small multiplicative hasher (the rustc "Fx" scheme): token keys are
/// short and not adversarial enough to need SipHash, and hashing is on the
/// hot path of every token.
#[derive(Default, Clone, Copy)]
pub(super) struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Interns final (possibly stemmed) tokens to dense `u32` ids that stay
/// valid for the whole of one scoring call, and remembers the stem of every
/// raw token seen so the Porter stemmer runs once per distinct word.
#[derive(Default)]
pub(super) struct Vocab {
    /// Final token text -> global id.
    ids: FxMap<Box<[u8]>, u32>,
    /// Raw token longer than three characters -> global id of its stem.
    stems: FxMap<Box<[u8]>, u32>,
    /// Global id -> id local to the current call's prediction, or `NONE`.
    local: Vec<u32>,
    /// Global ids given a local id in this call, to undo `local` after it.
    assigned: Vec<u32>,
    raw: Vec<u8>,
    stem_buf: Vec<u8>,
}

impl Vocab {
    /// Starts a scoring call; the only point where the caches may be
    /// dropped, so ids never change within a call.
    pub(super) fn begin(&mut self) {
        if self.ids.len() + self.stems.len() > CACHE_LIMIT {
            self.ids.clear();
            self.stems.clear();
            self.local.clear();
        }
    }

    /// Ends a scoring call: forgets the local ids of the prediction.
    pub(super) fn end(&mut self) {
        for &g in &self.assigned {
            if let Some(slot) = self.local.get_mut(g as usize) {
                *slot = NONE;
            }
        }
        self.assigned.clear();
    }

    /// Tokenizes `text` line by line into global ids (`out`), recording the
    /// end offset of every line that has tokens (`line_ends`): rougeLsum's
    /// sentences are the `\n`-separated lines, and the whole-text token
    /// list is their concatenation.
    pub(super) fn tokenize(
        &mut self,
        text: &str,
        stemming: Stemming,
        out: &mut Vec<u32>,
        line_ends: &mut Vec<u32>,
    ) {
        out.clear();
        line_ends.clear();
        let mut raw = std::mem::take(&mut self.raw);
        for line in text.split('\n') {
            let before = out.len();
            for_each_raw_token(line, &mut raw, |token| {
                let id = self.intern(token, stemming);
                if id != NONE {
                    out.push(id);
                }
            });
            if out.len() > before {
                line_ends.push(out.len() as u32);
            }
        }
        self.raw = raw;
    }

    fn intern(&mut self, token: &[u8], stemming: Stemming) -> u32 {
        // rouge-score stems only tokens longer than three characters.
        if stemming == Stemming::Off || token.len() <= 3 {
            return self.id_of(token);
        }
        if let Some(&id) = self.stems.get(token) {
            return id;
        }
        let mut stemmed = std::mem::take(&mut self.stem_buf);
        stemmed.clear();
        stemmed.extend_from_slice(token);
        porter::stem_ascii_lower(&mut stemmed);
        // rouge-score drops tokens that do not match `^[a-z0-9]+$`.
        let id = if stemmed.is_empty() {
            NONE
        } else {
            self.id_of(&stemmed)
        };
        self.stem_buf = stemmed;
        self.stems.insert(token.into(), id);
        id
    }

    fn id_of(&mut self, token: &[u8]) -> u32 {
        if let Some(&id) = self.ids.get(token) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(token.into(), id);
        self.local.push(NONE);
        id
    }

    /// Maps the prediction's global ids to local ids `0..k` in place, in
    /// order of first appearance; returns k.
    pub(super) fn localize_prediction(&mut self, tokens: &mut [u32]) -> usize {
        for t in tokens.iter_mut() {
            let g = *t as usize;
            let Some(slot) = self.local.get_mut(g) else {
                *t = NONE;
                continue;
            };
            if *slot == NONE {
                *slot = self.assigned.len() as u32;
                self.assigned.push(*t);
            }
            *t = *slot;
        }
        self.assigned.len()
    }

    /// Maps a reference's global ids to the prediction's local ids in place;
    /// tokens the prediction lacks become `NONE`, since they can never
    /// match.
    pub(super) fn localize_reference(&self, tokens: &mut [u32]) {
        for t in tokens.iter_mut() {
            *t = self.local.get(*t as usize).copied().unwrap_or(NONE);
        }
    }
}
