//! A document as text and the blocks of its structure: headings and
//! paragraphs, each a byte range of the text. Plain text and Markdown keep
//! their own text (a span is a span of the file); HTML becomes the text
//! of its body, without tags, scripts, styles or the page's navigation
//! and footer, one block per heading,
//! paragraph, list item, table cell or preformatted block (a span is a
//! span of that text).
//!
//! ```
//! use assay_generate::document::{BlockKind, Document};
//! let d = Document::markdown("notes.md", "# Radium\n\nDiscovered in 1898.\nBy the Curies.\n\n## Uses\n\nPaint.");
//! let kinds: Vec<_> = d.blocks.iter().map(|b| b.kind).collect();
//! assert_eq!(kinds, [BlockKind::Heading(1), BlockKind::Paragraph, BlockKind::Heading(2), BlockKind::Paragraph]);
//! assert_eq!(&d.text[d.blocks[1].span.clone()], "Discovered in 1898.\nBy the Curies.");
//! ```

use std::ops::Range;
use std::path::Path;

/// What a block is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// A heading of level 1 (the title) to 6.
    Heading(u8),
    Paragraph,
    /// Text that a reader of the rendered document does not see: a
    /// Markdown link reference definition (`[thiserror]:
    /// https://github.com/dtolnay/thiserror`). No chunk spans it: the
    /// 0.5B judge made its URL the answer to "What error type does the
    /// Anyhow library return?".
    Unseen,
}

/// One block: its kind and its byte range in the document's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub kind: BlockKind,
    pub span: Range<usize>,
}

/// A document's name (as its user gave it), text and blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    pub name: String,
    pub text: String,
    pub blocks: Vec<Block>,
}

/// The formats read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Html,
    Pdf,
}

impl Format {
    /// The format of a file named `path`, by its extension: `.md` and
    /// `.markdown` Markdown, `.html` and `.htm` HTML, `.pdf` PDF, anything
    /// else text.
    pub fn of(path: &Path) -> Format {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("md" | "markdown") => Format::Markdown,
            Some("html" | "htm") => Format::Html,
            Some("pdf") => Format::Pdf,
            _ => Format::Text,
        }
    }
}

impl Document {
    /// A document of a text `format` (a PDF is read from its bytes,
    /// [`Document::pdf`]; its text here is read as plain text).
    pub fn read(name: &str, text: &str, format: Format) -> Document {
        match format {
            Format::Text | Format::Pdf => Document::plain(name, text),
            Format::Markdown => Document::markdown(name, text),
            Format::Html => Document::html(name, text),
        }
    }

