//! The Porter stemmer exactly as NLTK 3.10.4 implements it in its default
//! `NLTK_EXTENSIONS` mode (`nltk.stem.porter.PorterStemmer().stem`).
//!
//! This is neither Martin Porter's frozen reference algorithm nor Snowball
//! English ("Porter2"): NLTK adds an irregular-forms table, `ies` -> `ie` for
//! four-letter words, `ied` handling in step 1b, a stricter step 1c, an
//! `alli` pre-pass plus `fulli`/`logi` in step 2, `bli` -> `ble`, and a
//! two-letter `*o` condition. Every letter other than `a e i o u` (and `y`
//! after a vowel) counts as a consonant, digits and non-ASCII letters
//! included, so `1990s` stems to `1990`.
//!
//! ```
//! use assay_text::porter::stem;
//! assert_eq!(stem("Caresses"), "caress");
//! assert_eq!(stem("happy"), "happi");
//! assert_eq!(stem("dying"), "die");
//! assert_eq!(stem("generously"), "gener");
//! ```

/// Stems one word: lowercases it (Unicode, like Python's `str.lower()`),
/// returns words of at most two characters unchanged, then applies
/// NLTK's Porter steps.
///
/// The stemmer is not idempotent: `stem("because")` is `"becaus"` but
/// `stem("becaus")` is `"becau"`, as in NLTK.
pub fn stem(word: &str) -> String {
    let lower = word.to_lowercase();
    if lower.is_ascii() {
        let mut w = lower.into_bytes();
        stem_letters(&mut w, word.chars().count());
        // Every byte is still ASCII: the steps only cut and append ASCII.
        String::from_utf8(w).unwrap_or_default()
    } else {
        let mut w: Vec<char> = lower.chars().collect();
        stem_letters(&mut w, word.chars().count());
        w.into_iter().collect()
    }
}

/// Stems a word that is already lowercase ASCII, in place.
///
/// This is what the ROUGE tokenizer needs (its tokens are `[a-z0-9]+`); it
/// skips the lowercasing and the UTF-8 round trip of [`stem`]. For such
/// input `stem_ascii_lower(w)` leaves `w` equal to `stem(w)`.
pub fn stem_ascii_lower(word: &mut Vec<u8>) {
    let len = word.len();
    stem_letters(word, len);
}

/// One character of a word being stemmed: a byte for ASCII words, a `char`
/// otherwise, so the common case avoids a `Vec<char>`.
trait Letter: Copy + Eq {
    fn is(self, ascii: u8) -> bool;
    fn from_ascii(ascii: u8) -> Self;
}

impl Letter for u8 {
    fn is(self, ascii: u8) -> bool {
        self == ascii
    }
    fn from_ascii(ascii: u8) -> Self {
        ascii
    }
}

impl Letter for char {
    fn is(self, ascii: u8) -> bool {
        self == char::from(ascii)
    }
    fn from_ascii(ascii: u8) -> Self {
        char::from(ascii)
    }
}

/// NLTK's irregular forms, looked up on the lowercased word before anything
/// else (even before the two-letter cut-off).
const IRREGULAR: &[(&str, &str)] = &[
    ("sky", "sky"),
    ("skies", "sky"),
    ("dying", "die"),
    ("lying", "lie"),
    ("tying", "tie"),
    ("news", "news"),
    ("innings", "inning"),
    ("inning", "inning"),
    ("outings", "outing"),
    ("outing", "outing"),
    ("cannings", "canning"),
    ("canning", "canning"),
    ("howe", "howe"),
    ("proceed", "proceed"),
    ("exceed", "exceed"),
    ("succeed", "succeed"),
];

fn stem_letters<L: Letter>(w: &mut Vec<L>, original_chars: usize) {
    if let Some((_, base)) = IRREGULAR.iter().find(|(form, _)| equals(w, form)) {
        set(w, base);
        return;
    }
    // NLTK tests the length of the word as given, before lowercasing.
    if original_chars <= 2 {
        return;
    }
    step1a(w);
    step1b(w);
    step1c(w);
    step2(w);
    step3(w);
    step4(w);
    step5a(w);
    step5b(w);
}

fn equals<L: Letter>(w: &[L], s: &str) -> bool {
    w.len() == s.len() && w.iter().zip(s.bytes()).all(|(&l, b)| l.is(b))
}

fn set<L: Letter>(w: &mut Vec<L>, s: &str) {
    w.clear();
    w.extend(s.bytes().map(L::from_ascii));
}

