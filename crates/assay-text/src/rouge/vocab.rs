//! rouge-score's tokenizer, and the scorer's token interner with its
//! memoised stems.

use crate::porter;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::Stemming;

/// Marks a reference token that the prediction lacks (it can never match).
pub(super) const NONE: u32 = u32::MAX;

/// Marks a token that rouge-score's final `^[a-z0-9]+$` filter drops (an
/// empty stem); such tokens take no position at all.
const DROPPED: u32 = u32::MAX - 1;

/// Past this many memoised stems the cache starts afresh at the next call,
/// so a long-lived scorer's memory stays bounded.
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
    /// [`ascii_tokens`]' bitmaps of the text's alphanumeric bytes and of
    /// its line breaks.
    mask: Vec<u64>,
    breaks: Vec<u64>,
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
            let key = if self.bytes.len() <= SHORT {
                self.key
            } else {
                0
            };
            emit(&self.bytes, key);
            self.bytes.clear();
            self.key = 0;
        }
    }
}

/// Calls `emit(token, key)` with every rouge-score token of `text` (no
/// stemming): the maximal runs of `[a-z0-9]` after Python's `str.lower()`.
/// Any other character separates tokens, including what lowercasing
/// produces besides ASCII (`İ` lowercases to `i` + U+0307, so it ends a
/// token after `i`). `key` packs tokens of up to 16 bytes (see
/// [`TokenBuf`]) and is 0 for longer ones.
pub(super) fn for_each_raw_token(
    text: &str,
    buf: &mut TokenBuf,
    mut emit: impl FnMut(&[u8], u128),
) {
    if !ascii_tokens(text, buf, &mut |token, key, _| emit(token, key)) {
        unicode_tokens(text, buf, &mut emit);
    }
}

/// Whether `text` has one of the two non-ASCII characters whose lowercase
/// has ASCII letters (U+0130 and KELVIN SIGN; the test
/// `only_two_characters_lowercase_into_ascii` checks the whole table).
/// Without them every non-ASCII character only separates tokens, as every
/// byte of its UTF-8 does in [`ascii_tokens`], so text in other scripts,
/// or with curly quotes and dashes, takes the fast path too.
fn lowercases_into_ascii(text: &str) -> bool {
    text.contains('\u{130}') || text.contains('\u{212a}')
}

/// The common case: no lowercasing into ASCII beyond ASCII's own, and a
/// token is a slice of the input, so its key is one unaligned load.
/// `emit`'s third argument says whether a line break (`\n`) lies between
/// the token and the one before it, so that a text's lines are found in
/// the same pass (splitting it first took a pass of its own). Returns
/// false, having emitted nothing, for a text that [`lowercases_into_ascii`]:
/// the pass that classifies the bytes also looks for the first byte of
/// those two characters, so that most texts need no pass of their own for
/// it.
///
/// The bytes are first classified into bitmaps, then each token's two
/// ends are found by bit searches: a loop over the bytes that stops at
/// each end cost a mispredicted branch per token.
fn ascii_tokens(text: &str, buf: &mut TokenBuf, emit: &mut impl FnMut(&[u8], u128, bool)) -> bool {
    let bytes = text.as_bytes();
    let (mask, breaks) = (&mut buf.mask, &mut buf.breaks);
    for bits in [&mut *mask, &mut *breaks] {
        bits.clear();
        bits.resize(bytes.len() / 64 + 1, 0);
    }
    let (blocks, rest) = bytes.as_chunks::<16>();
    let mut leads = 0;
    for (k, block) in blocks.iter().enumerate() {
        let [alphanumeric, newline, lead] = classify_16(block);
        let shift = 16 * (k % 4);
        mask[k / 4] |= u64::from(alphanumeric) << shift;
        breaks[k / 4] |= u64::from(newline) << shift;
        leads |= lead;
    }
    let [alphanumeric, newline, lead] = classify_bits(rest);
    let shift = 16 * (blocks.len() % 4);
    mask[blocks.len() / 4] |= alphanumeric << shift;
    breaks[blocks.len() / 4] |= newline << shift;
    if (leads != 0 || lead != 0) && lowercases_into_ascii(text) {
        return false;
    }
    // Bits past the end are clear, so every token ends within the bitmap.
    let mut i = 0;
    let mut next_break = next_bit(breaks, 0, 0);
    while let Some(start) = next_bit(mask, i, 0) {
        let new_line = next_break.is_some_and(|b| b < start);
        if new_line {
            next_break = next_bit(breaks, start, 0);
        }
        let end = next_bit(mask, start, u64::MAX).unwrap_or(bytes.len());
        let len = end - start;
        if len <= SHORT {
            let key = lowercase_key(bytes, start, len);
            let packed = key.to_le_bytes();
            emit(&packed[..len], key, new_line);
        } else {
            buf.bytes.clear();
            buf.bytes
                .extend(bytes[start..end].iter().map(u8::to_ascii_lowercase));
            emit(&buf.bytes, 0, new_line);
        }
        i = end;
    }
    true
}

