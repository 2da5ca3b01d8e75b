//! Tokenizers that reproduce the Python references exactly.
//!
//! - [`python_split`]: Python's `str.split()` with no argument.
//! - [`regex_tokens`]: valor-lite's `RegexpTokenizer(r"\w+|\$[\d]+|[^\s\.]+")`.
//! - [`tokenize_13a`]: sacreBLEU's default `13a` tokenizer.
//! - [`SacreTokenizer`]: every sacreBLEU tokenizer that needs no external
//!   model (`none`, `13a`, `intl`, `zh`, `char`).
//! - [`python_lower`]: Python 3.11's `str.lower()`.
//!
//! `str.split()` and 13a use Python's notion of whitespace
//! ([`is_python_whitespace`]), which is wider than Rust's
//! `char::is_whitespace`; the regex tokenizer does not (see there).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

mod intl_tables;
mod sacre;
mod unicode_tables;

pub(crate) use sacre::SacreBuf;
pub use sacre::{SacreTokenizer, UnknownSacreTokenizer};

/// Whether `c` is whitespace for Python's `str.isspace()`, `str.split()` and
/// the `re` class `\s` on `str`.
///
/// That is Rust's `char::is_whitespace` plus the information separators
/// U+001C..U+001F, which Python counts (bidi class B/S) and Rust does not.
///
/// ```
/// use assay_text::tokenize::is_python_whitespace;
/// assert!(is_python_whitespace('\u{1f}'));
/// assert!(is_python_whitespace('\u{a0}'));
/// assert!(!is_python_whitespace('\u{200b}'));
/// ```
#[inline]
pub fn is_python_whitespace(c: char) -> bool {
    if c.is_ascii() {
        is_ascii_python_whitespace(c as u8)
    } else {
        c.is_whitespace()
    }
}

#[inline]
const fn is_ascii_python_whitespace(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | 0x1c..=b' ')
}

/// Code points that Rust's `char::to_lowercase` maps and Python 3.11's
/// `str.lower()` leaves alone: characters assigned after Unicode 14.0
/// (Python 3.11's version), so to Python they are neither cased nor
/// case-ignorable either. Sorted, inclusive ranges; a test compares every
/// code point with Python's mapping (`tests/data/parity/tokenize_parity.json`).
const LOWERED_AFTER_UNICODE_14: &[(u32, u32)] = &[
    (0x1C89, 0x1C89),
    (0xA7CB, 0xA7CC),
    (0xA7CE, 0xA7CE),
    (0xA7D2, 0xA7D2),
    (0xA7D4, 0xA7D4),
    (0xA7DA, 0xA7DA),
    (0xA7DC, 0xA7DC),
    (0x10D50, 0x10D65),
    (0x16EA0, 0x16EB8),
];

fn lowered_after_unicode_14(c: char) -> bool {
    u32::from(c) >= 0x1C89 && in_table(c, LOWERED_AFTER_UNICODE_14)
}

/// Python 3.11's `str.lower()`: full case mapping (`İ` becomes `i` +
/// U+0307) and the final-sigma rule (`ΟΔΟΣ` becomes `οδος`), with Python's
/// Unicode 14.0 mappings: characters lowercased only by later versions stay
/// as they are. (The final-sigma rule looks past case-ignorable characters
/// for cased ones; for characters assigned after Unicode 14 those two
/// properties are Rust's, a difference no real text is known to show.)
///
/// ```
/// use assay_text::tokenize::python_lower;
/// assert_eq!(python_lower("ΣΟΦΟΣ İz"), "σοφος i\u{307}z");
/// assert_eq!(python_lower("\u{a7cb}"), "\u{a7cb}");
/// ```
pub fn python_lower(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        return if s.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(s.to_ascii_lowercase())
        } else {
            Cow::Borrowed(s)
        };
    }
    if !s.chars().any(lowered_after_unicode_14) {
        return Cow::Owned(s.to_lowercase());
    }
    // Lowercase the runs between such characters on their own: to Python
    // they end the final-sigma context, as the end of a run does.
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some((i, c)) = rest
        .char_indices()
        .find(|&(_, c)| lowered_after_unicode_14(c))
    {
        out.push_str(&rest[..i].to_lowercase());
        out.push(c);
        rest = &rest[i + c.len_utf8()..];
    }
    out.push_str(&rest.to_lowercase());
    Cow::Owned(out)
}