fn ends_with<L: Letter>(w: &[L], suffix: &[u8]) -> bool {
    w.len() >= suffix.len()
        && w[w.len() - suffix.len()..]
            .iter()
            .zip(suffix)
            .all(|(&l, &b)| l.is(b))
}

/// Replaces the last `cut` letters by `replacement`.
fn replace_tail<L: Letter>(w: &mut Vec<L>, cut: usize, replacement: &[u8]) {
    w.truncate(w.len().saturating_sub(cut));
    w.extend(replacement.iter().map(|&b| L::from_ascii(b)));
}

fn is_vowel_letter<L: Letter>(l: L) -> bool {
    l.is(b'a') || l.is(b'e') || l.is(b'i') || l.is(b'o') || l.is(b'u')
}

/// Porter's consonant test. A `y` is a consonant at the start of the word
/// or after a vowel; a run of `y`s alternates. Walking back over the run
/// (instead of recursing) keeps long runs linear, as NLTK 3.10 does.
fn is_consonant<L: Letter>(w: &[L], i: usize) -> bool {
    if is_vowel_letter(w[i]) {
        return false;
    }
    if !w[i].is(b'y') {
        return true;
    }
    let mut j = i;
    let mut negate = false;
    while j > 0 && w[j].is(b'y') {
        negate = !negate;
        j -= 1;
    }
    let base = !is_vowel_letter(w[j]);
    base != negate
}

/// Calls `f` with the consonant flag of every letter, left to right, in one
/// pass (a `y` is a consonant exactly when the previous letter is not).
fn for_each_flag<L: Letter>(w: &[L], mut f: impl FnMut(bool)) {
    let mut prev = false;
    for (i, &l) in w.iter().enumerate() {
        let consonant = if is_vowel_letter(l) {
            false
        } else if l.is(b'y') {
            i == 0 || !prev
        } else {
            true
        };
        f(consonant);
        prev = consonant;
    }
}

/// Porter's measure m: the number of vowel-to-consonant transitions.
fn measure<L: Letter>(w: &[L]) -> usize {
    let mut m = 0;
    let mut prev_vowel = false;
    for_each_flag(w, |consonant| {
        if consonant && prev_vowel {
            m += 1;
        }
        prev_vowel = !consonant;
    });
    m
}

fn contains_vowel<L: Letter>(w: &[L]) -> bool {
    let mut found = false;
    for_each_flag(w, |consonant| found |= !consonant);
    found
}

/// Condition *d: ends with a doubled consonant.
fn ends_double_consonant<L: Letter>(w: &[L]) -> bool {
    let n = w.len();
    n >= 2 && w[n - 1] == w[n - 2] && is_consonant(w, n - 1)
}

/// Condition *o: ends consonant-vowel-consonant with the last not `w x y`;
/// NLTK also accepts a two-letter vowel-consonant word.
fn ends_cvc<L: Letter>(w: &[L]) -> bool {
    let n = w.len();
    let three = n >= 3
        && is_consonant(w, n - 3)
        && !is_consonant(w, n - 2)
        && is_consonant(w, n - 1)
        && !(w[n - 1].is(b'w') || w[n - 1].is(b'x') || w[n - 1].is(b'y'));
    three || (n == 2 && !is_consonant(w, 0) && is_consonant(w, 1))
}

/// Which stem length a rule's condition inspects: most look at the word
/// minus the suffix; NLTK's `logi` rule looks one letter further.
#[derive(Clone, Copy)]
enum Condition {
    /// m(stem) > 0.
    Positive,
    /// m(word minus the last three letters) > 0 (`logi`).
    PositiveKeepingOne,
    /// m(stem) > 1.
    AboveOne,
    /// m(stem) > 1 and the stem ends in `s` or `t` (`ion`).
    AboveOneAfterSOrT,
}

struct Rule {
    suffix: &'static [u8],
    replacement: &'static [u8],
    condition: Condition,
}

const fn rule(suffix: &'static [u8], replacement: &'static [u8], condition: Condition) -> Rule {
    Rule {
        suffix,
        replacement,
        condition,
    }
}

/// NLTK's `_apply_rule_list`: the first rule whose suffix matches decides,
/// even when its condition fails (then the word is left as it is).
fn apply_rules<L: Letter>(w: &mut Vec<L>, rules: &[Rule]) {
    let Some(r) = rules.iter().find(|r| ends_with(w, r.suffix)) else {
        return;
    };
    let stem = &w[..w.len() - r.suffix.len()];
    let holds = match r.condition {
        Condition::Positive => measure(stem) > 0,
        Condition::PositiveKeepingOne => measure(&w[..w.len() - 3]) > 0,
        Condition::AboveOne => measure(stem) > 1,
        Condition::AboveOneAfterSOrT => {
            measure(stem) > 1 && stem.last().is_some_and(|l| l.is(b's') || l.is(b't'))
        }
    };
    if holds {
        replace_tail(w, r.suffix.len(), r.replacement);
    }
}