/// The first bytes of the UTF-8 of U+0130 and KELVIN SIGN (U+212A).
const LEADS: [u8; 2] = [0xC4, 0xE2];

/// [`classify_bits`] of 16 bytes at once: SSE2, which every x86-64 CPU
/// has (the scalar loop took a few cycles a byte).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify_16(bytes: &[u8; 16]) -> [u16; 3] {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of x86-64, and the load reads the 16 bytes of
    // `bytes`, unaligned.
    unsafe {
        let x = _mm_loadu_si128(bytes.as_ptr().cast());
        // b - lo <= span, unsigned: min(b - lo, span) == b - lo.
        let within = |v: __m128i, lo: u8, span: u8| {
            let d = _mm_sub_epi8(v, _mm_set1_epi8(lo as i8));
            _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(span as i8)), d)
        };
        let digit = within(x, b'0', 9);
        let letter = within(_mm_or_si128(x, _mm_set1_epi8(0x20)), b'a', 25);
        let is = |b: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(b as i8));
        let lead = _mm_or_si128(is(LEADS[0]), is(LEADS[1]));
        [
            _mm_movemask_epi8(_mm_or_si128(digit, letter)) as u16,
            _mm_movemask_epi8(is(b'\n')) as u16,
            _mm_movemask_epi8(lead) as u16,
        ]
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify_16(bytes: &[u8; 16]) -> [u16; 3] {
    classify_bits(bytes).map(|bits| bits as u16)
}

/// Bit `k` set in the first where `chunk[k]` (at most 64 bytes) is
/// `[A-Za-z0-9]`, in the second where it is `\n`, in the third where it is
/// one of [`LEADS`].
#[inline(always)]
fn classify_bits(chunk: &[u8]) -> [u64; 3] {
    chunk
        .iter()
        .enumerate()
        .fold([0; 3], |[alphanumeric, newline, lead], (k, &b)| {
            let digit = b.wrapping_sub(b'0') < 10;
            let letter = (b | 0x20).wrapping_sub(b'a') < 26;
            [
                alphanumeric | (u64::from(digit | letter) << k),
                newline | (u64::from(b == b'\n') << k),
                lead | (u64::from(LEADS.contains(&b)) << k),
            ]
        })
}

/// The first position at or after `from` whose bit in `mask` differs
/// from `flip`'s (0: the next set bit; all ones: the next clear one).
#[inline(always)]
fn next_bit(mask: &[u64], from: usize, flip: u64) -> Option<usize> {
    let mut w = from / 64;
    let mut word = (*mask.get(w)? ^ flip) & (u64::MAX << (from % 64));
    while word == 0 {
        w += 1;
        word = *mask.get(w)? ^ flip;
    }
    Some(w * 64 + word.trailing_zeros() as usize)
}

/// Packs the ASCII alphanumeric run `bytes[start..start + len]`
/// (`len <= 16`) lowercased, as [`TokenBuf`] would.
fn lowercase_key(bytes: &[u8], start: usize, len: usize) -> u128 {
    let mut word = [0u8; SHORT];
    match bytes.get(start..start + SHORT) {
        Some(window) => word.copy_from_slice(window),
        None => {
            let tail = bytes.get(start..start + len).unwrap_or(&[]);
            word[..tail.len()].copy_from_slice(tail);
        }
    }
    let mask = if len >= SHORT {
        u128::MAX
    } else {
        (1u128 << (8 * len)) - 1
    };
    // Setting bit 0x20 lowercases an ASCII letter and keeps a digit as it is.
    (u128::from_le_bytes(word) | 0x2020_2020_2020_2020_2020_2020_2020_2020) & mask
}

