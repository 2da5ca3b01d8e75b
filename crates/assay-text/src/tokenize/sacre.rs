//! sacreBLEU 2.6.0's tokenizers that need no external model
//! (`sacrebleu/tokenizers/`): `none`, `13a`, `intl`, `zh` and `char`.

use std::fmt;
use std::str::FromStr;

use super::{in_table, intl_tables, is_python_whitespace, python_split, Buf13a, Padding};

/// A sacreBLEU tokenizer, named as sacreBLEU names it (`BLEU(tokenize=...)`
/// and the signature's `tok:` field).
///
/// ```
/// use assay_text::tokenize::SacreTokenizer;
/// let t: SacreTokenizer = "zh".parse().unwrap();
/// assert_eq!(t.to_string(), "zh");
/// assert_eq!(t.tokenize("我爱Python 3.11。"), "我 爱 Python 3.11 。");
/// assert_eq!(SacreTokenizer::Intl.tokenize("a€1,5."), "a € 1,5.");
/// assert_eq!(SacreTokenizer::default(), SacreTokenizer::Mteval13a);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SacreTokenizer {
    /// `none`: the line as it is; BLEU then splits it on white space.
    None,
    /// `13a` (the default): mteval-v13a, see [`super::tokenize_13a`].
    #[default]
    Mteval13a,
    /// `intl`: mteval-v14's international tokenization. Punctuation
    /// (Unicode category P) is split off unless a number (category N)
    /// stands on that side, so `1,000.5` stays whole; every symbol
    /// (category S: currency, math, emoji, ...) is a token of its own.
    /// The categories are those of the Python `regex` module 2026.11.15.
    Intl,
    /// `zh`: `strip()`, then each Chinese character (sacreBLEU's own table
    /// of ranges, which also takes CJK and full-width punctuation, and, by
    /// a quirk of that table, every code point from U+2001 to U+2A6D) is
    /// spaced apart, then 13a's punctuation rules run on the result,
    /// without 13a's entity and line-break handling and without its
    /// surrounding spaces.
    Zh,
    /// `char`: every character is a token (white space separates them).
    Char,
}

impl SacreTokenizer {
    /// Every tokenizer, in sacreBLEU's order of `none`, `zh`, `13a`,
    /// `intl`, `char`.
    pub const ALL: [SacreTokenizer; 5] = [
        SacreTokenizer::None,
        SacreTokenizer::Zh,
        SacreTokenizer::Mteval13a,
        SacreTokenizer::Intl,
        SacreTokenizer::Char,
    ];

    /// The name sacreBLEU gives it (its `signature()`).
    pub fn name(self) -> &'static str {
        match self {
            SacreTokenizer::None => "none",
            SacreTokenizer::Mteval13a => "13a",
            SacreTokenizer::Intl => "intl",
            SacreTokenizer::Zh => "zh",
            SacreTokenizer::Char => "char",
        }
    }

    /// What sacreBLEU's tokenizer returns for `line`, as a string: BLEU's
    /// tokens are its `str.split()`. (`none` returns the line unchanged and
    /// `char` joins every character, white space included, with spaces, as
    /// sacreBLEU does; the others join their tokens with single spaces.)
    pub fn tokenize(self, line: &str) -> String {
        match self {
            SacreTokenizer::None => line.to_string(),
            SacreTokenizer::Char => {
                let mut out = String::with_capacity(line.len() * 2);
                for (i, c) in line.chars().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push(c);
                }
                out
            }
            _ => {
                let mut buf = SacreBuf::default();
                let text = buf.run(self, line);
                python_split(text).collect::<Vec<_>>().join(" ")
            }
        }
    }
}

impl fmt::Display for SacreTokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for a tokenizer name sacreBLEU (without external models) lacks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sacreBLEU tokenizer {0:?} (expected one of: none, 13a, intl, zh, char)")]
pub struct UnknownSacreTokenizer(pub String);

impl FromStr for SacreTokenizer {
    type Err = UnknownSacreTokenizer;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SacreTokenizer::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| UnknownSacreTokenizer(s.to_string()))
    }
}

/// Reusable buffers for the tokenizers, so that scoring many segments does
/// not allocate per segment.
#[derive(Debug, Default)]
pub(crate) struct SacreBuf {
    mteval: Buf13a,
    out: String,
    tmp: String,
}