/// Python's `str.split()` with no argument: the maximal runs of
/// non-whitespace characters, with Python's whitespace set.
///
/// ```
/// use assay_text::tokenize::python_split;
/// let tokens: Vec<&str> = python_split(" a\u{1f}b\u{a0}c  ").collect();
/// assert_eq!(tokens, ["a", "b", "c"]);
/// ```
pub fn python_split(s: &str) -> PythonSplit<'_> {
    PythonSplit { rest: s }
}

/// Iterator returned by [`python_split`].
#[derive(Debug, Clone)]
pub struct PythonSplit<'a> {
    rest: &'a str,
}

/// Byte classes: 0 ASCII non-whitespace, 1 ASCII (Python) whitespace,
/// 2 part of a multi-byte character.
static BYTE_CLASS: [u8; 256] = {
    let mut t = [2u8; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = is_ascii_python_whitespace(b as u8) as u8;
        b += 1;
    }
    t
};

/// What a run of characters in [`run_len`] consists of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    Whitespace = 1,
    Token = 0,
}

/// Byte length of the leading run of `s` of `kind` characters. ASCII is
/// decided from the byte alone.
#[inline]
fn run_len(s: &str, kind: Run) -> usize {
    let want = kind as u8;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let class = BYTE_CLASS[usize::from(bytes[i])];
        if class == want {
            i += 1;
        } else if class < 2 {
            return i;
        } else {
            let Some(c) = s[i..].chars().next() else {
                return i;
            };
            if c.is_whitespace() != (kind == Run::Whitespace) {
                return i;
            }
            i += c.len_utf8();
        }
    }
    i
}

impl<'a> Iterator for PythonSplit<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let start = run_len(self.rest, Run::Whitespace);
        let rest = &self.rest[start..];
        if rest.is_empty() {
            self.rest = rest;
            return None;
        }
        let end = run_len(rest, Run::Token);
        let (token, tail) = rest.split_at(end);
        self.rest = tail;
        Some(token)
    }
}

fn in_table(c: char, table: &[(u32, u32)]) -> bool {
    let c = c as u32;
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// `\w` of the Python `regex` module (Unicode word characters).
#[inline]
pub(crate) fn is_word(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        in_table(c, unicode_tables::WORD)
    }
}

/// `\d` of the Python `regex` module: a decimal digit (category Nd).
#[inline]
fn is_decimal(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_digit()
    } else {
        in_table(c, unicode_tables::DECIMAL)
    }
}

/// valor-lite's BLEU tokenizer, nltk `RegexpTokenizer(r"\w+|\$[\d]+|[^\s\.]+")`,
/// i.e. `findall` with that pattern.
///
/// At each position the alternatives are tried in order: a run of word
/// characters; a `$` followed by decimal digits; a run of anything but
/// whitespace and `.`. A character none of them matches (whitespace, `.`) is
/// skipped.
///
/// nltk 3.10.4 compiles the pattern with the third-party `regex` module, not
/// `re`, and its classes are reproduced exactly: `\w` is Unicode's word class
/// (combining marks included, `²` excluded), `\d` is category Nd, and `\s` is
/// the Unicode White_Space property, i.e. Rust's `char::is_whitespace`
/// (U+001C..U+001F are *not* whitespace here, unlike for `str.split()`).
///
/// ```
/// use assay_text::tokenize::regex_tokens;
/// let tokens: Vec<&str> = regex_tokens("Price is $100, it's final.").collect();
/// assert_eq!(tokens, ["Price", "is", "$100", ",", "it", "'s", "final"]);
/// ```
pub fn regex_tokens(s: &str) -> RegexTokens<'_> {
    RegexTokens { text: s, pos: 0 }
}

/// Iterator returned by [`regex_tokens`].
#[derive(Debug, Clone)]
pub struct RegexTokens<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> RegexTokens<'a> {
    /// Byte offset just past the run of characters from `from` satisfying `f`.
    fn run_end(&self, from: usize, f: impl Fn(char) -> bool) -> usize {
        self.text[from..]
            .char_indices()
            .find(|&(_, c)| !f(c))
            .map_or(self.text.len(), |(i, _)| from + i)
    }
}

