//! ROUGE exactly as Google's `rouge-score` 0.1.2 computes it (the package
//! behind Hugging Face `evaluate`'s "rouge"), only much faster.
//!
//! - Tokens are the runs of `[a-z0-9]` after Unicode lowercasing; every
//!   other character separates them, so text without ASCII letters or
//!   digits (Cyrillic, CJK, ...) has no tokens and scores 0. Other
//!   tokenizers: [`RougeTokenizer`] (assay's own, for other scripts), or
//!   the caller's tokens ([`RougeScorer::score_multi_tokens`], which is how
//!   rouge-score's `tokenizer=` is honoured).
//! - With [`Stemming::Porter`], tokens longer than three characters go
//!   through NLTK's Porter stemmer ([`crate::porter`]).
//! - rougeN (N = 1..=9) is clipped n-gram overlap, rougeL the LCS over the
//!   whole texts, rougeLsum the summary-level union LCS over the
//!   `\n`-separated lines.
//! - [`RougeScorer::score_multi`] picks, for each ROUGE type separately, the
//!   reference with the highest F-measure (the first one on ties).
//!
//! ```
//! use assay_text::rouge::{RougeScorer, RougeType, Stemming};
//!
//! let types: Vec<RougeType> = ["rouge1", "rougeL"]
//!     .iter()
//!     .map(|t| t.parse())
//!     .collect::<Result<_, _>>()?;
//! let scorer = RougeScorer::new(&types, Stemming::Porter)?;
//! let scores = scorer.score_multi(
//!     &["The cat sat on the mat.", "A cat was sitting on a mat."],
//!     "the cats sat on the mat",
//! );
//! assert_eq!(scores[0].fmeasure, 1.0);
//! # Ok::<(), assay_text::rouge::RougeError>(())
//! ```

mod lcs;
mod ngram;
mod vocab;

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::str::FromStr;

use lcs::{BitLcs, SummaryLcs};
use ngram::NgramIndex;
use vocab::{Side, Vocab, NONE};

use crate::tokenize::{is_word, python_lower, python_split};

/// One ROUGE variant, named as in rouge-score (`rouge1`..`rouge9`,
/// `rougeL`, `rougeLsum`).
///
/// ```
/// use assay_text::rouge::RougeType;
/// let t: RougeType = "rougeLsum".parse()?;
/// assert_eq!(t, RougeType::Lsum);
/// assert_eq!(RougeType::N(2).to_string(), "rouge2");
/// # Ok::<(), assay_text::rouge::RougeError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RougeType {
    /// rougeN: n-gram overlap, N in `1..=9` (rouge-score accepts one digit
    /// and rejects 0).
    N(u8),
    /// rougeL: longest common subsequence of the whole token lists.
    L,
    /// rougeLsum: summary-level LCS over the `\n`-separated lines.
    Lsum,
}

impl RougeType {
    /// Largest N that rouge-score accepts.
    pub const MAX_N: u8 = 9;

    /// Hugging Face `evaluate`'s default set: rouge1, rouge2, rougeL,
    /// rougeLsum.
    pub const DEFAULT: [RougeType; 4] = [
        RougeType::N(1),
        RougeType::N(2),
        RougeType::L,
        RougeType::Lsum,
    ];
}

impl fmt::Display for RougeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RougeType::N(n) => write!(f, "rouge{n}"),
            RougeType::L => f.write_str("rougeL"),
            RougeType::Lsum => f.write_str("rougeLsum"),
        }
    }
}

impl FromStr for RougeType {
    type Err = RougeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "rougeL" => Ok(RougeType::L),
            "rougeLsum" => Ok(RougeType::Lsum),
            _ => match s.strip_prefix("rouge").map(str::as_bytes) {
                Some(&[d @ b'1'..=b'9']) => Ok(RougeType::N(d - b'0')),
                _ => Err(RougeError::UnknownType(s.to_string())),
            },
        }
    }
}

/// Whether tokens are stemmed before matching (rouge-score's
/// `use_stemmer`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Stemming {
    /// Match tokens as they are (`use_stemmer=False`, the default).
    #[default]
    Off,
    /// NLTK's Porter stemmer on tokens longer than three characters
    /// (`use_stemmer=True`).
    Porter,
}

impl fmt::Display for Stemming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stemming::Off => "off",
            Stemming::Porter => "porter",
        })
    }
}

impl FromStr for Stemming {
    type Err = RougeError;

    /// Parses `off` or `porter`, as [`Stemming`]'s `Display` writes them.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "off" => Ok(Stemming::Off),
            "porter" => Ok(Stemming::Porter),
            _ => Err(RougeError::UnknownStemming(s.to_string())),
        }
    }
}