impl SacreBuf {
    /// Tokenizes `line`: BLEU's tokens are `python_split` of the result.
    pub(crate) fn run<'a>(&'a mut self, tokenizer: SacreTokenizer, line: &'a str) -> &'a str {
        match tokenizer {
            SacreTokenizer::None => line,
            SacreTokenizer::Mteval13a => {
                self.mteval.run(line);
                self.mteval.text()
            }
            SacreTokenizer::Zh => {
                self.tmp.clear();
                for c in line.trim_matches(is_python_whitespace).chars() {
                    if is_zh_char(c) {
                        self.tmp.push(' ');
                        self.tmp.push(c);
                        self.tmp.push(' ');
                    } else {
                        self.tmp.push(c);
                    }
                }
                self.mteval.regexp(&self.tmp, Padding::None);
                self.mteval.text()
            }
            SacreTokenizer::Intl => {
                intl(line, &mut self.out, &mut self.tmp);
                &self.out
            }
            SacreTokenizer::Char => {
                // `" ".join(line)` then `split()`: white space vanishes and
                // every other character stands alone.
                self.out.clear();
                for c in line.chars().filter(|&c| !is_python_whitespace(c)) {
                    self.out.push(c);
                    self.out.push(' ');
                }
                &self.out
            }
        }
    }
}

fn is_punctuation(c: char) -> bool {
    in_table(c, intl_tables::PUNCTUATION)
}

fn is_symbol(c: char) -> bool {
    in_table(c, intl_tables::SYMBOL)
}

fn is_number(c: char) -> bool {
    in_table(c, intl_tables::NUMBER)
}

/// `regex.sub` of a two-character pattern, left to right and
/// non-overlapping: where `hit(a, b)` holds for the next two characters
/// they are replaced by `replace`, else one character is copied.
fn sub_pairs(
    input: &str,
    out: &mut String,
    hit: impl Fn(char, char) -> bool,
    replace: impl Fn(&mut String, char, char),
) {
    out.clear();
    let mut chars = input.chars().peekable();
    while let Some(a) = chars.next() {
        match chars.peek() {
            Some(&b) if hit(a, b) => {
                replace(out, a, b);
                chars.next();
            }
            _ => out.push(a),
        }
    }
}

/// sacreBLEU's `TokenizerV14International`, leaving the result in `out`
/// (tokens separated by white space).
fn intl(line: &str, out: &mut String, tmp: &mut String) {
    // (\P{N})(\p{P}) -> "\1 \2 "
    sub_pairs(
        line,
        tmp,
        |a, b| !is_number(a) && is_punctuation(b),
        |o, a, b| {
            o.push(a);
            o.push(' ');
            o.push(b);
            o.push(' ');
        },
    );
    // (\p{P})(\P{N}) -> " \1 \2"
    sub_pairs(
        tmp,
        out,
        |a, b| is_punctuation(a) && !is_number(b),
        |o, a, b| {
            o.push(' ');
            o.push(a);
            o.push(' ');
            o.push(b);
        },
    );
    // (\p{S}) -> " \1 "
    if out.chars().any(is_symbol) {
        tmp.clear();
        for c in out.chars() {
            if is_symbol(c) {
                tmp.push(' ');
                tmp.push(c);
                tmp.push(' ');
            } else {
                tmp.push(c);
            }
        }
        std::mem::swap(out, tmp);
    }
}

/// sacreBLEU's `_UCODE_RANGES` for `zh`, as Python compares a character
/// with them (`start <= uchar <= end` on strings). Two entries are written
/// with five hex digits after `\u`, which Python reads as a four-digit
/// escape and a digit: `'\u20000'` is U+2000 followed by `0`, so
/// `'\u20000' <= c <= '\u2a6d6'` holds for every c from U+2001 to U+2A6D
/// (general punctuation, currency, arrows, math, ...), and likewise
/// `'\u2f800'..'\u2fa1d'` for U+2F81 to U+2FA1; CJK Extension B itself is not
/// covered. A test compares every code point with sacreBLEU's function.
const ZH_RANGES: &[(u32, u32)] = &[
    (0x3400, 0x4DB5),
    (0x4E00, 0x9FA5),
    (0x9FA6, 0x9FBB),
    (0xF900, 0xFA2D),
    (0xFA30, 0xFA6A),
    (0xFA70, 0xFAD9),
    (0x2001, 0x2A6D),
    (0x2F81, 0x2FA1),
    (0xFF00, 0xFFEF),
    (0x2E80, 0x2EFF),
    (0x3000, 0x303F),
    (0x31C0, 0x31EF),
    (0x2F00, 0x2FDF),
    (0x2FF0, 0x2FFF),
    (0x3100, 0x312F),
    (0x31A0, 0x31BF),
    (0xFE10, 0xFE1F),
    (0xFE30, 0xFE4F),
    (0x2600, 0x26FF),
    (0x2700, 0x27BF),
    (0x3200, 0x32FF),
    (0x3300, 0x33FF),
];