impl<'a> Iterator for RegexTokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        loop {
            let start = self.pos;
            let mut chars = self.text[start..].chars();
            let c = chars.next()?;
            let end = if is_word(c) {
                self.run_end(start, is_word)
            } else if c == '$' && chars.next().is_some_and(is_decimal) {
                self.run_end(start + 1, is_decimal)
            } else if c != '.' && !c.is_whitespace() {
                self.run_end(start, |c| c != '.' && !c.is_whitespace())
            } else {
                self.pos = start + c.len_utf8();
                continue;
            };
            self.pos = end;
            return Some(&self.text[start..end]);
        }
    }
}

/// sacreBLEU's `13a` tokenizer (mteval-v13a), returning the tokens joined by
/// single spaces, as sacreBLEU does.
///
/// Removes `<skipped>` and `-\n`, turns `\n` into a space, unescapes
/// `&quot;`, `&amp;`, `&lt;`, `&gt;` in that order, then splits off ASCII
/// punctuation (except `'`, `,`, `-`, `.`), periods and commas not between
/// digits, and hyphens after a digit. The replacements are left to right
/// and non-overlapping, like Python's `re.sub`.
///
/// ```
/// use assay_text::tokenize::tokenize_13a;
/// assert_eq!(tokenize_13a("Hello, world! 1,000.5 &amp;lt;"), "Hello , world ! 1,000.5 <");
/// ```
pub fn tokenize_13a(line: &str) -> String {
    let mut buf = Buf13a::default();
    buf.run(line);
    python_split(buf.text()).collect::<Vec<_>>().join(" ")
}

/// Reusable buffers for the 13a tokenizer, so that scoring many segments
/// does not allocate per segment.
#[derive(Debug, Default)]
pub(crate) struct Buf13a {
    out: String,
}

/// ASCII punctuation that 13a surrounds with spaces: the regex class
/// `[\{-\~\[-\` -\&\(-\+\:-\@\/]`.
const fn is_13a_punct(b: u8) -> bool {
    matches!(b, b'{'..=b'~' | b'['..=b'`' | b' '..=b'&' | b'('..=b'+' | b':'..=b'@' | b'/')
}

/// Whether byte `b` can take part in no match of passes 2 to 4.
const fn is_stage_plain(b: u8) -> bool {
    !(b.is_ascii_digit() || matches!(b, b'.' | b',' | b'-'))
}

/// 13a byte classes (a table: a `match` on ranges compiles to a jump).
const INERT: u8 = 0;
const PADDED: u8 = 1;
const ACTIVE: u8 = 2;

/// [`INERT`]: left alone by every pass (a space counts, see pass 1 in
/// [`Buf13a::run`]); [`PADDED`]: punctuation pass 1 pads with spaces;
/// [`ACTIVE`]: digits, `.`, `,`, `-`, which passes 2 to 4 look at.
static CLASS_13A: [u8; 256] = {
    let mut t = [INERT; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        t[b] = if !is_stage_plain(byte) {
            ACTIVE
        } else if byte != b' ' && is_13a_punct(byte) {
            PADDED
        } else {
            INERT
        };
        b += 1;
    }
    t
};

#[inline]
fn class_13a(b: u8) -> u8 {
    CLASS_13A[usize::from(b)]
}

/// Whether sacreBLEU's `TokenizerRegexp` gets its line wrapped in spaces:
/// `13a` calls it on `f' {line} '`, `zh` on the line as it is, which
/// changes what a `.` or `,` at either end does.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Padding {
    /// One space before and after the line (`13a`).
    Spaces,
    /// The line as it is (`zh`).
    None,
}

impl Buf13a {
    /// Tokenizes `line`; the tokens are then `python_split(self.text())`.
    pub(crate) fn run(&mut self, line: &str) {
        let mut line = std::borrow::Cow::Borrowed(line);
        // Every replacement below needs one of these bytes; most lines have none.
        if line.bytes().any(|b| matches!(b, b'<' | b'\n' | b'&')) {
            for (from, to) in [("<skipped>", ""), ("-\n", ""), ("\n", " ")] {
                if line.contains(from) {
                    line = line.replace(from, to).into();
                }
            }
            if line.contains('&') {
                for (from, to) in [
                    ("&quot;", "\""),
                    ("&amp;", "&"),
                    ("&lt;", "<"),
                    ("&gt;", ">"),
                ] {
                    if line.contains(from) {
                        line = line.replace(from, to).into();
                    }
                }
            }
        }
        self.regexp(&line, Padding::Spaces);
    }

