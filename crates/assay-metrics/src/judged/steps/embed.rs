//! Embedding steps: the texts each embeds, and the judge steps whose
//! outputs those texts come from.

use crate::judged::request::{EmbedRequest, NO_SENTENCES};
use crate::judged::step::{EmbedText, Extraction, InputError, Inputs, StepKey};
use crate::judged::steps::{generated_questions, sentence_extraction};

/// The steps whose outputs the texts of `text` come from.
pub fn embed_deps(text: EmbedText) -> Vec<StepKey> {
    match text {
        EmbedText::GeneratedQuestions { count } => vec![generated_questions(count)],
        EmbedText::Extractions { votes } => vec![sentence_extraction(votes)],
        EmbedText::UserInput | EmbedText::Response | EmbedText::Reference(_) => Vec::new(),
    }
}

/// The texts an embedding step embeds, from its inputs.
pub fn embed_request(step: &StepKey, inputs: &Inputs<'_>) -> Result<EmbedRequest, InputError> {
    let StepKey::Embed(target) = step else {
        return Err(InputError::WrongOutput(step.clone()));
    };
    let texts = match target {
        EmbedText::UserInput => vec![inputs.user_input()?.to_string()],
        EmbedText::Response => vec![inputs.response()?.to_string()],
        EmbedText::Reference(i) => vec![inputs.reference(*i)?.to_string()],
        EmbedText::GeneratedQuestions { count } => inputs
            .questions(&generated_questions(*count))?
            .iter()
            .map(|q| q.question.clone())
            .collect(),
        EmbedText::Extractions { votes } => inputs
            .extractions(&sentence_extraction(*votes))?
            .iter()
            .map(|e| match e {
                Extraction::Sentences(s) if !s.is_empty() => s.join("\n"),
                // Scoring never compares an empty vote by its vector, but
                // providers reject empty inputs, so send a placeholder.
                _ => NO_SENTENCES.to_string(),
            })
            .collect(),
    };
    Ok(EmbedRequest {
        step: step.clone(),
        texts,
    })
}