    /// A PDF, by the text of its pages (pdf-extract): paragraphs are
    /// separated by blank lines, as in [`Document::plain`], and spans are
    /// in characters of that text. A PDF it cannot read, and one without
    /// a text layer, is an error naming `name`; a panic inside the
    /// reader is caught and reported so, the other documents unharmed.
    pub fn pdf(name: &str, bytes: &[u8]) -> Result<Document, ReadError> {
        let failed = |why: String| ReadError::Pdf {
            path: name.to_string(),
            why,
        };
        let text = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(bytes))
            .map_err(|panic| {
                let message = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("no message");
                failed(format!("the PDF reader failed ({message})"))
            })?
            .map_err(|e| failed(e.to_string()))?;
        if text.split_whitespace().next().is_none() {
            return Err(failed(
                "no text in it (a scan without a text layer?)".to_string(),
            ));
        }
        Ok(Document::plain(name, &text))
    }

    /// Plain text: paragraphs are separated by blank lines; no headings.
    pub fn plain(name: &str, text: &str) -> Document {
        let blocks = paragraphs(text, 0..text.len())
            .into_iter()
            .map(|span| Block {
                kind: BlockKind::Paragraph,
                span,
            })
            .collect();
        Document {
            name: name.to_string(),
            text: text.to_string(),
            blocks,
        }
    }

    /// Markdown: `#` headings (ATX) and paragraphs separated by blank
    /// lines; a fenced code block is one paragraph, blank lines and all;
    /// each link reference definition line is [`BlockKind::Unseen`].
    pub fn markdown(name: &str, text: &str) -> Document {
        let mut blocks = Vec::new();
        let mut start: Option<usize> = None;
        let mut end = 0;
        let mut fence: Option<&str> = None;
        let flush = |start: &mut Option<usize>, end: usize, blocks: &mut Vec<Block>| {
            if let Some(s) = start.take() {
                blocks.push(Block {
                    kind: BlockKind::Paragraph,
                    span: s..end,
                });
            }
        };
        for (at, line) in lines(text) {
            let trimmed = line.trim();
            let line_end = at + line.trim_end().len();
            if let Some(marker) = fence {
                end = line_end;
                if trimmed.starts_with(marker) {
                    fence = None;
                    flush(&mut start, end, &mut blocks);
                }
                continue;
            }
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                flush(&mut start, end, &mut blocks);
                fence = Some(&trimmed[..3]);
                start = Some(at + (line.len() - line.trim_start().len()));
                end = line_end;
                continue;
            }
            if let Some(level) = heading_level(trimmed) {
                flush(&mut start, end, &mut blocks);
                let after = &line.trim_start()[level as usize..];
                let title = after.trim_start().trim_end_matches('#').trim_end();
                let offset = at + (line.len() - after.trim_start().len());
                if !title.is_empty() {
                    blocks.push(Block {
                        kind: BlockKind::Heading(level),
                        span: offset..offset + title.len(),
                    });
                }
                continue;
            }
            if trimmed.is_empty() {
                flush(&mut start, end, &mut blocks);
                continue;
            }
            // As in CommonMark, a definition cannot interrupt a paragraph.
            if start.is_none() && is_link_definition(trimmed) {
                let offset = at + (line.len() - line.trim_start().len());
                blocks.push(Block {
                    kind: BlockKind::Unseen,
                    span: offset..offset + trimmed.len(),
                });
                continue;
            }
            if start.is_none() {
                start = Some(at + (line.len() - line.trim_start().len()));
            }
            end = line_end;
        }
        flush(&mut start, end, &mut blocks);
        Document {
            name: name.to_string(),
            text: text.to_string(),
            blocks,
        }
    }

    /// HTML: the text of the body (the whole document where there is no
    /// `<body>`), without the contents of `script`, `style`, `noscript`,
    /// `svg`, `head` and `template`, nor of the page's navigation, banner,
    /// search, footer and asides (by element or ARIA role), character
    /// references decoded.
    /// Headings `h1` to `h6` are headings; every other block element ends
    /// a paragraph.
    pub fn html(name: &str, html: &str) -> Document {
        let mut text = String::new();
        let mut blocks: Vec<Block> = Vec::new();
        let mut open: Option<(usize, BlockKind)> = None;
        // The element being left out, and how many of its name are open.
        let mut skip: Option<(String, usize)> = None;
        let mut kind = BlockKind::Paragraph;
        let body = html
            .find("<body")
            .or_else(|| html.find("<BODY"))
            .unwrap_or(0);
        let mut rest = &html[body..];
        let mut close = |text: &mut String, open: &mut Option<(usize, BlockKind)>| {
            if let Some((start, kind)) = open.take() {
                let trimmed = text.trim_end().len();
                text.truncate(trimmed);
                if trimmed > start {
                    blocks.push(Block {
                        kind,
                        span: start..trimmed,
                    });
                }
                if !text.is_empty() {
                    text.push_str("\n\n");
                }
            }
        };
        while !rest.is_empty() {
            let Some(lt) = rest.find('<') else {
                if skip.is_none() {
                    push_text(&mut text, &mut open, kind, rest);
                }
                break;
            };
            if skip.is_none() {
                push_text(&mut text, &mut open, kind, &rest[..lt]);
            }
            rest = &rest[lt..];
            if rest.starts_with("<!--") {
                rest = rest.find("-->").map_or("", |i| &rest[i + 3..]);
                continue;
            }
            let Some(gt) = rest.find('>') else { break };
            let tag = &rest[1..gt];
            rest = &rest[gt + 1..];
            let closing = tag.starts_with('/');
            let tag_name: String = tag
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase();
            let opens = !closing && !tag.ends_with('/') && !is_void(&tag_name);
            if let Some((skipped, depth)) = &mut skip {
                if &tag_name == skipped {
                    if opens {
                        *depth += 1;
                    } else if closing {
                        *depth -= 1;
                        if *depth == 0 {
                            skip = None;
                        }
                    }
                }
                continue;
            }
            if opens && is_left_out(&tag_name, tag) {
                skip = Some((tag_name, 1));
                continue;
            }
            let heading = match tag_name.as_bytes() {
                [b'h', d @ b'1'..=b'6'] => Some(d - b'0'),
                _ => None,
            };
            if heading.is_some() || is_block(&tag_name) {
                close(&mut text, &mut open);
                kind = match (heading, closing) {
                    (Some(level), false) => BlockKind::Heading(level),
                    _ => BlockKind::Paragraph,
                };
            } else if tag_name == "br" {
                push_text(&mut text, &mut open, kind, "\n");
            }
        }
        close(&mut text, &mut open);
        let trimmed = text.trim_end().len();
        text.truncate(trimmed);
        Document {
            name: name.to_string(),
            text,
            blocks,
        }
    }
}