/// How [`RougeScorer`] turns a text into tokens. Every tokenizer works
/// line by line (rougeLsum's sentences are the `\n`-separated lines), and
/// with [`Stemming::Porter`] stems the tokens of `[a-z0-9]` longer than
/// three characters, as rouge-score stems its own.
///
/// ```
/// use assay_text::rouge::{RougeTokenizer, Stemming};
/// let t: RougeTokenizer = "unicode".parse()?;
/// assert_eq!(t.tokenize("Привет, МИР! 北京欢迎你", Stemming::Off), ["привет", "мир", "北", "京", "欢", "迎", "你"]);
/// assert_eq!(t.tokenize("किताबें पढ़ो।", Stemming::Off), ["किताबें", "पढ़ो"]);
/// assert_eq!(RougeTokenizer::Char.tokenize("Ab, 猫!", Stemming::Off), ["a", "b", "猫"]);
/// assert_eq!(RougeTokenizer::Whitespace.tokenize("A,b  c", Stemming::Off), ["a,b", "c"]);
/// # Ok::<(), assay_text::rouge::RougeError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RougeTokenizer {
    /// rouge-score's own (`default`): lowercased runs of `[a-z0-9]`, so any
    /// other script has no tokens.
    #[default]
    Default,
    /// `unicode`: Python's `str.lower()`, then the runs of letters, marks
    /// and digits of any script (the `\w` class without connector
    /// punctuation such as `_`), except that each Chinese character and
    /// kana is a token of its own, since those scripts put no spaces
    /// between words. Vowel signs and other combining marks stay in their
    /// word (Hindi, Arabic with diacritics).
    Unicode,
    /// `whitespace`: Python's `str.lower()`, then `str.split()`: for text
    /// already tokenized (by a segmenter, say), punctuation included.
    Whitespace,
    /// `char`: Python's `str.lower()`, then each letter, mark or digit a
    /// token (code points; punctuation, symbols and white space dropped):
    /// character-level ROUGE, as often reported for Chinese.
    Char,
}

impl RougeTokenizer {
    /// Every tokenizer.
    pub const ALL: [RougeTokenizer; 4] = [
        RougeTokenizer::Default,
        RougeTokenizer::Unicode,
        RougeTokenizer::Whitespace,
        RougeTokenizer::Char,
    ];

    /// Its name, as `--set rouge.tokenizer=` takes it.
    pub fn name(self) -> &'static str {
        match self {
            RougeTokenizer::Default => "default",
            RougeTokenizer::Unicode => "unicode",
            RougeTokenizer::Whitespace => "whitespace",
            RougeTokenizer::Char => "char",
        }
    }

    /// The tokens of `text` (all lines together).
    pub fn tokenize(self, text: &str, stemming: Stemming) -> Vec<String> {
        match self {
            RougeTokenizer::Default => tokenize(text, stemming),
            _ => {
                let mut out = Vec::new();
                self.tokenize_line(text, stemming, &mut out);
                out
            }
        }
    }

    /// The tokens of one line, appended to `out` (not for `Default`, which
    /// has its own fast path).
    fn tokenize_line(self, line: &str, stemming: Stemming, out: &mut Vec<String>) {
        let lower = python_lower(line);
        let start = out.len();
        match self {
            RougeTokenizer::Default => out.extend(tokenize(line, stemming)),
            RougeTokenizer::Whitespace => out.extend(python_split(&lower).map(str::to_string)),
            RougeTokenizer::Char => {
                out.extend(
                    lower
                        .chars()
                        .filter(|&c| is_letter_or_digit(c))
                        .map(String::from),
                );
            }
            RougeTokenizer::Unicode => {
                let mut word = String::new();
                for c in lower.chars() {
                    if is_letter_or_digit(c) && !unspaced(c) {
                        word.push(c);
                        continue;
                    }
                    if !word.is_empty() {
                        out.push(std::mem::take(&mut word));
                    }
                    if unspaced(c) {
                        out.push(String::from(c));
                    }
                }
                if !word.is_empty() {
                    out.push(word);
                }
            }
        }
        if stemming == Stemming::Porter && self != RougeTokenizer::Default {
            for token in &mut out[start..] {
                if token.len() > 3
                    && token
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                {
                    let mut bytes = std::mem::take(token).into_bytes();
                    crate::porter::stem_ascii_lower(&mut bytes);
                    *token = String::from_utf8(bytes).unwrap_or_default();
                }
            }
            // rouge-score drops a token whose stem is empty.
            let stemmed: Vec<String> = out.drain(start..).filter(|t| !t.is_empty()).collect();
            out.extend(stemmed);
        }
    }
}

/// A letter, mark or digit of any script: the `\w` class of the Python
/// `regex` module without connector punctuation (`_`, `‿`, ...).
fn is_letter_or_digit(c: char) -> bool {
    is_word(c)
        && !matches!(
            c,
            '_' | '\u{203f}'
                | '\u{2040}'
                | '\u{2054}'
                | '\u{fe33}'
                | '\u{fe34}'
                | '\u{fe4d}'
                | '\u{fe4e}'
                | '\u{fe4f}'
                | '\u{ff3f}'
        )
}

