//! The optional critic (`--critic MIN`): a candidate that passes the
//! checks needing no call is shown to the judge once more, which scores
//! its question from 0 to 1 for self-containment and clarity together
//! (after DeepEval's filtration) and says what to change. Below `MIN` it
//! is rejected with that feedback, which the next attempt is told. The
//! prompt is a versioned data file, `prompts/critic.json`.
//!
//! ```
//! use assay_generate::critic::{request, verdict};
//! use serde_json::json;
//! let r = request("What does the passage say?");
//! assert_eq!(r.prompt, "generate/critic");
//! assert!(r.user.ends_with("question:\nWhat does the passage say?"));
//! assert_eq!(verdict(&json!({"feedback": "none", "score": 0.9}), 0.5), Ok(0.9));
//! assert!(verdict(&json!({"feedback": "Name the subject.", "score": 0.2}), 0.5).is_err());
//! ```

use crate::check::Rejection;
use crate::request::{Prompt, Request};
use serde_json::Value;
use std::sync::OnceLock;

/// The critic's prompt.
pub fn prompt() -> &'static Prompt {
    static PROMPT: OnceLock<Prompt> = OnceLock::new();
    PROMPT.get_or_init(|| {
        serde_json::from_str(include_str!("../prompts/critic.json"))
            .expect("the built-in critic prompt parses")
    })
}

/// The critic's request about `question`.
pub fn request(question: &str) -> Request {
    prompt().about_question(question)
}

/// The critic's score when it is `min` or more; below, the rejection with
/// its feedback; an answer without a score in [0, 1] is the judge's
/// failure.
pub fn verdict(answer: &Value, min: f64) -> Result<f64, Rejection> {
    let score = answer["score"]
        .as_f64()
        .filter(|s| (0.0..=1.0).contains(s))
        .ok_or_else(|| Rejection::Judge {
            error: "the critic's answer has no score from 0 to 1".to_string(),
        })?;
    if score >= min {
        Ok(score)
    } else {
        Err(Rejection::LowQuality {
            score,
            feedback: answer["feedback"].as_str().unwrap_or("").trim().to_string(),
        })
    }
}
