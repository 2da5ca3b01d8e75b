//! Links between chunks for multi-hop questions, without a judge: a
//! chunk's terms are the stems of its content words (its language's stop
//! words left out, words of at least three letters or holding a digit),
//! and two chunks are linked by the terms they share, each weighted by its
//! inverse document frequency over the chunks, ln(N / df). A term in more
//! than half the chunks links nothing (it is the corpus' subject, not a
//! bridge) unless it is in two only, nor does one in a single chunk. A chunk's partner is the chunk
//! it shares the largest weight with, among those sharing at least
//! [`MIN_SHARED`] terms: the other document's where weights tie, then the
//! earlier.
//!
//! ```
//! use assay_generate::links::{partners, terms};
//! use assay_grounding::words::Lexicon;
//! let texts = [
//!     "Radium was isolated by Marie Curie in Paris.",
//!     "Marie Curie won a second Nobel Prize for radium.",
//!     "Geneva hosts many international organisations.",
//!     "The lake near Geneva is large.",
//! ];
//! let chunks: Vec<_> = texts.iter().enumerate().map(|(i, t)| (i, terms(t, &Lexicon::ENGLISH))).collect();
//! let p = partners(&chunks);
//! assert_eq!(p[0].as_ref().map(|p| p.chunk), Some(1));
//! assert_eq!(p[1].as_ref().unwrap().shared, ["curi", "mari", "radium"]);
//! assert!(p[2].is_none(), "one shared term is not a link");
//! ```

use assay_grounding::words::{words, Lexicon};
use std::collections::{BTreeSet, HashMap};

/// Terms two chunks must share to be linked.
pub const MIN_SHARED: usize = 2;

/// The terms of `text` in `lexicon`'s language.
pub fn terms(text: &str, lexicon: &Lexicon) -> BTreeSet<String> {
    words(text)
        .into_iter()
        .filter(|w| !lexicon.is_stop(w))
        .filter(|w| w.chars().count() >= 3 || w.chars().any(|c| c.is_ascii_digit()))
        .map(|w| lexicon.stem(&w))
        .collect()
}

/// A chunk's partner: its index, the weight they share and the shared
/// terms (sorted).
#[derive(Clone, Debug, PartialEq)]
pub struct Partner {
    pub chunk: usize,
    pub weight: f64,
    pub shared: Vec<String>,
}

/// For each of `chunks` (its document's index and its terms), its partner,
/// if it has one.
pub fn partners(chunks: &[(usize, BTreeSet<String>)]) -> Vec<Option<Partner>> {
    let n = chunks.len();
    let mut postings: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, (_, terms)) in chunks.iter().enumerate() {
        for t in terms {
            postings.entry(t.as_str()).or_default().push(i);
        }
    }
    let idf = |df: usize| (n as f64 / df as f64).ln();
    let bridges = |df: usize| df == 2 || (df > 2 && 2 * df <= n);
    chunks
        .iter()
        .enumerate()
        .map(|(a, (doc, terms))| {
            let mut shared: HashMap<usize, Vec<&str>> = HashMap::new();
            for t in terms {
                let list = &postings[t.as_str()];
                if !bridges(list.len()) {
                    continue;
                }
                for &b in list.iter().filter(|&&b| b != a) {
                    shared.entry(b).or_default().push(t);
                }
            }
            let mut best: Option<(f64, bool, usize, Vec<&str>)> = None;
            let mut candidates: Vec<(usize, Vec<&str>)> = shared.into_iter().collect();
            candidates.sort_by_key(|(b, _)| *b);
            for (b, terms) in candidates {
                if terms.len() < MIN_SHARED {
                    continue;
                }
                let weight: f64 = terms.iter().map(|t| idf(postings[t].len())).sum();
                let other = chunks[b].0 != *doc;
                let better = best
                    .as_ref()
                    .is_none_or(|(w, o, _, _)| weight > *w || (weight == *w && other && !*o));
                if better {
                    best = Some((weight, other, b, terms));
                }
            }
            best.map(|(weight, _, chunk, mut terms)| {
                terms.sort_unstable();
                Partner {
                    chunk,
                    weight,
                    shared: terms.into_iter().map(String::from).collect(),
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(words: &[&str]) -> BTreeSet<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    /// Six chunks; "x" is in four (more than half: no bridge), "a", "b",
    /// "d" and "e" in two each (weight ln 3 each), "c" in three (ln 2).
    /// Chunk 0 shares a, b with 1 (2 ln 3) and only c with 2 (one term:
    /// no link).
    #[test]
    fn worked_example_of_weights() {
        let chunks = vec![
            (0, set(&["x", "a", "b", "c"])),
            (0, set(&["x", "a", "b"])),
            (1, set(&["x", "c", "d", "e"])),
            (1, set(&["x", "c", "d", "e"])),
            (2, set(&["f"])),
            (2, set(&["g"])),
        ];
        let p = partners(&chunks);
        let zero = p[0].as_ref().unwrap();
        assert_eq!(
            (zero.chunk, zero.shared.clone()),
            (1, vec!["a".to_string(), "b".to_string()])
        );
        assert!((zero.weight - 2.0 * 3f64.ln()).abs() < 1e-12);
        // 2 and 3 share c, d, e: d and e are in two chunks, c in three.
        let two = p[2].as_ref().unwrap();
        assert_eq!(two.chunk, 3);
        assert!((two.weight - (2.0 * 3f64.ln() + 2f64.ln())).abs() < 1e-12);
        assert!(p[4].is_none() && p[5].is_none());
    }

    #[test]
    fn on_equal_weights_the_other_document_s_chunk_is_the_partner() {
        let chunks = vec![
            (0, set(&["a", "b"])),
            (0, set(&["a", "b"])),
            (1, set(&["a", "b"])),
            (1, set(&["z"])),
            (2, set(&["y"])),
            (3, set(&["w"])),
        ];
        let p = partners(&chunks);
        assert_eq!(p[0].as_ref().unwrap().chunk, 2);
        assert_eq!(p[2].as_ref().unwrap().chunk, 0);
    }

    #[test]
    fn terms_are_stems_of_content_words_in_the_text_s_language() {
        let en = terms(
            "The Curies were measuring 88 radioactive samples.",
            &Lexicon::ENGLISH,
        );
        assert_eq!(en, set(&["88", "curi", "measur", "radioact", "sampl"]));
        let fr = terms("Les protocoles de la famille HTTP", &Lexicon::FRENCH);
        assert!(
            fr.contains("http") && !fr.contains("les") && !fr.contains("la"),
            "{fr:?}"
        );
    }
}