/// A character of a script written without spaces between words: CJK
/// ideographs and the Japanese kana; each is a token of its own.
fn unspaced(c: char) -> bool {
    matches!(c,
        '\u{3005}' | '\u{3007}' // ideographic iteration mark and zero
        | '\u{3040}'..='\u{30ff}' // hiragana, katakana
        | '\u{31f0}'..='\u{31ff}' // katakana phonetic extensions
        | '\u{3400}'..='\u{4dbf}' // CJK extension A
        | '\u{4e00}'..='\u{9fff}' // CJK unified ideographs
        | '\u{f900}'..='\u{faff}' // CJK compatibility ideographs
        | '\u{ff66}'..='\u{ff9f}' // half-width katakana
        | '\u{1b000}'..='\u{1b16f}' // kana supplement and extensions
        | '\u{20000}'..='\u{3ffff}') // CJK extensions B and later
}

impl fmt::Display for RougeTokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RougeTokenizer {
    type Err = RougeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RougeTokenizer::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| RougeError::UnknownTokenizer(s.to_string()))
    }
}

/// A text tokenized by the caller: its tokens as a whole (for rougeN and
/// rougeL) and the tokens of each of its sentences (for rougeLsum), as
/// rouge-score gets them from a `tokenizer=` object: `tokenize(text)` and
/// `tokenize(line)` for each non-empty `\n`-separated line. Tokens are
/// compared with `==` (and hashed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tokenized<T> {
    /// The whole text's tokens.
    pub tokens: Vec<T>,
    /// Each sentence's tokens.
    pub sentences: Vec<Vec<T>>,
}

impl<T: PartialEq> Tokenized<T> {
    /// Whether the sentences' tokens, end to end, are the whole text's.
    fn sentences_make_tokens(&self) -> bool {
        self.sentences.iter().flatten().eq(self.tokens.iter())
    }
}

/// What can go wrong when configuring ROUGE.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RougeError {
    /// A type name that is not `rouge1`..`rouge9`, `rougeL` or `rougeLsum`.
    #[error("unknown ROUGE type {0:?}: expected rouge1..rouge9, rougeL or rougeLsum")]
    UnknownType(String),
    /// A stemming name other than `off` or `porter`.
    #[error("unknown stemming {0:?}: expected off or porter")]
    UnknownStemming(String),
    /// A tokenizer name other than those of [`RougeTokenizer`].
    #[error("unknown ROUGE tokenizer {0:?}: expected one of default, unicode, whitespace, char")]
    UnknownTokenizer(String),
    /// [`RougeType::N`] with N outside `1..=9`.
    #[error("ROUGE-N order {0} is outside 1..=9")]
    NgramOrder(u8),
}

/// Precision, recall and F1 of one ROUGE type.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Prf {
    /// Matched units over the prediction's units.
    pub precision: f64,
    /// Matched units over the reference's units.
    pub recall: f64,
    /// Harmonic mean of precision and recall; 0 when both are 0.
    pub fmeasure: f64,
}

impl Prf {
    /// Scores `hits` matched units out of `predicted` and `referenced`
    /// (each denominator at least 1, as rouge-score's rougeN does), with
    /// F computed in rouge-score's order of operations so results are
    /// bit-identical.
    fn from_counts(hits: usize, predicted: usize, referenced: usize) -> Prf {
        let precision = hits as f64 / predicted.max(1) as f64;
        let recall = hits as f64 / referenced.max(1) as f64;
        let fmeasure = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        Prf {
            precision,
            recall,
            fmeasure,
        }
    }
}

/// Tokenizes `text` the way rouge-score does (see the module docs).
///
/// ```
/// use assay_text::rouge::{tokenize, Stemming};
/// assert_eq!(tokenize("Don't STOP, café!", Stemming::Off), ["don", "t", "stop", "caf"]);
/// assert_eq!(tokenize("running dogs", Stemming::Porter), ["run", "dog"]);
/// assert!(tokenize("Привет мир", Stemming::Off).is_empty());
/// ```
pub fn tokenize(text: &str, stemming: Stemming) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut buf = vocab::TokenBuf::default();
    vocab::for_each_raw_token(text, &mut buf, |token, _| {
        let mut token = token.to_vec();
        if stemming == Stemming::Porter && token.len() > 3 {
            crate::porter::stem_ascii_lower(&mut token);
        }
        if !token.is_empty() {
            tokens.push(String::from_utf8_lossy(&token).into_owned());
        }
    });
    tokens
}