/// sacreBLEU's `TokenizerZh._is_chinese_char`.
fn is_zh_char(c: char) -> bool {
    let c = u32::from(c);
    c > 0x2000 && ZH_RANGES.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(t: SacreTokenizer, line: &str) -> Vec<String> {
        let mut buf = SacreBuf::default();
        python_split(buf.run(t, line)).map(str::to_string).collect()
    }

    #[test]
    fn names_round_trip() {
        for t in SacreTokenizer::ALL {
            assert_eq!(t.to_string().parse::<SacreTokenizer>(), Ok(t));
        }
        let err = "ja-mecab".parse::<SacreTokenizer>().unwrap_err();
        assert!(
            err.to_string().contains("none, 13a, intl, zh, char"),
            "{err}"
        );
    }

    #[test]
    fn intl_keeps_numbers_together_and_splits_symbols() {
        let t = SacreTokenizer::Intl;
        // Worked examples, checked against sacreBLEU 2.6.0.
        assert_eq!(
            t.tokenize("Hello, world! 1,000.5 costs $3."),
            "Hello , world ! 1,000.5 costs $ 3."
        );
        assert_eq!(t.tokenize("«Да»—нет"), "« Да » — нет");
        // A punctuation mark after a digit is split off when no digit
        // follows it.
        assert_eq!(t.tokenize("٩٥٪ 👍🏽"), "٩٥ ٪ 👍 🏽");
        assert_eq!(t.tokenize("a.b"), "a . b");
    }

    #[test]
    fn zh_spaces_chinese_characters_and_keeps_13a_rules_without_padding() {
        let t = SacreTokenizer::Zh;
        assert_eq!(t.tokenize("  你好，世界！ "), "你 好 ， 世 界 ！");
        // No surrounding spaces: a final "5." and a leading ".5" stay whole,
        // where 13a splits them.
        assert_eq!(t.tokenize("5."), "5.");
        assert_eq!(SacreTokenizer::Mteval13a.tokenize("5."), "5 .");
        assert_eq!(t.tokenize(".5"), ".5");
        // U+2014 is "Chinese" by the table's quirk; 𠮷 (Extension B) is not.
        assert_eq!(t.tokenize("a—b𠮷c"), "a — b𠮷c");
        // No entity handling: `&` and `;` are 13a punctuation.
        assert_eq!(t.tokenize("&amp;"), "& amp ;");
    }

    #[test]
    fn char_and_none() {
        assert_eq!(
            tokens(SacreTokenizer::Char, "ab c\u{3000}d"),
            ["a", "b", "c", "d"]
        );
        assert_eq!(SacreTokenizer::Char.tokenize("ab c"), "a b   c");
        assert_eq!(tokens(SacreTokenizer::None, " a,b  c "), ["a,b", "c"]);
        assert_eq!(SacreTokenizer::None.tokenize(" a "), " a ");
    }

    /// The tables against what sacreBLEU's `_is_chinese_char` and the
    /// `regex` classes say of every code point
    /// (`tests/data/parity/tokenize_parity.json`).
    #[test]
    fn tables_match_every_code_point() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/parity/tokenize_parity.json"
        );
        let text = std::fs::read_to_string(path).expect("fixture");
        let fixture: serde_json::Value = serde_json::from_str(&text).expect("json");
        type Class = fn(char) -> bool;
        let checks: [(&str, Class); 4] = [
            ("zh_chinese", is_zh_char),
            ("intl_punctuation", is_punctuation),
            ("intl_symbol", is_symbol),
            ("intl_number", is_number),
        ];
        for (name, f) in checks {
            let ranges: Vec<(u32, u32)> = fixture["tables"][name]
                .as_array()
                .expect(name)
                .iter()
                .map(|r| {
                    let lo = r[0].as_u64().expect("lo") as u32;
                    let hi = r[1].as_u64().expect("hi") as u32;
                    (lo, hi)
                })
                .collect();
            for c in (0..=0x10FFFF).filter_map(char::from_u32) {
                let want = ranges
                    .iter()
                    .any(|&(lo, hi)| (lo..=hi).contains(&u32::from(c)));
                assert_eq!(f(c), want, "{name} U+{:04X}", u32::from(c));
            }
        }
    }
}
