//! Words as the grounding features read them: lower-cased runs of letters
//! and digits with unit symbols spelled out, the stop words, and the words
//! that turn a statement around. The features and the slot comparison
//! (`crate::slots`) read text the same way through this module.

use assay_text::porter;
use rust_stemmers::{Algorithm, Stemmer};
use std::collections::HashSet;
use std::sync::OnceLock;

/// Words whose presence turns a statement around.
pub(crate) const NEGATIONS: &[&str] = &[
    "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot",
    "don", "doesn", "didn", "isn", "wasn", "aren", "weren", "won", "wouldn", "couldn", "shouldn",
    "hasn", "haven", "hadn",
];

/// The words of one language that the features treat apart from its
/// other words: its function words and its negations, beside the English
/// ones, which every lexicon keeps (English is the features' own
/// language, and names, numbers and loanwords cross languages). English's
/// own lexicon adds nothing, so that the trained model reads English as
/// it was trained to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lexicon {
    /// The language's English name.
    pub language: &'static str,
    stop: &'static [&'static str],
    negations: &'static [&'static str],
    /// The Snowball stemmer of the language; English keeps NLTK's Porter
    /// stemmer, which the model was trained with.
    stemmer: Option<Algorithm>,
}

impl Lexicon {
    pub const ENGLISH: Lexicon = Lexicon {
        language: "English",
        stop: &[],
        negations: &[],
        stemmer: None,
    };

    /// French: "ne" and "n'" are function words, the word after the verb
    /// ("pas", "jamais") negates, so that "n'est pas" is one negation.
    pub const FRENCH: Lexicon = Lexicon {
        language: "French",
        stop: &[
            "ne", "n", "le", "la", "les", "l", "un", "une", "des", "du", "de", "d", "et", "ou",
            "en", "à", "au", "aux", "dans", "sur", "pour", "par", "avec", "est", "sont", "était",
            "son", "sa", "ses", "se", "s", "ce", "cette", "ces", "il", "elle", "ils", "elles",
            "qui", "que", "qu", "depuis", "leur", "leurs", "y",
        ],
        negations: &["pas", "jamais", "aucun", "aucune", "rien", "ni", "sans"],
        stemmer: Some(Algorithm::French),
    };

    pub const GERMAN: Lexicon = Lexicon {
        language: "German",
        stop: &[
            "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer",
            "eines", "und", "oder", "im", "am", "auf", "aus", "mit", "von", "vom", "zu", "zum",
            "zur", "ist", "sind", "war", "waren", "seit", "sein", "seine", "seinen", "seiner",
            "seinem", "ihr", "ihre", "sich", "es", "er", "sie", "für", "bei", "nach", "über",
            "wird", "wurde", "steht",
        ],
        negations: &[
            "nicht", "kein", "keine", "keinen", "keinem", "keiner", "nie", "niemals", "nichts",
            "ohne", "weder",
        ],
        stemmer: Some(Algorithm::German),
    };

    pub const SPANISH: Lexicon = Lexicon {
        language: "Spanish",
        stop: &[
            "el", "la", "los", "las", "lo", "un", "una", "unos", "unas", "de", "del", "al", "en",
            "y", "o", "que", "su", "sus", "se", "es", "son", "era", "por", "para", "con", "desde",
            "como", "está", "están", "muy",
        ],
        negations: &[
            "no", "nunca", "jamás", "ningún", "ninguna", "ninguno", "nada", "sin", "ni", "tampoco",
        ],
        stemmer: Some(Algorithm::Spanish),
    };

    /// The stem a lower-cased word is compared by: inflected forms of one
    /// word share it ("construit", "construits", "construite").
    ///
    /// ```
    /// use assay_grounding::words::Lexicon;
    /// let fr = Lexicon::FRENCH;
    /// assert_eq!(fr.stem("construits"), fr.stem("construite"));
    /// assert_eq!(Lexicon::GERMAN.stem("brücken"), Lexicon::GERMAN.stem("brücke"));
    /// assert_eq!(Lexicon::ENGLISH.stem("bridges"), "bridg");
    /// ```
    pub fn stem(&self, word: &str) -> String {
        match self.stemmer {
            None => porter::stem(word),
            Some(a) => Stemmer::create(a).stem(word).into_owned(),
        }
    }