/// Computes a fixed set of ROUGE types, like rouge-score's `RougeScorer`.
///
/// With [`Stemming::Porter`] the scorer memoises stems across calls
/// (bounded: the cache starts afresh past 65,536 words), so reuse one
/// scorer for many pairs. It keeps scratch buffers too, which makes it
/// `Send` but not `Sync`: give each thread its own.
pub struct RougeScorer {
    types: Vec<RougeType>,
    stemming: Stemming,
    tokenizer: RougeTokenizer,
    /// Largest n-gram order needed (at least 1 when rougeLsum needs the
    /// prediction's token counts).
    levels: usize,
    state: RefCell<State>,
}

/// Caches and scratch buffers, borrowed for each call.
#[derive(Default)]
struct State {
    vocab: Vocab,
    ngrams: NgramIndex,
    lcs: BitLcs,
    summary: SummaryLcs,
    pred: Vec<u32>,
    pred_lines: Vec<u32>,
    reference: Vec<u32>,
    ref_lines: Vec<u32>,
    hits: Vec<usize>,
}

impl RougeScorer {
    /// A scorer for `types` (scores come back in this order).
    ///
    /// # Errors
    /// [`RougeError::NgramOrder`] for a [`RougeType::N`] outside `1..=9`.
    pub fn new(types: &[RougeType], stemming: Stemming) -> Result<Self, RougeError> {
        let mut levels = 0;
        for t in types {
            match *t {
                RougeType::N(n) if n == 0 || n > RougeType::MAX_N => {
                    return Err(RougeError::NgramOrder(n));
                }
                RougeType::N(n) => levels = levels.max(usize::from(n)),
                RougeType::Lsum => levels = levels.max(1),
                RougeType::L => {}
            }
        }
        Ok(RougeScorer {
            types: types.to_vec(),
            stemming,
            tokenizer: RougeTokenizer::Default,
            levels,
            state: RefCell::new(State::default()),
        })
    }

    /// The configured ROUGE types, in output order.
    pub fn types(&self) -> &[RougeType] {
        &self.types
    }

    /// The configured stemming.
    pub fn stemming(&self) -> Stemming {
        self.stemming
    }

    /// The same scorer with another tokenizer (rouge-score's is the
    /// default).
    pub fn with_tokenizer(mut self, tokenizer: RougeTokenizer) -> Self {
        self.tokenizer = tokenizer;
        self
    }

    /// The configured tokenizer.
    pub fn tokenizer(&self) -> RougeTokenizer {
        self.tokenizer
    }

    /// Scores `prediction` against one reference: one [`Prf`] per configured
    /// type, in order (rouge-score's `score(target, prediction)`).
    pub fn score(&self, reference: &str, prediction: &str) -> Vec<Prf> {
        self.score_multi(&[reference], prediction)
    }

    /// rouge-score's `score_multi`: for each type independently, the scores
    /// against the reference with the highest F-measure (the first on
    /// ties), so different types may come from different references. With
    /// no reference every score is 0.
    ///
    /// The prediction is tokenized once, not once per reference.
    pub fn score_multi<S: AsRef<str>>(&self, references: &[S], prediction: &str) -> Vec<Prf> {
        if self.tokenizer != RougeTokenizer::Default {
            return self.score_multi_builtin(references, prediction);
        }
        let mut best = vec![Prf::default(); self.types.len()];
        // Borrowed in place: taken out of a `Cell` and put back, the
        // state was copied twice a call.
        let st = &mut *self.state.borrow_mut();
        st.vocab.begin();
        st.vocab.tokenize(
            prediction,
            self.stemming,
            Side::Prediction,
            &mut st.pred,
            &mut st.pred_lines,
        );
        let distinct = st.vocab.distinct();
        st.ngrams.build(&st.pred, distinct, self.levels);
        if self.types.contains(&RougeType::L) || self.types.contains(&RougeType::Lsum) {
            st.lcs.build(&st.pred, distinct);
        }
        for (k, reference) in references.iter().enumerate() {
            st.vocab.tokenize(
                reference.as_ref(),
                self.stemming,
                Side::Reference,
                &mut st.reference,
                &mut st.ref_lines,
            );
            self.score_reference(st, k == 0, &mut best);
        }
        st.vocab.end();
        best
    }

    /// [`Self::score_multi`] with one of assay's tokenizers: line by line,
    /// so the whole text's tokens are its lines' tokens end to end.
    fn score_multi_builtin<S: AsRef<str>>(&self, references: &[S], prediction: &str) -> Vec<Prf> {
        let lines = |text: &str| -> Vec<Vec<String>> {
            text.split('\n')
                .map(|line| {
                    let mut tokens = Vec::new();
                    self.tokenizer
                        .tokenize_line(line, self.stemming, &mut tokens);
                    tokens
                })
                .collect()
        };
        let prediction = lines(prediction);
        let references: Vec<Vec<Vec<String>>> =
            references.iter().map(|r| lines(r.as_ref())).collect();
        let references: Vec<&[Vec<String>]> = references.iter().map(Vec::as_slice).collect();
        let mut best = vec![Prf::default(); self.types.len()];
        let st = &mut *self.state.borrow_mut();
        self.score_lines(st, &prediction, &references, &mut best);
        best
    }

