//! Whether a question the judge wrote is kept, each check without a call:
//! the answer is there and is supported by its reference contexts (every
//! sentence of it, by the lexical grounding verdict of `assay-grounding`
//! or by a grounding model the caller gives; a bare answer of a few words
//! is read after its question, as a claim),
//! the question and its answer are in the document's language (each
//! where the detector is sure of it), and it is not a near duplicate of a question already
//! kept ([`crate::dedup`]: by its words, or by its meaning where the
//! caller gives embeddings), and the question alone does not hold its
//! answer. A rejected candidate keeps its reason, and the judge's next
//! attempt is told it ([`Rejection::advice`]); the critic's rejection
//! ([`crate::critic`]) is one more reason.
//!
//! ```
//! use assay_generate::check::{supported, Candidate, Rejection};
//! use assay_grounding::words::Lexicon;
//! let contexts = ["Radium was discovered by Marie and Pierre Curie in 1898."];
//! let right = Candidate { question: "When was radium discovered?".into(), answer: "In 1898.".into() };
//! assert_eq!(supported(&right, &contexts, Lexicon::ENGLISH, None), Ok(()));
//! let wrong = Candidate { question: "When was radium discovered?".into(), answer: "Radium was discovered in 1911 by Ernest Rutherford.".into() };
//! assert!(matches!(supported(&wrong, &contexts, Lexicon::ENGLISH, None), Err(Rejection::Unsupported { .. })));
//! ```

use crate::plan::Style;
use assay_grounding::words::Lexicon;
use assay_grounding::{language, Model, Support, Verifier};
use serde::Serialize;
use serde_json::Value;
use std::cell::OnceCell;
use std::collections::HashSet;
use std::fmt;

/// A question and its reference answer, as the judge wrote them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Candidate {
    pub question: String,
    pub answer: String,
}

/// Why a candidate was not kept.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Rejection {
    /// The judge's call failed, or its answer was not a question and an
    /// answer.
    Judge { error: String },
    /// A sentence of the answer is not supported by the contexts.
    Unsupported { claim: String, evidence: String },
    /// The question or its answer is written in another language than
    /// its document.
    OtherLanguage { expected: String, found: String },
    /// The question is a near duplicate of one already kept, by its
    /// words or by its meaning.
    Duplicate {
        of: String,
        similarity: f64,
        measure: Similarity,
    },
    /// The question alone holds its answer: it is not a test of the
    /// contexts.
    AnswerInQuestion,
    /// The critic scored the question below the minimum
    /// ([`crate::critic`]).
    LowQuality { score: f64, feedback: String },
    /// The judge answered the question alone, without the contexts, as
    /// the reference does ([`crate::closed_book`]).
    AnswerableWithoutContext { answer: String },
    /// The question, scenario or answer copies words of the prompt's
    /// instruction or worked example, or of a retry's advice, that its
    /// contexts do not hold.
    CopiesPrompt { copied: String },
    /// The answer, or the question, stops mid-sentence: on a word that
    /// cannot end one, or on an opening bracket or quote.
    Unfinished { part: Part, ending: String },
    /// The grounding model could not read the answer against its
    /// contexts.
    Grounding { error: String },
    /// The question points at the text it was made from ("the study",
    /// "le texte"): without that text no reader, and no retriever, can
    /// tell what it asks about.
    NotSelfContained { phrase: String },
    /// The judge, asked the question with its contexts, found no answer
    /// in them ([`crate::round_trip`]).
    Unanswered,
    /// The judge, asked the question with its contexts, answered
    /// otherwise than the reference does ([`crate::round_trip`]).
    Inconsistent { answer: String, agreement: f64 },
    /// The question asks for a year or a count and its answer names none
    /// ([`answer_type`]).
    AnswerType { asks: String },
    /// The question, planned in a style that asks, is a string of words
    /// that asks nothing ([`asks_something`]).
    NotAQuestion,
    /// The answer, a sentence or more, shares no content word with its
    /// question: it does not answer it ([`on_topic`]).
    OffTopic,
    /// The answer contrasts two things and says the same words of both
    /// ([`contrasts`]).
    EmptyContrast { repeated: String },
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Judge { error } => write!(f, "judge: {error}"),
            Rejection::Unsupported { claim, evidence } => {
                write!(f, "unsupported: {claim:?} ({evidence})")
            }
            Rejection::OtherLanguage { expected, found } => {
                write!(f, "other_language: {found}, not the document's {expected}")
            }
            Rejection::Duplicate {
                of,
                similarity,
                measure,
            } => write!(f, "duplicate: of {of:?} ({measure} {similarity:.2})"),
            Rejection::AnswerInQuestion => {
                f.write_str("answer_in_question: the question alone holds its answer")
            }
            Rejection::LowQuality { score, feedback } => {
                write!(
                    f,
                    "low_quality: the critic scored it {score:.2}: {feedback}"
                )
            }
            Rejection::AnswerableWithoutContext { answer } => write!(
                f,
                "answerable_without_context: answered without the contexts: {answer:?}"
            ),
            Rejection::CopiesPrompt { copied } => write!(
                f,
                "copies_prompt: {copied:?} is the prompt's, not the context's"
            ),
            Rejection::NotSelfContained { phrase } => write!(
                f,
                "not_self_contained: the question points at its source ({phrase:?})"
            ),
            Rejection::Unfinished { part, ending } => {
                write!(f, "unfinished: the {} stops at {ending:?}", part.name())
            }
            Rejection::Grounding { error } => write!(f, "grounding: {error}"),
            Rejection::Unanswered => {
                f.write_str("unanswered: the judge found no answer in the contexts")
            }
            Rejection::Inconsistent { answer, agreement } => write!(
                f,
                "inconsistent: the judge answered {answer:?} from the contexts \
                 (agreement {agreement:.2})"
            ),
            Rejection::AnswerType { asks } => {
                write!(
                    f,
                    "answer_type: the question asks for {asks}; the answer names none"
                )
            }
            Rejection::NotAQuestion => f.write_str(
                "not_a_question: it has no question word and no question mark, or states a \
                 sentence",
            ),
            Rejection::OffTopic => {
                f.write_str("off_topic: the answer shares no content word with its question")
            }
            Rejection::EmptyContrast { repeated } => write!(
                f,
                "empty_contrast: the answer says {repeated:?} of both sides of its contrast"
            ),
        }
    }
}

/// Which of a candidate's two texts a rejection speaks of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    Question,
    Answer,
}

impl Part {
    /// As a rejection's reason and a retry's advice name it.
    pub fn name(self) -> &'static str {
        match self {
            Part::Question => "question",
            Part::Answer => "answer",
        }
    }
}

/// How two questions were found alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Similarity {
    /// Of their word shingles ([`crate::dedup`]).
    Jaccard,
    /// Of their embeddings.
    Cosine,
    /// Of their reference answers' word shingles
    /// ([`crate::dedup::same_answer`]): they ask for the same statement.
    AnswerJaccard,
    /// One reference answer holds all of the other's word shingles
    /// ([`crate::dedup::answer_within`]): one asks for what the other's
    /// answer states.
    AnswerWithin,
}

impl fmt::Display for Similarity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Similarity::Jaccard => "Jaccard",
            Similarity::Cosine => "cosine",
            Similarity::AnswerJaccard => "answers' Jaccard",
            Similarity::AnswerWithin => "answer within an answer",
        })
    }
}

impl Rejection {
    /// Why the candidate was not kept, as the judge's next attempt is told.
    pub fn advice(&self) -> String {
        match self {
            Rejection::Judge { .. } => {
                "the answer was not a JSON object with a question and an answer".to_string()
            }
            Rejection::Unsupported { claim, .. } => {
                format!("the context does not state this part of its answer: {claim}")
            }
            Rejection::OtherLanguage { expected, .. } => {
                format!("it was not written in {expected}")
            }
            Rejection::Duplicate {
                of,
                measure: Similarity::AnswerJaccard | Similarity::AnswerWithin,
                ..
            } => format!(
                "its answer states what an earlier question's answer stated; \
                 ask about another statement than the one of: {of}"
            ),
            Rejection::Duplicate { of, .. } => {
                format!("it asks what an earlier question asked: {of}")
            }
            Rejection::AnswerInQuestion => "the question itself states its answer".to_string(),
            Rejection::LowQuality { score, feedback } => {
                format!("a reviewer scored it {score:.2} of 1: {feedback}")
            }
            Rejection::AnswerableWithoutContext { .. } => "it can be answered from general \
                 knowledge, without the context: ask about what only the context states"
                .to_string(),
            // Not the words copied: the 0.5B judge copied them back.
            Rejection::CopiesPrompt { .. } => "it copied the instructions or their example \
                 instead of asking about the context"
                .to_string(),
            Rejection::Unfinished { part, ending } => format!(
                "its {} stopped mid-sentence, at \"{ending}\": write it whole, with any \
                 quotation marks it copies escaped",
                part.name()
            ),
            Rejection::Grounding { .. } => {
                "its answer could not be checked against the context".to_string()
            }
            Rejection::NotSelfContained { phrase } => format!(
                "it points at \"{phrase}\", which a reader without the context cannot \
                 know: name what it asks about"
            ),
            Rejection::Unanswered => {
                "a reader of the context found no answer to it there: ask what the context \
                 states"
                    .to_string()
            }
            Rejection::Inconsistent { answer, .. } => format!(
                "a reader of the context answered it \"{answer}\", not as its answer did: \
                 make the answer answer the question, in the context's words"
            ),
            Rejection::AnswerType { asks } => format!(
                "the question asks for {asks} and its answer gives none: ask what the \
                 context's sentence answers"
            ),
            Rejection::NotAQuestion => "it was a list of words or a statement, not a question: \
                 write a question that ends with a question mark"
                .to_string(),
            Rejection::OffTopic => "its answer spoke of something else than its question: \
                 answer the question asked, with the sentence of the context that answers it"
                .to_string(),
            Rejection::EmptyContrast { repeated } => format!(
                "its answer said \"{repeated}\" of both things it contrasted: say how they \
                 differ, in the contexts' words"
            ),
        }
    }

