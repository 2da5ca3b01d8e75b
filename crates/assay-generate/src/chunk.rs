//! Chunks of a document along its structure, each at most a token budget:
//! a heading ends a chunk; paragraphs under one heading are joined while
//! they fit; a paragraph that does not fit alone is cut at its sentences,
//! and a sentence that does not fit at its words. A chunk is a byte range
//! of the document's text, so the text a question is made from is always
//! a span of its document, with the headings above it kept beside.
//!
//! Tokens are estimated, not counted with a model's tokenizer: one token
//! per four characters, rounded up ([`estimate_tokens`]), the rule of
//! thumb of OpenAI's tokenizers for English; the same estimate prices a
//! dry run.
//!
//! ```
//! use assay_generate::chunk::chunk;
//! use assay_generate::document::Document;
//! let d = Document::markdown("a.md", "# A\n\nOne two.\n\nThree four.\n\n# B\n\nFive.");
//! let chunks = chunk(&d, 100);
//! let texts: Vec<&str> = chunks.iter().map(|c| &d.text[c.span.clone()]).collect();
//! assert_eq!(texts, ["One two.\n\nThree four.", "Five."]);
//! assert_eq!(chunks[1].headings, ["B"]);
//! ```

use crate::document::{BlockKind, Document};
use std::ops::Range;

/// One chunk of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Its byte range in the document's text.
    pub span: Range<usize>,
    /// The headings above it, outermost first.
    pub headings: Vec<String>,
    /// The estimated tokens of its text.
    pub tokens: usize,
}

/// The estimated tokens of `text`: its characters divided by four,
/// rounded up.
///
/// ```
/// assert_eq!(assay_generate::chunk::estimate_tokens("Radium"), 2);
/// assert_eq!(assay_generate::chunk::estimate_tokens(""), 0);
/// ```
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// The [`markup_share`] from which a chunk is markup, not text.
pub const MARKUP_FROM: f64 = 0.5;

/// The share of `text`'s visible characters (all but white space) that
/// are inside HTML tags: a Markdown file's raw HTML table is mostly its
/// tags, and a chunk cut from it is no source for a question. A tag cut
/// by the chunk's edge counts from that edge.
///
/// ```
/// use assay_generate::chunk::markup_share;
/// assert_eq!(markup_share("Radium is a metal."), 0.0);
/// assert_eq!(markup_share("<b>x</b>"), 0.875);
/// assert_eq!(markup_share("b\">yes"), 0.5);
/// assert_eq!(markup_share("Vec<T> and x < y"), 0.25);
/// ```
pub fn markup_share(text: &str) -> f64 {
    // Before the first tag opens, a `>` closes one the chunk's edge cut.
    let cut = text
        .find('<')
        .map_or(text, |i| &text[..i])
        .find('>')
        .map_or(0, |end| end + 1);
    let mut inside = text[..cut].chars().filter(|c| !c.is_whitespace()).count();
    let (mut visible, mut tag) = (inside, false);
    let mut chars = text[cut..].chars().peekable();
    while let Some(c) = chars.next() {
        if !tag
            && c == '<'
            && chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!'))
        {
            tag = true;
        }
        if !c.is_whitespace() {
            visible += 1;
            inside += usize::from(tag);
        }
        if tag && c == '>' {
            tag = false;
        }
    }
    if visible == 0 {
        0.0
    } else {
        inside as f64 / visible as f64
    }
}

/// Section names of a document's apparatus (its references, notes,
/// links), in English, German, French and Spanish, lower-cased.
const APPARATUS: &[&str] = &[
    "references",
    "notes",
    "notes and references",
    "footnotes",
    "citations",
    "cited sources",
    "works cited",
    "sources",
    "bibliography",
    "further reading",
    "external links",
    "see also",
    "einzelnachweise",
    "anmerkungen",
    "fußnoten",
    "belege",
    "quellen",
    "literatur",
    "weblinks",
    "siehe auch",
    "références",
    "notes et références",
    "bibliographie",
    "liens externes",
    "voir aussi",
    "referencias",
    "notas",
    "bibliografía",
    "enlaces externos",
    "véase también",
    "fuentes",
];

/// Whether a heading names a section of the document's apparatus
/// ([`APPARATUS`]), after what an editor adds in brackets or parentheses
/// ("References[edit]", "Cited sources (reference list)"): a chunk of a
/// reference list gives questions about a citation, not about the
/// document. A heading that only begins so is the document's own
/// ("References and Borrowing").
///
/// ```
/// use assay_generate::chunk::is_apparatus;
/// assert!(is_apparatus("Einzelnachweise[Bearbeiten | Quelltext bearbeiten]"));
/// assert!(is_apparatus("Cited sources (reference list, entries with text only)"));
/// assert!(!is_apparatus("References and Borrowing"));
/// ```
pub fn is_apparatus(heading: &str) -> bool {
    let name = heading.split(['[', '(']).next().unwrap_or("");
    let name = name.trim().trim_end_matches(':').trim().to_lowercase();
    APPARATUS.contains(&name.as_str())
}