    /// sacreBLEU's `TokenizerRegexp` (the language-dependent part of 13a,
    /// which `zh` shares) on `line`; the tokens are then
    /// `python_split(self.text())`.
    pub(crate) fn regexp(&mut self, line: &str, padding: Padding) {
        // The four regex passes run fused, as a chain of streaming stages
        // (see `Pipe`), on bytes: every pattern is ASCII, and the only
        // non-ASCII-sensitive class, `[^0-9]`, matches any UTF-8 byte that is
        // not an ASCII digit. A multi-byte character can only take part in a
        // match through its last byte (followed by `.`/`,`) or its first byte
        // (after `.`/`,`), and continuation bytes never start a match, so
        // byte-wise non-overlapping scanning equals `re.sub` on code points.
        let mut pipe = Pipe {
            p2: None,
            p3: None,
            p4: None,
            out: std::mem::take(&mut self.out).into_bytes(),
        };
        pipe.out.clear();
        pipe.out.reserve(line.len() * 2 + 2);
        if padding == Padding::Spaces {
            pipe.s2(b' ');
        }
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let class = class_13a(b);
            if class == INERT && pipe.inert() {
                // Fast path: a run of bytes no pass touches.
                let run = bytes[i..]
                    .iter()
                    .take_while(|&&b| class_13a(b) == INERT)
                    .count();
                pipe.pass_through(&bytes[i..i + run]);
                i += run;
                continue;
            }
            // Pass 1 pads punctuation with spaces. A space itself is left
            // alone: padding it would only lengthen a whitespace run, which
            // no later pattern can match and the final split collapses.
            if class == PADDED {
                pipe.s2(b' ');
                pipe.s2(b);
                pipe.s2(b' ');
            } else {
                pipe.s2(b);
            }
            i += 1;
        }
        if padding == Padding::Spaces {
            pipe.s2(b' ');
        }
        pipe.finish();
        // Only ASCII bytes were inserted next to ASCII bytes, so the output
        // is still valid UTF-8; the lossy conversion never replaces anything.
        self.out = String::from_utf8(pipe.out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    }

    /// The tokenized text (tokens separated by Python whitespace).
    pub(crate) fn text(&self) -> &str {
        &self.out
    }
}

/// Passes 2 to 4 of 13a as streaming stages. Each stage is `re.sub` for a
/// two-character pattern: it holds back one byte, and when the next byte
/// completes a match it emits the replacement and holds nothing (so the
/// match does not overlap the next one), else it emits the held byte and
/// holds the new one.
struct Pipe {
    p2: Option<u8>,
    p3: Option<u8>,
    p4: Option<u8>,
    out: Vec<u8>,
}

impl Pipe {
    /// Whether every stage holds a byte that cannot start a match, so that
    /// inert input just shifts through the three one-byte delays.
    #[inline]
    fn inert(&self) -> bool {
        [self.p2, self.p3, self.p4]
            .iter()
            .all(|p| p.is_some_and(is_stage_plain))
    }

    /// Feeds inert bytes while [`Self::inert`] holds: nothing can match, so
    /// the stages act as a three-byte delay line.
    fn pass_through(&mut self, run: &[u8]) {
        let (Some(p4), Some(p3), Some(p2)) = (self.p4, self.p3, self.p2) else {
            run.iter().for_each(|&b| self.s2(b));
            return;
        };
        let held = [p4, p3, p2];
        let k = run.len();
        if k >= 3 {
            self.out.extend_from_slice(&held);
            self.out.extend_from_slice(&run[..k - 3]);
            (self.p4, self.p3, self.p2) = (Some(run[k - 3]), Some(run[k - 2]), Some(run[k - 1]));
        } else {
            let mut seq = [0u8; 5];
            seq[..3].copy_from_slice(&held);
            seq[3..3 + k].copy_from_slice(run);
            self.out.extend_from_slice(&seq[..k]);
            (self.p4, self.p3, self.p2) = (Some(seq[k]), Some(seq[k + 1]), Some(seq[k + 2]));
        }
    }

    /// `([^0-9])([\.,])` -> `\1 \2 `
    #[inline]
    fn s2(&mut self, x: u8) {
        match self.p2.take() {
            Some(p) if !p.is_ascii_digit() && matches!(x, b'.' | b',') => {
                self.s3(p);
                self.s3(b' ');
                self.s3(x);
                self.s3(b' ');
            }
            Some(p) => {
                self.s3(p);
                self.p2 = Some(x);
            }
            None => self.p2 = Some(x),
        }
    }

