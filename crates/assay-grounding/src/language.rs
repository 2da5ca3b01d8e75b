//! Which language a row is written in, and whether the grounding verdict
//! can read it: the lexicon ([`Lexicon`]) of a language it has been
//! checked on, or the language it cannot read, named.
//!
//! Languages are told apart by `whatlang` (trigrams, no model to fetch).
//! A row's texts are read together (question, contexts, response), so
//! that a short response is judged with its contexts' language. Where the
//! detector is not sure of a text in the Latin script, the row is read as
//! English, the features' own language: a few words of English, numbers
//! and names are all too often taken for another language. A text in
//! another script is never read as English.
//!
//! ```
//! use assay_grounding::language::{lexicon_of, Unsupported};
//! use assay_grounding::words::Lexicon;
//! let de = lexicon_of(&["Das Museum ist montags von 9 bis 17 Uhr geöffnet.", "Das Museum ist montags nicht geöffnet."]);
//! assert_eq!(de, Ok(Lexicon::GERMAN));
//! let zh = lexicon_of(&["西门子自1949年起总部位于慕尼黑。", "西门子自1949年起总部位于汉堡。"]);
//! assert_eq!(zh, Err(Unsupported { language: "Mandarin".into() }));
//! assert_eq!(lexicon_of(&["Paris."]), Ok(Lexicon::ENGLISH));
//! ```

use crate::words::Lexicon;
use whatlang::{Lang, Script};

/// The lexicons the grounding verdict reads, by language: those whose
/// plain swaps, negations and unrelated contexts it gets right on the
/// bundled multilingual example (`examples/multilingual.jsonl`).
pub const SUPPORTED: [(Lang, Lexicon); 4] = [
    (Lang::Eng, Lexicon::ENGLISH),
    (Lang::Fra, Lexicon::FRENCH),
    (Lang::Deu, Lexicon::GERMAN),
    (Lang::Spa, Lexicon::SPANISH),
];

/// A language the grounding verdict cannot read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// Its English name ("Mandarin", "Arabic"), or the script's where the
    /// language is not told.
    pub language: String,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: the grounding verdict reads {} (say a row's language with --language, or give a \
             grounding model that reads it with --grounding DIR)",
            self.language,
            names()
        )
    }
}

/// The supported languages' names, for messages.
pub fn names() -> String {
    let names: Vec<&str> = SUPPORTED.iter().map(|(_, l)| l.language).collect();
    names.join(", ")
}

/// The lexicon of a language named by its ISO 639-1 or 639-3 code or its
/// English name (`--language`), if it is supported.
///
/// ```
/// use assay_grounding::language::named;
/// use assay_grounding::words::Lexicon;
/// assert_eq!(named("de"), Ok(Lexicon::GERMAN));
/// assert_eq!(named("French"), Ok(Lexicon::FRENCH));
/// assert!(named("zh").is_err());
/// ```
pub fn named(name: &str) -> Result<Lexicon, Unsupported> {
    let lower = name.trim().to_lowercase();
    SUPPORTED
        .iter()
        .find(|(lang, lexicon)| {
            lang.code() == lower
                || lexicon.language.to_lowercase() == lower
                || two_letter(*lang) == lower
        })
        .map(|(_, l)| *l)
        .ok_or(Unsupported {
            language: name.to_string(),
        })
}

/// The English name of any language the detector knows, named by its
/// English name, its ISO 639-3 code or the ISO 639-1 code of a widely
/// written one: what a judge is told to write in.
///
/// ```
/// use assay_grounding::language::english_name;
/// assert_eq!(english_name("de"), Some("German"));
/// assert_eq!(english_name("jpn"), Some("Japanese"));
/// assert_eq!(english_name("portuguese"), Some("Portuguese"));
/// assert_eq!(english_name("xx"), None);
/// ```
pub fn english_name(name: &str) -> Option<&'static str> {
    const TWO_LETTER: [(&str, Lang); 18] = [
        ("en", Lang::Eng),
        ("fr", Lang::Fra),
        ("de", Lang::Deu),
        ("es", Lang::Spa),
        ("it", Lang::Ita),
        ("pt", Lang::Por),
        ("nl", Lang::Nld),
        ("pl", Lang::Pol),
        ("sv", Lang::Swe),
        ("tr", Lang::Tur),
        ("ru", Lang::Rus),
        ("uk", Lang::Ukr),
        ("ar", Lang::Ara),
        ("hi", Lang::Hin),
        ("zh", Lang::Cmn),
        ("ja", Lang::Jpn),
        ("ko", Lang::Kor),
        ("vi", Lang::Vie),
    ];
    let lower = name.trim().to_lowercase();
    TWO_LETTER
        .iter()
        .find(|(code, _)| *code == lower)
        .map(|(_, lang)| *lang)
        .or_else(|| {
            Lang::all()
                .iter()
                .copied()
                .find(|l| l.code() == lower || l.eng_name().to_lowercase() == lower)
        })
        .map(Lang::eng_name)
}

fn two_letter(lang: Lang) -> &'static str {
    match lang {
        Lang::Eng => "en",
        Lang::Fra => "fr",
        Lang::Deu => "de",
        Lang::Spa => "es",
        _ => "",
    }
}

/// The English name of the language `texts` are written in (read
/// together), where the detector is sure of it.
///
/// ```
/// use assay_grounding::language::detected;
/// let french = ["Le musée est-il ouvert le lundi ?", "Le musée est ouvert le lundi de 9 h à 17 h, sauf en août."];
/// assert_eq!(detected(&french).as_deref(), Some("French"));
/// assert_eq!(detected(&["1949"]), None);
/// ```
pub fn detected(texts: &[&str]) -> Option<String> {
    whatlang::detect(&texts.join("\n"))
        .filter(|info| info.is_reliable())
        .map(|info| info.lang().eng_name().to_string())
}

/// The lexicon to read `texts` with (one row's, read together), or the
/// language that has none.
pub fn lexicon_of(texts: &[&str]) -> Result<Lexicon, Unsupported> {
    let text = texts.join("\n");
    let Some(info) = whatlang::detect(&text) else {
        // No letters to tell by: numbers and symbols read the same in
        // every language.
        return Ok(Lexicon::ENGLISH);
    };
    let supported = SUPPORTED.iter().find(|(l, _)| *l == info.lang());
    match (info.script(), supported) {
        (Script::Latin, Some((_, lexicon))) => return Ok(*lexicon),
        (Script::Latin, None) if !info.is_reliable() => return Ok(Lexicon::ENGLISH),
        _ => {}
    }
    Err(Unsupported {
        language: if info.script() == Script::Latin || info.is_reliable() {
            info.lang().eng_name().to_string()
        } else {
            format!("{} script", info.script().name())
        },
    })
}