fn step1a<L: Letter>(w: &mut Vec<L>) {
    if w.len() == 4 && ends_with(w, b"ies") {
        replace_tail(w, 3, b"ie");
    } else if ends_with(w, b"sses") || ends_with(w, b"ies") {
        w.truncate(w.len() - 2);
    } else if ends_with(w, b"s") && !ends_with(w, b"ss") {
        w.truncate(w.len() - 1);
    }
}

fn step1b<L: Letter>(w: &mut Vec<L>) {
    if ends_with(w, b"ied") {
        let keep = if w.len() == 4 { b"ie" as &[u8] } else { b"i" };
        replace_tail(w, 3, keep);
        return;
    }
    if ends_with(w, b"eed") {
        if measure(&w[..w.len() - 3]) > 0 {
            w.truncate(w.len() - 1);
        }
        return;
    }
    let cut = if ends_with(w, b"ed") && contains_vowel(&w[..w.len() - 2]) {
        2
    } else if ends_with(w, b"ing") && contains_vowel(&w[..w.len() - 3]) {
        3
    } else {
        return;
    };
    w.truncate(w.len() - cut);
    // The stem now holds a vowel, so it is not empty.
    let Some(&last) = w.last() else {
        return;
    };
    if ends_with(w, b"at") || ends_with(w, b"bl") || ends_with(w, b"iz") {
        w.push(L::from_ascii(b'e'));
    } else if ends_double_consonant(w) {
        if !(last.is(b'l') || last.is(b's') || last.is(b'z')) {
            w.pop();
        }
    } else if ends_with(w, b"*d") {
        // NLTK marks its double-consonant rule with the suffix "*d" and, when
        // the word is not doubled, also tests that literal suffix: a stem
        // ending in "*d" loses its '*'.
        let n = w.len();
        w.remove(n - 2);
    } else if measure(w) == 1 && ends_cvc(w) {
        w.push(L::from_ascii(b'e'));
    }
}

fn step1c<L: Letter>(w: &mut Vec<L>) {
    let n = w.len();
    if ends_with(w, b"y") && n - 1 > 1 && is_consonant(w, n - 2) {
        replace_tail(w, 1, b"i");
    }
}

const STEP2: &[Rule] = &[
    rule(b"ational", b"ate", Condition::Positive),
    rule(b"tional", b"tion", Condition::Positive),
    rule(b"enci", b"ence", Condition::Positive),
    rule(b"anci", b"ance", Condition::Positive),
    rule(b"izer", b"ize", Condition::Positive),
    rule(b"bli", b"ble", Condition::Positive),
    rule(b"alli", b"al", Condition::Positive),
    rule(b"entli", b"ent", Condition::Positive),
    rule(b"eli", b"e", Condition::Positive),
    rule(b"ousli", b"ous", Condition::Positive),
    rule(b"ization", b"ize", Condition::Positive),
    rule(b"ation", b"ate", Condition::Positive),
    rule(b"ator", b"ate", Condition::Positive),
    rule(b"alism", b"al", Condition::Positive),
    rule(b"iveness", b"ive", Condition::Positive),
    rule(b"fulness", b"ful", Condition::Positive),
    rule(b"ousness", b"ous", Condition::Positive),
    rule(b"aliti", b"al", Condition::Positive),
    rule(b"iviti", b"ive", Condition::Positive),
    rule(b"biliti", b"ble", Condition::Positive),
    rule(b"fulli", b"ful", Condition::Positive),
    rule(b"logi", b"log", Condition::PositiveKeepingOne),
];

fn step2<L: Letter>(w: &mut Vec<L>) {
    // NLTK first turns `alli` into `al` and runs step 2 again on the result.
    if ends_with(w, b"alli") && measure(&w[..w.len() - 4]) > 0 {
        replace_tail(w, 4, b"al");
    }
    apply_rules(w, STEP2);
}

const STEP3: &[Rule] = &[
    rule(b"icate", b"ic", Condition::Positive),
    rule(b"ative", b"", Condition::Positive),
    rule(b"alize", b"al", Condition::Positive),
    rule(b"iciti", b"ic", Condition::Positive),
    rule(b"ical", b"ic", Condition::Positive),
    rule(b"ful", b"", Condition::Positive),
    rule(b"ness", b"", Condition::Positive),
];