/// Text with non-ASCII characters: only two characters lowercase to
/// something with ASCII letters (KELVIN SIGN -> `k`, U+0130 -> `i` +
/// U+0307), but decoding every character and using the lowercase mapping
/// keeps this exact without relying on that list.
fn unicode_tokens(text: &str, buf: &mut TokenBuf, emit: &mut impl FnMut(&[u8], u128)) {
    buf.bytes.clear();
    buf.key = 0;
    for ch in text.chars() {
        if ch.is_ascii() {
            if ch.is_ascii_alphanumeric() {
                buf.push(ch.to_ascii_lowercase() as u8);
            } else {
                buf.flush(emit);
            }
            continue;
        }
        for lower in ch.to_lowercase() {
            if lower.is_ascii_alphanumeric() {
                buf.push(lower as u8);
            } else {
                buf.flush(emit);
            }
        }
    }
    buf.flush(emit);
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

/// Open-addressing map from packed short tokens to `V`: one multiply to
/// hash, one integer compare per probe, key and value in one cache line.
struct ShortTable<V> {
    slots: Vec<Slot<V>>,
    /// Occupied slots, so a small table in a big allocation clears fast.
    used: Vec<u32>,
}

impl<V> Default for ShortTable<V> {
    fn default() -> Self {
        ShortTable {
            slots: Vec::new(),
            used: Vec::new(),
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Slot<V> {
    /// 0 marks an empty slot.
    key: u128,
    value: V,
}

impl<V: Copy + Default> ShortTable<V> {
    fn slot(&self, key: u128) -> usize {
        let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
        let bits = self.slots.len().trailing_zeros();
        (folded.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    fn get(&self, key: u128) -> Option<V> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            let slot = self.slots[i];
            if slot.key == key {
                return Some(slot.value);
            }
            if slot.key == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Inserts a key known to be absent.
    fn insert(&mut self, key: u128, value: V) {
        if (self.used.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        while self.slots[i].key != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = Slot { key, value };
        self.used.push(i as u32);
    }

    fn grow(&mut self) {
        let capacity = (self.slots.len() * 2).max(256);
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); capacity]);
        for i in std::mem::take(&mut self.used) {
            let slot = old[i as usize];
            self.insert(slot.key, slot.value);
        }
    }

    fn clear(&mut self) {
        for &i in &self.used {
            self.slots[i as usize].key = 0;
        }
        self.used.clear();
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Token bytes -> id.
#[derive(Default)]
struct TokenMap {
    short: ShortTable<u32>,
    long: FxMap<Box<[u8]>, u32>,
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

/// Raw token -> its Porter stem, across calls; the only state that
/// outlives a call, since stemming is what is worth remembering. Short
/// tokens (all but a few) map to their packed stem in one table probe
/// (0: the stem is empty); the rest keep bytes.
#[derive(Default)]
struct StemCache {
    short: ShortTable<u128>,
    long: FxMap<Box<[u8]>, Box<[u8]>>,
}

/// A final token: packed when short (as every final token of at most 16
/// bytes must be, so equal tokens meet), else its bytes are in `stem_buf`.
#[derive(Clone, Copy)]
enum Final {
    Short(u128),
    Long,
    Empty,
}

/// Numbers the tokens of one call: the prediction's distinct (final)
/// tokens get local ids `0..k`, which the scorer uses to index small
/// arrays; reference tokens map onto them. Every table here is per call and
/// small enough to stay in cache; the stem cache is consulted once per new
/// raw token of a call.
#[derive(Default)]
pub(super) struct Vocab {
    /// This call's raw tokens -> local id, `NONE` or `DROPPED`.
    raw: TokenMap,
    /// This call's final (stemmed) prediction tokens -> local id; with
    /// stemming off, final and raw tokens coincide and `raw` suffices.
    finals: TokenMap,
    distinct: u32,
    stems: StemCache,
    /// Number of memoised stems.
    stemmed: usize,
    buf: TokenBuf,
    stem_buf: Vec<u8>,
}

impl Vocab {
    /// Starts a scoring call; the only point where the stem cache may be
    /// dropped (past `CACHE_LIMIT` words), so memory stays bounded.
    pub(super) fn begin(&mut self) {
        if self.stemmed > CACHE_LIMIT {
            self.stems.short.clear();
            self.stems.long.clear();
            self.stemmed = 0;
        }
    }

    /// Ends a scoring call: forgets its local ids.
    pub(super) fn end(&mut self) {
        self.raw.clear();
        self.finals.clear();
        self.distinct = 0;
    }

    /// Number of distinct prediction tokens (local ids) in this call.
    pub(super) fn distinct(&self) -> usize {
        self.distinct as usize
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
        // The lines found as the tokens are, unless the text needs the
        // general path, which takes it line by line.
        let mut line_start = 0;
        let found = ascii_tokens(text, &mut buf, &mut |token, key, new_line| {
            if new_line {
                if out.len() > line_start {
                    line_ends.push(out.len() as u32);
                }
                line_start = out.len();
            }
            self.push(out, token, key, stemming, side);
        });
        if found {
            if out.len() > line_start {
                line_ends.push(out.len() as u32);
            }
        } else {
            for line in text.split('\n') {
                let before = out.len();
                for_each_raw_token(line, &mut buf, |token, key| {
                    self.push(out, token, key, stemming, side);
                });
                if out.len() > before {
                    line_ends.push(out.len() as u32);
                }
            }
        }
        self.buf = buf;
    }

    /// Appends the token's local id to `out`, unless it is dropped.
    #[inline]
    fn push(
        &mut self,
        out: &mut Vec<u32>,
        token: &[u8],
        key: u128,
        stemming: Stemming,
        side: Side,
    ) {
        let id = self.local_id(token, key, stemming, side);
        if id != DROPPED {
            out.push(id);
        }
    }

    /// The token's local id, `NONE` for a reference token the prediction
    /// lacks, or `DROPPED`.
    fn local_id(&mut self, token: &[u8], key: u128, stemming: Stemming, side: Side) -> u32 {
        if let Some(id) = self.raw.get(token, key) {
            return id;
        }
        // rouge-score stems only tokens longer than three characters.
        let id = if stemming == Stemming::Off {
            self.new_final(side)
        } else if token.len() <= 3 {
            self.final_id(Final::Short(key), side)
        } else {
            let fin = self.stem(token, key);
            self.final_id(fin, side)
        };
        self.raw.insert(token, key, id);
        id
    }

    /// A final token not seen before in this call.
    fn new_final(&mut self, side: Side) -> u32 {
        match side {
            Side::Prediction => {
                self.distinct += 1;
                self.distinct - 1
            }
            Side::Reference => NONE,
        }
    }

    /// The local id of a final token.
    fn final_id(&mut self, fin: Final, side: Side) -> u32 {
        let known = match fin {
            Final::Empty => return DROPPED,
            Final::Short(key) => self.finals.short.get(key),
            Final::Long => self.finals.long.get(self.stem_buf.as_slice()).copied(),
        };
        if let Some(id) = known {
            return id;
        }
        let id = self.new_final(side);
        if id != NONE {
            match fin {
                Final::Short(key) => self.finals.short.insert(key, id),
                Final::Long => {
                    self.finals.long.insert(self.stem_buf.as_slice().into(), id);
                }
                Final::Empty => {}
            }
        }
        id
    }

    /// The stem of `token` (longer than three characters), memoised.
    fn stem(&mut self, token: &[u8], key: u128) -> Final {
        if token.len() <= SHORT {
            if let Some(fin) = self.stems.short.get(key) {
                return if fin == 0 {
                    Final::Empty
                } else {
                    Final::Short(fin)
                };
            }
        }
        if let Some(fin) = self.stems.long.get(token) {
            self.stem_buf.clear();
            self.stem_buf.extend_from_slice(fin);
            return self.buffered_final();
        }
        self.stem_buf.clear();
        self.stem_buf.extend_from_slice(token);
        porter::stem_ascii_lower(&mut self.stem_buf);
        self.stemmed += 1;
        let fin = self.stem_buf.as_slice();
        if token.len() <= SHORT && fin.len() <= SHORT {
            // pack(&[]) is 0, which marks the empty stem.
            let packed = pack(fin);
            self.stems.short.insert(key, packed);
            return if packed == 0 {
                Final::Empty
            } else {
                Final::Short(packed)
            };
        }
        self.stems.long.insert(token.into(), fin.into());
        self.buffered_final()
    }

    /// The final token held in `stem_buf`.
    fn buffered_final(&self) -> Final {
        match self.stem_buf.len() {
            0 => Final::Empty,
            n if n <= SHORT => Final::Short(pack(&self.stem_buf)),
            _ => Final::Long,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(text: &str, ascii_path: bool) -> Vec<(Vec<u8>, u128)> {
        let mut out = Vec::new();
        let mut buf = TokenBuf::default();
        if ascii_path {
            let taken = ascii_tokens(text, &mut buf, &mut |t, k, _| out.push((t.to_vec(), k)));
            assert_eq!(taken, !lowercases_into_ascii(text), "{text:?}");
        } else {
            unicode_tokens(text, &mut buf, &mut |t, k| out.push((t.to_vec(), k)));
        }
        out
    }

    #[test]
    fn ascii_fast_path_matches_general_path() {
        let long = "Pneumonoultramicroscopicsilicovolcanoconiosis";
        for text in [
            "",
            "   ",
            "a",
            "The QUICK brown fox, jumped-over 2 lazy dogs!",
            "exactly16letters exactly15letter seventeenletters1 end",
            "ABCDEFGHIJKLMNOP",
            "abcdefghijklmnopq",
            long,
            &format!("{long}. {long}"),
            // Tokens ending and starting at the bitmap's 64-byte words.
            &format!("{} {} c{}", "A".repeat(63), "b".repeat(64), "9".repeat(63)),
            "don't\tstop\r\nx9Y8z7 __init__ 3.14",
            "“Café” — naïve Zürich straße, 北京 2024",
            "İstanbul 5\u{212a}m",
            "\u{130}\u{212a}",
        ] {
            assert_eq!(
                lowercases_into_ascii(text),
                text.contains(['\u{130}', '\u{212a}']),
                "{text:?}"
            );
            let fast = collect(text, true);
            if lowercases_into_ascii(text) {
                assert!(fast.is_empty(), "{text:?}");
                continue;
            }
            let general = collect(text, false);
            assert_eq!(fast, general, "{text:?}");
            for (token, key) in &fast {
                if token.len() <= SHORT {
                    assert_eq!(*key, pack(token), "{text:?}");
                }
            }
        }
    }

    /// A text's tokens and lines, found in one pass, are those of its
    /// `\n`-separated lines tokenized one by one.
    #[test]
    fn lines_found_with_the_tokens_are_the_split_lines() {
        let long_line = format!("{}\n{}", "word ".repeat(20), "b".repeat(70));
        for text in [
            "",
            "\n\n",
            "one line",
            "a\nb",
            "\nleading and trailing\n",
            "first.\n\n  \n!!\nsecond line, two\r\nthird",
            "x\n\ny\n.\nz",
            "“Café”\nnaïve — Zürich",
            // The general path, line by line.
            "İstanbul\n\n5\u{212a}m, “Zürich”\n",
            long_line.as_str(),
        ] {
            let mut ids: Vec<Vec<u8>> = Vec::new();
            let (mut expected, mut expected_ends) = (Vec::new(), Vec::new());
            for line in text.split('\n') {
                for_each_raw_token(line, &mut TokenBuf::default(), |t, _| {
                    let id = match ids.iter().position(|seen| seen == t) {
                        Some(id) => id,
                        None => {
                            ids.push(t.to_vec());
                            ids.len() - 1
                        }
                    };
                    expected.push(id as u32);
                });
                if expected_ends.last().copied().unwrap_or(0) < expected.len() as u32 {
                    expected_ends.push(expected.len() as u32);
                }
            }
            let (mut out, mut ends) = (Vec::new(), Vec::new());
            let mut vocab = Vocab::default();
            vocab.tokenize(text, Stemming::Off, Side::Prediction, &mut out, &mut ends);
            assert_eq!((out, ends), (expected, expected_ends), "{text:?}");
        }
    }

    #[test]
    fn sixteen_bytes_at_once_classify_as_one_at_a_time() {
        let all: Vec<u8> = (0..=255).collect();
        for block in all.as_chunks::<16>().0 {
            assert_eq!(classify_16(block).map(u64::from), classify_bits(block));
        }
    }

    #[test]
    fn the_two_characters_that_lowercase_into_ascii_take_the_general_path() {
        let mut tokens = Vec::new();
        for_each_raw_token(
            "İstanbul 5\u{212a}m, Zürich",
            &mut TokenBuf::default(),
            |t, _| tokens.push(String::from_utf8(t.to_vec()).unwrap()),
        );
        assert_eq!(tokens, ["i", "stanbul", "5km", "z", "rich"]);
    }

    /// The same two characters as in Python 3.11's tables lowercase to
    /// something with ASCII letters or digits; every other non-ASCII
    /// character only separates tokens.
    #[test]
    fn only_two_characters_lowercase_into_ascii() {
        let found: Vec<char> = (0x80..=0x10FFFF)
            .filter_map(char::from_u32)
            .filter(|c| c.to_lowercase().any(|l| l.is_ascii_alphanumeric()))
            .collect();
        assert_eq!(found, ['\u{130}', '\u{212a}']);
    }
}
