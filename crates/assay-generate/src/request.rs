//! What the judge is asked for one planned question: the prompt of its
//! type (a versioned data file in `prompts/`), the persona, style and
//! length the plan drew, the language to write in, and the chunk (or the
//! two linked chunks) to ask about, rendered as a system message (the
//! instruction and a worked example) and a user message of `name:` blocks.
//! The answer's schema is `{"question": ..., "answer": ...}`, so a
//! grammar-constrained local judge always writes one.
//!
//! ```
//! use assay_generate::plan::{Length, Slot, Style};
//! use assay_generate::quota::QuestionType;
//! use assay_generate::request::{render, Context, Voice};
//! let slot = Slot { kind: QuestionType::SingleHop, document: 0, chunk: 0, partner: None,
//!                   persona: 0, style: Style::WebSearch, length: Length::Short, evolution: None };
//! let context = Context { headings: vec!["Radium".into()], text: "Discovered in 1898.\n\nBy the Curies." };
//! let voice = Voice { persona: "a chemist", language: "French", evolution: None };
//! let r = render(&slot, &[context], &[], voice, 0, None);
//! assert_eq!(r.prompt, "generate/single_hop");
//! assert!(r.system.contains("Write the question and the answer in French."));
//! assert!(r.user.contains("context:\n[Radium]\nDiscovered in 1898.\nBy the Curies."));
//! ```

use crate::check::Rejection;
use crate::evolve::Evolution;
use crate::plan::{Length, Slot, Style};
use crate::quota::{QuestionType, TYPES};
use serde::Deserialize;
use serde_json::Value;
use std::sync::OnceLock;

/// A prompt file of `prompts/`.
#[derive(Debug, Deserialize)]
pub struct Prompt {
    pub id: String,
    pub version: u32,
    pub instruction: String,
    pub output_schema: Value,
    pub examples: Vec<Example>,
}

impl Prompt {
    /// The words a judge is shown beside its context: the instruction and
    /// the worked examples, inputs and outputs as their JSON (for
    /// [`crate::check::copies_prompt`], which reads their words).
    pub fn shown(&self) -> String {
        let mut shown = self.instruction.clone();
        for example in &self.examples {
            shown.push('\n');
            shown.push_str(&Value::Object(example.input.clone()).to_string());
            shown.push('\n');
            shown.push_str(&example.output.to_string());
        }
        shown
    }

    /// The request that shows this prompt's judge a `question` and
    /// nothing else (the critic, the closed-book check).
    pub fn about_question(&self, question: &str) -> Request {
        let mut system = self.instruction.clone();
        self.append_examples(&mut system);
        Request {
            prompt: format!("generate/{}", self.id),
            version: self.version,
            system,
            user: format!("question:\n{question}"),
            schema: self.output_schema.clone(),
            draw: None,
        }
    }

    /// The request that shows this prompt's judge `contexts` and a
    /// `question` about them (the round-trip check).
    pub fn about_contexts(&self, contexts: &[Context<'_>], question: &str) -> Request {
        let mut user = blocks(contexts);
        user.push(format!("question:\n{question}"));
        Request {
            user: user.join("\n\n"),
            ..self.about_question(question)
        }
    }

    /// Appends the worked examples to a system message.
    pub fn append_examples(&self, system: &mut String) {
        for example in &self.examples {
            system.push_str(&format!(
                "\n\nExample:\nInput: {}\nOutput: {}",
                Value::Object(example.input.clone()),
                example.output
            ));
        }
    }
}

/// A worked example of a prompt file.
#[derive(Debug, Deserialize)]
pub struct Example {
    pub input: serde_json::Map<String, Value>,
    pub output: Value,
}

/// The prompt of a question type.
pub fn prompt(kind: QuestionType) -> &'static Prompt {
    static PROMPTS: OnceLock<[Prompt; TYPES]> = OnceLock::new();
    let all = PROMPTS.get_or_init(|| {
        let parse = |text: &str| serde_json::from_str(text).expect("a built-in prompt file parses");
        [
            parse(include_str!("../prompts/single_hop.json")),
            parse(include_str!("../prompts/multi_hop.json")),
            parse(include_str!("../prompts/abstract.json")),
            parse(include_str!("../prompts/conversation.json")),
        ]
    });
    &all[kind as usize]
}