/// Citations a chunk holds from which it is read as a reference list
/// without a heading to say so (a PDF's): three, where the text of a
/// paper cites one source at a time and its reference list holds four or
/// five to a chunk.
pub const CITATIONS_FROM: usize = 3;

/// The citations in `text`, by their shape: a year followed by a volume
/// and its first page ("Br J Surg 2003, 90:1338-44", "2002;118(3):1137"),
/// or a page range after "pp." ("vol. 5, pp. 10-19"). The shared corpus's
/// trauma review has no heading over its reference list in the PDF's
/// text, and gave a question on which year a cited study appeared.
///
/// ```
/// use assay_generate::chunk::citations;
/// let list = "20. Knudson MM: Use of LMWH in trauma patients. J Trauma 1996, 41:446-59. \
///             21. Lindhoff-Last E: Heparin-induced antibodies. Br J Haematol 2002;118(3):1137-42. \
///             22. Amiral J: Antibodies to PF4. Thromb Haemost, vol. 73, pp. 21-28, 1995.";
/// assert_eq!(citations(list), 3);
/// assert_eq!(citations("In 1898, 127 samples were weighed: 3 held radium."), 0);
/// ```
pub fn citations(text: &str) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let digits = |from: usize| {
        chars[from..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let spaces = |from: usize| {
        chars[from..]
            .iter()
            .take_while(|c| c.is_whitespace())
            .count()
    };
    let mut found = 0;
    let mut i = 0;
    while i < chars.len() {
        let starts_number =
            chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric());
        if starts_number
            && digits(i) == 4
            && matches!(chars[i..i + 2], ['1', '8' | '9'] | ['2', '0'])
        {
            // YEAR, VOLUME(ISSUE):PAGE or YEAR;VOLUME:PAGE
            let mut j = i + 4;
            j += spaces(j);
            if matches!(chars.get(j), Some(',' | ';')) {
                j += 1;
                j += spaces(j);
                let volume = digits(j);
                j += volume;
                if chars.get(j) == Some(&'(') {
                    j += 1 + digits(j + 1);
                    j += usize::from(chars.get(j) == Some(&')'));
                }
                j += spaces(j);
                if volume > 0 && chars.get(j) == Some(&':') && digits(j + 1 + spaces(j + 1)) > 0 {
                    found += 1;
                }
            }
            i += 4;
            continue;
        }
        if chars[i..].starts_with(&['p', 'p', '.']) && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            let j = i + 3;
            if digits(j + spaces(j)) > 0 {
                found += 1;
            }
            i = j;
            continue;
        }
        i += 1;
    }
    found
}

/// The chunks of `doc`, each of at most `budget` estimated tokens (a
/// single word longer than that is a chunk of its own).
pub fn chunk(doc: &Document, budget: usize) -> Vec<Chunk> {
    let text = doc.text.as_str();
    let mut out = Vec::new();
    let mut headings: Vec<(u8, String)> = Vec::new();
    let mut current: Option<Range<usize>> = None;
    let path = |headings: &[(u8, String)]| headings.iter().map(|(_, h)| h.clone()).collect();
    for block in &doc.blocks {
        match block.kind {
            BlockKind::Heading(level) => {
                flush(text, &mut current, path(&headings), &mut out);
                headings.retain(|(l, _)| *l < level);
                headings.push((level, text[block.span.clone()].to_string()));
            }
            BlockKind::Unseen => flush(text, &mut current, path(&headings), &mut out),
            BlockKind::Paragraph => {
                for piece in pieces(text, block.span.clone(), budget) {
                    let joined = current.as_ref().map(|c| c.start..piece.end);
                    match joined {
                        Some(j) if estimate_tokens(&text[j.clone()]) <= budget => current = Some(j),
                        _ => {
                            flush(text, &mut current, path(&headings), &mut out);
                            current = Some(piece);
                        }
                    }
                }
            }
        }
    }
    flush(text, &mut current, path(&headings), &mut out);
    out
}

fn flush(
    text: &str,
    current: &mut Option<Range<usize>>,
    headings: Vec<String>,
    out: &mut Vec<Chunk>,
) {
    if let Some(span) = current.take() {
        out.push(Chunk {
            tokens: estimate_tokens(&text[span.clone()]),
            span,
            headings,
        });
    }
}