    /// rouge-score's `score_multi` on texts the caller tokenized (how
    /// rouge-score uses a `tokenizer=` object, and then ignores
    /// `use_stemmer`; so does this, whatever the scorer's stemming and
    /// tokenizer): rougeN and rougeL over each text's `tokens`, rougeLsum
    /// over its `sentences`. Per type the reference with the highest F
    /// (the first on ties); with no reference every score is 0.
    ///
    /// ```
    /// use assay_text::rouge::{RougeScorer, RougeType, Stemming, Tokenized};
    /// let scorer = RougeScorer::new(&[RougeType::N(1), RougeType::Lsum], Stemming::Off)?;
    /// let chars = |s: &str| Tokenized {
    ///     tokens: s.chars().filter(|c| *c != '\n').collect(),
    ///     sentences: s.split('\n').map(|l| l.chars().collect()).collect(),
    /// };
    /// let got = scorer.score_multi_tokens(&[chars("猫坐\n垫子")], &chars("猫坐在垫子"));
    /// assert_eq!((got[0].recall, got[1].recall), (1.0, 1.0));
    /// assert_eq!(got[0].precision, 0.8);
    /// # Ok::<(), assay_text::rouge::RougeError>(())
    /// ```
    pub fn score_multi_tokens<T: Hash + Eq>(
        &self,
        references: &[Tokenized<T>],
        prediction: &Tokenized<T>,
    ) -> Vec<Prf> {
        let n = self.types.len();
        let has_lsum = self.types.contains(&RougeType::Lsum);
        let has_others = self.types.iter().any(|t| *t != RougeType::Lsum);
        let st = &mut *self.state.borrow_mut();
        let mut best = vec![Prf::default(); n];
        let one_pass = !has_others
            || (has_lsum
                && prediction.sentences_make_tokens()
                && references.iter().all(Tokenized::sentences_make_tokens));
        if !has_lsum {
            // Whole texts, one line each.
            let prediction = [prediction.tokens.as_slice()];
            let lines: Vec<[&[T]; 1]> = references.iter().map(|r| [r.tokens.as_slice()]).collect();
            let references: Vec<&[&[T]]> = lines.iter().map(|l| l.as_slice()).collect();
            self.score_lines(st, &prediction, &references, &mut best);
        } else if one_pass {
            let references: Vec<&[Vec<T>]> =
                references.iter().map(|r| r.sentences.as_slice()).collect();
            self.score_lines(st, &prediction.sentences, &references, &mut best);
        } else {
            // The sentences' tokens differ from the whole text's: rougeLsum
            // from the one, the other types from the other.
            let sentences: Vec<&[Vec<T>]> =
                references.iter().map(|r| r.sentences.as_slice()).collect();
            let mut lsum = vec![Prf::default(); n];
            self.score_lines(st, &prediction.sentences, &sentences, &mut lsum);
            let whole = [prediction.tokens.as_slice()];
            let lines: Vec<[&[T]; 1]> = references.iter().map(|r| [r.tokens.as_slice()]).collect();
            let references: Vec<&[&[T]]> = lines.iter().map(|l| l.as_slice()).collect();
            self.score_lines(st, &whole, &references, &mut best);
            for ((t, b), l) in self.types.iter().zip(best.iter_mut()).zip(lsum) {
                if *t == RougeType::Lsum {
                    *b = l;
                }
            }
        }
        best
    }

    /// Loads the prediction's tokens, line by line (lines without tokens
    /// take no place, as in [`Vocab::tokenize`]), then scores each
    /// reference against it into `best`.
    fn score_lines<T: Hash + Eq, L: AsRef<[T]>>(
        &self,
        st: &mut State,
        prediction: &[L],
        references: &[&[L]],
        best: &mut [Prf],
    ) {
        let mut ids: HashMap<&T, u32> = HashMap::new();
        st.pred.clear();
        st.pred_lines.clear();
        for line in prediction {
            let line = line.as_ref();
            for token in line {
                let next = ids.len() as u32;
                st.pred.push(*ids.entry(token).or_insert(next));
            }
            if !line.is_empty() {
                st.pred_lines.push(st.pred.len() as u32);
            }
        }
        let distinct = ids.len();
        st.ngrams.build(&st.pred, distinct, self.levels);
        if self.types.contains(&RougeType::L) || self.types.contains(&RougeType::Lsum) {
            st.lcs.build(&st.pred, distinct);
        }
        for (k, reference) in references.iter().enumerate() {
            st.reference.clear();
            st.ref_lines.clear();
            for line in reference.iter() {
                let line = line.as_ref();
                st.reference
                    .extend(line.iter().map(|t| ids.get(t).copied().unwrap_or(NONE)));
                if !line.is_empty() {
                    st.ref_lines.push(st.reference.len() as u32);
                }
            }
            self.score_reference(st, k == 0, best);
        }
    }

