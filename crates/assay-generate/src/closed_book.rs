//! The optional closed-book check (`--closed-book`): a candidate that
//! passes the other checks is asked of the judge once more, its question
//! alone, without the contexts. Where the judge says it knows and its
//! answer supports every sentence of the reference answer (the grounding
//! verdict, as faithfulness reads a response), the question tests what the
//! judge knows, not what the contexts hold, and is rejected. The word
//! check [`crate::check::given_away`] catches a question that states its
//! answer; this one catches common knowledge, at one call per candidate.
//! The prompt is a versioned data file, `prompts/closed_book.json`.
//!
//! ```
//! use assay_generate::check::Candidate;
//! use assay_generate::closed_book::{request, verdict};
//! use assay_grounding::words::Lexicon;
//! use serde_json::json;
//! let c = Candidate {
//!     question: "What is the capital of France?".into(),
//!     answer: "Paris is the capital of France.".into(),
//! };
//! assert!(request(&c.question).user.ends_with("question:\nWhat is the capital of France?"));
//! let known = json!({"known": true, "answer": "The capital of France is Paris."});
//! assert!(verdict(&c, &known, Lexicon::ENGLISH, None).is_err());
//! let wrong = json!({"known": true, "answer": "The capital of France is Lyon."});
//! assert_eq!(verdict(&c, &wrong, Lexicon::ENGLISH, None), Ok(()));
//! let unknown = json!({"known": false, "answer": ""});
//! assert_eq!(verdict(&c, &unknown, Lexicon::ENGLISH, None), Ok(()));
//! ```

use crate::check::{flagged_answer, Candidate, Rejection};
use crate::request::{Prompt, Request};
use assay_grounding::words::Lexicon;
use assay_grounding::{Model, Support, Verifier};
use serde_json::Value;
use std::sync::OnceLock;

/// The closed-book prompt.
pub fn prompt() -> &'static Prompt {
    static PROMPT: OnceLock<Prompt> = OnceLock::new();
    PROMPT.get_or_init(|| {
        serde_json::from_str(include_str!("../prompts/closed_book.json"))
            .expect("the built-in closed-book prompt parses")
    })
}

/// The closed-book request: `question`, and nothing else.
pub fn request(question: &str) -> Request {
    prompt().about_question(question)
}

/// Whether the candidate needs its contexts: `Ok` where the judge's
/// closed-book `answer` says it does not know, or does not support every
/// sentence of the reference answer (read by `model` where one is given);
/// an answer without `known` is the judge's failure.
pub fn verdict(
    candidate: &Candidate,
    answer: &Value,
    lexicon: Lexicon,
    model: Option<&dyn Verifier>,
) -> Result<(), Rejection> {
    let Some(said) = flagged_answer(answer, "known", "closed-book")? else {
        return Ok(());
    };
    let sentences = assay_text::sentences::split_sentences(&candidate.answer);
    let all = !sentences.is_empty()
        && match model {
            Some(model) => {
                // The judge's answer after its question, as one text: a
                // bare "Paris." reads as an answer to it.
                let source = format!("{} {said}", candidate.question);
                let verified = model
                    .verify(&sentences, &[source.as_str()])
                    .map_err(|error| Rejection::Grounding { error })?;
                verified.iter().all(|v| v.probability >= model.threshold())
            }
            None => {
                let support = Support::in_language([candidate.question.as_str(), said], lexicon);
                sentences
                    .iter()
                    .all(|s| Model::builtin().judge(s, &support).supported())
            }
        };
    if all {
        Err(Rejection::AnswerableWithoutContext {
            answer: said.to_string(),
        })
    } else {
        Ok(())
    }
}