fn step3<L: Letter>(w: &mut Vec<L>) {
    apply_rules(w, STEP3);
}

const STEP4: &[Rule] = &[
    rule(b"al", b"", Condition::AboveOne),
    rule(b"ance", b"", Condition::AboveOne),
    rule(b"ence", b"", Condition::AboveOne),
    rule(b"er", b"", Condition::AboveOne),
    rule(b"ic", b"", Condition::AboveOne),
    rule(b"able", b"", Condition::AboveOne),
    rule(b"ible", b"", Condition::AboveOne),
    rule(b"ant", b"", Condition::AboveOne),
    rule(b"ement", b"", Condition::AboveOne),
    rule(b"ment", b"", Condition::AboveOne),
    rule(b"ent", b"", Condition::AboveOne),
    rule(b"ion", b"", Condition::AboveOneAfterSOrT),
    rule(b"ou", b"", Condition::AboveOne),
    rule(b"ism", b"", Condition::AboveOne),
    rule(b"ate", b"", Condition::AboveOne),
    rule(b"iti", b"", Condition::AboveOne),
    rule(b"ous", b"", Condition::AboveOne),
    rule(b"ive", b"", Condition::AboveOne),
    rule(b"ize", b"", Condition::AboveOne),
];

fn step4<L: Letter>(w: &mut Vec<L>) {
    apply_rules(w, STEP4);
}

fn step5a<L: Letter>(w: &mut Vec<L>) {
    if !ends_with(w, b"e") {
        return;
    }
    let stem = &w[..w.len() - 1];
    let m = measure(stem);
    if m > 1 || (m == 1 && !ends_cvc(stem)) {
        w.pop();
    }
}

fn step5b<L: Letter>(w: &mut Vec<L>) {
    if ends_with(w, b"ll") && measure(&w[..w.len() - 1]) > 1 {
        w.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_examples() {
        for (word, want) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("ties", "tie"),
            ("caress", "caress"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("bled", "bled"),
            ("motoring", "motor"),
            ("sing", "sing"),
            ("conflated", "conflat"),
            ("troubled", "troubl"),
            ("sized", "size"),
            ("hopping", "hop"),
            ("tanned", "tan"),
            ("falling", "fall"),
            ("hissing", "hiss"),
            ("fizzed", "fizz"),
            ("failing", "fail"),
            ("filing", "file"),
            ("happy", "happi"),
            ("relational", "relat"),
            ("conditional", "condit"),
            ("rational", "ration"),
            ("generalization", "gener"),
            ("controll", "control"),
            ("roll", "roll"),
        ] {
            assert_eq!(stem(word), want, "{word}");
        }
    }

    #[test]
    fn nltk_extensions() {
        for (word, want) in [
            ("skies", "sky"),
            ("dying", "die"),
            ("innings", "inning"),
            ("proceed", "proceed"),
            ("dies", "die"),
            ("tied", "tie"),
            ("cried", "cri"),
            ("enjoy", "enjoy"),
            ("spy", "spi"),
            ("radically", "radic"),
            ("hopefully", "hope"),
            ("analogies", "analog"),
            ("1990s", "1990"),
            ("because", "becaus"),
            ("becaus", "becau"),
        ] {
            assert_eq!(stem(word), want, "{word}");
        }
    }

    #[test]
    fn short_words_only_lowercase() {
        assert_eq!(stem(""), "");
        assert_eq!(stem("A"), "a");
        assert_eq!(stem("Is"), "is");
        // Irregular forms are looked up before the length cut-off.
        assert_eq!(stem("SKY"), "sky");
    }

    #[test]
    fn unicode_is_lowercased_and_consonant() {
        assert_eq!(stem("Ärger"), "ärger");
        assert_eq!(stem("ÉCOLES"), "école");
        // One character before lowercasing, two after: still too short.
        assert_eq!(stem("\u{130}"), "i\u{307}");
    }

    #[test]
    fn literal_star_d_quirk() {
        // NLTK's "*d" rule marker also matches the literal suffix.
        assert_eq!(stem("ba*ded"), "bad");
    }

    #[test]
    fn long_runs_stay_linear() {
        let word = "y".repeat(100_000);
        assert_eq!(stem(&word).len(), 100_000);
    }

    #[test]
    fn ascii_variant_matches() {
        for word in ["generalizations", "running", "sky", "a", "abc", "yyyy"] {
            let mut w = word.as_bytes().to_vec();
            stem_ascii_lower(&mut w);
            assert_eq!(String::from_utf8(w).as_deref(), Ok(stem(word).as_str()));
        }
    }
}