    /// Scores the loaded reference against the loaded prediction and keeps,
    /// per type, the better of that and `best` (strictly better F wins, so
    /// the first reference wins ties).
    fn score_reference(&self, st: &mut State, first: bool, best: &mut [Prf]) {
        let (lp, lr) = (st.pred.len(), st.reference.len());
        st.hits.clear();
        st.hits.resize(self.levels + 1, 0);
        let hits = &mut st.hits;
        st.ngrams.overlaps(&st.reference, |n, h| hits[n] = h);
        let both = lp > 0 && lr > 0;
        // One sentence each: the union is the LCS itself and every LCS token
        // still has unused counts, so rougeLsum's hits are the LCS length.
        let single_lines = st.pred_lines.len() == 1 && st.ref_lines.len() == 1;
        let has_l = self.types.contains(&RougeType::L);
        let has_lsum = self.types.contains(&RougeType::Lsum);
        let lcs = if both && (has_l || (has_lsum && single_lines)) {
            st.lcs.length(&st.reference)
        } else {
            0
        };
        let lsum = if !both || !has_lsum {
            0
        } else if single_lines {
            lcs
        } else {
            st.summary.hits(
                &st.reference,
                &st.ref_lines,
                &st.pred,
                &st.pred_lines,
                st.ngrams.unigram_counts(),
                &st.lcs,
            )
        };
        for (t, b) in self.types.iter().zip(best.iter_mut()) {
            let s = match *t {
                RougeType::N(n) => {
                    let n = usize::from(n);
                    let h = st.hits.get(n).copied().unwrap_or(0);
                    Prf::from_counts(h, (lp + 1).saturating_sub(n), (lr + 1).saturating_sub(n))
                }
                // rouge-score returns zeros when either side has no tokens.
                RougeType::L | RougeType::Lsum if !both => Prf::default(),
                RougeType::L => Prf::from_counts(lcs, lp, lr),
                RougeType::Lsum => Prf::from_counts(lsum, lp, lr),
            };
            if first || s.fmeasure > b.fmeasure {
                *b = s;
            }
        }
    }
}

impl Clone for RougeScorer {
    /// A scorer with the same configuration and empty caches.
    fn clone(&self) -> Self {
        RougeScorer {
            types: self.types.clone(),
            stemming: self.stemming,
            tokenizer: self.tokenizer,
            levels: self.levels,
            state: RefCell::new(State::default()),
        }
    }
}

