//! rouge-score's tokenizer, and the scorer's token interner with its
//! memoised stems.

use crate::porter;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::Stemming;

/// Marks "no token / not in the prediction" in id arrays.
pub(super) const NONE: u32 = u32::MAX;

/// Marks a token that rouge-score's final `^[a-z0-9]+$` filter drops (an
/// empty stem); such tokens take no position at all.
const DROPPED: u32 = u32::MAX - 1;

/// Past this many cached entries the interner starts afresh at the next
/// call, so a long-lived scorer's memory stays bounded.
const CACHE_LIMIT: usize = 1 << 16;

/// Tokens of at most this many bytes are packed into one `u128` key.
const SHORT: usize = 16;

/// The token being scanned: its bytes, and while it is short, the same
/// bytes packed little-endian into an integer key (built as bytes arrive,
/// which is cheaper than packing the slice afterwards). Tokens never
/// contain NUL, so the zero padding is unambiguous and 0 means "empty".
#[derive(Default)]
pub(super) struct TokenBuf {
    bytes: Vec<u8>,
    key: u128,
}

impl TokenBuf {
    fn push(&mut self, b: u8) {
        if self.bytes.len() < SHORT {
            self.key |= u128::from(b) << (8 * self.bytes.len());
        }
        self.bytes.push(b);
    }

    fn flush(&mut self, emit: &mut impl FnMut(&[u8], u128)) {
        if !self.bytes.is_empty() {
            emit(&self.bytes, self.key);
            self.bytes.clear();
            self.key = 0;
        }
    }
}

/// Calls `emit(token, key)` with every rouge-score token of `text` (no
/// stemming): the maximal runs of `[a-z0-9]` after Python's `str.lower()`.
/// Any other character separates tokens, including what lowercasing
/// produces besides ASCII (`İ` lowercases to `i` + U+0307, so it ends a
/// token after `i`). `key` packs tokens of up to 16 bytes (see [`TokenBuf`]).
pub(super) fn for_each_raw_token(
    text: &str,
    buf: &mut TokenBuf,
    mut emit: impl FnMut(&[u8], u128),
) {
    buf.bytes.clear();
    buf.key = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() {
            buf.push(b.to_ascii_lowercase());
            i += 1;
        } else if b.is_ascii() {
            buf.flush(&mut emit);
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
                    buf.flush(&mut emit);
                }
            }
            i += ch.len_utf8();
        }
    }
    buf.flush(&mut emit);
}