    /// `([\.,])([^0-9])` -> ` \1 \2`
    #[inline]
    fn s3(&mut self, x: u8) {
        match self.p3.take() {
            Some(p) if matches!(p, b'.' | b',') && !x.is_ascii_digit() => {
                self.s4(b' ');
                self.s4(p);
                self.s4(b' ');
                self.s4(x);
            }
            Some(p) => {
                self.s4(p);
                self.p3 = Some(x);
            }
            None => self.p3 = Some(x),
        }
    }

    /// `([0-9])(-)` -> `\1 \2 `
    #[inline]
    fn s4(&mut self, x: u8) {
        match self.p4.take() {
            Some(p) if p.is_ascii_digit() && x == b'-' => {
                self.out.extend_from_slice(&[p, b' ', x, b' ']);
            }
            Some(p) => {
                self.out.push(p);
                self.p4 = Some(x);
            }
            None => self.p4 = Some(x),
        }
    }

    /// Flushes the held bytes, stage by stage.
    fn finish(&mut self) {
        if let Some(p) = self.p2.take() {
            self.s3(p);
        }
        if let Some(p) = self.p3.take() {
            self.s4(p);
        }
        if let Some(p) = self.p4.take() {
            self.out.push(p);
        }
    }
}

/// Which tokenizer turns a text into BLEU tokens.
///
/// ```
/// use assay_text::tokenize::BleuTokenizer;
/// let t: BleuTokenizer = "regex".parse().unwrap();
/// assert_eq!(t, BleuTokenizer::Regex);
/// assert_eq!(t.to_string(), "regex");
/// assert_eq!(BleuTokenizer::Whitespace.tokenize("a  b"), ["a", "b"]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BleuTokenizer {
    /// valor-lite's regex tokenizer ([`regex_tokens`]).
    Regex,
    /// Python `str.split()` ([`python_split`]), as nltk examples and HF use.
    #[default]
    Whitespace,
}

impl BleuTokenizer {
    /// The tokens of `text`, lazily.
    pub fn tokens<'a>(&self, text: &'a str) -> Tokens<'a> {
        match self {
            BleuTokenizer::Regex => Tokens::Regex(regex_tokens(text)),
            BleuTokenizer::Whitespace => Tokens::Whitespace(python_split(text)),
        }
    }

    /// Tokenizes `text`.
    pub fn tokenize<'a>(&self, text: &'a str) -> Vec<&'a str> {
        let mut out = Vec::new();
        self.tokenize_into(text, &mut out);
        out
    }

    /// Tokenizes `text`, replacing the contents of `out` (reuses its buffer).
    pub fn tokenize_into<'a>(&self, text: &'a str, out: &mut Vec<&'a str>) {
        out.clear();
        out.extend(self.tokens(text));
    }
}

/// Iterator returned by [`BleuTokenizer::tokens`].
#[derive(Debug, Clone)]
pub enum Tokens<'a> {
    /// [`regex_tokens`].
    Regex(RegexTokens<'a>),
    /// [`python_split`].
    Whitespace(PythonSplit<'a>),
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        match self {
            Tokens::Regex(t) => t.next(),
            Tokens::Whitespace(t) => t.next(),
        }
    }
}

impl fmt::Display for BleuTokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BleuTokenizer::Regex => "regex",
            BleuTokenizer::Whitespace => "whitespace",
        })
    }
}

/// Error for an unknown tokenizer name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown BLEU tokenizer {0:?} (expected \"regex\" or \"whitespace\")")]
pub struct UnknownTokenizer(pub String);