    /// The advice's own words, without what it quotes of the rejected
    /// candidate or of the judge (a claim, a question, an answer): what a
    /// later candidate must not copy. A judge that writes its rejected
    /// answer again is told why again, not that it copied the advice.
    ///
    /// ```
    /// use assay_generate::check::Rejection;
    /// let r = Rejection::Unsupported { claim: "Radium is blue.".into(), evidence: "none".into() };
    /// assert_eq!(r.advice_words(), "the context does not state this part of its answer: ");
    /// ```
    pub fn advice_words(&self) -> String {
        let none = String::new;
        let bare = match self {
            Rejection::Judge { .. } => Rejection::Judge { error: none() },
            Rejection::Unsupported { .. } => Rejection::Unsupported {
                claim: none(),
                evidence: none(),
            },
            Rejection::OtherLanguage { expected, .. } => Rejection::OtherLanguage {
                expected: expected.clone(),
                found: none(),
            },
            Rejection::Duplicate { measure, .. } => Rejection::Duplicate {
                of: none(),
                similarity: 0.0,
                measure: *measure,
            },
            Rejection::AnswerInQuestion => Rejection::AnswerInQuestion,
            Rejection::LowQuality { .. } => Rejection::LowQuality {
                score: 0.0,
                feedback: none(),
            },
            Rejection::AnswerableWithoutContext { .. } => {
                Rejection::AnswerableWithoutContext { answer: none() }
            }
            Rejection::CopiesPrompt { .. } => Rejection::CopiesPrompt { copied: none() },
            Rejection::Unfinished { part, .. } => Rejection::Unfinished {
                part: *part,
                ending: none(),
            },
            Rejection::Grounding { .. } => Rejection::Grounding { error: none() },
            Rejection::NotSelfContained { .. } => Rejection::NotSelfContained { phrase: none() },
            Rejection::Unanswered => Rejection::Unanswered,
            Rejection::Inconsistent { .. } => Rejection::Inconsistent {
                answer: none(),
                agreement: 0.0,
            },
            Rejection::AnswerType { asks } => Rejection::AnswerType { asks: asks.clone() },
            Rejection::NotAQuestion => Rejection::NotAQuestion,
            Rejection::OffTopic => Rejection::OffTopic,
            Rejection::EmptyContrast { .. } => Rejection::EmptyContrast { repeated: none() },
        };
        bare.advice()
    }

    /// The reason's name, as the summary counts it.
    pub fn name(&self) -> &'static str {
        match self {
            Rejection::Judge { .. } => "judge",
            Rejection::Unsupported { .. } => "unsupported",
            Rejection::OtherLanguage { .. } => "other_language",
            Rejection::Duplicate { .. } => "duplicate",
            Rejection::AnswerInQuestion => "answer_in_question",
            Rejection::LowQuality { .. } => "low_quality",
            Rejection::AnswerableWithoutContext { .. } => "answerable_without_context",
            Rejection::CopiesPrompt { .. } => "copies_prompt",
            Rejection::Unfinished { .. } => "unfinished",
            Rejection::Grounding { .. } => "grounding",
            Rejection::NotSelfContained { .. } => "not_self_contained",
            Rejection::Unanswered => "unanswered",
            Rejection::Inconsistent { .. } => "inconsistent",
            Rejection::AnswerType { .. } => "answer_type",
            Rejection::NotAQuestion => "not_a_question",
            Rejection::OffTopic => "off_topic",
            Rejection::EmptyContrast { .. } => "empty_contrast",
        }
    }
}

/// An answer of fewer words is a bare phrase ("In 1898."), checked
/// after its question.
const BARE_ANSWER_WORDS: usize = 6;

/// The non-empty text of the judge's JSON answer's field `name`, trimmed.
pub fn text_field(answer: &Value, name: &str) -> Result<String, Rejection> {
    answer[name]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .ok_or_else(|| Rejection::Judge {
            error: format!("the answer has no {name}"),
        })
}

/// How a further check reads the judge's answer about a candidate (the
/// closed-book and the round-trip checks): with the document's lexicon,
/// or the grounding model where one is given.
pub type FurtherVerdict =
    fn(&Candidate, &Value, Lexicon, Option<&dyn Verifier>) -> Result<(), Rejection>;

/// The answer a further check's judge gave (the closed-book and the
/// round-trip checks): its `answer`, where its boolean `flag` says it
/// gave one and the answer is not empty; `None` where it gave none; an
/// answer without the flag is the judge's failure, `check`'s.
pub fn flagged_answer<'a>(
    answer: &'a Value,
    flag: &str,
    check: &str,
) -> Result<Option<&'a str>, Rejection> {
    let gave = answer[flag].as_bool().ok_or_else(|| Rejection::Judge {
        error: format!("the {check} answer has no {flag}"),
    })?;
    let said = answer["answer"].as_str().unwrap_or("").trim();
    Ok((gave && !said.is_empty()).then_some(said))
}

/// A question of fewer words is not one (the local judge once wrote
/// `:[{` as a question, and JSON as its answer).
const QUESTION_WORDS: usize = 3;

impl Candidate {
    /// The candidate in the judge's JSON answer: a `question` of at least
    /// three words and a non-empty `answer`.
    pub fn from_json(answer: &Value) -> Result<Candidate, Rejection> {
        let question = text_field(answer, "question")?;
        if assay_grounding::features::words(&question).len() < QUESTION_WORDS {
            return Err(Rejection::Judge {
                error: format!("the question {question:?} has fewer than {QUESTION_WORDS} words"),
            });
        }
        Ok(Candidate {
            question,
            answer: text_field(answer, "answer")?,
        })
    }
}

impl Candidate {
    /// Whether the answer is a bare phrase ("In 1898."), read after its
    /// question.
    pub fn is_bare(&self) -> bool {
        assay_grounding::features::words(&self.answer).len() < BARE_ANSWER_WORDS
    }

    /// The claims its answer is checked as: a bare answer after its
    /// question, as one claim; a longer one sentence by sentence.
    pub fn claims(&self) -> Vec<String> {
        if self.is_bare() {
            vec![format!("{} {}", self.question, self.answer)]
        } else {
            assay_text::sentences::split_sentences(&self.answer)
                .into_iter()
                .map(String::from)
                .collect()
        }
    }
}

/// Whether every sentence of the candidate's answer is supported by
/// `contexts`, in `lexicon`'s language: by `model` where one is given,
/// else by the lexical grounding verdict, each claim by one context (see
/// [`Readings`]).
pub fn supported(
    candidate: &Candidate,
    contexts: &[&str],
    lexicon: Lexicon,
    model: Option<&dyn Verifier>,
) -> Result<(), Rejection> {
    let texts = contexts.iter().map(|c| vec![c.to_string()]).collect();
    Readings::new(candidate, contexts, texts, lexicon, model).check(&vec![0; contexts.len()])
}

/// A candidate's claims, each read against the texts of each of its
/// contexts (the whole context, or each of its sentences after its
/// headings) once, when a choice of one text per context first needs
/// it: an answer whose cited sentences do not support it is tried
/// against every other choice, and a choice is a product of sentences
/// where its readings are a sum.
///
/// Each claim must be supported by one text alone: a bare answer after
/// its question, with the question beside the text (as faithfulness
/// reads a response), a sentence of a longer answer by the text alone,
/// as a model reads it. The lexical verdict reads words, so a sentence
/// stitched from the words of two contexts, or of a context and the
/// question, reads supported by them together: the 1.5B judge's
/// abstract answers contrasted what no context contrasts, restating
/// their question ("Netscape's announcement of the Mozilla project was
/// about the source code being free, while the announcement of the
/// Firefox web browser was about the browser being free"). Nor may the
/// words the supporting text lacks be another context's and not its
/// own: the 0.5B default gave one context's sentence another's subject
/// ("The daughter received the Nobel Prize in Physics with her wife,
/// Marie Skłodowska-Curie", from "he received ... with his wife" and a
/// paragraph on the Curies' daughter).
pub struct Readings<'a> {
    candidate: &'a Candidate,
    claims: Vec<String>,
    lexicon: Lexicon,
    model: Option<&'a dyn Verifier>,
    texts: Vec<Vec<String>>,
    /// Each text's stems, for the lexical checks of a choice's words,
    /// once a choice holds the text (never where a model reads).
    stems: Vec<Vec<OnceCell<HashSet<String>>>>,
    /// Each whole context's stems.
    wholes: Vec<HashSet<String>>,
    /// Per context, per text: every claim's reading, once read.
    read: Vec<Vec<OnceCell<Reading>>>,
}

/// An empty cell for each text of each context.
fn cells<T>(texts: &[Vec<String>]) -> Vec<Vec<OnceCell<T>>> {
    texts
        .iter()
        .map(|t| t.iter().map(|_| OnceCell::new()).collect())
        .collect()
}

/// Every claim read against one text, or why the text could not be read.
type Reading = Result<Vec<Read>, Rejection>;

/// One claim read against one text.
#[derive(Clone, Debug)]
struct Read {
    probability: f64,
    /// Why the claim is not supported by the text; `None` where it is.
    against: Option<String>,
}

