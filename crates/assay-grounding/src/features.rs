//! What a claim and the text that should support it have in common, as
//! numbers: the features of [`crate::Model`].
//!
//! Words are runs of letters and digits, lower-cased; a claim's content
//! words are its words less the stop words of `data/stopwords.txt`, and
//! are compared by their Porter stems (`assay_text::porter`), so that
//! "moons" finds "moon". Numbers are compared as written, less thousands
//! separators ("1,000" is "1000").

use crate::records::{asserted, unset_attributes, Attribute};
use crate::slots::{conflict_in, Conflict, Kind};
pub use crate::words::{is_stop_word, words};
use crate::words::{spelled, Lexicon};
use assay_text::sentences::split_sentences;
use std::collections::{BTreeSet, HashSet};

/// The features' names, in the order of [`Features::values`] and of the
/// model's weights.
pub const NAMES: [&str; 11] = [
    "coverage",
    "prefix_coverage",
    "log_novel_words",
    "bigram_coverage",
    "number_missing",
    "log_numbers_missing",
    "log_names_missing",
    "best_sentence_recall",
    "best_sentence_bigrams",
    "negation_mismatch",
    "log_content_words",
];

/// The numbers written in `text`: digit runs with the `.` or `,` inside
/// them, commas dropped.
fn numbers(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let chars: Vec<char> = spelled(text).chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let mut n = String::new();
        while i < chars.len() {
            let c = chars[i];
            let inner = matches!(c, '.' | ',')
                && chars.get(i + 1).is_some_and(char::is_ascii_digit)
                && !n.is_empty();
            if c.is_ascii_digit() {
                n.push(c);
            } else if inner {
                if c == '.' {
                    n.push(c);
                }
            } else {
                break;
            }
            i += 1;
        }
        out.insert(n);
    }
    out
}

/// Letters two words must share at the start to count as one word in
/// [`NAMES`]' `prefix_coverage` ("germany" and "german-born"): a stem
/// misses such pairs.
pub const PREFIX: usize = 5;

fn prefix(word: &str) -> Option<String> {
    (word.chars().count() >= PREFIX).then(|| word.chars().take(PREFIX).collect())
}

/// One sentence of a supporting text.
#[derive(Debug)]
struct Sentence {
    text: String,
    stems: HashSet<String>,
    bigrams: HashSet<(String, String)>,
    negated: bool,
}

fn bigrams(stems: &[String]) -> HashSet<(String, String)> {
    stems
        .windows(2)
        .map(|w| (w[0].clone(), w[1].clone()))
        .collect()
}

fn negated(words: &[String], lexicon: &Lexicon) -> bool {
    words.iter().any(|w| lexicon.is_negation(w))
}

/// A text prepared once to be asked about many claims: its words, stems,
/// stem bigrams, numbers and sentences.
#[derive(Debug)]
pub struct Support {
    words: HashSet<String>,
    prefixes: HashSet<String>,
    stems: HashSet<String>,
    bigrams: HashSet<(String, String)>,
    numbers: BTreeSet<String>,
    sentences: Vec<Sentence>,
    /// The words the texts write in lower case somewhere: a capitalised
    /// first word among them opens a sentence, it names nothing.
    lower_case: HashSet<String>,
    /// What the texts that are records mark unset.
    records: Vec<Attribute>,
    lexicon: Lexicon,
}

impl Support {
    /// `texts` together (the question and the contexts, say), in English.
    pub fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Support {
        Support::in_language(texts, Lexicon::ENGLISH)
    }

