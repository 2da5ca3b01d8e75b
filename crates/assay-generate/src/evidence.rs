//! The sentences a question cites. A prompt file that declares an
//! `evidence` property (one context) or `evidence_1` and `evidence_2`
//! (two) asks the judge to copy, before its question, the sentence of
//! each context that states its answer; the request's schema lists each
//! context's sentences as the property's `enum`, so a grammar-constrained
//! judge copies one of them word for word. The answer is then checked
//! against one sentence of each context (after the contexts' headings),
//! the cited ones first ([`Cited::choices`]), not the whole contexts: the 1.5B
//! judge's wrong answers were mostly made of words from several
//! sentences joined into another meaning ("When was PEP 8100 adopted?"
//! answered with the date of PEP 8106's line).
//!
//! ```
//! use assay_generate::evidence::{citable, cited, with_sentences};
//! use serde_json::json;
//! let text = "Radium was discovered\nin 1898. It glows blue.\n- It is rare.";
//! assert_eq!(citable(text), ["Radium was discovered in 1898.", "It glows blue.", "- It is rare."]);
//! let schema = json!({"properties": {"evidence": {"type": "string"}, "question": {"type": "string"}}});
//! let filled = with_sentences(&schema, &[text]);
//! assert_eq!(filled["properties"]["evidence"]["enum"][1], "It glows blue.");
//! let answer = json!({"evidence": "It glows blue.", "question": "What colour does radium glow?"});
//! let found = cited(&schema, &answer, &[text]).unwrap().unwrap();
//! assert_eq!(found.texts(&found.chosen), ["It glows blue."]);
//! assert!(cited(&schema, &json!({"evidence": "It glows red."}), &[text]).is_err());
//! assert!(cited(&schema, &json!({"question": "What colour?"}), &[text]).is_err());
//! assert_eq!(cited(&json!({}), &json!({"question": "What colour?"}), &[text]).unwrap(), None);
//! ```

use crate::check::Rejection;
use serde_json::Value;

/// The property that cites a sentence of context `n` (from 0) of
/// `count`.
pub fn field(n: usize, count: usize) -> String {
    match count {
        1 => "evidence".to_string(),
        _ => format!("evidence_{}", n + 1),
    }
}

/// The sentences of a context's text that a judge may cite, in order,
/// each once. A paragraph's lines are joined first (Markdown, plain text
/// and a PDF's text wrap their lines), but a line that opens a list item
/// or a table row starts a sentence of its own.
pub fn citable(text: &str) -> Vec<String> {
    let mut units: Vec<String> = Vec::new();
    let mut open = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            open = false;
            continue;
        }
        match units.last_mut() {
            Some(unit) if open && !opens_item(line) => {
                unit.push(' ');
                unit.push_str(line);
            }
            _ => units.push(line.to_string()),
        }
        open = true;
    }
    let mut out: Vec<String> = Vec::new();
    for unit in &units {
        for sentence in assay_text::sentences::split_sentences(unit) {
            if sentence.chars().any(char::is_alphanumeric) && !out.iter().any(|s| s == sentence) {
                out.push(sentence.to_string());
            }
        }
    }
    out
}

/// Whether a line opens a list item or a table row.
fn opens_item(line: &str) -> bool {
    let numbered = line.split_once(['.', ')']).is_some_and(|(n, rest)| {
        !n.is_empty()
            && n.len() <= 3
            && n.chars().all(|c| c.is_ascii_digit())
            && rest.starts_with(' ')
    });
    numbered
        || line.starts_with('|')
        || ["- ", "* ", "+ ", "\u{2022}"]
            .iter()
            .any(|m| line.starts_with(m))
}

/// `schema` with each evidence property it declares for `contexts` given
/// its context's sentences as its `enum`; a schema without one as it is.
pub fn with_sentences(schema: &Value, contexts: &[&str]) -> Value {
    let mut schema = schema.clone();
    for (n, text) in contexts.iter().enumerate() {
        if let Some(property) = schema
            .pointer_mut(&format!("/properties/{}", field(n, contexts.len())))
            .and_then(Value::as_object_mut)
        {
            property.insert("enum".into(), citable(text).into());
        }
    }
    schema
}

/// Each context's citable sentences, and the one of each that an answer
/// cites, by its place among them.
#[derive(Clone, Debug, PartialEq)]
pub struct Cited {
    pub sentences: Vec<Vec<String>>,
    pub chosen: Vec<usize>,
}

impl Cited {
    /// The sentences of `choice`, one place per context.
    pub fn texts(&self, choice: &[usize]) -> Vec<String> {
        self.sentences
            .iter()
            .zip(choice)
            .map(|(sentences, &k)| sentences[k].clone())
            .collect()
    }

    /// The choices of one sentence per context, the cited ones first, then
    /// every other in the contexts' order: the answer is checked against
    /// each until one supports it, so that a judge that cites the wrong
    /// sentence of a chunk whose other sentence states its answer is not
    /// rejected for the citation (the 0.5B default often cites the
    /// sentence before), while an answer no single sentence of each
    /// context states still is.
    ///
    /// ```
    /// use assay_generate::evidence::Cited;
    /// let cited = Cited { sentences: vec![vec!["A one.".into(), "A two.".into()], vec!["B one.".into()]], chosen: vec![1, 0] };
    /// let all: Vec<Vec<usize>> = cited.choices().collect();
    /// assert_eq!(all, [vec![1, 0], vec![0, 0]]);
    /// ```
    pub fn choices(&self) -> impl Iterator<Item = Vec<usize>> + '_ {
        let counts: Vec<usize> = self.sentences.iter().map(Vec::len).collect();
        let total: usize = counts.iter().product();
        let others = (0..total).filter_map(move |mut k| {
            let choice: Vec<usize> = counts
                .iter()
                .map(|&n| {
                    let place = k % n;
                    k /= n;
                    place
                })
                .collect();
            (choice != self.chosen).then_some(choice)
        });
        std::iter::once(self.chosen.clone()).chain(others)
    }
}

/// The sentences `answer` cites, one per context, where `schema` (its
/// prompt's) asks for them, else `None`; a cited text missing or not a
/// sentence of its context is the judge's failure (a judge without
/// constrained decoding may paraphrase it).
pub fn cited(
    schema: &Value,
    answer: &Value,
    contexts: &[&str],
) -> Result<Option<Cited>, Rejection> {
    let mut cited = Cited {
        sentences: Vec::new(),
        chosen: Vec::new(),
    };
    for (n, text) in contexts.iter().enumerate() {
        let name = field(n, contexts.len());
        if schema["properties"].get(&name).is_none() {
            return Ok(None);
        }
        let sentence = answer[&name].as_str().map(str::trim).unwrap_or_default();
        let sentences = citable(text);
        let Some(place) = sentences.iter().position(|s| s == sentence) else {
            return Err(Rejection::Judge {
                error: format!(
                    "the {name} {} is not a sentence of its context",
                    answer[&name]
                ),
            });
        };
        cited.sentences.push(sentences);
        cited.chosen.push(place);
    }
    Ok(Some(cited))
}
