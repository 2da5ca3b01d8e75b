//! BERT's uncased WordPiece tokenizer, read from a `tokenizer.json`.
//!
//! Reproduces the pipeline HuggingFace `tokenizers` runs for
//! all-MiniLM-L6-v2: the BERT normaliser (clean text, spaces around CJK
//! ideographs, lower case, accents stripped), the BERT pre-tokeniser
//! (split on whitespace, every punctuation character alone), greedy
//! longest-match WordPiece with `##` continuations, then `[CLS] ... [SEP]`.
//! No fixed-length padding: sentence-transformers pads per batch only.

use std::collections::HashMap;

use serde_json::Value;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// Words longer than this (in characters) become `[UNK]`, as upstream.
const MAX_WORD_CHARS: usize = 100;

/// A WordPiece vocabulary with its special tokens.
#[derive(Debug, Clone)]
pub(crate) struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
}

impl WordPiece {
    /// Reads the vocabulary of a `tokenizer.json` (WordPiece model).
    pub(crate) fn from_tokenizer_json(json: &Value) -> Result<Self, String> {
        let model = json.get("model").ok_or("no `model` section")?;
        if model.get("type").and_then(Value::as_str) != Some("WordPiece") {
            return Err("the tokenizer model is not WordPiece".into());
        }
        let vocab: HashMap<String, u32> = model
            .get("vocab")
            .and_then(Value::as_object)
            .ok_or("no `model.vocab` object")?
            .iter()
            .map(|(k, v)| {
                v.as_u64()
                    .and_then(|id| u32::try_from(id).ok())
                    .map(|id| (k.clone(), id))
                    .ok_or_else(|| format!("vocabulary id of {k:?} is not an integer"))
            })
            .collect::<Result<_, _>>()?;
        let id = |t: &str| {
            vocab
                .get(t)
                .copied()
                .ok_or_else(|| format!("special token {t} missing from the vocabulary"))
        };
        Ok(WordPiece {
            unk: id("[UNK]")?,
            cls: id("[CLS]")?,
            sep: id("[SEP]")?,
            vocab,
        })
    }

    /// Token ids of `text` framed by `[CLS]`/`[SEP]`, at most `max_len` ids.
    pub(crate) fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let budget = max_len.saturating_sub(2);
        let mut ids = Vec::with_capacity(text.len() / 3 + 2);
        ids.push(self.cls);
        'words: for word in pre_tokenize(&normalize(text)) {
            for id in self.word_pieces(&word) {
                if ids.len() > budget {
                    break 'words;
                }
                ids.push(id);
            }
        }
        ids.push(self.sep);
        ids
    }

    fn word_pieces(&self, word: &str) -> Vec<u32> {
        if word.chars().count() > MAX_WORD_CHARS {
            return vec![self.unk];
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut candidate = String::with_capacity(word.len() + 2);
        while start < word.len() {
            // Longest vocabulary entry starting at `start`.
            let mut end = word.len();
            let mut found = None;
            while end > start {
                candidate.clear();
                if start > 0 {
                    candidate.push_str("##");
                }
                candidate.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(candidate.as_str()) {
                    found = Some(id);
                    break;
                }
                end = word[..end]
                    .char_indices()
                    .next_back()
                    .map_or(start, |(i, _)| i);
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => return vec![self.unk],
            }
        }
        out
    }
}

/// The BERT normaliser, uncased flavour.
fn normalize(text: &str) -> String {
    let mut cleaned = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_cjk(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else if c.is_whitespace() {
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    cleaned
        .nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Words: whitespace-separated runs, with every punctuation character
/// split off on its own.
fn pre_tokenize(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if c.is_whitespace() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
        } else if is_punctuation(c) {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            words.push(c.to_string());
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Control characters other than the whitespace ones (which become spaces).
fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    c.is_control() || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{feff}')
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// ASCII symbols count as punctuation (as BERT does); beyond ASCII, the
/// blocks of Unicode punctuation (general category P*) that occur in text.
fn is_punctuation(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    matches!(c as u32,
        0xA1 | 0xA7 | 0xAB | 0xB6 | 0xB7 | 0xBB | 0xBF | 0x37E | 0x387
        | 0x55A..=0x55F | 0x589 | 0x58A | 0x5BE | 0x5C0 | 0x5C3 | 0x5C6 | 0x5F3 | 0x5F4
        | 0x609 | 0x60A | 0x60C | 0x60D | 0x61B | 0x61E | 0x61F | 0x66A..=0x66D | 0x6D4
        | 0x964 | 0x965 | 0x970 | 0xE4F | 0xE5A | 0xE5B
        | 0x2010..=0x2027 | 0x2030..=0x2043 | 0x2045..=0x2051 | 0x2053..=0x205E
        | 0x207D | 0x207E | 0x208D | 0x208E | 0x2308..=0x230B | 0x2329 | 0x232A
        | 0x2768..=0x2775 | 0x27C5 | 0x27C6 | 0x27E6..=0x27EF | 0x2983..=0x2998
        | 0x29D8..=0x29DB | 0x29FC | 0x29FD | 0x2CF9..=0x2CFC | 0x2CFE | 0x2CFF
        | 0x2E00..=0x2E2E | 0x2E30..=0x2E4F | 0x3001..=0x3003 | 0x3008..=0x3011
        | 0x3014..=0x301F | 0x3030 | 0x303D | 0x30A0 | 0x30FB
        | 0xFE10..=0xFE19 | 0xFE30..=0xFE52 | 0xFE54..=0xFE61 | 0xFE63 | 0xFE68 | 0xFE6A | 0xFE6B
        | 0xFF01..=0xFF03 | 0xFF05..=0xFF0A | 0xFF0C..=0xFF0F | 0xFF1A | 0xFF1B | 0xFF1F | 0xFF20
        | 0xFF3B..=0xFF3D | 0xFF3F | 0xFF5B | 0xFF5D | 0xFF5F..=0xFF65)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPiece {
        let vocab = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "man", "is", "eat", "##ing", "food", ".",
            "cafe", "un", "##aff", "##able", "!", "中",
        ];
        let json = serde_json::json!({
            "model": {
                "type": "WordPiece",
                "vocab": vocab.iter().enumerate().map(|(i, t)| (t.to_string(), serde_json::json!(i)))
                    .collect::<serde_json::Map<_, _>>()
            }
        });
        WordPiece::from_tokenizer_json(&json).unwrap()
    }

    #[test]
    fn words_split_into_longest_pieces() {
        let wp = tiny();
        assert_eq!(
            wp.encode("A man is eating food.", 256),
            vec![2, 4, 5, 6, 7, 8, 9, 10, 3]
        );
        assert_eq!(wp.encode("unaffable!", 256), vec![2, 12, 13, 14, 15, 3]);
        // No piece for "x": the whole word is unknown.
        assert_eq!(wp.encode("eatx", 256), vec![2, 1, 3]);
    }

    #[test]
    fn normalisation_lowercases_strips_accents_and_spaces_cjk() {
        assert_eq!(normalize("Café\tÅ\u{0}"), "cafe a");
        assert_eq!(tiny().encode("CAFÉ中a", 256), vec![2, 11, 16, 4, 3]);
        assert_eq!(
            pre_tokenize("hi,there  “x”"),
            vec!["hi", ",", "there", "“", "x", "”"]
        );
    }

    #[test]
    fn long_input_is_truncated_with_sep_kept() {
        let ids = tiny().encode(&"man ".repeat(500), 8);
        assert_eq!(ids.len(), 8);
        assert_eq!((ids[0], ids[7]), (2, 3));
    }
}