impl fmt::Debug for RougeScorer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RougeScorer")
            .field("types", &self.types)
            .field("stemming", &self.stemming)
            .field("tokenizer", &self.tokenizer)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected values below come from rouge-score 0.1.2.
    fn prf(precision: f64, recall: f64, fmeasure: f64) -> Prf {
        Prf {
            precision,
            recall,
            fmeasure,
        }
    }

    fn scorer(names: &[&str]) -> RougeScorer {
        let types: Vec<RougeType> = names.iter().map(|n| n.parse().unwrap()).collect();
        RougeScorer::new(&types, Stemming::Off).unwrap()
    }

    #[test]
    fn type_names_round_trip() {
        for name in [
            "rouge1",
            "rouge2",
            "rouge3",
            "rouge4",
            "rouge5",
            "rouge6",
            "rouge7",
            "rouge8",
            "rouge9",
            "rougeL",
            "rougeLsum",
        ] {
            let t: RougeType = name.parse().unwrap();
            assert_eq!(t.to_string(), name);
        }
        for bad in [
            "rouge0",
            "rouge10",
            "rougel",
            "ROUGE1",
            "rouge",
            "rougeLSum",
            "",
            "rouge-1",
        ] {
            assert_eq!(
                bad.parse::<RougeType>(),
                Err(RougeError::UnknownType(bad.to_string()))
            );
        }
    }

    #[test]
    fn stemming_names_round_trip() {
        for s in [Stemming::Off, Stemming::Porter] {
            assert_eq!(s.to_string().parse::<Stemming>(), Ok(s));
        }
        assert_eq!(
            "Porter".parse::<Stemming>(),
            Err(RougeError::UnknownStemming("Porter".to_string()))
        );
    }

    #[test]
    fn ngram_order_is_validated() {
        assert_eq!(
            RougeScorer::new(&[RougeType::N(0)], Stemming::Off).err(),
            Some(RougeError::NgramOrder(0))
        );
        assert_eq!(
            RougeScorer::new(&[RougeType::L, RougeType::N(10)], Stemming::Off).err(),
            Some(RougeError::NgramOrder(10))
        );
    }

    #[test]
    fn higher_order_ngrams() {
        let s = scorer(&["rouge1", "rouge2", "rouge3", "rouge4", "rouge9", "rougeL"]);
        let got = s.score(
            "the cat sat on the mat and the cat sat on the hat",
            "the cat sat on the hat and the cat sat on the mat",
        );
        assert_eq!(
            got,
            [
                prf(1.0, 1.0, 1.0),
                prf(0.9166666666666666, 0.9166666666666666, 0.9166666666666666),
                prf(0.8181818181818182, 0.8181818181818182, 0.8181818181818182),
                prf(0.7, 0.7, 0.7),
                prf(0.0, 0.0, 0.0),
                prf(0.8461538461538461, 0.8461538461538461, 0.8461538461538461),
            ]
        );
        let same = s.score("a b c d e f g h i j", "a b c d e f g h i j");
        assert!(same.iter().all(|p| *p == prf(1.0, 1.0, 1.0)));
    }

    #[test]
    fn summary_level_lcs_on_lines() {
        let s = scorer(&["rouge1", "rouge2", "rouge4", "rougeL", "rougeLsum"]);
        let got = s.score("a b a b\nb a b a\nc a", "b a\na b a b c\na a");
        assert_eq!(
            got,
            [
                prf(1.0, 0.9, 0.9473684210526316),
                prf(0.625, 0.5555555555555556, 0.5882352941176471),
                prf(
                    0.16666666666666666,
                    0.14285714285714285,
                    0.15384615384615383
                ),
                prf(0.7777777777777778, 0.7, 0.7368421052631577),
                prf(1.0, 0.9, 0.9473684210526316),
            ]
        );
    }

    #[test]
    fn backtrack_tie_break_is_rouge_scores() {
        // Going left on ties instead of up would give 0.4 and 0.533.
        let s = scorer(&["rougeLsum"]);
        assert_eq!(s.score("c c a c", "a b b c\nc b"), [prf(0.5, 0.75, 0.6)]);
        assert_eq!(
            s.score("b b\nc b c a", "c b\nc a b c\na b c"),
            [prf(
                0.5555555555555556,
                0.8333333333333334,
                0.6666666666666667
            )]
        );
    }

    #[test]
    fn empty_and_tokenless_texts_score_zero() {
        let s = RougeScorer::new(&RougeType::DEFAULT, Stemming::Porter).unwrap();
        let zero = [Prf::default(); 4];
        assert_eq!(s.score("", ""), zero);
        assert_eq!(s.score("", "some text"), zero);
        assert_eq!(s.score("some text", ""), zero);
        // Cyrillic has no [a-z0-9] characters: no tokens, even against itself.
        assert_eq!(s.score("Привет мир", "Привет мир"), zero);
        assert_eq!(s.score(" \n\n ...", "!!\n"), zero);
        assert_eq!(s.score_multi::<&str>(&[], "anything"), zero);
    }

    #[test]
    fn lowercasing_follows_python() {
        let s = scorer(&["rouge1", "rouge2", "rougeLsum"]);
        let one = [prf(1.0, 1.0, 1.0); 3];
        // KELVIN SIGN lowercases to ASCII `k`.
        assert_eq!(s.score("OK \u{212a}", "ok k"), one);
        // U+0130 lowercases to `i` + U+0307, which separates.
        assert_eq!(s.score("\u{130}stanbul", "i stanbul"), one);
        // `\r` is dropped by the tokenizer, not a line break of its own.
        assert_eq!(s.score("line one\r\nline two", "line one\nline two"), one);
        assert_eq!(
            tokenize("Don't STOP, café! fu\u{308}r für", Stemming::Off),
            ["don", "t", "stop", "caf", "fu", "r", "f", "r"]
        );
    }

    #[test]
    fn stemming_applies_to_long_tokens_only() {
        assert_eq!(
            tokenize("Running dogs ran; cats flies ties", Stemming::Porter),
            ["run", "dog", "ran", "cat", "fli", "tie"]
        );
        // Four-letter "dies" takes NLTK's ies -> ie; three-letter "ies" is
        // never stemmed.
        assert_eq!(tokenize("ies dies", Stemming::Porter), ["ies", "die"]);
    }

    /// Past the stem cache's bound the cache starts afresh between calls;
    /// scores do not change.
    #[test]
    fn stem_cache_bound_keeps_scores() {
        let s = RougeScorer::new(&RougeType::DEFAULT, Stemming::Porter).unwrap();
        let pair = (
            "the cats were running home\nquickly",
            "a cat runs home quickly",
        );
        let before = s.score(pair.0, pair.1);
        let mut words = Vec::new();
        for i in 0..70_000u32 {
            let word: String = (0..4)
                .map(|k| char::from(b'a' + ((i >> (5 * k)) % 26) as u8))
                .collect();
            words.push(format!("{word}{i}ings"));
            if words.len() == 5_000 {
                s.score(&words.join(" "), "x");
                words.clear();
            }
        }
        assert_eq!(s.score(pair.0, pair.1), before);
        let fresh = RougeScorer::new(&RougeType::DEFAULT, Stemming::Porter).unwrap();
        assert_eq!(fresh.score(pair.0, pair.1), before);
    }

    #[test]
    fn scorer_is_send() {
        fn assert_send<T: Send>() {}
        assert_send::<RougeScorer>();
    }

    #[test]
    fn score_multi_takes_first_best_per_type() {
        let s = scorer(&["rouge1", "rouge2"]);
        // Same F (2/3) from P=1,R=0.5 and from P=0.5,R=1: the first wins.
        let got = s.score_multi(&["a b c d", "a"], "a b");
        assert_eq!(got[0], prf(1.0, 0.5, 0.6666666666666666));
        let got = s.score_multi(&["a", "a b c d"], "a b");
        assert_eq!(got[0], prf(0.5, 1.0, 0.6666666666666666));
        // Each type picks its own reference.
        let got = s.score_multi(&["b a", "a x"], "a b");
        assert_eq!(got[0], prf(1.0, 1.0, 1.0));
        assert_eq!(got[1], prf(0.0, 0.0, 0.0));
        let got = s.score_multi(&["a x y", "x a b"], "a b");
        assert_eq!(got[1], prf(1.0, 0.5, 0.6666666666666666));
    }

    #[test]
    fn tokenizer_names_round_trip() {
        for t in RougeTokenizer::ALL {
            assert_eq!(t.to_string().parse::<RougeTokenizer>(), Ok(t));
        }
        let err = "jieba".parse::<RougeTokenizer>().unwrap_err();
        assert!(
            err.to_string()
                .contains("default, unicode, whitespace, char"),
            "{err}"
        );
    }

    #[test]
    fn unicode_tokenizer_scores_other_scripts() {
        let types = [RougeType::N(1), RougeType::L, RougeType::Lsum];
        let s = RougeScorer::new(&types, Stemming::Off)
            .unwrap()
            .with_tokenizer(RougeTokenizer::Unicode);
        // Six characters against five, all of them matching in order.
        let (p, r) = (1.0, 5.0 / 6.0);
        let f = 2.0 * p * r / (p + r);
        assert_eq!(s.score("猫坐在垫子上。", "猫在垫子上！"), [prf(p, r, f); 3]);
        // The default tokenizer finds no token in either.
        let default = RougeScorer::new(&types, Stemming::Off).unwrap();
        assert_eq!(
            default.score("猫坐在垫子上。", "猫在垫子上！"),
            [Prf::default(); 3]
        );
        // Russian words are lowercased runs; Hindi vowel signs stay inside.
        assert_eq!(
            s.score("Кошка СИДИТ", "кошка сидит"),
            [prf(1.0, 1.0, 1.0); 3]
        );
        assert_eq!(s.score("पढ़ो किताबें", "किताबें"), [prf(1.0, 0.5, 2.0 / 3.0); 3]);
    }

    #[test]
    fn builtin_tokenizers_stem_ascii_tokens_only() {
        let t = RougeTokenizer::Unicode;
        assert_eq!(
            t.tokenize("Running dogs бегают", Stemming::Porter),
            ["run", "dog", "бегают"]
        );
        assert_eq!(
            RougeTokenizer::Whitespace.tokenize("Cats, running", Stemming::Porter),
            ["cats,", "run"]
        );
    }

    #[test]
    fn caller_tokens_take_rouge_lsum_from_the_sentences() {
        let s = RougeScorer::new(&[RougeType::N(1), RougeType::Lsum], Stemming::Off).unwrap();
        let abc = || vec!["a", "b", "c"];
        let reference = Tokenized {
            tokens: abc(),
            sentences: vec![abc()],
        };
        // The whole text's tokens match the reference's; the one sentence
        // is reversed, so its LCS with the reference is one token.
        let prediction = Tokenized {
            tokens: abc(),
            sentences: vec![vec!["c", "b", "a"]],
        };
        let third = 1.0 / 3.0;
        assert_eq!(
            s.score_multi_tokens(std::slice::from_ref(&reference), &prediction),
            [
                prf(1.0, 1.0, 1.0),
                prf(third, third, 2.0 * third * third / (2.0 * third))
            ]
        );
        // Only rougeLsum asked: the whole-text tokens are not needed.
        let lsum = RougeScorer::new(&[RougeType::Lsum], Stemming::Off).unwrap();
        let prediction = Tokenized {
            tokens: vec![],
            sentences: vec![abc()],
        };
        assert_eq!(
            lsum.score_multi_tokens(&[reference], &prediction),
            [prf(1.0, 1.0, 1.0)]
        );
        assert_eq!(
            lsum.score_multi_tokens::<&str>(&[], &prediction),
            [Prf::default()]
        );
    }
}
