//! Sentences of a text, by rule: a splitter in the spirit of NLTK's punkt
//! without its trained model. Line breaks always end a sentence; `.`, `!`,
//! `?` and ellipses end one when white space follows, except after titles
//! and abbreviations (`Dr.`, `e.g.`), initials (`J. R. R. Tolkien`), a list
//! number opening a line (`1.`), a German ordinal before a month,
//! century or world war (`am 3. Oktober`), and, before a word in lower case, after
//! dotted acronyms and abbreviations that may end a sentence (`U.S. law`,
//! `3 p.m. today`, `etc. and`) or an ellipsis. Closing quotes and brackets
//! stay with their sentence.

/// Abbreviations that never end a sentence: titles and Latin short forms
/// are always followed by what they introduce. Lower case, without the
/// final period.
const NEVER_FINAL: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "rev", "hon", "st", "mt", "gen", "col", "capt", "lt", "sgt",
    "sen", "rep", "gov", "pres", "messrs", "mme", "mlle", "e.g", "i.e", "cf", "vs", "viz",
    "approx", "ca", "fig", "figs", "eq", "vol", "vols", "pp",
];

/// Words that a German ordinal (`3.`, `19.`) comes before: a day's
/// month, a century, a war. Only these, so that an English sentence
/// ending in a number (`... won 3. The`) still ends.
const ORDINAL_BEFORE: &[&str] = &[
    "januar",
    "jänner",
    "februar",
    "märz",
    "april",
    "mai",
    "juni",
    "juli",
    "august",
    "september",
    "oktober",
    "november",
    "dezember",
    "jahrhundert",
    "jahrhunderts",
    "weltkrieg",
    "weltkriegs",
];

/// Abbreviations that may end a sentence: they end one only before a word
/// in upper case (`... Jan. 5` goes on, `... in 1999 etc. The` ends).
const MAYBE_FINAL: &[&str] = &[
    "etc", "inc", "ltd", "co", "corp", "llc", "plc", "bros", "jr", "sr", "al", "dept", "est",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
];

fn is_terminator(c: char) -> bool {
    matches!(
        c,
        '.' | '!' | '?' | '\u{2026}' | '\u{61f}' | '\u{964}' | '\u{965}' | '\u{6d4}'
    ) || is_full_width_end(c)
}

/// The sentence ends of Chinese and Japanese, which no space follows.
fn is_full_width_end(c: char) -> bool {
    matches!(c, '\u{3002}' | '\u{ff01}' | '\u{ff1f}' | '\u{ff61}')
}

fn is_closing(c: char) -> bool {
    matches!(
        c,
        '"' | '\''
            | ')'
            | ']'
            | '}'
            | '\u{201d}'
            | '\u{2019}'
            | '\u{bb}'
            | '\u{300d}'
            | '\u{300f}'
            | '\u{ff09}'
    )
}

fn is_opening(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | '(' | '[' | '{' | '\u{201c}' | '\u{2018}' | '\u{ab}'
    )
}