/// `span` of `text` as pieces that each fit `budget`: itself if it fits,
/// else its sentences, joined while they fit; a sentence that does not
/// fit is cut into runs of its words, which are joined with no other
/// sentence.
fn pieces(text: &str, span: Range<usize>, budget: usize) -> Vec<Range<usize>> {
    if estimate_tokens(&text[span.clone()]) <= budget {
        return vec![span];
    }
    let paragraph = &text[span.clone()];
    let base = paragraph.as_ptr() as usize;
    let mut out: Vec<Range<usize>> = Vec::new();
    // Whether the last piece is whole sentences, which the next may join.
    let mut open = false;
    for sentence in assay_text::sentences::split_sentences(paragraph) {
        let start = span.start + (sentence.as_ptr() as usize - base);
        let range = start..start + sentence.len();
        if estimate_tokens(sentence) > budget {
            out.extend(join(text, words(text, range), budget));
            open = false;
            continue;
        }
        match out.last_mut() {
            Some(last) if open && estimate_tokens(&text[last.start..range.end]) <= budget => {
                last.end = range.end;
            }
            _ => {
                out.push(range);
                open = true;
            }
        }
    }
    out
}

/// The words of `text[span]` (runs without white space).
fn words(text: &str, span: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text[span.clone()].char_indices() {
        let at = span.start + i;
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push(s..at);
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    out.extend(start.map(|s| s..span.end));
    out
}

/// Consecutive `units` joined while the joined text fits `budget`.
fn join(text: &str, units: Vec<Range<usize>>, budget: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for unit in units {
        match out.last_mut() {
            Some(last) if estimate_tokens(&text[last.start..unit.end]) <= budget => {
                last.end = unit.end;
            }
            _ => out.push(unit),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts<'a>(d: &'a Document, chunks: &[Chunk]) -> Vec<&'a str> {
        chunks.iter().map(|c| &d.text[c.span.clone()]).collect()
    }

    /// A link reference definition ends the chunk before it and is in
    /// none: the paragraphs on either side fit one chunk, and are two.
    #[test]
    fn no_chunk_spans_a_link_definition() {
        let text = "Use [thiserror] for libraries.\n\n[thiserror]: https://github.com/dtolnay/thiserror\n\nUse anyhow in applications.";
        let d = Document::markdown("a.md", text);
        assert_eq!(
            texts(&d, &chunk(&d, 100)),
            [
                "Use [thiserror] for libraries.",
                "Use anyhow in applications."
            ]
        );
    }

    /// Budget 5 tokens (20 characters): the paragraphs that fit together
    /// are joined (with the long paragraph's first sentence), a long one
    /// is cut at its sentences, a long sentence at its words; every chunk
    /// fits and is a span of the text.
    #[test]
    fn worked_example_at_a_budget_of_five_tokens() {
        let text = "Ab cd.\n\nEf gh.\n\nOne. Two three four five six seven eight nine ten.";
        let d = Document::plain("a.txt", text);
        let chunks = chunk(&d, 5);
        assert_eq!(
            texts(&d, &chunks),
            [
                "Ab cd.\n\nEf gh.\n\nOne.",
                "Two three four five",
                "six seven eight nine",
                "ten.",
            ]
        );
        for c in &chunks {
            assert!(c.tokens <= 5, "{c:?}");
            assert_eq!(c.tokens, estimate_tokens(&d.text[c.span.clone()]));
        }
    }

    #[test]
    fn headings_end_chunks_and_give_their_path() {
        let text =
            "# Top\n\nIntro.\n\n## Sub\n\nInside.\n\n### Deeper\n\nDeep.\n\n## Next\n\nLast.";
        let d = Document::markdown("a.md", text);
        let chunks = chunk(&d, 1000);
        let got: Vec<(&str, Vec<String>)> = chunks
            .iter()
            .map(|c| (&d.text[c.span.clone()], c.headings.clone()))
            .collect();
        let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            got,
            [
                ("Intro.", path(&["Top"])),
                ("Inside.", path(&["Top", "Sub"])),
                ("Deep.", path(&["Top", "Sub", "Deeper"])),
                ("Last.", path(&["Top", "Next"])),
            ]
        );
    }

    #[test]
    fn a_word_longer_than_the_budget_is_a_chunk_of_its_own() {
        let d = Document::plain(
            "a.txt",
            "Pneumonoultramicroscopicsilicovolcanoconiosis is long.",
        );
        let chunks = chunk(&d, 3);
        assert_eq!(
            texts(&d, &chunks),
            ["Pneumonoultramicroscopicsilicovolcanoconiosis", "is long."]
        );
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let d = Document::plain(
            "a.txt",
            "Équipe très forte. Ça marche bien aussi. Über alles.",
        );
        for c in chunk(&d, 4) {
            assert!(d.text.is_char_boundary(c.span.start) && d.text.is_char_boundary(c.span.end));
            assert!(c.tokens <= 4 || !d.text[c.span.clone()].contains(' '));
        }
    }
}