    /// `texts` together, in the language of `lexicon`: claims asked of it
    /// are read with the same lexicon.
    pub fn in_language<'a>(texts: impl IntoIterator<Item = &'a str>, lexicon: Lexicon) -> Support {
        let mut support = Support {
            words: HashSet::new(),
            prefixes: HashSet::new(),
            stems: HashSet::new(),
            bigrams: HashSet::new(),
            numbers: BTreeSet::new(),
            sentences: Vec::new(),
            lower_case: HashSet::new(),
            records: Vec::new(),
            lexicon,
        };
        for text in texts {
            let w = words(text);
            let all: Vec<String> = w.iter().map(|w| lexicon.stem(w)).collect();
            support.bigrams.extend(bigrams(&all));
            support.stems.extend(all);
            support.prefixes.extend(w.iter().filter_map(|w| prefix(w)));
            support.words.extend(w);
            support.numbers.extend(numbers(text));
            support.records.extend(unset_attributes(text, &lexicon));
            support.lower_case.extend(
                text.split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty() && !w.chars().any(char::is_uppercase))
                    .map(str::to_string),
            );
            for s in split_sentences(text) {
                let w = words(s);
                let stems: Vec<String> = w.iter().map(|w| lexicon.stem(w)).collect();
                support.sentences.push(Sentence {
                    text: s.to_string(),
                    bigrams: bigrams(&stems),
                    stems: stems.into_iter().collect(),
                    negated: negated(&w, &lexicon),
                });
            }
        }
        support
    }
}

/// A claim's features against a [`Support`], with the evidence a reason
/// names.
#[derive(Clone, Debug, PartialEq)]
pub struct Features {
    pub values: [f64; NAMES.len()],
    /// The supporting text's sentence that holds most of the claim's
    /// content words (none when the text has no sentence).
    pub best_sentence: Option<String>,
    /// The claim's content words (as written, lower-cased) that the text
    /// does not hold, in the claim's order.
    pub missing: Vec<String>,
    /// The claim's numbers that the text does not hold.
    pub missing_numbers: Vec<String>,
    /// A slot where the claim says something else than one of its closest
    /// sentences (`crate::slots`; which sentences count: [`CONFLICT_FROM`]).
    /// Not one of the trained `values`: the model applies it as a rule.
    pub conflict: Option<Conflict>,
}

/// The share of a claim's content words outside a conflicting slot (at
/// least two of them) that the sentence must hold for the conflict to
/// count: below it the sentence speaks of something else, and a different
/// word there says nothing. A plain swap keeps every other word; real
/// answers that reword their source hold about half (RAGTruth), where a
/// lower share misread as many faithful sentences as it caught wrong ones. The sentences asked are those within one content word of the
/// claim's closest; none is asked where a sentence that is no question
/// holds every content word of the claim without a conflict.
pub const CONFLICT_FROM: f64 = 0.8;

/// The position of `best_sentence_recall` in [`NAMES`].
const BEST_SENTENCE_RECALL: usize = 7;

impl Features {
    /// The share of the claim's content words that its closest sentence
    /// holds: how much that sentence speaks of the same thing.
    pub fn best_sentence_recall(&self) -> f64 {
        self.values[BEST_SENTENCE_RECALL]
    }