/// Sentences of `text`, trimmed, blank ones dropped: see the module
/// documentation for the rules. Pure, and every sentence is a slice of
/// `text`, so a sentence copied verbatim is found in it.
///
/// ```
/// use assay_text::sentences::split_sentences;
/// assert_eq!(
///     split_sentences("Dr. Smith met J. R. R. Tolkien at 3 p.m. today. He said \"Hi.\" Then left."),
///     ["Dr. Smith met J. R. R. Tolkien at 3 p.m. today.", "He said \"Hi.\"", "Then left."]
/// );
/// ```
pub fn split_sentences(text: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let byte = |i: usize| chars.get(i).map_or(text.len(), |(b, _)| *b);
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        if c == '\n' {
            out.push(&text[start..byte(i)]);
            start = byte(i + 1);
            i += 1;
            continue;
        }
        if !is_terminator(c) {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < chars.len() && is_terminator(chars[end].1) {
            end += 1;
        }
        let terminators = &text[byte(i)..byte(end)];
        let closed = end;
        while end < chars.len() && is_closing(chars[end].1) {
            end += 1;
        }
        let spaced = chars.get(end).is_none_or(|(_, n)| n.is_whitespace())
            || terminators.chars().any(is_full_width_end);
        if spaced
            && ends_here(
                &text[start..byte(i)],
                terminators,
                end > closed,
                &chars[end..],
            )
        {
            out.push(&text[start..byte(end)]);
            start = byte(end);
        }
        i = end;
    }
    out.push(&text[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The first letter or digit after the white space and opening marks that
/// follow a terminator; `None` at the end of the text or of the line.
fn next_word_start(rest: &[(usize, char)]) -> Option<char> {
    rest.iter()
        .map(|(_, c)| *c)
        .take_while(|c| *c != '\n')
        .find(|c| !c.is_whitespace() && !is_opening(*c))
}

/// The word after the white space that follows a terminator, lower-cased.
fn next_word(rest: &[(usize, char)]) -> String {
    rest.iter()
        .map(|(_, c)| *c)
        .skip_while(|c| c.is_whitespace() && *c != '\n')
        .take_while(|c| c.is_alphabetic())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether `terminators` (after the sentence so far, `before`, and
/// followed by closing marks when `closed`, then by `rest`) end the
/// sentence.
fn ends_here(before: &str, terminators: &str, closed: bool, rest: &[(usize, char)]) -> bool {
    let next = next_word_start(rest);
    // What may follow the end of a sentence: nothing, or a word that is
    // neither in lower case nor a number (`Jan. 5`, `etc. and`).
    let new_start = next.is_none_or(|c| !c.is_lowercase() && !c.is_ascii_digit());
    if terminators.chars().any(is_full_width_end) {
        return true;
    }
    if terminators.contains(['!', '?', '\u{61f}']) {
        // `"Why?" she asked.` is one sentence.
        return !(closed && next.is_some_and(char::is_lowercase));
    }
    if terminators.contains(['\u{964}', '\u{965}', '\u{6d4}']) {
        return true;
    }
    if terminators != "." {
        // An ellipsis trails off inside a sentence unless a new one starts.
        return new_start;
    }
    let word = before
        .rsplit(char::is_whitespace)
        .next()
        .unwrap_or("")
        .trim_start_matches(is_opening);
    if word.is_empty() {
        return true;
    }
    let lower = word.to_lowercase();
    let mut letters = word.chars();
    let initial = matches!((letters.next(), letters.next()), (Some(c), None) if c.is_uppercase());
    let number = word.chars().all(|c| c.is_ascii_digit());
    let list_number = number && before.trim_start().len() == word.len();
    let ordinal = number && word.len() <= 2 && ORDINAL_BEFORE.contains(&next_word(rest).as_str());
    if NEVER_FINAL.contains(&lower.as_str()) || initial || list_number || ordinal {
        return false;
    }
    if MAYBE_FINAL.contains(&lower.as_str()) || word.contains('.') {
        return new_start;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTEXT: &str = "Albert Einstein was born in Ulm. He developed relativity.\nHe liked sailing! Did he play violin? Yes.";

    #[test]
    fn sentences_split_on_terminators_and_lines() {
        assert_eq!(
            split_sentences(CONTEXT),
            [
                "Albert Einstein was born in Ulm.",
                "He developed relativity.",
                "He liked sailing!",
                "Did he play violin?",
                "Yes."
            ]
        );
        assert_eq!(split_sentences("v1.2 is out"), ["v1.2 is out"]);
    }

    #[test]
    fn a_german_ordinal_does_not_end_its_sentence() {
        assert_eq!(
            split_sentences(
                "Die Mauer fiel am 9. November 1989. Im 20. Jahrhundert war Berlin geteilt."
            ),
            [
                "Die Mauer fiel am 9. November 1989.",
                "Im 20. Jahrhundert war Berlin geteilt."
            ]
        );
        // Elsewhere a number still ends a sentence.
        assert_eq!(
            split_sentences("The team won 3. The fans cheered."),
            ["The team won 3.", "The fans cheered."]
        );
    }

    #[test]
    fn other_scripts_end_their_sentences() {
        assert_eq!(
            split_sentences("西门子的总部位于慕尼黑。公司成立于1847年！真的吗？是的。"),
            [
                "西门子的总部位于慕尼黑。",
                "公司成立于1847年！",
                "真的吗？",
                "是的。"
            ]
        );
        assert_eq!(
            split_sentences("「東京は首都です。」と彼は言った。"),
            ["「東京は首都です。」", "と彼は言った。"]
        );
        assert_eq!(
            split_sentences("أين تقع الشركة؟ تقع في ميونخ."),
            ["أين تقع الشركة؟", "تقع في ميونخ."]
        );
        assert_eq!(
            split_sentences("कंपनी म्यूनिख में है। इसकी स्थापना 1847 में हुई।"),
            ["कंपनी म्यूनिख में है।", "इसकी स्थापना 1847 में हुई।"]
        );
        assert_eq!(split_sentences("v1.2 is out"), ["v1.2 is out"]);
    }

    #[test]
    fn abbreviations_initials_and_numbers_do_not_end_sentences() {
        let cases: &[(&str, &[&str])] = &[
            (
                "Dr. Smith arrived. He sat.",
                &["Dr. Smith arrived.", "He sat."],
            ),
            (
                "Use a fruit, e.g. this one. Or not.",
                &["Use a fruit, e.g. this one.", "Or not."],
            ),
            (
                "Under U.S. law it is legal.",
                &["Under U.S. law it is legal."],
            ),
            (
                "He moved to the U.S. His wife stayed.",
                &["He moved to the U.S.", "His wife stayed."],
            ),
            (
                "We meet at 3 p.m. today. Bring tea.",
                &["We meet at 3 p.m. today.", "Bring tea."],
            ),
            (
                "J. R. R. Tolkien wrote it.",
                &["J. R. R. Tolkien wrote it."],
            ),
            (
                "Pi is 3.14159 roughly. It never ends.",
                &["Pi is 3.14159 roughly.", "It never ends."],
            ),
            (
                "It opened in 1889. It is tall.",
                &["It opened in 1889.", "It is tall."],
            ),
            (
                "1. Mix the flour.\n2. Bake it.",
                &["1. Mix the flour.", "2. Bake it."],
            ),
            (
                "Apples, pears etc. and plums. Fine.",
                &["Apples, pears etc. and plums.", "Fine."],
            ),
            ("Smith et al. Found it.", &["Smith et al.", "Found it."]),
            (
                "It rose on Jan. 5 in Rome.",
                &["It rose on Jan. 5 in Rome."],
            ),
            ("(See Fig. 2.) Then stop.", &["(See Fig. 2.)", "Then stop."]),
        ];
        for (text, expected) in cases {
            assert_eq!(&split_sentences(text), expected, "{text}");
        }
    }

    #[test]
    fn quotes_brackets_and_ellipses_stay_with_their_sentence() {
        let cases: &[(&str, &[&str])] = &[
            (
                "He said \"Stop.\" Then he left.",
                &["He said \"Stop.\"", "Then he left."],
            ),
            (
                "\u{201c}Why?\u{201d} she asked. No answer.",
                &["\u{201c}Why?\u{201d} she asked.", "No answer."],
            ),
            ("Really?! Yes.", &["Really?!", "Yes."]),
            (
                "Wait... what was that? Nothing.",
                &["Wait... what was that?", "Nothing."],
            ),
            (
                "He paused... Then he spoke.",
                &["He paused...", "Then he spoke."],
            ),
            (
                "It trailed off\u{2026} and came back.",
                &["It trailed off\u{2026} and came back."],
            ),
            ("Done (finally.) Next!", &["Done (finally.)", "Next!"]),
            ("Ends without a stop", &["Ends without a stop"]),
        ];
        for (text, expected) in cases {
            assert_eq!(&split_sentences(text), expected, "{text}");
        }
    }
}