/// Why documents could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{0}: not UTF-8 text")]
    NotText(String),
    #[error("{path}: cannot read this PDF: {why}; give its text (pdftotext FILE) instead")]
    Pdf { path: String, why: String },
}

/// Documents read from `paths`: each file by its format, each folder's
/// files with a known extension (`.md`, `.markdown`, `.txt`, `.html`,
/// `.htm`, `.pdf`), recursively, in name order. A folder's other files
/// are left, and named in the second list.
pub fn read_paths(paths: &[std::path::PathBuf]) -> Result<(Vec<Document>, Vec<String>), ReadError> {
    let mut documents = Vec::new();
    let mut left = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut files = Vec::new();
            walk(path, &mut files)?;
            files.sort();
            for file in files {
                let known = file.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                    matches!(
                        e.to_ascii_lowercase().as_str(),
                        "md" | "markdown" | "txt" | "html" | "htm" | "pdf"
                    )
                });
                if known {
                    documents.push(read_file(&file)?);
                } else {
                    left.push(file.display().to_string());
                }
            }
        } else {
            documents.push(read_file(path)?);
        }
    }
    Ok((documents, left))
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<(), ReadError> {
    let io = |error| ReadError::Io {
        path: dir.display().to_string(),
        error,
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

fn read_file(path: &Path) -> Result<Document, ReadError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|error| ReadError::Io {
        path: name.clone(),
        error,
    })?;
    if Format::of(path) == Format::Pdf {
        return Document::pdf(&name, &bytes);
    }
    let text = String::from_utf8(bytes).map_err(|_| ReadError::NotText(name.clone()))?;
    Ok(Document::read(&name, &text, Format::of(path)))
}

/// Appends the text between tags (its references decoded, its runs of
/// white space one space) to the open block, opening one at its first
/// visible character.
fn push_text(text: &mut String, open: &mut Option<(usize, BlockKind)>, kind: BlockKind, raw: &str) {
    for c in decode(raw).chars() {
        if c.is_whitespace() {
            if open.is_some() && !text.ends_with([' ', '\n']) {
                text.push(if c == '\n' && raw == "\n" { '\n' } else { ' ' });
            }
            continue;
        }
        if open.is_none() {
            *open = Some((text.len(), kind));
        }
        text.push(c);
    }
}

/// Whether an element's contents are not the page's text: scripts,
/// styles and the like, and the page's furniture by HTML's own marks:
/// `nav`, `footer` and `aside` elements and any element whose ARIA role
/// is one of those landmarks (navigation, contentinfo, complementary) or
/// the site's banner or search. A navigation box's list of names and a
/// footer's licence are no source for questions about the page.
fn is_left_out(name: &str, tag: &str) -> bool {
    matches!(
        name,
        "script" | "style" | "noscript" | "svg" | "head" | "template" | "nav" | "footer" | "aside"
    ) || matches!(
        attribute(tag, "role")
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("navigation" | "contentinfo" | "complementary" | "banner" | "search")
    )
}