    /// Whether a lower-cased word is a function word of this lexicon.
    pub fn is_stop(&self, word: &str) -> bool {
        is_stop_word(word) || self.stop.contains(&word)
    }

    /// Whether a lower-cased word turns a statement around in this
    /// lexicon's language (English's contractions aside).
    pub fn is_negation(&self, word: &str) -> bool {
        NEGATIONS.contains(&word) || self.negations.contains(&word)
    }
}

fn stop_words() -> &'static HashSet<&'static str> {
    static WORDS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| {
        include_str!("../data/stopwords.txt")
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect()
    })
}

/// Unit symbols and the words they stand for: a text that writes "100 °C"
/// states what "100 degrees Celsius" claims.
const UNITS: [(&str, &str); 5] = [
    ("°C", " degrees celsius"),
    ("°F", " degrees fahrenheit"),
    ("ºC", " degrees celsius"),
    ("ºF", " degrees fahrenheit"),
    ("%", " percent"),
];

/// The lower-cased words of `text`: runs of letters and digits, with unit
/// symbols spelled out and digits read as [`spelled`] reads them. A
/// script written without spaces (Chinese characters, kana) has no runs
/// to cut: each of its characters is a word, so that a clause is not one
/// word that matches nothing or everything.
///
/// ```
/// use assay_grounding::words::words;
/// assert_eq!(words("Brontë's 1813 novel"), ["brontë", "s", "1813", "novel"]);
/// assert_eq!(words("100 °C"), ["100", "degrees", "celsius"]);
/// assert_eq!(words("总部位于汉堡"), ["总", "部", "位", "于", "汉", "堡"]);
/// assert_eq!(words("عام ١٩٠٠"), ["عام", "1900"]);
/// ```
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            out.push(word.to_lowercase());
            word.clear();
        }
    };
    for c in spelled(text).chars() {
        if unspaced(c) {
            flush(&mut word, &mut out);
            out.push(c.to_string());
        } else if c.is_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Whether `c` belongs to a script written without spaces between words:
/// CJK ideographs and the Japanese kana.
fn unspaced(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}' // hiragana, katakana
        | '\u{3400}'..='\u{4dbf}' // CJK extension A
        | '\u{4e00}'..='\u{9fff}' // CJK unified ideographs
        | '\u{f900}'..='\u{faff}' // CJK compatibility ideographs
        | '\u{ff66}'..='\u{ff9f}' // half-width katakana
        | '\u{20000}'..='\u{2ffff}') // CJK extensions B and later
}

/// The ASCII digit that `c` writes, for the decimal digits of other
/// scripts and the full-width forms: `١٩٠٠` and `１９００` are 1900.
fn ascii_digit(c: char) -> Option<char> {
    const ZEROS: [u32; 7] = [0x660, 0x6f0, 0x966, 0x9e6, 0xe50, 0xff10, 0x1d7ce];
    let code = c as u32;
    ZEROS
        .iter()
        .find(|&&zero| (zero..zero + 10).contains(&code))
        .and_then(|zero| char::from_digit(code - zero, 10))
}

/// `text` as the features read it: its unit symbols spelled out, and the
/// digits of every script written as ASCII digits.
pub(crate) fn spelled(text: &str) -> std::borrow::Cow<'_, str> {
    let mut spelled = std::borrow::Cow::Borrowed(text);
    if text.chars().any(|c| ascii_digit(c).is_some()) {
        spelled = text
            .chars()
            .map(|c| ascii_digit(c).unwrap_or(c))
            .collect::<String>()
            .into();
    }
    for (symbol, name) in UNITS {
        if spelled.contains(symbol) {
            spelled = spelled.replace(symbol, name).into();
        }
    }
    spelled
}

/// Whether a lower-cased word is a stop word.
pub fn is_stop_word(word: &str) -> bool {
    stop_words().contains(word)
}