    /// The features of `claim` against `support`.
    ///
    /// ```
    /// use assay_grounding::{Features, Support};
    /// let support = Support::new(["Mars has two natural satellites, Phobos and Deimos."]);
    /// let f = Features::of("Mars has two moons, Phobos and Deimos.", &support);
    /// assert_eq!(f.missing, ["moons"]);
    /// assert_eq!(f.values[0], 4.0 / 5.0); // coverage of mars, two, moons, phobos, deimos
    /// ```
    pub fn of(claim: &str, support: &Support) -> Features {
        let all_words = words(claim);
        let all_stems: Vec<String> = all_words.iter().map(|w| support.lexicon.stem(w)).collect();
        let content: Vec<(&String, &String)> = all_words
            .iter()
            .zip(&all_stems)
            .filter(|(w, _)| !support.lexicon.is_stop(w))
            .collect();
        let n = content.len();
        let absent: Vec<(&String, &String)> = content
            .iter()
            .filter(|(_, s)| !support.stems.contains(*s))
            .copied()
            .collect();
        let missing: Vec<String> = absent.iter().map(|(w, _)| (*w).clone()).collect();
        let novel: BTreeSet<&String> = absent.iter().map(|(_, s)| *s).collect();
        let share = |found: usize, of: usize| {
            if of == 0 {
                1.0
            } else {
                found as f64 / of as f64
            }
        };
        let coverage = share(n - missing.len(), n);
        let near = missing
            .iter()
            .filter(|w| prefix(w).is_some_and(|p| support.prefixes.contains(&p)))
            .count();
        let prefix_coverage = share(n - missing.len() + near, n);
        let claim_bigrams: Vec<(String, String)> = all_stems
            .windows(2)
            .map(|w| (w[0].clone(), w[1].clone()))
            .collect();
        let bigram_coverage = share(
            claim_bigrams
                .iter()
                .filter(|b| support.bigrams.contains(*b))
                .count(),
            claim_bigrams.len(),
        );
        let missing_numbers: Vec<String> = numbers(claim)
            .into_iter()
            .filter(|x| !support.numbers.contains(x))
            .collect();
        let names_missing = claim
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .skip(1)
            .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
            .filter(|w| !support.words.contains(&w.to_lowercase()))
            .count();
        let claim_set: HashSet<&String> = content.iter().map(|(_, s)| *s).collect();
        let mut best: Option<(f64, &Sentence)> = None;
        let mut recalls = Vec::with_capacity(support.sentences.len());
        for s in &support.sentences {
            let recall = share(
                claim_set.iter().filter(|c| s.stems.contains(**c)).count(),
                claim_set.len(),
            );
            recalls.push(recall);
            if best.is_none_or(|(r, _)| recall > r) {
                best = Some((recall, s));
            }
        }
        let conflict = best
            .and_then(|(r, _)| slot_conflict(claim, &claim_set, support, &recalls, r))
            .or_else(|| record_conflict(&all_words, &all_stems, support));
        let (best_recall, best_bigrams, negation_mismatch, best_sentence) = match best {
            Some((recall, s)) => (
                recall,
                share(
                    claim_bigrams
                        .iter()
                        .filter(|b| s.bigrams.contains(*b))
                        .count(),
                    claim_bigrams.len(),
                ),
                negated(&all_words, &support.lexicon) != s.negated,
                Some(s.text.clone()),
            ),
            None => (0.0, 0.0, negated(&all_words, &support.lexicon), None),
        };
        let ln = |k: usize| (k as f64).ln_1p();
        Features {
            values: [
                coverage,
                prefix_coverage,
                ln(novel.len()),
                bigram_coverage,
                if missing_numbers.is_empty() { 0.0 } else { 1.0 },
                ln(missing_numbers.len()),
                ln(names_missing),
                best_recall,
                best_bigrams,
                if negation_mismatch { 1.0 } else { 0.0 },
                ln(n),
            ],
            best_sentence,
            missing,
            missing_numbers,
            conflict,
        }
    }
}

/// The first attribute that a record of `support` marks unset and a
/// claim of `words` (with their `stems`) asserts ([`crate::records`]).
fn record_conflict(words: &[String], stems: &[String], support: &Support) -> Option<Conflict> {
    let a = asserted(&support.records, words, stems, &support.lexicon)?;
    let stated = format!("{} as {}", a.path, a.value);
    Some(Conflict {
        kind: Kind::Record,
        claimed: a.key(),
        sentence: format!("{}: {}", a.path, a.value),
        stated,
    })
}

/// The slot conflict of `claim` (see [`Features::conflict`]) with the
/// sentences of `support`, whose recalls of the claim's content stems
/// `claim_set` are `recalls`, the best `best`.
///
/// The sentences within one content word of the closest are asked, the
/// closest first: the question may tie with the context's sentence that
/// says otherwise, and a number written "21.0975" counts as two words
/// that may make another sentence the closest. A conflict counts where
/// the sentence holds at least [`CONFLICT_FROM`] of the claim's other
/// content words (it speaks of the same thing), and not where a sentence
/// that is no question holds every content word of the claim without a
/// conflict (the text states it).
fn slot_conflict(
    claim: &str,
    claim_set: &HashSet<&String>,
    support: &Support,
    recalls: &[f64],
    best: f64,
) -> Option<Conflict> {
    if claim_set.is_empty() {
        return None;
    }
    let stated = support.sentences.iter().zip(recalls).any(|(s, r)| {
        *r == 1.0
            && !s.text.trim_end().ends_with('?')
            && conflict_in(claim, &s.text, &support.lower_case, &support.lexicon).is_none()
    });
    if stated {
        return None;
    }
    let within = best - 1.0 / claim_set.len() as f64 - 1e-9;
    let mut close: Vec<(f64, &Sentence)> = support
        .sentences
        .iter()
        .zip(recalls)
        .filter(|(_, r)| **r >= within)
        .map(|(s, r)| (*r, s))
        .collect();
    close.sort_by(|a, b| b.0.total_cmp(&a.0));
    close.into_iter().find_map(|(_, s)| {
        let c = conflict_in(claim, &s.text, &support.lower_case, &support.lexicon)?;
        let swapped: HashSet<String> = words(&c.claimed)
            .iter()
            .map(|w| support.lexicon.stem(w))
            .collect();
        let rest: Vec<&&String> = claim_set
            .iter()
            .filter(|w| !swapped.contains(w.as_str()))
            .collect();
        let held = rest
            .iter()
            .filter(|w| s.stems.contains(**w as &String))
            .count();
        let enough = rest.len() >= 2 && held as f64 >= CONFLICT_FROM * rest.len() as f64;
        enough.then_some(c)
    })
}