/// The value of attribute `name` in a tag's text (`div role="x" id=y`),
/// quoted or not.
fn attribute<'t>(tag: &'t str, name: &str) -> Option<&'t str> {
    let mut rest = tag;
    while let Some(at) = rest.find(name) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + name.len()..].trim_start();
        rest = &rest[at + name.len()..];
        if !before.is_some_and(char::is_whitespace) {
            continue;
        }
        let Some(value) = after.strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start();
        return Some(match value.chars().next() {
            Some(q @ ('"' | '\'')) => value[1..].split(q).next().unwrap_or(""),
            _ => value.split(char::is_whitespace).next().unwrap_or(""),
        });
    }
    None
}

/// Whether an element never has contents or a closing tag.
fn is_void(tag: &str) -> bool {
    matches!(
        tag,
        "area"
            | "base"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "link"
            | "meta"
            | "source"
            | "track"
            | "wbr"
    )
}

/// Whether an element ends a paragraph.
fn is_block(tag: &str) -> bool {
    matches!(
        tag,
        "p" | "div"
            | "li"
            | "ul"
            | "ol"
            | "dl"
            | "dt"
            | "dd"
            | "table"
            | "tr"
            | "td"
            | "th"
            | "caption"
            | "pre"
            | "blockquote"
            | "section"
            | "article"
            | "header"
            | "main"
            | "figure"
            | "figcaption"
            | "body"
            | "hr"
            | "form"
    )
}

