//! The optional round-trip check (`--round-trip`): a specific question
//! (single-hop or multi-hop) that passes the other checks is asked of the
//! judge once more, with its contexts, for the shortest answer they give;
//! a candidate whose reference answer does not agree with that answer is
//! rejected. This is the round-trip consistency of synthetic question
//! answering (Alberti et al., 2019): a reference answer that is supported
//! by its contexts word for word can still not answer its question, or
//! name the wrong one of two things the context names, which no check of
//! its words against the contexts sees. The prompt is a versioned data
//! file, `prompts/round_trip.json`.
//!
//! Two answers agree when most of what either adds to the question is in
//! the other: of the content words (by stem) of the judge's answer that
//! its question does not hold, the share the reference answer holds, or of
//! the reference answer's, the share the judge's holds, whichever is
//! higher, at [`AGREE_FROM`] or more. Either way round, so that a judge's
//! bare "1898" agrees with a reference's whole sentence. A judge's answer
//! that adds no word to its question ("HTTP" to a question about HTTP)
//! agrees with nothing: the question holds its answer, or asks what the
//! contexts do not say.
//!
//! ```
//! use assay_generate::check::{Candidate, Rejection};
//! use assay_generate::round_trip::{agreement, verdict};
//! use assay_grounding::words::Lexicon;
//! use serde_json::json;
//! let en = Lexicon::ENGLISH;
//! let c = Candidate {
//!     question: "Which country first produced radium industrially?".into(),
//!     answer: "The United States produced radium industrially first.".into(),
//! };
//! assert_eq!(agreement(&c, "Austria", en), 0.0);
//! let said = json!({"answered": true, "answer": "Austria"});
//! assert!(matches!(verdict(&c, &said, en, None), Err(Rejection::Inconsistent { .. })));
//! let right = Candidate { answer: "Austria, from the ores of Joachimsthal.".into(), ..c.clone() };
//! assert_eq!(verdict(&right, &said, en, None), Ok(()));
//! let none = json!({"answered": false, "answer": ""});
//! assert_eq!(verdict(&right, &none, en, None), Err(Rejection::Unanswered));
//! ```

use crate::check::{content_stems, flagged_answer, Candidate, Rejection};
use crate::quota::QuestionType;
use crate::request::{Context, Prompt, Request};
use assay_grounding::words::Lexicon;
use assay_grounding::Verifier;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::OnceLock;

/// The least agreement of two answers that are the same answer: most of
/// what one adds to the question is in the other.
pub const AGREE_FROM: f64 = 0.5;

/// The round-trip prompt.
pub fn prompt() -> &'static Prompt {
    static PROMPT: OnceLock<Prompt> = OnceLock::new();
    PROMPT.get_or_init(|| {
        serde_json::from_str(include_str!("../prompts/round_trip.json"))
            .expect("the built-in round-trip prompt parses")
    })
}