impl<'a> Readings<'a> {
    /// `candidate`'s claims, to be read against `texts[i]`, the texts of
    /// `contexts[i]` (the whole context with what stands above it).
    pub fn new(
        candidate: &'a Candidate,
        contexts: &[&str],
        texts: Vec<Vec<String>>,
        lexicon: Lexicon,
        model: Option<&'a dyn Verifier>,
    ) -> Readings<'a> {
        Readings {
            candidate,
            claims: candidate.claims(),
            lexicon,
            model,
            read: cells(&texts),
            stems: cells(&texts),
            texts,
            wholes: contexts.iter().map(|c| content_stems(c, lexicon)).collect(),
        }
    }

    /// Whether one text of each context, `choice[i]` of context `i`,
    /// supports every claim: the first claim none supports rejects it,
    /// with the reason of the text that came closest.
    pub fn check(&self, choice: &[usize]) -> Result<(), Rejection> {
        let bare = self.candidate.is_bare();
        if self.model.is_none() {
            let held: HashSet<String> = choice
                .iter()
                .enumerate()
                .flat_map(|(i, &k)| {
                    let text = &self.texts[i][k];
                    self.stems[i][k].get_or_init(|| stems(text, self.lexicon))
                })
                .cloned()
                .collect();
            absent_from(self.candidate, &held, self.lexicon, bare)?;
            if bare {
                premise_held(self.candidate, &held, self.lexicon)?;
            }
        }
        let mut reads = Vec::new();
        for (i, &k) in choice.iter().enumerate() {
            reads.push(self.read(i, k)?);
        }
        for (n, claim) in self.claims.iter().enumerate() {
            let best = reads.iter().map(|r| &r[n]).max_by(|a, b| {
                (a.against.is_none().cmp(&b.against.is_none()))
                    .then(a.probability.total_cmp(&b.probability))
            });
            let evidence = match best {
                Some(Read { against: None, .. }) => continue,
                Some(Read {
                    against: Some(why), ..
                }) => why.clone(),
                None => "there is no context".to_string(),
            };
            return Err(Rejection::Unsupported {
                evidence,
                claim: claim.clone(),
            });
        }
        Ok(())
    }

    /// Every claim read against text `k` of context `i`, read once.
    fn read(&self, i: usize, k: usize) -> Result<&[Read], Rejection> {
        let read = self.read[i][k].get_or_init(|| self.read_now(i, k));
        read.as_deref().map_err(Clone::clone)
    }

    fn read_now(&self, i: usize, k: usize) -> Result<Vec<Read>, Rejection> {
        let text = self.texts[i][k].as_str();
        if let Some(model) = self.model {
            // The text alone: a model reads meaning, and a question among
            // its sources would support an answer that restates the
            // question's false premise.
            let claims: Vec<&str> = self.claims.iter().map(String::as_str).collect();
            let verified = model
                .verify(&claims, &[text])
                .map_err(|error| Rejection::Grounding { error })?;
            let threshold = model.threshold();
            return Ok(verified
                .into_iter()
                .map(|v| Read {
                    probability: v.probability,
                    against: (v.probability < threshold).then(|| v.reason(threshold)),
                })
                .collect());
        }
        // A bare answer's claim holds its question, which its support must
        // hold too.
        let question = self
            .candidate
            .is_bare()
            .then_some(self.candidate.question.as_str());
        let support = Support::in_language(question.into_iter().chain([text]), self.lexicon);
        Ok(self
            .claims
            .iter()
            .map(|claim| {
                let judgement = Model::builtin().judge(claim, &support);
                let against = if judgement.supported() {
                    self.foreign(i, &judgement.features.missing).map(|word| {
                        format!(
                            "\"{word}\" is another context's, not this one's; {}",
                            judgement.reason()
                        )
                    })
                } else {
                    Some(judgement.reason())
                };
                Read {
                    probability: judgement.probability,
                    against,
                }
            })
            .collect())
    }

    /// The first of `missing` (words a claim has and a text of context
    /// `i` lacks) that another context holds and context `i` does not.
    fn foreign<'w>(&self, i: usize, missing: &'w [String]) -> Option<&'w String> {
        missing.iter().find(|w| {
            let stem = self.lexicon.stem(w);
            !self.wholes[i].contains(&stem)
                && self
                    .wholes
                    .iter()
                    .enumerate()
                    .any(|(j, whole)| j != i && whole.contains(&stem))
        })
    }
}

/// Whether the content words of the answer that its contexts do not hold
/// (by stem) are ones the support may lack; the first that is not
/// rejects it. A bare answer may have none: it is read after its
/// question, which the support holds, so what it says must be the
/// contexts' (the local judge answered "2098" to a question about a
/// French page that gave no year). A longer answer may have none from
/// its question: one that restates a false premise ("Pierre Curie began
/// his studies at the University of Paris in 1859", asked of a context
/// that names no university) is otherwise supported by the question.
fn absent_from(
    candidate: &Candidate,
    held: &HashSet<String>,
    lexicon: Lexicon,
    bare: bool,
) -> Result<(), Rejection> {
    let question = stems(&candidate.question, lexicon);
    let missing = assay_grounding::features::words(&candidate.answer)
        .into_iter()
        .filter(|w| !lexicon.is_stop(w))
        .find(|w| {
            let stem = lexicon.stem(w);
            !held.contains(&stem) && (bare || question.contains(&stem))
        });
    match missing {
        Some(word) if bare => Err(Rejection::Unsupported {
            claim: format!("{} {}", candidate.question, candidate.answer),
            evidence: format!("the answer's \"{word}\" is not in the contexts"),
        }),
        Some(word) => Err(Rejection::Unsupported {
            claim: candidate.answer.clone(),
            evidence: format!("the answer's \"{word}\" is its question's and not in the contexts"),
        }),
        None => Ok(()),
    }
}

/// Of a bare answer's question's content words (distinct stems), the
/// share its contexts must hold, as a fraction: the claim is mostly the
/// question, so its premise must be the contexts'; the rest are the words
/// any question asks with ("year", "quelle année") that no context
/// holds. Chosen on the worked examples of the tests, not measured.
const QUESTION_HELD: (usize, usize) = (2, 3);

/// Whether the contexts hold enough of a bare answer's question
/// ([`QUESTION_HELD`]): "What year did Pierre Curie begin his studies at
/// the University of Paris? 1859", asked of a context that gives 1859 as
/// his birth year, is not a question about it.
fn premise_held(
    candidate: &Candidate,
    held: &HashSet<String>,
    lexicon: Lexicon,
) -> Result<(), Rejection> {
    let mut seen = HashSet::new();
    let words: Vec<String> = assay_grounding::features::words(&candidate.question)
        .into_iter()
        .filter(|w| !lexicon.is_stop(w) && seen.insert(lexicon.stem(w)))
        .collect();
    let missing: Vec<&str> = words
        .iter()
        .filter(|w| !held.contains(&lexicon.stem(w)))
        .map(String::as_str)
        .collect();
    let (part, whole) = QUESTION_HELD;
    if whole * (words.len() - missing.len()) >= part * words.len() {
        return Ok(());
    }
    Err(Rejection::Unsupported {
        claim: format!("{} {}", candidate.question, candidate.answer),
        evidence: format!(
            "the question's \"{}\" are not in the contexts ({} of its {} words are)",
            missing.join("\", \""),
            words.len() - missing.len(),
            words.len()
        ),
    })
}

/// Characters that open what they must close: an answer that ends on one
/// was cut there. A straight double quote or a backtick is one where the
/// answer holds an odd number of them.
const OPENERS: &[char] = &['(', '[', '{', '<', '«', '„', '“', '‘'];

/// Marks after which a sentence goes on: an answer that ends on one was
/// cut ("According to Mozilla's manifesto, which outlines goals,
/// principles, and a pledge,"); a dash only where it stands alone, not
/// ending a word.
const CONTINUING: &[char] = &[',', ';', ':'];
const DASHES: &[char] = &['-', '–', '—'];

/// Words that cannot end a sentence or a phrase (articles, conjunctions,
/// prepositions), per language: an answer without a final stop that ends
/// on one was cut.
fn cannot_end(lexicon: Lexicon) -> &'static [&'static str] {
    match lexicon.language {
        "French" => &[
            "le", "la", "les", "un", "une", "des", "du", "de", "et", "ou", "à", "au", "aux",
            "dans", "par", "pour", "sur", "avec", "vers", "chez", "sans",
        ],
        "German" => &[
            "der", "den", "dem", "des", "ein", "eine", "einer", "einem", "einen", "eines", "und",
            "oder", "von", "zu", "mit", "für", "auf", "im", "zum", "zur", "dass",
        ],
        "Spanish" => &[
            "el", "la", "los", "las", "un", "una", "y", "o", "de", "del", "en", "con", "por",
            "para", "al",
        ],
        _ => &[
            "the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "by", "for", "with",
            "from", "than", "into", "onto",
        ],
    }
}

/// Whether the candidate's answer, then its question, is whole: it does
/// not end on an opening bracket or quote, on a comma, semicolon, colon
/// or lone dash, nor, without a final stop, on a word that cannot end a
/// phrase ([`cannot_end`]). The 1.5B judge, copying a context that quotes
/// a name, ended its JSON string at the quotation mark: "No vote is
/// required to update note blocks and the". The 0.5B default wrote
/// question after question until its tokens ran out: "What is the crux
/// of this discovery? ... What is the implications of this discovery
/// for the field of".
///
/// ```
/// use assay_generate::check::{finished, Candidate, Part, Rejection};
/// use assay_grounding::words::Lexicon;
/// let answer = |a: &str| Candidate { question: "What needs no vote?".into(), answer: a.into() };
/// assert_eq!(finished(&answer("Updating the note blocks."), Lexicon::ENGLISH), Ok(()));
/// assert_eq!(finished(&answer("Guido van Rossum"), Lexicon::ENGLISH), Ok(()));
/// let cut = finished(&answer("Updating note blocks and the"), Lexicon::ENGLISH);
/// assert_eq!(cut, Err(Rejection::Unfinished { part: Part::Answer, ending: "and the".into() }));
/// let bracket = finished(&answer("un verbe tel que {{HTTPMethod("), Lexicon::FRENCH);
/// assert!(matches!(bracket, Err(Rejection::Unfinished { .. })));
/// let runaway = Candidate {
///     question: "What is the crux of this discovery? What are its implications for the field of".into(),
///     answer: "Curie's law.".into(),
/// };
/// let cut = finished(&runaway, Lexicon::ENGLISH);
/// assert_eq!(cut, Err(Rejection::Unfinished { part: Part::Question, ending: "field of".into() }));
/// ```
pub fn finished(candidate: &Candidate, lexicon: Lexicon) -> Result<(), Rejection> {
    for (part, text) in [
        (Part::Answer, &candidate.answer),
        (Part::Question, &candidate.question),
    ] {
        if let Some(ending) = cut_at(text, lexicon) {
            return Err(Rejection::Unfinished { part, ending });
        }
    }
    Ok(())
}

/// The last two words of `text` where it stops mid-sentence.
fn cut_at(text: &str, lexicon: Lexicon) -> Option<String> {
    let text = text.trim_end();
    let last = text.chars().last()?;
    let open_quote = ['"', '`'].contains(&last) && text.matches(last).count() % 2 == 1;
    let lone_dash = DASHES.contains(&last)
        && text[..text.len() - last.len_utf8()].ends_with(char::is_whitespace);
    let cut = OPENERS.contains(&last)
        || CONTINUING.contains(&last)
        || lone_dash
        || open_quote
        || (last.is_alphanumeric()
            && assay_grounding::features::words(text)
                .last()
                .is_some_and(|w| cannot_end(lexicon).contains(&w.as_str())));
    cut.then(|| last_two_words(text))
}

/// The last two words of `text`, to name where it was cut.
fn last_two_words(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    words[words.len().saturating_sub(2)..].join(" ")
}

/// The characters a judge's JSON string was closed at, where its answer
/// copied a context up to one: double quotation marks, a backtick, a
/// template's braces. Not an apostrophe, which ends no JSON string and
/// follows many a name ("the Curies' laboratory").
const QUOTES: [char; 6] = ['"', '\u{201c}', '\u{201e}', '\u{ab}', '`', '{'];