/// Decodes the character references of HTML text: the five named ones
/// XML has, `&nbsp;`, and numeric ones; others are kept as written.
fn decode(raw: &str) -> String {
    if !raw.contains('&') {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let Some(semi) = rest[..rest.len().min(12)].find(';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let name = &rest[1..semi];
        let decoded = match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            _ => name
                .strip_prefix("#x")
                .or_else(|| name.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Each line of `text` with the byte offset it starts at, without its
/// line break.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    text.split_inclusive('\n').map(move |l| {
        let start = at;
        at += l.len();
        (start, l.trim_end_matches(['\n', '\r']))
    })
}

/// Whether a Markdown line (trimmed) is a link reference definition:
/// `[label]: destination`, then nothing or a title in quotes or
/// parentheses; the label not a footnote's (`[^1]: ...` is text the
/// reader sees).
fn is_link_definition(line: &str) -> bool {
    let Some((label, rest)) = line.strip_prefix('[').and_then(|r| r.split_once("]:")) else {
        return false;
    };
    if label.trim().is_empty() || label.starts_with('^') || label.contains(['[', ']']) {
        return false;
    }
    let rest = rest.trim_start();
    let title = match rest.strip_prefix('<') {
        Some(r) => match r.split_once('>') {
            Some((_, after)) => after,
            None => return false,
        },
        None if rest.is_empty() => return false,
        None => &rest[rest.find(char::is_whitespace).unwrap_or(rest.len())..],
    }
    .trim();
    title.is_empty()
        || [('"', '"'), ('\'', '\''), ('(', ')')]
            .iter()
            .any(|(open, close)| {
                title.len() >= 2 && title.starts_with(*open) && title.ends_with(*close)
            })
}

/// The level of an ATX heading line (`## Title`): 1 to 6 `#` then a space.
fn heading_level(line: &str) -> Option<u8> {
    let hashes = line.bytes().take_while(|b| *b == b'#').count();
    let after = line.as_bytes().get(hashes);
    ((1..=6).contains(&hashes) && matches!(after, None | Some(b' ' | b'\t')))
        .then_some(hashes as u8)
}

/// The paragraphs of `text[range]`: runs of non-blank lines, each span
/// from its first visible character to its last.
fn paragraphs(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut current: Option<Range<usize>> = None;
    for (at, line) in lines(&text[range.clone()]) {
        let at = range.start + at;
        if line.trim().is_empty() {
            out.extend(current.take());
            continue;
        }
        let start = at + (line.len() - line.trim_start().len());
        let end = at + line.trim_end().len();
        current = Some(current.map_or(start..end, |c| c.start..end));
    }
    out.extend(current);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(d: &Document) -> Vec<(BlockKind, &str)> {
        d.blocks
            .iter()
            .map(|b| (b.kind, &d.text[b.span.clone()]))
            .collect()
    }

    #[test]
    fn plain_text_paragraphs_are_runs_of_lines() {
        let d = Document::plain("a.txt", "  One line.\nTwo line.\n\n\n\tThree.  \n");
        assert_eq!(
            blocks(&d),
            [
                (BlockKind::Paragraph, "One line.\nTwo line."),
                (BlockKind::Paragraph, "Three.")
            ]
        );
    }

    #[test]
    fn markdown_headings_paragraphs_and_fences() {
        let text = "# Title #\n\nIntro text.\n\n```rust\nlet x = 1;\n\nlet y = 2;\n```\n###### Six\n####### not a heading\n#hashtag\n";
        let d = Document::markdown("a.md", text);
        assert_eq!(
            blocks(&d),
            [
                (BlockKind::Heading(1), "Title"),
                (BlockKind::Paragraph, "Intro text."),
                (
                    BlockKind::Paragraph,
                    "```rust\nlet x = 1;\n\nlet y = 2;\n```"
                ),
                (BlockKind::Heading(6), "Six"),
                (BlockKind::Paragraph, "####### not a heading\n#hashtag"),
            ]
        );
    }

    /// A link reference definition is unseen text, its own block; a
    /// footnote's definition, a bracketed word and a definition that
    /// would interrupt a paragraph are text.
    #[test]
    fn markdown_link_definitions_are_unseen() {
        let text = "Use [thiserror] for libraries.\n\n[thiserror]: https://github.com/dtolnay/thiserror\n  [a b]: <./x.md> \"Title\"\n\n[^1]: A footnote.\n\n[note]: is text, not a link?\n[x]: ./x.md\n";
        let d = Document::markdown("a.md", text);
        assert_eq!(
            blocks(&d),
            [
                (BlockKind::Paragraph, "Use [thiserror] for libraries."),
                (
                    BlockKind::Unseen,
                    "[thiserror]: https://github.com/dtolnay/thiserror"
                ),
                (BlockKind::Unseen, "[a b]: <./x.md> \"Title\""),
                (BlockKind::Paragraph, "[^1]: A footnote."),
                (
                    BlockKind::Paragraph,
                    "[note]: is text, not a link?\n[x]: ./x.md"
                ),
            ]
        );
    }

    #[test]
    fn html_keeps_the_body_s_visible_text_by_block() {
        let html = "<html><head><title>T</title><style>p{}</style></head>\
            <body><script>var a = '<p>';</script><h1>Ra&shy;dium &amp; Co</h1>\
            <p>Found in <b>1898</b> by&nbsp;the Curies.<br>Second line.</p>\
            <!-- <p>hidden</p> --><ul><li>Paint</li><li>&#8220;Cures&#x201D;</li></ul>\
            <div>Loose   text\n over lines</div></body></html>";
        let d = Document::html("a.html", html);
        assert_eq!(
            blocks(&d),
            [
                (BlockKind::Heading(1), "Ra&shy;dium & Co"),
                (
                    BlockKind::Paragraph,
                    "Found in 1898 by the Curies.\nSecond line."
                ),
                (BlockKind::Paragraph, "Paint"),
                (BlockKind::Paragraph, "\u{201c}Cures\u{201d}"),
                (BlockKind::Paragraph, "Loose text over lines"),
            ]
        );
        assert!(!d.text.contains("hidden") && !d.text.contains("var a"));
    }

    #[test]
    fn html_leaves_out_the_page_s_navigation_and_footer() {
        // As Wikipedia writes them: a navigation box (a div with the
        // navigation role, divs nested in it), a footer by its role, the
        // article's text between; an attribute that only ends in "role"
        // leaves nothing out.
        let html = "<body><div id=\"mw-head\"><nav class=\"menu\"><ul><li>Log in</li></ul></nav></div>\
            <div id=\"content\"><p>Mozilla is a free software community.</p>\
            <div role=\"navigation\" class=\"navbox\"><div><table><tr><td>Rhino</td></tr></table></div>\
            <div><img src=x><br/>Camino</div></div>\
            <p data-role=navigation>It was founded in 1998.</p><aside>See also</aside></div>\
            <div id=\"footer\" role='contentinfo'><ul><li>Text is available under CC BY-SA.</li></ul></div>\
            <p>After.</p></body>";
        let d = Document::html("m.html", html);
        assert_eq!(
            blocks(&d),
            [
                (
                    BlockKind::Paragraph,
                    "Mozilla is a free software community."
                ),
                (BlockKind::Paragraph, "It was founded in 1998."),
                (BlockKind::Paragraph, "After."),
            ]
        );
    }

    #[test]
    fn the_shared_wikipedia_pages_keep_their_article_without_its_navigation() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/docs");
        let path = docs.join("en_wikipedia_mozilla.html");
        let (read, _) = read_paths(std::slice::from_ref(&path))
            .unwrap_or_else(|e| panic!("{e} (is ../shared beside the repository?)"));
        let text = &read[0].text;
        assert!(text.contains("Mozilla is a free-software community, created in 1998"));
        // Names only its navigation box lists, and its footer's links.
        for furniture in ["Swiftweasel", "Skywriter", "Privacy policy"] {
            assert!(!text.contains(furniture), "{furniture}");
        }
    }

    #[test]
    fn the_format_follows_the_extension() {
        assert_eq!(Format::of(Path::new("a/B.MD")), Format::Markdown);
        assert_eq!(Format::of(Path::new("x.htm")), Format::Html);
        assert_eq!(Format::of(Path::new("notes")), Format::Text);
        assert_eq!(Format::of(Path::new("paper.PDF")), Format::Pdf);
    }

    /// The shared corpus' two PDFs (`../shared/data/docs`, beside the
    /// repository as CI has it): their text is read, with the words
    /// `pdftotext` finds (3,654 and 4,644) within 3%, and a known
    /// sentence is a span of the document's text.
    #[test]
    fn the_shared_corpus_pdfs_are_read_as_text() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/docs");
        for (file, pdftotext_words, sentence) in [
            (
                "en_datta2010_dvt_prophylaxis_trauma_review.pdf",
                3654,
                "Complications related to deep venous thrombosis",
            ),
            (
                "en_tully2010_heart_failure_programmes.pdf",
                4644,
                "Patient Experiences of Structured Heart Failure Programmes",
            ),
        ] {
            let path = docs.join(file);
            let (read, left) = read_paths(std::slice::from_ref(&path))
                .unwrap_or_else(|e| panic!("{e} (is ../shared beside the repository?)"));
            assert!(left.is_empty());
            let d = &read[0];
            let words = d.text.split_whitespace().count();
            let off = words.abs_diff(pdftotext_words) as f64 / pdftotext_words as f64;
            assert!(off < 0.03, "{file}: {words} words");
            assert!(d.text.contains(sentence), "{file}");
            assert!(d.blocks.len() > 10, "{file}: {} blocks", d.blocks.len());
            assert!(d
                .blocks
                .iter()
                .all(|b| d.text.get(b.span.clone()).is_some()));
        }
    }

    /// A PDF the reader cannot read is an error that names the file and
    /// says what to give instead; it does not panic.
    #[test]
    fn a_broken_pdf_is_an_error_naming_the_file() {
        let dir = std::env::temp_dir().join(format!("assay-pdf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("broken.pdf");
        std::fs::write(
            &path,
            b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n",
        )
        .unwrap();
        let error = read_paths(&[path]).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            error.contains("broken.pdf: cannot read this PDF: "),
            "{error}"
        );
        assert!(error.contains("pdftotext"), "{error}");
    }
}
