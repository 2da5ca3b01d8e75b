//! Long texts the way MiniCheck and HHEM read them: the sources cut into
//! windows that fit the model beside the longest claim, every claim
//! scored against every window (in batches), a claim's support the
//! probability of its best window, which is kept as the evidence.
//!
//! Windows are whole sentences packed greedily up to a token budget; each
//! window after the first starts with the sentence the one before ended
//! with (the overlap), so a statement that spans a cut is read whole in
//! one of them. A sentence longer than the budget is cut between words,
//! a word longer than it between characters.

use crate::{Classifier, Error};
use assay_grounding::Verified;
use assay_text::sentences::split_sentences;

/// The windows of `sources`, each of at most `budget` tokens as `count`
/// counts them (sentences joined by a space, which a subword tokenizer
/// folds into the next word's first token).
///
/// ```
/// use assay_classifier::windows::windows;
/// let words = |t: &str| t.split_whitespace().count();
/// let w = windows(&["One two three. Four five. Six seven eight nine."], 6, words);
/// assert_eq!(w, ["One two three. Four five.", "Four five. Six seven eight nine."]);
/// ```
pub fn windows(sources: &[&str], budget: usize, count: impl Fn(&str) -> usize) -> Vec<String> {
    let budget = budget.max(1);
    let mut pieces: Vec<(String, usize)> = Vec::new();
    for source in sources {
        for sentence in split_sentences(source) {
            let n = count(sentence);
            if n <= budget {
                pieces.push((sentence.to_string(), n));
            } else {
                pieces.extend(cut(sentence, budget, &count));
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut current: Vec<&(String, usize)> = Vec::new();
    let mut used = 0;
    for piece in &pieces {
        if !current.is_empty() && used + piece.1 > budget {
            out.push(join(&current));
            let last = *current.last().expect("not empty");
            current.clear();
            used = 0;
            if last.1 + piece.1 <= budget {
                current.push(last);
                used = last.1;
            }
        }
        used += piece.1;
        current.push(piece);
    }
    if !current.is_empty() {
        out.push(join(&current));
    }
    out
}

fn join(pieces: &[&(String, usize)]) -> String {
    pieces
        .iter()
        .map(|(t, _)| t.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A sentence over the budget, cut between words (a word over it, between
/// characters).
fn cut(sentence: &str, budget: usize, count: &impl Fn(&str) -> usize) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let flush = |current: &mut String, out: &mut Vec<(String, usize)>| {
        let text = current.trim().to_string();
        if !text.is_empty() {
            let n = count(&text);
            out.push((text, n));
        }
        current.clear();
    };
    for word in sentence.split_inclusive(char::is_whitespace) {
        let candidate = format!("{current}{word}");
        if count(candidate.trim()) <= budget {
            current = candidate;
            continue;
        }
        flush(&mut current, &mut out);
        if count(word.trim()) <= budget {
            current.push_str(word);
            continue;
        }
        for c in word.chars() {
            current.push(c);
            if count(current.trim()) > budget {
                current.pop();
                flush(&mut current, &mut out);
                current.push(c);
            }
        }
    }
    flush(&mut current, &mut out);
    out
}

impl assay_grounding::Verifier for Classifier {
    fn identity(&self) -> &str {
        Classifier::identity(self)
    }

    fn verify(&self, claims: &[&str], sources: &[&str]) -> Result<Vec<Verified>, String> {
        Classifier::verify(self, claims, sources).map_err(|e| e.to_string())
    }
}

impl Classifier {
    /// Each claim's support by `sources`: its best window's probability,
    /// and that window.
    pub fn verify(&self, claims: &[&str], sources: &[&str]) -> Result<Vec<Verified>, Error> {
        if claims.is_empty() {
            return Ok(Vec::new());
        }
        let longest = claims
            .iter()
            .map(|c| self.count_tokens(c))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .max()
            .unwrap_or(0);
        let specials = self.encode("", "")?.len();
        let budget = self
            .window()
            .saturating_sub(longest + specials)
            .max(self.window() / 4);
        let failed = std::cell::RefCell::new(None);
        let windows = windows(sources, budget, |t| {
            self.count_tokens(t).unwrap_or_else(|e| {
                failed.borrow_mut().get_or_insert(e);
                0
            })
        });
        if let Some(e) = failed.into_inner() {
            return Err(e);
        }
        if windows.is_empty() {
            return Ok(claims
                .iter()
                .map(|_| Verified {
                    probability: 0.0,
                    evidence: String::new(),
                })
                .collect());
        }
        let pairs: Vec<(&str, &str)> = claims
            .iter()
            .flat_map(|c| windows.iter().map(move |w| (w.as_str(), *c)))
            .collect();
        let p = self.support(&pairs)?;
        Ok(p.chunks(windows.len())
            .map(|row| {
                let (best, probability) = row
                    .iter()
                    .copied()
                    .enumerate()
                    .fold((0, f64::NEG_INFINITY), |a, b| if b.1 > a.1 { b } else { a });
                Verified {
                    probability,
                    evidence: windows[best].clone(),
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(t: &str) -> usize {
        t.split_whitespace().count()
    }

    #[test]
    fn every_window_fits_and_every_sentence_is_in_one() {
        let text = "Alpha beta gamma. Delta epsilon. Zeta eta theta iota. Kappa. Lambda mu nu xi omicron pi rho.";
        for budget in 1..12 {
            let w = windows(&[text], budget, words);
            for window in &w {
                assert!(words(window) <= budget, "{budget}: {window:?}");
            }
            for word in text.split_whitespace() {
                assert!(w.iter().any(|x| x.contains(word)), "{budget}: {word} lost");
            }
        }
    }

    #[test]
    fn windows_overlap_by_a_sentence_and_do_not_cross_nothing() {
        let w = windows(&["A b. C d. E f.", "G h."], 4, words);
        assert_eq!(w, ["A b. C d.", "C d. E f.", "E f. G h."]);
        assert!(windows(&[""], 4, words).is_empty());
    }

    #[test]
    fn a_sentence_over_the_budget_is_cut_between_words_then_characters() {
        assert_eq!(
            windows(&["one two three four five"], 2, words),
            ["one two", "three four", "five"]
        );
        let chars = |t: &str| t.chars().count();
        assert_eq!(windows(&["abcdefg"], 3, chars), ["abc", "def", "g"]);
    }
}