/// Whether the candidate's answer stops on a word that a context goes on
/// from at a quotation mark: the local 1.5B judge ended its answer's JSON
/// string at a quote it should have escaped, "Firefox OS ... aims to
/// support HTML5 apps written using" where the context goes on
/// `"open Web" technologies`. An answer with a final stop is whole; so are
/// a bare phrase and an answer whose last word no context follows with a
/// quotation mark.
///
/// ```
/// use assay_generate::check::{cut_at_quote, Candidate, Part, Rejection};
/// let context = ["It supports HTML5 apps written using \"open Web\" technologies."];
/// let answer = |a: &str| Candidate { question: "What does it support?".into(), answer: a.into() };
/// let cut = cut_at_quote(&answer("It supports HTML5 apps written using"), &context);
/// assert_eq!(cut, Err(Rejection::Unfinished { part: Part::Answer, ending: "written using".into() }));
/// assert_eq!(cut_at_quote(&answer("HTML5 apps written with open Web technologies"), &context), Ok(()));
/// assert_eq!(cut_at_quote(&answer("It supports HTML5 apps."), &context), Ok(()));
/// let named = ["Its project name is Boot to Gecko \"B2G\"."];
/// assert_eq!(cut_at_quote(&answer("Boot to Gecko"), &named), Ok(()));
/// let owned = ["Radium was isolated in the Curies' laboratory in 1902."];
/// assert_eq!(cut_at_quote(&answer("Radium was isolated by the Curies"), &owned), Ok(()));
/// let extension = ["It is available as an extension named \"PDF Viewer\" for SeaMonkey."];
/// let named = answer("The default extension for rendering PDF documents is named");
/// let cut = cut_at_quote(&named, &extension);
/// assert_eq!(cut, Err(Rejection::Unfinished { part: Part::Answer, ending: "is named".into() }));
/// let renamed = answer("The default extension for rendering PDF documents was renamed");
/// assert_eq!(cut_at_quote(&renamed, &extension), Ok(()));
/// ```
pub fn cut_at_quote(candidate: &Candidate, contexts: &[&str]) -> Result<(), Rejection> {
    let answer: Vec<&str> = candidate.answer.split_whitespace().collect();
    let stopped = answer
        .last()
        .and_then(|w| w.chars().last())
        .is_none_or(|c| !c.is_alphanumeric());
    // A bare phrase ("Boot to Gecko") may end where its context goes on.
    if stopped || answer.len() < BARE_ANSWER_WORDS {
        return Ok(());
    }
    // Its last word, where a context has it as a word followed by a
    // space and a quotation mark: not only its last two words, since the
    // judge words its answer ("... in Firefox is named" of an extension
    // `named "PDF Viewer"`).
    let last = answer[answer.len() - 1];
    let cut = contexts.iter().any(|context| {
        let context = context.split_whitespace().collect::<Vec<_>>().join(" ");
        context.match_indices(last).any(|(at, _)| {
            let starts_word = context[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            let rest = &context[at + last.len()..];
            starts_word
                && rest
                    .strip_prefix(' ')
                    .is_some_and(|r| r.starts_with(|c: char| QUOTES.contains(&c)))
        })
    });
    if cut {
        Err(Rejection::Unfinished {
            part: Part::Answer,
            ending: last_two_words(&candidate.answer),
        })
    } else {
        Ok(())
    }
}

/// Words in a row that, found in the prompt and not in the contexts,
/// make a copy: five, so that a name or a common phrase does not, of
/// which at least two are not stop words (English ones: the prompts are
/// English), so that a question's opening ("in which year did the",
/// which the worked example starts with too) does not.
const COPIED_WORDS: usize = 5;
const COPIED_CONTENT_WORDS: usize = 2;

/// Whether any of `texts` (a candidate's question, scenario, answer) holds
/// [`COPIED_WORDS`] words in a row of the prompt's instruction or worked
/// example (`prompt`) that `contexts` do not hold: the local 0.5B judge
/// wrote the example's museum question, or the instruction itself, as a
/// conversation's first message and scenario.
///
/// ```
/// use assay_generate::check::{copies_prompt, Rejection};
/// let prompt = "Write a question. Example: When can I visit the museum for free?";
/// let copied = copies_prompt(&["When can I visit the museum for free?"], prompt, &["Radium glows."]);
/// assert!(matches!(copied, Err(Rejection::CopiesPrompt { .. })));
/// let asked = copies_prompt(&["When did the Curies find radium?"], prompt, &["Radium glows."]);
/// assert_eq!(asked, Ok(()));
/// // The same opening is no copy.
/// let opening = copies_prompt(&["When can I visit the radium room?"], prompt, &["Radium glows."]);
/// assert_eq!(opening, Ok(()));
/// ```
pub fn copies_prompt(texts: &[&str], prompt: &str, contexts: &[&str]) -> Result<(), Rejection> {
    let windows = |text: &str| -> Vec<String> {
        assay_grounding::features::words(text)
            .windows(COPIED_WORDS)
            .filter(|w| {
                w.iter().filter(|x| !Lexicon::ENGLISH.is_stop(x)).count() >= COPIED_CONTENT_WORDS
            })
            .map(|w| w.join(" "))
            .collect()
    };
    let prompt: HashSet<String> = windows(prompt).into_iter().collect();
    let held: HashSet<String> = contexts.iter().flat_map(|c| windows(c)).collect();
    let copied = texts
        .iter()
        .flat_map(|t| windows(t))
        .find(|w| prompt.contains(w) && !held.contains(w));
    match copied {
        Some(copied) => Err(Rejection::CopiesPrompt { copied }),
        None => Ok(()),
    }
}

/// The stems of `text`'s content words (its function words left out).
pub(crate) fn content_stems(text: &str, lexicon: Lexicon) -> HashSet<String> {
    assay_grounding::features::words(text)
        .iter()
        .filter(|w| !lexicon.is_stop(w))
        .map(|w| lexicon.stem(w))
        .collect()
}

/// The stems of `text`'s words.
fn stems(text: &str, lexicon: Lexicon) -> HashSet<String> {
    assay_grounding::features::words(text)
        .iter()
        .map(|w| lexicon.stem(w))
        .collect()
}

/// Whether the question alone holds its answer, checked against the
/// question without the contexts: every content word of the answer (by
/// stem) is in the question. (The grounding verdict read "Paris is the
/// capital of France." as supported by "What is the capital of
/// France?": a sentence that only adds its one name scores high on
/// coverage.)
pub fn given_away(candidate: &Candidate, lexicon: Lexicon) -> Result<(), Rejection> {
    let question = stems(&candidate.question, lexicon);
    let content = content_stems(&candidate.answer, lexicon);
    let away = !content.is_empty() && content.is_subset(&question);
    if away {
        Err(Rejection::AnswerInQuestion)
    } else {
        Ok(())
    }
}

/// Phrases by which a question points at the text it was made from,
/// per language, as lower-cased words: a determiner (or an adjective of
/// pointing) and a noun for a text. Not "the document", which the HTTP
/// pages use for theirs; "the context" only where no word of [`NAMING`]
/// follows ("in the context of").
fn pointing(lexicon: Lexicon) -> &'static [&'static [&'static str]] {
    match lexicon.language {
        "French" => &[
            &["le", "texte"],
            &["ce", "texte"],
            &["du", "texte"],
            &["l", "extrait"],
            &["cet", "extrait"],
            &["le", "passage"],
            &["ce", "passage"],
            &["l", "article"],
            &["cet", "article"],
            &["l", "étude"],
            &["cette", "étude"],
            &["les", "auteurs"],
            &["ci", "dessus"],
            &["le", "contexte"],
            &["ce", "contexte"],
            &["du", "contexte"],
        ],
        "German" => &[
            &["der", "text"],
            &["des", "textes"],
            &["dem", "text"],
            &["den", "text"],
            &["im", "text"],
            &["dieser", "text"],
            &["diesem", "text"],
            &["dieses", "textes"],
            &["der", "artikel"],
            &["des", "artikels"],
            &["im", "artikel"],
            &["dieser", "artikel"],
            &["diesem", "artikel"],
            &["die", "studie"],
            &["der", "studie"],
            &["dieser", "studie"],
            &["die", "autoren"],
            &["der", "abschnitt"],
            &["im", "abschnitt"],
            &["oben", "genannten"],
            &["der", "kontext"],
            &["dem", "kontext"],
            &["im", "kontext"],
            &["diesem", "kontext"],
        ],
        "Spanish" => &[
            &["el", "texto"],
            &["este", "texto"],
            &["del", "texto"],
            &["el", "pasaje"],
            &["el", "fragmento"],
            &["el", "artículo"],
            &["este", "artículo"],
            &["del", "artículo"],
            &["el", "estudio"],
            &["este", "estudio"],
            &["del", "estudio"],
            &["los", "autores"],
            &["el", "contexto"],
            &["este", "contexto"],
            &["del", "contexto"],
        ],
        _ => &[
            &["the", "text"],
            &["this", "text"],
            &["the", "passage"],
            &["this", "passage"],
            &["the", "excerpt"],
            &["this", "excerpt"],
            &["the", "snippet"],
            &["code", "snippet"],
            &["the", "article"],
            &["this", "article"],
            &["the", "paper"],
            &["this", "paper"],
            &["the", "study"],
            &["this", "study"],
            &["the", "authors"],
            &["the", "author"],
            &["given", "context"],
            &["provided", "context"],
            &["the", "above"],
            &["mentioned", "above"],
            &["the", "context"],
            &["this", "context"],
        ],
    }
}

/// Words after which a pointing phrase names what it means ("the study
/// of radium", "the study on sequential compression in trauma", "le
/// texte de la loi"): no pointing then.
const NAMING: &[&str] = &[
    "of", "on", "about", "de", "du", "des", "d", "sur", "von", "vom", "über", "del", "sobre",
];

/// Where `phrase` starts among `words`, each place it does.
fn phrase_at<'a>(words: &'a [String], phrase: &'a [&str]) -> impl Iterator<Item = usize> + 'a {
    words
        .windows(phrase.len())
        .enumerate()
        .filter(move |(_, w)| w.iter().zip(phrase).all(|(a, b)| a == b))
        .map(|(at, _)| at)
}

/// Whether the question can be read alone: it does not point at the text
/// it was made from with a phrase of [`pointing`] ("What was the main
/// finding of the study?", "What is the error in the code snippet
/// provided?", "Was ist die Lizenz des Textes?", all made by the 1.5B
/// judge), unless a word of [`NAMING`] follows and says which, and holds
/// no template's placeholder (the 0.5B default's "{persona} wanted a
/// plain fact ..."). DeepEval's critic asks the same of its questions
/// ("self-containment") with a model; this reads words, in the languages
/// with a list.
///
/// ```
/// use assay_generate::check::{self_contained, Candidate, Rejection};
/// use assay_grounding::words::Lexicon;
/// let asked = |q: &str| Candidate { question: q.into(), answer: "It helps.".into() };
/// let en = Lexicon::ENGLISH;
/// assert_eq!(
///     self_contained(&asked("What was the main finding of the study?"), en),
///     Err(Rejection::NotSelfContained { phrase: "the study".into() })
/// );
/// assert_eq!(self_contained(&asked("Who led the study of radioactivity?"), en), Ok(()));
/// assert_eq!(self_contained(&asked("What did the heart-failure programmes give patients?"), en), Ok(()));
/// assert_eq!(
///     self_contained(&asked("What does the context say about Python 3?"), en),
///     Err(Rejection::NotSelfContained { phrase: "the context".into() })
/// );
/// assert_eq!(self_contained(&asked("What is a task in the context of Tokio?"), en), Ok(()));
/// assert_eq!(
///     self_contained(&asked("Why did {persona} want a plain fact?"), en),
///     Err(Rejection::NotSelfContained { phrase: "{persona}".into() })
/// );
/// assert_eq!(self_contained(&asked("What does the {} in format! stand for?"), en), Ok(()));
/// ```
pub fn self_contained(candidate: &Candidate, lexicon: Lexicon) -> Result<(), Rejection> {
    if let Some(phrase) = placeholder(&candidate.question) {
        return Err(Rejection::NotSelfContained { phrase });
    }
    let words = assay_grounding::words::words(&candidate.question);
    for phrase in pointing(lexicon) {
        let found = phrase_at(&words, phrase).any(|at| {
            !words
                .get(at + phrase.len())
                .is_some_and(|next| NAMING.contains(&next.as_str()))
        });
        if found {
            return Err(Rejection::NotSelfContained {
                phrase: phrase.join(" "),
            });
        }
    }
    Ok(())
}

/// The first `{name}` of `text`: a template's placeholder written into
/// a question (a name of letters, digits and underscores that opens
/// with a letter; an empty `{}`, as in Rust's `format!`, is none).
fn placeholder(text: &str) -> Option<String> {
    text.match_indices('{').find_map(|(at, _)| {
        let rest = &text[at + 1..];
        let name = &rest[..rest.find('}')?];
        let mut chars = name.chars();
        (chars.next()?.is_alphabetic() && chars.all(|c| c.is_alphanumeric() || c == '_'))
            .then(|| format!("{{{name}}}"))
    })
}

/// Phrases of a question that asks for a year, by language (words as
/// [`assay_grounding::words::words`] gives them).
const ASKS_YEAR: &[&[&str]] = &[
    &["what", "year"],
    &["which", "year"],
    &["quelle", "année"],
    &["welchem", "jahr"],
    &["welches", "jahr"],
    &["qué", "año"],
    &["cuál", "año"],
];

/// Phrases of a question that asks for a count.
const ASKS_COUNT: &[&[&str]] = &[
    &["how", "many"],
    &["combien"],
    &["wie", "viele"],
    &["cuántos"],
    &["cuántas"],
];

/// Words that give a count without digits, in English, French, German
/// and Spanish ("none" and its kin answer a count too).
const COUNT_WORDS: &str =
    "no none zero one two three four five six seven eight nine ten eleven twelve \
     fifteen twenty thirty fifty hundred hundreds thousand thousands million \
     millions billion dozen dozens both single couple decade decades century \
     centuries millennium aucun aucune zéro un une deux trois quatre cinq sept huit \
     neuf dix onze douze quinze vingt trente cent cents mille milliard kein keine \
     null ein eine eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf \
     zwanzig hundert tausend millionen milliarde beide ninguno ninguna cero uno una \
     dos tres cuatro cinco seis siete ocho nueve diez veinte cien ciento mil millón \
     ambos";

/// Whether the answer is of the kind its question asks for, where the
/// question says: a question that asks for a year ("In which year",
/// "En quelle année", "In welchem Jahr") needs a number of three or four
/// digits in its answer, one that asks for a count ("How many",
/// "combien", "wie viele") a digit or a number's word. The small judges
/// write the worked example's "In which year" before a sentence without
/// a year: "In which year did the council term begin?", answered "During
/// a council term, if changing circumstances cause this rule to be
/// broken ...", made by the local 0.5B judge from PEP 13, and "In
/// welchem Jahr basieren ... Google Suche und YouTube auf Python?" by the
/// 1.5B one. A question of another kind passes.
///
/// ```
/// use assay_generate::check::{answer_type, Candidate, Rejection};
/// let c = |q: &str, a: &str| Candidate { question: q.into(), answer: a.into() };
/// assert_eq!(answer_type(&c("In which year did the Curies discover radium?", "In 1898.")), Ok(()));
/// assert_eq!(
///     answer_type(&c("In which year did the council term begin?", "During a council term.")),
///     Err(Rejection::AnswerType { asks: "a year".into() })
/// );
/// assert_eq!(answer_type(&c("How many men took part?", "Twelve of the fifteen.")), Ok(()));
/// assert_eq!(answer_type(&c("Who discovered radium?", "The Curies.")), Ok(()));
/// ```
pub fn answer_type(candidate: &Candidate) -> Result<(), Rejection> {
    let question = assay_grounding::words::words(&candidate.question);
    let asks = |phrases: &[&[&str]]| {
        phrases
            .iter()
            .any(|phrase| phrase_at(&question, phrase).next().is_some())
    };
    let answer = assay_grounding::words::words(&candidate.answer);
    // "1898", "2024" of "2024-12-10", "1990" of "the 1990s".
    let year = || {
        answer
            .iter()
            .any(|w| (3..=4).contains(&w.chars().take_while(char::is_ascii_digit).count()))
    };
    let count = || {
        answer
            .iter()
            .any(|w| w.chars().any(|c| c.is_ascii_digit()) || listed(COUNT_WORDS, w))
    };
    let missing = if asks(ASKS_YEAR) && !year() {
        Some("a year")
    } else if asks(ASKS_COUNT) && !count() {
        Some("a count")
    } else {
        None
    };
    match missing {
        Some(asks) => Err(Rejection::AnswerType { asks: asks.into() }),
        None => Ok(()),
    }
}

/// Question words, anywhere in a question, in the four languages of
/// the lexicons; Spanish ones only with their accent ("que" and "como"
/// are not). Words that are also common elsewhere ("was", "wie", "que")
/// are in [`OPENING_WORDS`].
const ASKING_WORDS: &str = "what which who whom whose when where why how \
     qui quoi quel quelle quels quelles quand où pourquoi comment combien lequel \
     laquelle lesquels lesquelles qu \
     wer wen wem wessen wann wo wohin woher warum wieso weshalb welche welcher \
     welches welchen welchem \
     qué quién quiénes cuál cuáles cuándo dónde cómo cuánto cuánta cuántos cuántas";

/// Words that make a question only as its first word: the verbs a yes/no
/// question opens with, which any statement holds further on ("Python
/// version 1995 was released"), and "was", "wie", "que".
const OPENING_WORDS: &str = "is are was were do does did can could should would will has \
     have had que est ist sind hat haben kann gibt wie";

/// Whether a question planned in a style that asks (every style but a
/// search-engine query) asks something: it ends with a question mark,
/// holds a question word or opens with a verb as a yes/no question does.
/// The judges wrote strings of keywords in those styles, nearly all of
/// them wrong: "parallel iterators in rust doc html
/// iter offer parallel perform rayon rest sequenti thread" (the 0.5B, a
/// multi-hop question planned in poor grammar), "Python version 1995"
/// (the 1.5B, answered "Python version 1995 was released in 1995."). A
/// hurried writer's "how to use powers as little as possible" passes.
/// Nor is a sentence that ends with a full stop and does not open as a
/// question, in any style: the 0.5B default copied its context's
/// sentences as questions ("HTTP est utilisé pour récupérer des
/// documents, ... comme des résultats de formulaires HTML.", planned as
/// a search query; "Core team membership acknowledges ..., which is open
/// for one week ...", where "which" is a relative pronoun).
///
/// ```
/// use assay_generate::check::{asks_something, Candidate, Rejection};
/// use assay_generate::plan::Style;
/// let q = |q: &str| Candidate { question: q.into(), answer: "An answer.".into() };
/// assert_eq!(asks_something(&q("Python version 1995"), Style::PoorGrammar), Err(Rejection::NotAQuestion));
/// assert_eq!(asks_something(&q("Python version 1995"), Style::WebSearch), Ok(()));
/// assert_eq!(asks_something(&q("how to use powers as little as possible"), Style::PoorGrammar), Ok(()));
/// assert_eq!(asks_something(&q("Radium discovered in 1898?"), Style::PerfectGrammar), Ok(()));
/// assert_eq!(asks_something(&q("qui peut être contrôlé par HTTP"), Style::Misspelled), Ok(()));
/// assert_eq!(asks_something(&q("Is HTTP stateless"), Style::PoorGrammar), Ok(()));
/// let statement = q("Python version 1995 was released in 1995");
/// assert_eq!(asks_something(&statement, Style::PoorGrammar), Err(Rejection::NotAQuestion));
/// let copied = q("Curie studied magnetism, which is now known as Curie's law.");
/// assert_eq!(asks_something(&copied, Style::Misspelled), Err(Rejection::NotAQuestion));
/// assert_eq!(asks_something(&copied, Style::WebSearch), Err(Rejection::NotAQuestion));
/// assert_eq!(asks_something(&q("How do I renew a certificate."), Style::PoorGrammar), Ok(()));
/// ```
pub fn asks_something(candidate: &Candidate, style: Style) -> Result<(), Rejection> {
    let question = candidate.question.trim_end();
    let words = assay_grounding::words::words(question);
    let opens_asking = words
        .first()
        .is_some_and(|w| listed(OPENING_WORDS, w) || listed(ASKING_WORDS, w));
    // A sentence that ends with a full stop is stated, in any style, unless
    // it opens as a question; its "which" is a relative pronoun.
    let stated = question.ends_with('.') && !opens_asking;
    let asking = !stated
        && (style == Style::WebSearch
            || question.ends_with(['?', '？'])
            || opens_asking
            || words.iter().any(|w| listed(ASKING_WORDS, w)));
    if asking {
        Ok(())
    } else {
        Err(Rejection::NotAQuestion)
    }
}

/// Subject pronouns that open an answer speaking of its question's
/// subject without naming it ("He was born in Paris."), in English,
/// French, German and Spanish.
const STANDS_FOR: &str = "he she it they il elle ils elles er sie es él ella ellos ellas";

/// Whether an answer of a sentence or more (not a bare phrase, which
/// is read after its question) speaks of what its question asks: it
/// shares a content word (by stem) with the question, or opens with a
/// pronoun that stands for the question's subject. The 0.5B default
/// answered "What powers does the steering council use as little as
/// possible?" with "Phase 1: Candidates advertise their interest in
/// serving.", and "Who was the first woman to be honored in this way for
/// her own merits?" with a sentence on the Curies' radium burns, each a
/// true sentence of a context the question was not about.
///
/// ```
/// use assay_generate::check::{on_topic, Candidate, Rejection};
/// use assay_grounding::words::Lexicon;
/// let c = |q: &str, a: &str| Candidate { question: q.into(), answer: a.into() };
/// let off = c("What powers does the steering council use as little as possible?", "Phase 1: Candidates advertise their interest in serving.");
/// assert_eq!(on_topic(&off, Lexicon::ENGLISH), Err(Rejection::OffTopic));
/// let on = c("What powers does the council have?", "The steering council has broad authority over the project.");
/// assert_eq!(on_topic(&on, Lexicon::ENGLISH), Ok(()));
/// let pronoun = c("In which city did Pierre Curie come into the world?", "He was born in Paris, in 1859.");
/// assert_eq!(on_topic(&pronoun, Lexicon::ENGLISH), Ok(()));
/// assert_eq!(on_topic(&c("When was radium discovered?", "In 1898."), Lexicon::ENGLISH), Ok(()));
/// ```
pub fn on_topic(candidate: &Candidate, lexicon: Lexicon) -> Result<(), Rejection> {
    if candidate.is_bare() {
        return Ok(());
    }
    let opens_with_pronoun = assay_grounding::words::words(&candidate.answer)
        .first()
        .is_some_and(|w| listed(STANDS_FOR, w));
    let question = content_stems(&candidate.question, lexicon);
    if opens_with_pronoun || !content_stems(&candidate.answer, lexicon).is_disjoint(&question) {
        Ok(())
    } else {
        Err(Rejection::OffTopic)
    }
}

/// The words that join two clauses in contrast after a comma ("X, while
/// Y"), in English, French, German and Spanish.
const CONTRASTS: [&str; 11] = [
    "while",
    "whereas",
    "whilst",
    "but",
    "tandis que",
    "alors que",
    "mais",
    "während",
    "wohingegen",
    "mientras que",
    "pero",
];

/// Words that deny what follows, in English, French, German and
/// Spanish: a side that has one and a side that has none draw a
/// contrast, whatever words they share.
const NEGATIONS: &str = "not no never cannot nor neither ne pas jamais aucun aucune non \
    nicht kein keine keinen nie niemals nunca ningún ninguna";

/// Whether `word` is one of `list`'s words (separated by white space).
fn listed(list: &str, word: &str) -> bool {
    list.split_whitespace().any(|w| w == word)
}

/// Whether `text` denies something: a word of [`NEGATIONS`] or an "n't".
fn negated(text: &str) -> bool {
    text.to_lowercase().contains("n't")
        || assay_grounding::words::words(text)
            .iter()
            .any(|w| listed(NEGATIONS, w))
}

/// Auxiliary and copular verb forms, in English, French, German and
/// Spanish: a side whose own words (before what both sides end with)
/// hold one says something of its own ("the council has broad
/// authority ..., while the council has limited authority ...").
/// French "a" is left out: it is English's article.
const AUXILIARIES: &str = "is are was were be been being has have had can could may might must \
    shall should will would do does did est sont était étaient été ont avait avaient peut peuvent \
    ist sind war waren hat haben hatte kann können wird werden es era eran fue ha han puede pueden";

/// Words that both sides of a contrast end with, of which an answer
/// says the same of both: three, so that a shared last word or two ("is
/// real" and "is not necessarily real") is not.
const REPEATED_WORDS: usize = 3;

/// Whether each contrast the answer draws ("X, while Y") says something
/// different of its two sides: it is empty where the two sides end with
/// the same words, three or more and no fewer than either side's own,
/// and their own words (what each side speaks of) hold no auxiliary
/// verb and no denial that the other lacks. The 0.5B default answered
/// "How does the way a new council is elected differ from a council
/// election?" with "A new council is elected after each feature
/// release, while a council election is elected after each feature
/// release.", in every run on `examples/docs`. Of the 641 distinct
/// answers, kept and rejected, of the sets on the development machine
/// (2026-11), it finds 3, each empty when read: that one, HTTP/2 and
/// HTTP/1.1 that both "use a connection to send multiple requests at
/// once over one connection", a client and a server that both "can be
/// considered an HTTP proxy". A contrast drawn within
/// the sides' own words by a verb that is not an auxiliary reads empty
/// where those words are no longer than the shared ending ("X takes a
/// reference to an object as a parameter instead of taking ownership
/// of the value, while Y takes a reference to a string as ..."); the
/// one such answer in those sets had a longer first side.
///
/// ```
/// use assay_generate::check::{contrasts, Candidate, Rejection};
/// let c = |a: &str| Candidate { question: "How do they differ?".into(), answer: a.into() };
/// let same = c("A new council is elected after each feature release, while a council election is elected after each feature release.");
/// let repeated = "is elected after each feature release".to_string();
/// assert_eq!(contrasts(&same), Err(Rejection::EmptyContrast { repeated }));
/// let real = c("The determinant of a Hermitian matrix is real, while the determinant of a non-Hermitian matrix is not necessarily real.");
/// assert_eq!(contrasts(&real), Ok(()));
/// let loops = c("For loops iterate over sequences, while while loops run until a condition is met.");
/// assert_eq!(contrasts(&loops), Ok(()));
/// let denied = c("A mutable reference allows us to modify the value pointed to by the reference, \
///     while an immutable reference does not allow us to modify the value pointed to by the reference.");
/// assert_eq!(contrasts(&denied), Ok(()));
/// let elided = c("A mutable reference lets us change the value it points to, \
///     but an immutable one doesn't let us change the value it points to.");
/// assert_eq!(contrasts(&elided), Ok(()));
/// let degree = c("The steering council has broad authority to make decisions about the project, \
///     while the core team has limited authority to make decisions about the project.");
/// assert_eq!(contrasts(&degree), Ok(()));
/// let kinds = c("The use of references in `calculate_length` differs from their use in `change` \
///     because `calculate_length` takes a reference to an object as a parameter instead of taking ownership of the value, \
///     while `change` takes a reference to a string as a parameter instead of taking ownership of the value.");
/// assert_eq!(contrasts(&kinds), Ok(()));
/// ```
pub fn contrasts(candidate: &Candidate) -> Result<(), Rejection> {
    let words = assay_grounding::words::words;
    for sentence in assay_text::sentences::split_sentences(&candidate.answer) {
        for (left, right) in CONTRASTS
            .iter()
            .filter_map(|c| sentence.split_once(&format!(", {c} ")))
        {
            if negated(left) != negated(right) {
                continue;
            }
            let (left, right) = (words(left), words(right));
            let same = left
                .iter()
                .rev()
                .zip(right.iter().rev())
                .take_while(|(l, r)| l == r)
                .count();
            let own = [&left[..left.len() - same], &right[..right.len() - same]];
            let empty = same >= REPEATED_WORDS
                && own.iter().all(|o| o.len() <= same)
                && !own
                    .iter()
                    .flat_map(|o| o.iter())
                    .any(|w| listed(AUXILIARIES, w));
            if empty {
                let repeated = left[left.len() - same..].join(" ");
                return Err(Rejection::EmptyContrast { repeated });
            }
        }
    }
    Ok(())
}

/// Whether the question and its answer are in `expected` (an English
/// name), each where the detector is sure of its language: the 1.5B
/// judge asked a German document "Python version 1995" and answered in
/// English.
pub fn in_language(candidate: &Candidate, expected: Option<&str>) -> Result<(), Rejection> {
    let Some(expected) = expected else {
        return Ok(());
    };
    let other = [&candidate.question, &candidate.answer]
        .into_iter()
        .filter_map(|text| language::detected(&[text]))
        .find(|found| found != expected);
    match other {
        Some(found) => Err(Rejection::OtherLanguage {
            expected: expected.to_string(),
            found,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use assay_grounding::Verified;
    use serde_json::json;

    #[test]
    fn a_question_of_fewer_than_three_words_is_rejected() {
        let bad = json!({"question": ":[{", "answer": "{\"context\": 1}"});
        match Candidate::from_json(&bad) {
            Err(Rejection::Judge { error }) => {
                assert!(error.contains("fewer than 3 words"), "{error}")
            }
            other => panic!("{other:?}"),
        }
        let short = json!({"question": "Why HTTP/2?", "answer": "Multiplexing."});
        assert!(Candidate::from_json(&short).is_ok());
    }

    #[test]
    fn a_judge_answer_without_both_fields_is_rejected() {
        assert_eq!(
            Candidate::from_json(&json!({"question": " ", "answer": "x"})),
            Err(Rejection::Judge {
                error: "the answer has no question".into()
            })
        );
        assert!(Candidate::from_json(&json!({"question": "Who was Q?"})).is_err());
        let c = Candidate::from_json(&json!({"question": " Who was Q? ", "answer": "A."})).unwrap();
        assert_eq!(
            (c.question.as_str(), c.answer.as_str()),
            ("Who was Q?", "A.")
        );
    }

    #[test]
    fn a_question_in_another_language_is_rejected_where_the_detector_is_sure() {
        let c = |q: &str| Candidate {
            question: q.into(),
            answer: "x".into(),
        };
        let french = c("Quelle est la différence entre HTTP/1.1 et HTTP/2 pour les connexions ?");
        assert_eq!(in_language(&french, Some("French")), Ok(()));
        assert_eq!(
            in_language(&french, Some("German")),
            Err(Rejection::OtherLanguage {
                expected: "German".into(),
                found: "French".into()
            })
        );
        assert_eq!(in_language(&c("HTTP/2?"), Some("German")), Ok(()));
        assert_eq!(in_language(&french, None), Ok(()));
    }

    #[test]
    fn a_question_that_holds_its_answer_gives_it_away() {
        let c = |q: &str, a: &str| Candidate {
            question: q.into(),
            answer: a.into(),
        };
        let en = Lexicon::ENGLISH;
        let yes_no = c(
            "Was radium discovered by the Curies in 1898?",
            "Radium was discovered by the Curies in 1898.",
        );
        assert_eq!(given_away(&yes_no, en), Err(Rejection::AnswerInQuestion));
        assert_eq!(
            given_away(&c("Who discovered radium, the Curies?", "The Curies."), en),
            Err(Rejection::AnswerInQuestion)
        );
        assert_eq!(
            given_away(&c("When was radium discovered?", "In 1898."), en),
            Ok(())
        );
        let open = c(
            "When was radium discovered?",
            "Radium was discovered by the Curies in 1898.",
        );
        assert_eq!(given_away(&open, en), Ok(()));
        let named = c(
            "What is the capital of France?",
            "Paris is the capital of France.",
        );
        assert_eq!(given_away(&named, en), Ok(()));
    }

    /// Candidates the judges made on the shared corpus and a README
    /// (the rejected ones kept by earlier runs), and answers that name
    /// their year or count in other ways.
    #[test]
    fn a_question_for_a_year_or_a_count_needs_one_in_its_answer() {
        let kind = |q: &str, a: &str| {
            let c = Candidate {
                question: q.into(),
                answer: a.into(),
            };
            match answer_type(&c) {
                Ok(()) => None,
                Err(Rejection::AnswerType { asks }) => Some(asks),
                Err(other) => panic!("{other:?}"),
            }
        };
        let year = Some("a year".to_string());
        let count = Some("a count".to_string());
        for (q, a, missing) in [
            (
                "In which year did the council term begin?",
                "During a council term, if changing circumstances cause this rule to be broken.",
                &year,
            ),
            (
                "In welchem Jahr basieren die Projekte Google Suche und YouTube auf Python?",
                "Bekannte kommerzielle Projekte, etwa Google Suche und YouTube, basieren in Teilen auf Python.[62]",
                &year,
            ),
            (
                "In which year did Rayon's APIs guarantee data-race freedom?",
                "Rayon's APIs all guarantee data-race freedom.",
                &year,
            ),
            (
                "How many years did the core team members stop contributing?",
                "The core team members who have stopped contributing are encouraged to declare themselves inactive.",
                &count,
            ),
            ("Combien de membres compte le conseil ?", "Le conseil compte cinq membres.", &None),
            ("En quelle année HTTP/2 a-t-il été publié ?", "En 2015.", &None),
            ("What year was Multi-winner Bloc STAR voting adopted?", "On 2024-12-10.", &None),
            ("In what year did radium paint go out of use?", "In the 1960s.", &None),
            ("How many participants were men?", "Twelve of the fifteen (n = 12).", &None),
            ("How many vetoes has the council used?", "None.", &None),
            ("Wie viele Mitglieder hat das Kernteam?", "Ungefähr 25.", &None),
            ("When did Pierre Curie die?", "In a street accident in Paris.", &None),
        ] {
            assert_eq!(&kind(q, a), missing, "{q}");
        }
    }

    /// Questions the judges wrote in a style that asks, kept before this
    /// check (2026-11): the strings of keywords are not questions; a
    /// question without its mark that holds a question word, in each
    /// language, is.
    #[test]
    fn a_question_in_a_style_that_asks_must_ask() {
        let asks = |q: &str, style: Style| {
            let c = Candidate {
                question: q.into(),
                answer: "An answer.".into(),
            };
            asks_something(&c, style).is_ok()
        };
        for q in [
            "Python core team members vote on election duration",
            "Python version 1995",
            "Arch-Linux-Derivate für Einsteiger abgerufen am 20. Juli 2022",
            "mutable reference immutable reference",
            "parallel iterators in rust doc html iter offer parallel perform rayon rest sequenti thread",
            "format error missing attribute",
        ] {
            assert!(!asks(q, Style::PoorGrammar), "{q}");
            assert!(!asks(q, Style::Misspelled), "{q}");
            assert!(asks(q, Style::WebSearch), "{q}");
        }
        for q in [
            "how to use powers as little as possible",
            "qui peut être contrôlé par HTTP",
            "Wie viele Mitglieder hat das Kernteam",
            "cuántos miembros tiene el consejo",
            "Is HTTP stateless",
            "Quel est le premier protocole standardisé de HTTP ?",
            "Radium was discovered in 1898?",
            "What is the main complication? bleeding and thrombocytopenia.",
        ] {
            assert!(asks(q, Style::PerfectGrammar), "{q}");
        }
        // Sentences of their contexts, copied or stitched, that the 0.5B
        // default wrote as questions and the check above let pass (kept
        // rows of generator v14 to v16, 2026-11).
        for q in [
            "core team membership acknowledges sustained and valuable efforts that align well \
             with the philosophy and the goals of the Python project, and it is granted by \
             receiving at least two-thirds positive votes in a core team vote which is open \
             for one week and is not vetoed by the steering council.",
            "HTTP est utilisé pour récupérer des documents, mais aussi pour des images, des \
             vidéos ou bien pour renvoyer des contenus vers des serveurs, comme des résultats \
             de formulaires HTML.",
            "Pierre Curie discovered the effect of temperature on paramagnetism, and Pierre \
             Curie studied ferromagnetism, paramagnetism, and diamagnetism for his doctoral \
             thesis, and discovered the effect of temperature on paramagnetism which is now \
             known as Curie's law.",
        ] {
            for style in [Style::PoorGrammar, Style::Misspelled, Style::WebSearch] {
                assert!(!asks(q, style), "{q}");
            }
        }
    }

    #[test]
    fn a_question_that_points_at_its_source_is_not_self_contained() {
        let asked = |q: &str| Candidate {
            question: q.into(),
            answer: "Oui.".into(),
        };
        let phrase = |q: &str, lexicon| match self_contained(&asked(q), lexicon) {
            Ok(()) => None,
            Err(Rejection::NotSelfContained { phrase }) => Some(phrase),
            Err(other) => panic!("{other:?}"),
        };
        let (en, fr, de) = (Lexicon::ENGLISH, Lexicon::FRENCH, Lexicon::GERMAN);
        // The 1.5B judge's, on the shared corpus.
        assert_eq!(
            phrase("What is the error in the code snippet provided?", en),
            Some("code snippet".into())
        );
        assert_eq!(
            phrase("Was ist die Lizenz des Textes?", de),
            Some("des textes".into())
        );
        assert_eq!(
            phrase("Que dit l'extrait à propos des en-têtes ?", fr),
            Some("l extrait".into())
        );
        assert_eq!(
            phrase("What is the paper's main conclusion?", en),
            Some("the paper".into())
        );
        // Named, or not pointing at all.
        assert_eq!(phrase("Quel est le texte de la RFC 2616 ?", fr), None);
        assert_eq!(phrase("Who is the author of PEP 13?", en), None);
        assert_eq!(
            phrase(
                "Which device did the study on compression in trauma use?",
                en
            ),
            None
        );
        assert_eq!(phrase("What is the given name of Curie's wife?", en), None);
        assert_eq!(phrase("Wer entwickelte Python?", de), None);
    }

    #[test]
    fn an_answer_cut_mid_sentence_is_unfinished() {
        let answer = |a: &str| Candidate {
            question: "What did the council say?".into(),
            answer: a.into(),
        };
        let ending = |a: &str, lexicon| match finished(&answer(a), lexicon) {
            Ok(()) => None,
            Err(Rejection::Unfinished {
                part: Part::Answer,
                ending,
            }) => Some(ending),
            Err(other) => panic!("{other:?}"),
        };
        // Whole: a final stop, a closed quote, a bare answer, a word that
        // can end a phrase.
        assert_eq!(ending("It said \"yes\"", Lexicon::ENGLISH), None);
        assert_eq!(ending("Five members.", Lexicon::ENGLISH), None);
        assert_eq!(ending("They went there", Lexicon::ENGLISH), None);
        assert_eq!(ending("A vote of the core team", Lexicon::ENGLISH), None);
        assert_eq!(ending("Je ne sais pas de quoi.", Lexicon::FRENCH), None);
        // Cut: an open quote or bracket, or a word that cannot end one.
        assert_eq!(
            ending(
                "The \"Current steering council\" and the \"",
                Lexicon::ENGLISH
            ),
            Some("the \"".into())
        );
        assert_eq!(ending("See the [", Lexicon::ENGLISH), Some("the [".into()));
        assert_eq!(
            ending("Everyone listed in the `", Lexicon::ENGLISH),
            Some("the `".into())
        );
        assert_eq!(ending("It calls `len`", Lexicon::ENGLISH), None);
        // A mark after which the sentence goes on, as the 1.5B judge cut
        // a copied sentence; a dash alone, not one ending a word.
        assert_eq!(
            ending(
                "According to the manifesto, which outlines goals,",
                Lexicon::ENGLISH
            ),
            Some("outlines goals,".into())
        );
        assert_eq!(
            ending("Plus tard surnommé HTTP/0.9 -", Lexicon::FRENCH),
            Some("HTTP/0.9 -".into())
        );
        assert_eq!(ending("It is self-", Lexicon::ENGLISH), None);
        assert_eq!(
            ending("Le code de statut de la", Lexicon::FRENCH),
            Some("de la".into())
        );
        assert_eq!(
            ending("Python wurde von Guido van Rossum und", Lexicon::GERMAN),
            Some("Rossum und".into())
        );
    }

    /// A bare answer must take what it adds from the contexts: a year
    /// they do not give is unsupported, however much of the claim the
    /// question (which the support holds) covers; one they give is not.
    #[test]
    fn a_bare_answer_must_come_from_the_contexts() {
        let contexts = ["Le pipeline HTTP a été remplacé dans HTTP/2 par le multiplexage en 2015."];
        let c = |question: &str, answer: &str| Candidate {
            question: question.into(),
            answer: answer.into(),
        };
        let invented = c("In which year did the Curies discover radium?", "2098");
        match supported(&invented, &contexts, Lexicon::FRENCH, None) {
            Err(Rejection::Unsupported { evidence, .. }) => {
                assert!(evidence.contains("\"2098\""), "{evidence}")
            }
            other => panic!("{other:?}"),
        }
        let given = c(
            "En quelle année HTTP/2 a-t-il remplacé le pipeline HTTP ?",
            "En 2015.",
        );
        assert_eq!(supported(&given, &contexts, Lexicon::FRENCH, None), Ok(()));
    }

    /// A long answer is checked sentence by sentence: one unsupported
    /// sentence rejects it, naming that sentence.
    #[test]
    fn each_sentence_of_a_long_answer_must_be_supported() {
        let contexts = [
            "Pierre Curie was born in Paris on 15 May 1859. He died in a street accident in 1906.",
        ];
        let c = Candidate {
            question: "What do we know of Pierre Curie's life?".into(),
            answer: "Pierre Curie was born in Paris on 15 May 1859. He later moved to Berlin and taught chemistry there.".into(),
        };
        match supported(&c, &contexts, Lexicon::ENGLISH, None) {
            Err(Rejection::Unsupported { claim, .. }) => {
                assert!(claim.contains("Berlin"), "{claim}")
            }
            other => panic!("{other:?}"),
        }
    }

    /// Each sentence of an answer must be supported by one context: a
    /// sentence that contrasts what two contexts say apart, in their
    /// words, is not (the 1.5B judge's abstract answer about Mozilla),
    /// while a sentence from each is.
    #[test]
    fn a_sentence_stitched_from_two_contexts_is_unsupported() {
        let contexts = [
            "On January 23, 1998, Netscape made two announcements: first, that Netscape Communicator will be free; second, that the source code will also be free.",
            "Mozilla produces many products such as the Firefox web browser, Thunderbird e-mail client, Firefox Mobile web browser and other projects.",
        ];
        let asked = |answer: &str| {
            Candidate {
            question: "How did Netscape's announcement of the Mozilla project differ from the announcement of the Firefox web browser?".into(),
            answer: answer.into(),
        }
        };
        let stitched = asked(
            "Netscape's announcement of the Mozilla project was about the source code being free, while the announcement of the Firefox web browser was about the browser being free.",
        );
        assert!(
            matches!(
                supported(&stitched, &contexts, Lexicon::ENGLISH, None),
                Err(Rejection::Unsupported { .. })
            ),
            "{:?}",
            supported(&stitched, &contexts, Lexicon::ENGLISH, None)
        );
        let each = asked(
            "In 1998 Netscape announced that the source code will also be free. Mozilla produces the Firefox web browser and the Thunderbird e-mail client.",
        );
        assert_eq!(supported(&each, &contexts, Lexicon::ENGLISH, None), Ok(()));
    }

    /// The words a sentence's supporting context lacks may not be another
    /// context's: the 0.5B default's abstract answer gave the sentence on
    /// Pierre Curie's Nobel Prize the subject of the other context, his
    /// daughter, and read supported, since every other word is the first
    /// context's. The sentence as that context tells it is supported.
    #[test]
    fn a_sentence_given_another_contexts_subject_is_unsupported() {
        let contexts = [
            "PIERRE CURIE was a French physicist. In 1903, he received the Nobel Prize in Physics with his wife, Marie Skłodowska-Curie, and Henri Becquerel.",
            "Pierre and Marie Curie's daughter, Irène, and their son-in-law were also physicists involved in the study of radioactivity.",
        ];
        let asked = |answer: &str| Candidate {
            question: "How did Pierre Curie's daughter Irène receive the Nobel Prize?".into(),
            answer: answer.into(),
        };
        let swapped = asked(
            "The daughter received the Nobel Prize in Physics with her wife, Marie Skłodowska-Curie, and Henri Becquerel.",
        );
        match supported(&swapped, &contexts, Lexicon::ENGLISH, None) {
            Err(Rejection::Unsupported { evidence, .. }) => {
                assert!(
                    evidence.starts_with("\"daughter\" is another context's"),
                    "{evidence}"
                )
            }
            other => panic!("{other:?}"),
        }
        let told = asked(
            "In 1903, Pierre Curie received the Nobel Prize in Physics with his wife, Marie Skłodowska-Curie, and Henri Becquerel.",
        );
        assert_eq!(supported(&told, &contexts, Lexicon::ENGLISH, None), Ok(()));
    }

    /// An answer in another language than its document's is rejected
    /// where the detector is sure, as its question is.
    #[test]
    fn an_answer_in_another_language_is_rejected() {
        let german = Candidate {
            question: "Wann wurde die erste Version von Python veröffentlicht?".into(),
            answer: "Die erste Version wurde im Februar 1991 veröffentlicht.".into(),
        };
        assert_eq!(in_language(&german, Some("German")), Ok(()));
        let english = Candidate {
            answer: "The first version was released in February 1991 by Guido van Rossum.".into(),
            ..german.clone()
        };
        assert_eq!(
            in_language(&english, Some("German")),
            Err(Rejection::OtherLanguage {
                expected: "German".into(),
                found: "English".into()
            })
        );
    }

    /// The lexical verdict reads an answer with its question in the
    /// support, but a false premise is unsupported, restated or answered
    /// bare: a word a longer answer takes from its question must be in
    /// the contexts, and so must most of a bare answer's question (the
    /// French "En quelle année ..." of
    /// `a_bare_answer_must_come_from_the_contexts`, whose "quelle année"
    /// no context holds, passes). Answers that name what their question
    /// asks about, in the contexts' words, are supported.
    #[test]
    fn a_false_premise_restated_or_answered_bare_is_unsupported() {
        let contexts = ["Pierre Curie was born in Paris on 15 May 1859."];
        let c = |question: &str, answer: &str| Candidate {
            question: question.into(),
            answer: answer.into(),
        };
        let studies =
            "In which year did Pierre Curie begin his studies at the University of Paris?";
        let restated = c(
            studies,
            "Pierre Curie began his studies at the University of Paris in 1859.",
        );
        let bare = c(studies, "1859");
        for (premise, why) in [
            (
                restated,
                "the answer's \"studies\" is its question's and not in the contexts",
            ),
            (
                bare,
                "the question's \"year\", \"begin\", \"studies\", \"university\" are not in the \
                 contexts (3 of its 7 words are)",
            ),
        ] {
            match supported(&premise, &contexts, Lexicon::ENGLISH, None) {
                Err(Rejection::Unsupported { evidence, .. }) => assert_eq!(evidence, why),
                other => panic!("{other:?}"),
            }
        }
        let named = c(
            "Where and when was Pierre Curie born?",
            "Pierre Curie was born in Paris on 15 May 1859.",
        );
        let born = c("In which year was Pierre Curie born in Paris?", "1859");
        for right in [named, born] {
            assert_eq!(supported(&right, &contexts, Lexicon::ENGLISH, None), Ok(()));
        }
    }

    /// A verifier that reads words: a claim is supported where each of
    /// its content words is in a source, and its evidence is the first
    /// source.
    pub(crate) struct EveryWord;

    impl Verifier for EveryWord {
        fn identity(&self) -> &str {
            "every-word"
        }
        fn verify(&self, claims: &[&str], sources: &[&str]) -> Result<Vec<Verified>, String> {
            let held: HashSet<String> = sources
                .iter()
                .flat_map(|s| assay_grounding::features::words(s))
                .collect();
            Ok(claims
                .iter()
                .map(|c| Verified {
                    probability: if assay_grounding::features::words(c)
                        .iter()
                        .all(|w| Lexicon::ENGLISH.is_stop(w) || held.contains(w))
                    {
                        0.9
                    } else {
                        0.1
                    },
                    evidence: sources.first().map_or(String::new(), |s| s.to_string()),
                })
                .collect())
        }
    }

    /// A grounding model reads each claim against one context's text at a
    /// time, each text once however many choices of one sentence per
    /// context are tried: a sentence that needs two contexts' words is
    /// unsupported after every choice (nine, of six texts, read in six
    /// calls), and an answer whose sentences each one context states is
    /// supported by the choice that holds both.
    #[test]
    fn a_grounding_model_reads_each_sentence_of_each_context_once() {
        struct Counted(std::sync::atomic::AtomicUsize);
        impl Verifier for Counted {
            fn identity(&self) -> &str {
                "counted"
            }
            fn verify(&self, claims: &[&str], sources: &[&str]) -> Result<Vec<Verified>, String> {
                self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                EveryWord.verify(claims, sources)
            }
        }
        let contexts = [
            "Radium glows blue. Radium was found in 1898. Radium is rare.",
            "Polonium is named after Poland. Polonium was found in July. Polonium is toxic.",
        ];
        fn read<'a>(c: &'a Candidate, contexts: &[&str], m: &'a dyn Verifier) -> Readings<'a> {
            let sentences = |c: &&str| c.split_inclusive(". ").map(|s| s.trim().into()).collect();
            let texts = contexts.iter().map(sentences).collect();
            Readings::new(c, contexts, texts, Lexicon::ENGLISH, Some(m))
        }
        let model = Counted(Default::default());
        let stitched = Candidate {
            question: "What do radium and polonium have in common?".into(),
            answer: "Radium glows blue and polonium is toxic.".into(),
        };
        let readings = read(&stitched, &contexts, &model);
        let mut tried = 0;
        for a in 0..3 {
            for b in 0..3 {
                tried += 1;
                assert!(
                    matches!(readings.check(&[a, b]), Err(Rejection::Unsupported { .. })),
                    "{a} {b}"
                );
            }
        }
        assert_eq!((tried, model.0.into_inner()), (9, 6));
        let each = Candidate {
            question: "What do we know of radium and polonium?".into(),
            answer: "Radium was found in 1898. Polonium is toxic.".into(),
        };
        let readings = read(&each, &contexts, &EveryWord);
        assert!(readings.check(&[0, 2]).is_err());
        assert_eq!(readings.check(&[1, 2]), Ok(()));
    }

    /// A grounding model reads the answer against its contexts alone: an
    /// answer that restates its question's false premise (Curie "at the
    /// University of Paris", which the context never says) is rejected
    /// with the model's probability and window; a bare answer is read
    /// after its question.
    #[test]
    fn a_grounding_model_reads_the_contexts_without_the_question() {
        let contexts = ["Pierre Curie was born in Paris on 15 May 1859."];
        let premise = Candidate {
            question:
                "In which year did Pierre Curie begin his studies at the University of Paris?"
                    .into(),
            answer: "Pierre Curie began his studies at the University of Paris in 1859.".into(),
        };
        match supported(&premise, &contexts, Lexicon::ENGLISH, Some(&EveryWord)) {
            Err(Rejection::Unsupported { claim, evidence }) => {
                assert_eq!(claim, premise.answer);
                assert_eq!(
                    evidence,
                    "P(supported) 0.10 (supported from 0.50); best window: \"Pierre Curie was born in Paris on 15 May 1859.\""
                );
            }
            other => panic!("{other:?}"),
        }
        let bare = Candidate {
            question: "Where was Pierre Curie born".into(),
            answer: "in Paris".into(),
        };
        assert_eq!(
            supported(&bare, &contexts, Lexicon::ENGLISH, Some(&EveryWord)),
            Ok(())
        );
        let wrong = Candidate {
            question: "Where was Pierre Curie born".into(),
            answer: "in Warsaw".into(),
        };
        match supported(&wrong, &contexts, Lexicon::ENGLISH, Some(&EveryWord)) {
            Err(Rejection::Unsupported { claim, .. }) => {
                assert_eq!(claim, "Where was Pierre Curie born in Warsaw")
            }
            other => panic!("{other:?}"),
        }
    }
}