/// The word-count baseline of calibration: the share of `response`'s
/// content words (lower-cased, stop words left out, not stemmed) that
/// appear in none of `sources`; 0 for a response without content words.
///
/// ```
/// use assay_grounding::features::novelty;
/// let sources = ["Canberra is the capital of Australia."];
/// assert_eq!(novelty("The capital is Canberra.", &sources), 0.0);
/// assert_eq!(novelty("The capital is Sydney.", &sources), 0.5);
/// assert_eq!(novelty("It is.", &sources), 0.0);
/// ```
pub fn novelty(response: &str, sources: &[&str]) -> f64 {
    let known: HashSet<String> = sources.iter().flat_map(|s| words(s)).collect();
    let content: Vec<String> = words(response)
        .into_iter()
        .filter(|w| !is_stop_word(w))
        .collect();
    if content.is_empty() {
        return 0.0;
    }
    content.iter().filter(|w| !known.contains(*w)).count() as f64 / content.len() as f64
}

/// The share of `answer`'s content words (by stem) outside `question`
/// that `context` holds; where every content word of the answer is in the
/// question, the share of them all. Function words are `lexicon`'s.
///
/// ```
/// use assay_grounding::features::answer_coverage;
/// use assay_grounding::words::Lexicon;
/// let q = "When was Albert Einstein born?";
/// let a = "Einstein was born on 14 March 1879 in Ulm.";
/// let english = Lexicon::ENGLISH;
/// assert_eq!(answer_coverage(q, a, "Albert Einstein (born 14 March 1879) was a physicist.", &english), 0.75);
/// assert_eq!(answer_coverage(q, a, "Paris is in France.", &english), 0.0);
/// // "en" is a function word in Spanish: it says nothing of Munich.
/// let q = "¿Dónde tiene Siemens su sede?";
/// let a = "Siemens tiene su sede en Múnich.";
/// assert_eq!(answer_coverage(q, a, "Llueve en Lisboa.", &Lexicon::SPANISH), 0.0);
/// ```
pub fn answer_coverage(question: &str, answer: &str, context: &str, lexicon: &Lexicon) -> f64 {
    let content = |t: &str| -> BTreeSet<String> {
        words(t)
            .iter()
            .filter(|w| !lexicon.is_stop(w))
            .map(|w| lexicon.stem(w))
            .collect()
    };
    let asked = content(question);
    let held = content(context);
    let all = content(answer);
    let own: BTreeSet<&String> = all.iter().filter(|w| !asked.contains(*w)).collect();
    let own = if own.is_empty() {
        all.iter().collect()
    } else {
        own
    };
    if own.is_empty() {
        return 0.0;
    }
    own.iter().filter(|w| held.contains(**w)).count() as f64 / own.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflected_forms_are_one_word_in_their_language() {
        // Number, gender and tense: Porter's English stems keep them apart.
        let cases = [
            (
                Lexicon::GERMAN,
                "Die beiden Brücken wurden 1932 eröffnet.",
                "Die Brücke wurde 1932 eröffnet.",
            ),
            (
                Lexicon::SPANISH,
                "El puente fue construido en 1932.",
                "Construyeron el puente en 1932.",
            ),
            (
                Lexicon::FRENCH,
                "Les trois nouvelles écoles ont ouvert.",
                "La nouvelle école a ouvert.",
            ),
        ];
        for (lexicon, context, claim) in cases {
            let read = Features::of(claim, &Support::in_language([context], lexicon));
            let english = Features::of(claim, &Support::new([context]));
            assert!(english.values[0] < 1.0, "{claim}: {english:?}");
            assert_eq!(read.values[0], 1.0, "{claim}: {:?}", read.missing);
        }
    }

    #[test]
    fn numbers_keep_decimals_and_drop_thousands_separators() {
        let got: Vec<String> = numbers("In 1,879 or 3.5, not 12. Then 7")
            .into_iter()
            .collect();
        assert_eq!(got, ["12", "1879", "3.5", "7"]);
    }

    #[test]
    fn a_claim_stated_by_the_text_has_full_coverage_and_no_missing_words() {
        let support = Support::new([
            "What is the capital of Australia?",
            "Canberra is the capital city of Australia.",
        ]);
        let f = Features::of("The capital of Australia is Canberra.", &support);
        assert_eq!(f.values[0], 1.0);
        assert!(f.missing.is_empty());
        assert_eq!(NAMES[BEST_SENTENCE_RECALL], "best_sentence_recall");
        assert_eq!(f.best_sentence_recall(), 1.0);
        assert_eq!(
            f.best_sentence.as_deref(),
            Some("Canberra is the capital city of Australia.")
        );
    }

    #[test]
    fn a_different_name_a_number_and_a_negation_are_seen() {
        let support = Support::new(["Pride and Prejudice is an 1813 novel by Jane Austen."]);
        let f = Features::of(
            "Pride and Prejudice was not written by Charlotte Bronte in 1820.",
            &support,
        );
        assert_eq!(f.missing, ["not", "written", "charlotte", "bronte", "1820"]);
        assert_eq!(f.missing_numbers, ["1820"]);
        assert_eq!(f.values[4], 1.0);
        assert_eq!(f.values[6], 2f64.ln_1p()); // Prejudice is there; Charlotte, Bronte are not
        assert_eq!(f.values[9], 1.0);
    }

    /// The question ties with the context's sentence as the closest: the
    /// conflict is sought in both, and the reason's sentence is the one
    /// that says otherwise.
    #[test]
    fn a_slot_conflict_is_sought_in_every_sentence_as_close_as_the_closest() {
        let support = Support::new([
            "What is the capital of Australia?",
            "Canberra is the capital city of Australia.",
        ]);
        let f = Features::of("Sydney is the capital of Australia.", &support);
        assert_eq!(
            f.best_sentence.as_deref(),
            Some("What is the capital of Australia?")
        );
        let c = f.conflict.unwrap();
        assert_eq!(
            (c.claimed.as_str(), c.stated.as_str()),
            ("Sydney", "Canberra")
        );
        assert_eq!(c.sentence, "Canberra is the capital city of Australia.");
    }

    /// A sentence that states the claim outweighs one that differs in a
    /// slot; one that speaks of something else has no slot to differ in.
    #[test]
    fn a_stated_claim_or_a_distant_sentence_has_no_conflict() {
        let support = Support::new([
            "Sales of electric cars rose 40 percent in 2022.",
            "Sales of electric cars rose 40 percent in 2023.",
        ]);
        let f = Features::of("Sales of electric cars rose 40 percent in 2023.", &support);
        assert_eq!(f.conflict, None);
        // "Sydney" against "Canberra", but of the claim's other content
        // words the sentence holds 3 of 6 ("summer", "winning" and "bid"
        // it lacks), fewer than CONFLICT_FROM.
        let support = Support::new(["Canberra hosted the Olympics in 2000 in Australia."]);
        let f = Features::of(
            "Sydney hosted the Summer Olympics in 2000 after winning the bid.",
            &support,
        );
        assert_eq!(f.conflict, None);
    }

    #[test]
    fn an_empty_support_supports_nothing() {
        let f = Features::of("Rome is in Italy.", &Support::new([]));
        assert_eq!(f.values[0], 0.0);
        assert_eq!(f.best_sentence, None);
    }
}