/// The round-trip request: the `contexts` the question was made from, as
/// the question's request showed them, and the `question`.
pub fn request(contexts: &[Context<'_>], question: &str) -> Request {
    prompt().about_contexts(contexts, question)
}

/// Whether a question of type `kind` is checked: a specific question has
/// one short answer to compare; an abstract question's answer and a
/// scenario's outcome are free prose, which two readers word apart.
pub fn checks(kind: QuestionType) -> bool {
    matches!(kind, QuestionType::SingleHop | QuestionType::MultiHop)
}

/// How far the judge's answer `said` and the candidate's reference answer
/// agree, from 0 to 1 (see the module's doc): 0 where the judge's answer
/// adds no content word to the question.
pub fn agreement(candidate: &Candidate, said: &str, lexicon: Lexicon) -> f64 {
    if adds_nothing(candidate, said, lexicon) {
        return 0.0;
    }
    let question = content_stems(&candidate.question, lexicon);
    let theirs = content_stems(said, lexicon);
    let ours = content_stems(&candidate.answer, lexicon);
    let share = |from: &HashSet<String>, into: &HashSet<String>| {
        let added: Vec<&String> = from.difference(&question).collect();
        match added.len() {
            0 => 0.0,
            n => added.iter().filter(|s| into.contains(**s)).count() as f64 / n as f64,
        }
    };
    share(&theirs, &ours).max(share(&ours, &theirs))
}

/// Whether the judge's answer `said` holds no content word that the
/// candidate's question does not.
fn adds_nothing(candidate: &Candidate, said: &str, lexicon: Lexicon) -> bool {
    content_stems(said, lexicon).is_subset(&content_stems(&candidate.question, lexicon))
}

/// Whether the candidate's reference answer is the one the judge's
/// round-trip `answer` gives: `Ok` where they agree (read by `model`,
/// either way round, where one is given);
/// [`Rejection::Unanswered`] where the judge found no answer, and
/// [`Rejection::Inconsistent`] where it answered otherwise. An answer
/// without `answered` is the judge's failure.
pub fn verdict(
    candidate: &Candidate,
    answer: &Value,
    lexicon: Lexicon,
    model: Option<&dyn Verifier>,
) -> Result<(), Rejection> {
    let said = flagged_answer(answer, "answered", "round-trip")?.ok_or(Rejection::Unanswered)?;
    let (agreement, threshold) = match model {
        // A model would find the question's own words supported.
        Some(_) if adds_nothing(candidate, said, lexicon) => (0.0, AGREE_FROM),
        Some(model) => (by_model(candidate, said, model)?, model.threshold()),
        None => (agreement(candidate, said, lexicon), AGREE_FROM),
    };
    if agreement < threshold {
        Err(Rejection::Inconsistent {
            answer: said.to_string(),
            agreement,
        })
    } else {
        Ok(())
    }
}

/// The model's agreement of the two answers, each read after the
/// question: the judge's answer supported by the reference, or every claim
/// of the reference by the judge's answer, whichever is likelier.
fn by_model(candidate: &Candidate, said: &str, model: &dyn Verifier) -> Result<f64, Rejection> {
    let failed = |error| Rejection::Grounding { error };
    let q = &candidate.question;
    let theirs = format!("{q} {said}");
    let ours = format!("{q} {}", candidate.answer);
    let forward = model
        .verify(&[theirs.as_str()], &[ours.as_str()])
        .map_err(failed)?;
    let claims = candidate.claims();
    let claims: Vec<&str> = claims.iter().map(String::as_str).collect();
    let backward = model.verify(&claims, &[theirs.as_str()]).map_err(failed)?;
    let forward = forward.first().map_or(0.0, |v| v.probability);
    let backward = backward
        .iter()
        .map(|v| v.probability)
        .fold(f64::INFINITY, f64::min);
    Ok(forward.max(if backward.is_finite() { backward } else { 0.0 }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const EN: Lexicon = Lexicon::ENGLISH;

    fn candidate(question: &str, answer: &str) -> Candidate {
        Candidate {
            question: question.into(),
            answer: answer.into(),
        }
    }

    /// The 1.5B judge's kept candidates that did not answer their
    /// question (session 24's hand reading), against what a reader of
    /// their contexts answers.
    #[test]
    fn an_answer_that_does_not_answer_its_question_disagrees() {
        let votes = candidate(
            "What is the minimum number of positive votes needed to become a core developer?",
            "Promising contributors are nominated by an existing core developer.",
        );
        let a = agreement(&votes, "two positive votes and no vetoes", EN);
        assert!(a < AGREE_FROM, "{a}");
        let thesis = candidate(
            "What was the subject of Pierre Curie's doctoral thesis?",
            "Pierre Curie received his doctorate in 1895.",
        );
        let a = agreement(&thesis, "magnetism", EN);
        assert_eq!(a, 0.0);
    }

    /// A bare answer and a whole sentence that give the same fact agree,
    /// either way round; words of the question count for neither.
    #[test]
    fn a_bare_answer_agrees_with_a_sentence_that_holds_it() {
        let c = candidate(
            "In which year did the Curies discover radium?",
            "Marie and Pierre Curie discovered radium in 1898, in pitchblende.",
        );
        assert_eq!(agreement(&c, "1898", EN), 1.0);
        assert_eq!(
            agreement(&c, "In 1898, the Curies discovered radium.", EN),
            1.0
        );
        let bare = candidate("In which year did the Curies discover radium?", "1898");
        assert_eq!(
            agreement(&bare, "They discovered it in 1898 in pitchblende.", EN),
            1.0
        );
        assert_eq!(agreement(&c, "1902", EN), 0.0);
    }

    /// The 1.5B judge's round-trip answers that only repeated their
    /// question's words: "HTTP" to a question on the method HTTP uses for
    /// shopping carts (whose reference did not answer it), "Firefox" to
    /// one asking what Firefox is the flagship of.
    #[test]
    fn a_judge_s_answer_that_adds_nothing_to_its_question_agrees_with_nothing() {
        let firefox = candidate(
            "What is the name of the software product that Firefox is a flagship of?",
            "Firefox is a web browser, and is Mozilla's flagship software product.",
        );
        assert_eq!(agreement(&firefox, "Firefox", EN), 0.0);
        assert!(matches!(
            verdict(&firefox, &json!({"answered": true, "answer": "Firefox"}), EN, None),
            Err(Rejection::Inconsistent { agreement, .. }) if agreement == 0.0
        ));
        assert_eq!(agreement(&firefox, "Mozilla", EN), 1.0);
    }

    #[test]
    fn the_judge_s_answer_must_say_whether_it_answered() {
        let c = candidate("When was radium discovered?", "In 1898.");
        assert!(matches!(
            verdict(&c, &json!({"answer": "1898"}), EN, None),
            Err(Rejection::Judge { .. })
        ));
        assert_eq!(
            verdict(&c, &json!({"answered": true, "answer": "  "}), EN, None),
            Err(Rejection::Unanswered)
        );
    }

    /// With a grounding model, the two answers agree where it reads the
    /// judge's answer as supported by the reference, or the reference by
    /// the judge's answer, each after the question; an answer of the
    /// question's own words still agrees with nothing.
    #[test]
    fn a_grounding_model_reads_the_two_answers_either_way_round() {
        let model = crate::check::tests::EveryWord;
        let c = candidate(
            "In which year did the Curies discover radium?",
            "Marie and Pierre Curie discovered radium in 1898.",
        );
        let said = |answer: &str| json!({"answered": true, "answer": answer});
        assert_eq!(verdict(&c, &said("1898"), EN, Some(&model)), Ok(()));
        let bare = candidate("In which year did the Curies discover radium?", "1898");
        let long = said("Marie and Pierre Curie discovered radium in 1898.");
        assert_eq!(verdict(&bare, &long, EN, Some(&model)), Ok(()));
        assert_eq!(
            verdict(&c, &said("1902"), EN, Some(&model)),
            Err(Rejection::Inconsistent {
                answer: "1902".into(),
                agreement: 0.1
            })
        );
        assert_eq!(
            verdict(&c, &said("the Curies"), EN, Some(&model)),
            Err(Rejection::Inconsistent {
                answer: "the Curies".into(),
                agreement: 0.0
            })
        );
    }

    #[test]
    fn only_specific_questions_are_checked() {
        assert!(checks(QuestionType::SingleHop) && checks(QuestionType::MultiHop));
        assert!(!checks(QuestionType::Abstract) && !checks(QuestionType::Conversation));
    }

    #[test]
    fn the_request_shows_the_contexts_and_the_question() {
        let contexts = [
            Context {
                headings: vec!["Radium".into()],
                text: "Discovered in 1898.\n\nBy the Curies.",
            },
            Context {
                headings: vec![],
                text: "Polonium came first.",
            },
        ];
        let r = request(&contexts, "When was radium discovered?");
        assert_eq!(r.prompt, "generate/round_trip");
        assert_eq!(
            r.user,
            "context 1:\n[Radium]\nDiscovered in 1898.\nBy the Curies.\n\n\
             context 2:\nPolonium came first.\n\nquestion:\nWhen was radium discovered?"
        );
        assert!(r.system.contains("Example:"));
        assert_eq!(r.draw, None);
    }
}