/// A chunk as the judge reads it: the headings above it and its text.
#[derive(Clone, Debug)]
pub struct Context<'a> {
    pub headings: Vec<String>,
    pub text: &'a str,
}

/// One request, as the judge's client sends it.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// `generate/<type>`.
    pub prompt: String,
    pub version: u32,
    pub system: String,
    pub user: String,
    pub schema: Value,
    /// How to draw the answer: greedy (`None`) or at a temperature with a
    /// seed, so that a retry is answered differently, the same way each
    /// run.
    pub draw: Option<Draw>,
}

/// A sampled answer's temperature and seed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Draw {
    pub temperature: f64,
    pub seed: u64,
}

/// The temperature of a retry's answer: a judge asked again at zero (a
/// small local model decodes greedily) writes the rejected question again.
pub const RETRY_TEMPERATURE: f64 = 0.8;

fn style_words(style: Style) -> &'static str {
    match style {
        Style::PerfectGrammar => "a well-formed question in correct grammar",
        Style::PoorGrammar => "a question with the grammar slips of a hurried writer",
        Style::WebSearch => "a terse search-engine query, not a full sentence",
        Style::Misspelled => "a question with one or two misspelled words",
    }
}

fn length_words(length: Length) -> &'static str {
    match length {
        Length::Short => "at most 10 words",
        Length::Medium => "10 to 20 words",
        Length::Long => "20 to 35 words",
    }
}

/// The context as one block: its headings in brackets, then its text
/// with blank lines closed up (the user message's blocks are separated by
/// blank lines).
fn block(context: &Context<'_>) -> String {
    let text: Vec<&str> = context
        .text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let text = text.join("\n");
    if context.headings.is_empty() {
        text
    } else {
        format!("[{}]\n{text}", context.headings.join(" > "))
    }
}

/// The contexts as the user message's blocks: `context:`, or numbered
/// where there are several.
fn blocks(contexts: &[Context<'_>]) -> Vec<String> {
    match contexts {
        [one] => vec![format!("context:\n{}", block(one))],
        many => many
            .iter()
            .enumerate()
            .map(|(i, c)| format!("context {}:\n{}", i + 1, block(c)))
            .collect(),
    }
}

/// Who asks, in what language, made harder how: what a request says
/// besides the slot and its contexts.
#[derive(Clone, Copy, Debug)]
pub struct Voice<'a> {
    pub persona: &'a str,
    /// An English name.
    pub language: &'a str,
    pub evolution: Option<Evolution>,
}

/// An attempt's candidate that was not kept, told to the next attempt:
/// a judge asked the same thing again (a small local model decodes
/// greedily) writes the same question again.
#[derive(Clone, Copy, Debug)]
pub struct Earlier<'a> {
    /// Its question, when the judge wrote one.
    pub question: Option<&'a str>,
    pub why: &'a Rejection,
}