/// A small multiplicative hasher (the rustc "Fx" scheme) for the rare
/// tokens longer than 16 bytes: keys are short and hashing is on the hot
/// path, so SipHash's strength would only cost time.
#[derive(Default, Clone, Copy)]
struct FxHasher {
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

/// Packs a token of 1..=16 bytes the way [`TokenBuf`] does.
fn pack(token: &[u8]) -> u128 {
    let mut bytes = [0u8; SHORT];
    bytes[..token.len()].copy_from_slice(token);
    u128::from_le_bytes(bytes)
}

/// Open-addressing map from packed short tokens to ids: one multiply to
/// hash and one integer compare per probe, no pointer chasing.
#[derive(Default)]
struct ShortTable {
    keys: Vec<u128>,
    values: Vec<u32>,
    /// Occupied slots, so a small table in a big allocation clears fast.
    used: Vec<u32>,
}

impl ShortTable {
    fn slot(&self, key: u128) -> usize {
        let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
        let bits = self.keys.len().trailing_zeros();
        (folded.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    fn len(&self) -> usize {
        self.used.len()
    }

    fn get(&self, key: u128) -> Option<u32> {
        if self.keys.is_empty() {
            return None;
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        loop {
            match self.keys[i] {
                k if k == key => return Some(self.values[i]),
                0 => return None,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Inserts a key known to be absent.
    fn insert(&mut self, key: u128, value: u32) {
        if (self.used.len() + 1) * 2 > self.keys.len() {
            self.grow();
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        while self.keys[i] != 0 {
            i = (i + 1) & mask;
        }
        self.keys[i] = key;
        self.values[i] = value;
        self.used.push(i as u32);
    }

    fn grow(&mut self) {
        let capacity = (self.keys.len() * 2).max(256);
        let keys = std::mem::replace(&mut self.keys, vec![0; capacity]);
        let values = std::mem::replace(&mut self.values, vec![0; capacity]);
        let used = std::mem::take(&mut self.used);
        for slot in used {
            let slot = slot as usize;
            self.insert(keys[slot], values[slot]);
        }
    }

    fn clear(&mut self) {
        for &slot in &self.used {
            self.keys[slot as usize] = 0;
        }
        self.used.clear();
    }
}

/// Token bytes -> id.
#[derive(Default)]
struct TokenMap {
    short: ShortTable,
    long: HashMap<Box<[u8]>, u32, BuildHasherDefault<FxHasher>>,
}

impl TokenMap {
    /// `key` must be `pack(token)` when the token is short.
    fn get(&self, token: &[u8], key: u128) -> Option<u32> {
        if token.len() <= SHORT {
            self.short.get(key)
        } else {
            self.long.get(token).copied()
        }
    }

    /// Inserts a token known to be absent (and non-empty).
    fn insert(&mut self, token: &[u8], key: u128, id: u32) {
        if token.len() <= SHORT {
            self.short.insert(key, id);
        } else {
            self.long.insert(token.into(), id);
        }
    }

    fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    fn clear(&mut self) {
        self.short.clear();
        self.long.clear();
    }
}

/// Which text of a call is being tokenized.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// Tokens get local ids `0..k` in order of first appearance.
    Prediction,
    /// Tokens map to the prediction's local ids, or `NONE` when the
    /// prediction lacks them (such tokens can never match).
    Reference,
}

/// Interns tokens in two layers. Global ids name final (possibly stemmed)
/// tokens across calls, so the Porter stemmer runs once per distinct word;
/// local ids number the prediction's distinct tokens within one call, so
/// scoring can index small arrays. A per-call table from raw token to local
/// id sits in front: it stays in L1 cache, while the global maps (tens of
/// thousands of words) would miss it on every token.
#[derive(Default)]
pub(super) struct Vocab {
    /// Raw token -> global id of its final form (`DROPPED`: no token).
    raw_ids: TokenMap,
    /// Final token -> global id; consulted only when a raw token is new.
    final_ids: TokenMap,
    /// Global id -> local id in the current call, or `NONE`.
    local: Vec<u32>,
    /// Global ids given a local id in this call, to undo `local` after it.
    assigned: Vec<u32>,
    /// This call's short raw tokens -> local id, `NONE` or `DROPPED`.
    call: ShortTable,
    buf: TokenBuf,
    stem_buf: Vec<u8>,
}

impl Vocab {
    /// Starts a scoring call; the only point where the caches may be
    /// dropped, so ids never change within a call.
    pub(super) fn begin(&mut self) {
        if self.raw_ids.len() + self.final_ids.len() > CACHE_LIMIT {
            self.raw_ids.clear();
            self.final_ids.clear();
            self.local.clear();
        }
    }

    /// Ends a scoring call: forgets its local ids.
    pub(super) fn end(&mut self) {
        for &g in &self.assigned {
            if let Some(slot) = self.local.get_mut(g as usize) {
                *slot = NONE;
            }
        }
        self.assigned.clear();
        self.call.clear();
    }

    /// Number of distinct prediction tokens (local ids) in this call.
    pub(super) fn distinct(&self) -> usize {
        self.assigned.len()
    }

    /// Tokenizes `text` line by line into local ids (`out`), recording the
    /// end offset of every line that has tokens (`line_ends`): rougeLsum's
    /// sentences are the `\n`-separated lines, and the whole-text token
    /// list is their concatenation. A call tokenizes its prediction first.
    pub(super) fn tokenize(
        &mut self,
        text: &str,
        stemming: Stemming,
        side: Side,
        out: &mut Vec<u32>,
        line_ends: &mut Vec<u32>,
    ) {
        out.clear();
        line_ends.clear();
        let mut buf = std::mem::take(&mut self.buf);
        for line in text.split('\n') {
            let before = out.len();
            for_each_raw_token(line, &mut buf, |token, key| {
                let id = self.local_id(token, key, stemming, side);
                if id != DROPPED {
                    out.push(id);
                }
            });
            if out.len() > before {
                line_ends.push(out.len() as u32);
            }
        }
        self.buf = buf;
    }

    /// The token's local id, `NONE` for a reference token the prediction
    /// lacks, or `DROPPED`.
    fn local_id(&mut self, token: &[u8], key: u128, stemming: Stemming, side: Side) -> u32 {
        let short = token.len() <= SHORT;
        if short {
            if let Some(id) = self.call.get(key) {
                return id;
            }
        }
        let global = self.global_id(token, key, stemming);
        let id = match self.local.get_mut(global as usize) {
            Some(slot) if *slot == NONE && side == Side::Prediction => {
                *slot = self.assigned.len() as u32;
                self.assigned.push(global);
                *slot
            }
            Some(slot) => *slot,
            None => DROPPED,
        };
        if short {
            self.call.insert(key, id);
        }
        id
    }

    fn global_id(&mut self, token: &[u8], key: u128, stemming: Stemming) -> u32 {
        if let Some(id) = self.raw_ids.get(token, key) {
            return id;
        }
        let mut fin = std::mem::take(&mut self.stem_buf);
        fin.clear();
        fin.extend_from_slice(token);
        // rouge-score stems only tokens longer than three characters.
        if stemming == Stemming::Porter && token.len() > 3 {
            porter::stem_ascii_lower(&mut fin);
        }
        // rouge-score drops tokens that do not match `^[a-z0-9]+$`.
        let id = if fin.is_empty() {
            DROPPED
        } else {
            let fin_key = if fin.len() <= SHORT { pack(&fin) } else { 0 };
            match self.final_ids.get(&fin, fin_key) {
                Some(id) => id,
                None => {
                    let id = self.local.len() as u32;
                    self.final_ids.insert(&fin, fin_key, id);
                    self.local.push(NONE);
                    id
                }
            }
        };
        self.stem_buf = fin;
        self.raw_ids.insert(token, key, id);
        id
    }
}