impl FromStr for BleuTokenizer {
    type Err = UnknownTokenizer;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "regex" => Ok(BleuTokenizer::Regex),
            "whitespace" => Ok(BleuTokenizer::Whitespace),
            other => Err(UnknownTokenizer(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<&str> {
        python_split(s).collect()
    }

    fn regex(s: &str) -> Vec<&str> {
        regex_tokens(s).collect()
    }

    #[test]
    fn python_whitespace_set() {
        for c in [
            '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{1c}', '\u{1d}', '\u{1e}', '\u{1f}', ' ',
        ] {
            assert!(is_python_whitespace(c), "{c:?}");
        }
        for c in [
            '\u{85}', '\u{a0}', '\u{1680}', '\u{2000}', '\u{200a}', '\u{2028}', '\u{3000}',
        ] {
            assert!(is_python_whitespace(c), "{c:?}");
        }
        for c in ['\u{1b}', '\u{200b}', '\u{feff}', 'a', '\u{180e}'] {
            assert!(!is_python_whitespace(c), "{c:?}");
        }
    }

    #[test]
    fn python_whitespace_is_exactly_str_isspace() {
        // Every code point for which CPython 3.11's `str.isspace()` is true.
        let py: [(u32, u32); 10] = [
            (0x9, 0xD),
            (0x1C, 0x20),
            (0x85, 0x85),
            (0xA0, 0xA0),
            (0x1680, 0x1680),
            (0x2000, 0x200A),
            (0x2028, 0x2029),
            (0x202F, 0x202F),
            (0x205F, 0x205F),
            (0x3000, 0x3000),
        ];
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let want = py.iter().any(|&(lo, hi)| (lo..=hi).contains(&(c as u32)));
            assert_eq!(is_python_whitespace(c), want, "{:#x}", c as u32);
        }
    }

    #[test]
    fn split_on_unit_separator_and_unicode_spaces() {
        assert_eq!(split("a\u{1f}b\u{1c}c"), ["a", "b", "c"]);
        assert_eq!(split("\u{3000}x\u{a0}\u{85}y\u{2029}"), ["x", "y"]);
        assert_eq!(split("a\u{200b} b"), ["a\u{200b}", "b"]);
        assert!(split("").is_empty());
        assert!(split(" \t\n ").is_empty());
        assert_eq!(split("héllo wörld"), ["héllo", "wörld"]);
    }

    #[test]
    fn regex_tokenizer_alternatives() {
        assert_eq!(
            regex("The cat sat on the mat.\nIt was happy."),
            ["The", "cat", "sat", "on", "the", "mat", "It", "was", "happy"]
        );
        assert_eq!(regex("$100abc $x $"), ["$100", "abc", "$x", "$"]);
        assert_eq!(
            regex("(hello) a..b 1,000.5"),
            ["(hello)", "a", "b", "1", ",000", "5"]
        );
        assert_eq!(regex("x\u{1f}y z\u{a0}w"), ["x", "\u{1f}y", "z", "w"]);
        assert!(regex("...  ").is_empty());
    }

    #[test]
    fn regex_tokenizer_uses_regex_module_classes() {
        // A combining vowel sign is `\w`, so the syllable stays one token.
        assert_eq!(regex("किताब"), ["किताब"]);
        // Arabic-Indic digits are `\d`, so `$` + them is one token.
        assert_eq!(regex("$\u{663}\u{664}!"), ["$\u{663}\u{664}", "!"]);
        // Superscript two (category No) is neither `\w` nor `\d`.
        assert_eq!(regex("$\u{b2}"), ["$\u{b2}"]);
        assert_eq!(regex("a\u{b2}"), ["a", "\u{b2}"]);
    }

    #[test]
    fn tokenize_13a_edge_cases() {
        assert_eq!(tokenize_13a("&amp;lt;"), "<");
        assert_eq!(tokenize_13a("&quot;hi&quot; &gt;"), "\" hi \" >");
        assert_eq!(tokenize_13a("co-\noperate"), "cooperate");
        assert_eq!(tokenize_13a("line\nbreak<skipped>"), "line break");
        assert_eq!(tokenize_13a("a..b"), "a . . b");
        assert_eq!(tokenize_13a("end.."), "end . .");
        assert_eq!(tokenize_13a("1,000.5 costs 3.-"), "1,000.5 costs 3 . -");
        assert_eq!(tokenize_13a("x,y 2-3 a-b"), "x , y 2 - 3 a-b");
        assert_eq!(tokenize_13a("it's (ok) [1]"), "it's ( ok ) [ 1 ]");
        assert_eq!(tokenize_13a("é. ü,2"), "é . ü , 2");
        assert_eq!(tokenize_13a("a\u{1f}b"), "a b");
        assert_eq!(tokenize_13a(""), "");
    }

    #[test]
    fn bleu_tokenizer_round_trip() {
        for t in [BleuTokenizer::Regex, BleuTokenizer::Whitespace] {
            assert_eq!(t.to_string().parse::<BleuTokenizer>(), Ok(t));
        }
        assert!("13a".parse::<BleuTokenizer>().is_err());
    }
}