/// The request for `slot` about `contexts` (one, or the chunk and its
/// partner) linked by `shared` terms, in `voice`; `attempt` > 0 asks
/// again for another question after a rejected one, told which and why
/// when `earlier` says, without the prompt's worked examples.
pub fn render(
    slot: &Slot,
    contexts: &[Context<'_>],
    shared: &[String],
    voice: Voice<'_>,
    attempt: usize,
    earlier: Option<Earlier<'_>>,
) -> Request {
    let p = prompt(slot.kind);
    let mut system = p.instruction.clone();
    if let Some(e) = voice.evolution {
        system.push(' ');
        system.push_str(e.instruction());
    }
    system.push_str(&format!(
        "\n\nThe question is {}, of {}.\n\nWrite the question and the answer in {}.",
        style_words(slot.style),
        length_words(slot.length),
        voice.language
    ));
    // A retry shows no worked example: the local 0.5B judge wrote the
    // example's question again for documents it found hard.
    if attempt == 0 {
        p.append_examples(&mut system);
    }
    let mut user = vec![
        format!("persona:\n{}", voice.persona),
        format!("style:\n{}", slot.style.name()),
        format!("length:\n{}", slot.length.name()),
    ];
    user.extend(blocks(contexts));
    if contexts.len() > 1 {
        user.push(format!("shared terms:\n{}", shared.join(", ")));
    }
    if attempt > 0 {
        user.push(format!(
            "attempt:\n{} (an earlier question about this context was rejected: write another)",
            attempt + 1
        ));
        if let Some(e) = earlier {
            // A question that copied the prompt is not shown again: the
            // 0.5B judge copied it back, worked example and all.
            let copied = matches!(e.why, Rejection::CopiesPrompt { .. });
            if let Some(q) = e.question.filter(|_| !copied) {
                user.push(format!("rejected question:\n{q}"));
            }
            user.push(format!("why it was rejected:\n{}", e.why.advice()));
        }
    }
    let texts: Vec<&str> = contexts.iter().map(|c| c.text).collect();
    Request {
        prompt: format!("generate/{}", p.id),
        version: p.version,
        system,
        user: user.join("\n\n"),
        schema: crate::evidence::with_sentences(&p.output_schema, &texts),
        draw: None,
    }
}

/// The personas a test set is written for when none are given.
pub const PERSONAS: [&str; 3] = [
    "a newcomer to the subject who wants a plain fact",
    "a practitioner who needs a precise detail for their work",
    "an expert reviewer checking a specific claim",
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_prompt_parses_and_asks_for_a_question_and_an_answer() {
        for kind in QuestionType::ALL {
            let p = prompt(kind);
            assert_eq!(p.id, kind.name());
            let required = match kind {
                QuestionType::SingleHop => json!(["evidence", "question", "answer"]),
                QuestionType::MultiHop => json!(["evidence_1", "evidence_2", "question", "answer"]),
                QuestionType::Abstract => json!(["evidence_1", "evidence_2", "question", "answer"]),
                QuestionType::Conversation => json!(["scenario", "question", "answer"]),
            };
            assert_eq!(p.output_schema["required"], required);
            assert_eq!(p.output_schema["additionalProperties"], false);
            for e in &p.examples {
                assert!(e.output["question"].is_string() && e.output["answer"].is_string());
            }
        }
    }

    #[test]
    fn two_contexts_are_numbered_with_their_shared_terms() {
        let slot = Slot {
            kind: QuestionType::MultiHop,
            document: 0,
            chunk: 0,
            partner: Some(1),
            persona: 0,
            style: Style::Misspelled,
            length: Length::Long,
            evolution: Some(0),
        };
        let contexts = [
            Context {
                headings: vec![],
                text: "A one.",
            },
            Context {
                headings: vec!["B".into(), "C".into()],
                text: "B two.",
            },
        ];
        let shared = ["one".to_string(), "two".to_string()];
        let voice = Voice {
            persona: "p",
            language: "English",
            evolution: Some(Evolution::Comparative),
        };
        let why = Rejection::AnswerInQuestion;
        let earlier = Earlier {
            question: Some("One or two?"),
            why: &why,
        };
        let r = render(&slot, &contexts, &shared, voice, 1, Some(earlier));
        assert!(r.system.contains(Evolution::Comparative.instruction()));
        assert_eq!(
            r.user,
            "persona:\np\n\nstyle:\nmisspelled\n\nlength:\nlong\n\ncontext 1:\nA one.\n\n\
             context 2:\n[B > C]\nB two.\n\nshared terms:\none, two\n\n\
             attempt:\n2 (an earlier question about this context was rejected: write another)\n\n\
             rejected question:\nOne or two?\n\n\
             why it was rejected:\nthe question itself states its answer"
        );
        assert!(r.system.contains("of 20 to 35 words"));
        assert_eq!(
            r.schema["properties"]["evidence_1"]["enum"],
            json!(["A one."])
        );
        assert_eq!(
            r.schema["properties"]["evidence_2"]["enum"],
            json!(["B two."])
        );
        assert_eq!(r.prompt, "generate/multi_hop");
        assert!(!r.system.contains("Example:"));
        let first = render(&slot, &contexts, &shared, voice, 0, None);
        assert!(first.system.contains("Example:"));
        let copied = Rejection::CopiesPrompt {
            copied: "which year did the curies".into(),
        };
        let told = Earlier {
            question: Some("In which year did the Curies discover the parallel iterators?"),
            why: &copied,
        };
        let again = render(&slot, &contexts, &shared, voice, 1, Some(told));
        assert!(!again.user.contains("rejected question") && !again.user.contains("Curies"));
        assert!(again
            .user
            .contains("why it was rejected:\nit copied the instructions"));
    }
}
