//! Words as the grounding features read them: lower-cased runs of letters
//! and digits with unit symbols spelled out, the stop words, and the words
//! that turn a statement around. The features and the slot comparison
//! (`crate::slots`) read text the same way through this module.

use std::collections::HashSet;
use std::sync::OnceLock;

/// Words whose presence turns a statement around.
pub(crate) const NEGATIONS: &[&str] = &[
    "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot",
    "don", "doesn", "didn", "isn", "wasn", "aren", "weren", "won", "wouldn", "couldn", "shouldn",
    "hasn", "haven", "hadn",
];

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
/// symbols spelled out.
///
/// ```
/// use assay_grounding::words::words;
/// assert_eq!(words("Brontë's 1813 novel"), ["brontë", "s", "1813", "novel"]);
/// assert_eq!(words("100 °C"), ["100", "degrees", "celsius"]);
/// ```
pub fn words(text: &str) -> Vec<String> {
    spelled(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// `text` with its unit symbols spelled out.
pub(crate) fn spelled(text: &str) -> std::borrow::Cow<'_, str> {
    let mut spelled = std::borrow::Cow::Borrowed(text);
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
