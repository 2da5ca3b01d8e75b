//! The unit of evaluation: one dataset row, with its fields parsed once.

use crate::conversation::{self, Conversation, Problem, ToolCall};
use crate::json::kind;
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// A field of a [`Sample`], with the names users may give it.
///
/// ```
/// use assay_core::Field;
/// assert_eq!("question".parse::<Field>().unwrap(), Field::UserInput);
/// assert_eq!(Field::UserInput.to_string(), "user_input");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    UserInput,
    Response,
    RetrievedContexts,
    Reference,
    References,
    ReferenceContexts,
    /// A conversation (see [`crate::conversation`]): OpenAI `messages`,
    /// ragas' `user_input` given as a list of messages, or DeepEval's
    /// `turns`.
    Messages,
    /// The tool calls a conversation should make, `[{"name", "args"}]`.
    ReferenceToolCalls,
    /// The role the assistant of a conversation should keep (DeepEval's
    /// `chatbot_role`).
    ChatbotRole,
    /// The topics a conversation should keep to (ragas'
    /// `reference_topics`).
    ReferenceTopics,
}

impl Field {
    /// Every field, in documentation order.
    pub const ALL: [Field; 10] = [
        Field::UserInput,
        Field::Response,
        Field::RetrievedContexts,
        Field::Reference,
        Field::References,
        Field::ReferenceContexts,
        Field::Messages,
        Field::ReferenceToolCalls,
        Field::ChatbotRole,
        Field::ReferenceTopics,
    ];

    /// The fields that hold text or lists of text.
    pub const TEXT: [Field; 8] = [
        Field::UserInput,
        Field::Response,
        Field::RetrievedContexts,
        Field::Reference,
        Field::References,
        Field::ReferenceContexts,
        Field::ChatbotRole,
        Field::ReferenceTopics,
    ];

    /// The canonical name, as written in results and docs.
    pub fn name(self) -> &'static str {
        match self {
            Field::UserInput => "user_input",
            Field::Response => "response",
            Field::RetrievedContexts => "retrieved_contexts",
            Field::Reference => "reference",
            Field::References => "references",
            Field::ReferenceContexts => "reference_contexts",
            Field::Messages => "messages",
            Field::ReferenceToolCalls => "reference_tool_calls",
            Field::ChatbotRole => "chatbot_role",
            Field::ReferenceTopics => "reference_topics",
        }
    }

    /// Other accepted names of this field in input files.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Field::UserInput => &["question", "query"],
            Field::Response => &["answer", "prediction"],
            Field::RetrievedContexts => &["contexts"],
            Field::Reference => &["ground_truth"],
            Field::References => &["ground_truths"],
            // DeepEval's `ConversationalTestCase` holds its conversation in `turns`.
            Field::Messages => &["turns"],
            Field::ReferenceContexts
            | Field::ReferenceToolCalls
            | Field::ChatbotRole
            | Field::ReferenceTopics => &[],
        }
    }

    fn is_list(self) -> bool {
        matches!(
            self,
            Field::RetrievedContexts
                | Field::References
                | Field::ReferenceContexts
                | Field::ReferenceTopics
        )
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The name is neither a field nor an alias of one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown field '{0}'")]
pub struct UnknownField(pub String);

impl FromStr for Field {
    type Err = UnknownField;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Field::ALL
            .into_iter()
            .find(|f| f.name() == s || f.aliases().contains(&s))
            .ok_or_else(|| UnknownField(s.to_string()))
    }
}

/// A row's field has the wrong type or is given twice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field '{field}': {message}")]
pub struct FieldError {
    /// The name as written in the input (an alias stays an alias).
    pub field: String,
    pub message: String,
}

/// One dataset row. Absent fields are `None`; which ones a metric needs is
/// the metric's business.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    /// The row's `id`, or its 1-based row number when it has none.
    pub id: String,
    /// 1-based position among the data rows of the input.
    pub row: u64,
    pub user_input: Option<String>,
    pub response: Option<String>,
    pub retrieved_contexts: Option<Vec<String>>,
    pub reference: Option<String>,
    pub references: Option<Vec<String>>,
    pub reference_contexts: Option<Vec<String>>,
    /// The conversation, with the problems of its malformed parts kept for
    /// the metrics that need those parts.
    pub messages: Option<Conversation>,
    /// The reference tool calls, or why they cannot be read.
    pub reference_tool_calls: Option<Result<Vec<ToolCall>, Problem>>,
    /// The role the assistant of the conversation should keep.
    pub chatbot_role: Option<String>,
    /// The topics the conversation should keep to.
    pub reference_topics: Option<Vec<String>>,
}

impl Sample {
    /// Builds a sample from a JSON object, resolving aliases. Keys that are
    /// not fields are ignored; `null` counts as absent.
    ///
    /// ```
    /// use assay_core::Sample;
    /// let row = serde_json::json!({"question": "q", "answer": "a", "ground_truth": "g"});
    /// let s = Sample::from_json(7, row.as_object().unwrap()).unwrap();
    /// assert_eq!((s.id.as_str(), s.response.as_deref()), ("7", Some("a")));
    /// assert_eq!(s.reference_list(), Some(vec!["g"]));
    /// ```
    pub fn from_json(row: u64, object: &Map<String, Value>) -> Result<Sample, FieldError> {
        Sample::from_entries(row, object.iter().map(|(k, v)| (k.as_str(), v.clone())))
    }

    /// [`Sample::from_json`] on an object's entries, in the order written,
    /// taken whole: the sample keeps their strings without copying them.
    pub fn from_entries<K: AsRef<str>>(
        row: u64,
        entries: impl IntoIterator<Item = (K, Value)>,
    ) -> Result<Sample, FieldError> {
        let mut sample = Sample {
            id: row.to_string(),
            row,
            ..Sample::default()
        };
        let mut seen: [Option<K>; Field::ALL.len()] = [const { None }; Field::ALL.len()];
        for (key, value) in entries {
            let name = key.as_ref();
            if name == "id" {
                sample.id = match value {
                    Value::String(s) => s,
                    Value::Number(n) => n.to_string(),
                    Value::Null => continue,
                    other => {
                        return Err(field_error(
                            name,
                            format!("expected a string or number, got {}", kind(&other)),
                        ))
                    }
                };
                continue;
            }
            let Ok(mut field) = name.parse::<Field>() else {
                continue;
            };
            if value.is_null() {
                continue;
            }
            // ragas' MultiTurnSample: the conversation is its `user_input`.
            if field == Field::UserInput && value.is_array() {
                field = Field::Messages;
            }
            let slot = &mut seen[field as usize];
            if let Some(previous) = slot {
                return Err(field_error(
                    name,
                    format!(
                        "given twice (also as '{}'), both name '{field}'",
                        previous.as_ref()
                    ),
                ));
            }
            sample.set(field, name, value)?;
            *slot = Some(key);
        }
        Ok(sample)
    }

    fn set(&mut self, field: Field, key: &str, value: Value) -> Result<(), FieldError> {
        if field == Field::Messages {
            self.messages = Some(match key {
                "messages" => Conversation::from_openai(key, &value),
                "turns" => Conversation::from_deepeval(key, &value),
                _ => Conversation::from_ragas(key, &value),
            });
        } else if field == Field::ReferenceToolCalls {
            self.reference_tool_calls = Some(conversation::reference_tool_calls(key, &value));
        } else if field.is_list() {
            let list = string_list(key, value)?;
            match field {
                Field::RetrievedContexts => self.retrieved_contexts = Some(list),
                Field::References => self.references = Some(list),
                Field::ReferenceTopics => self.reference_topics = Some(list),
                _ => self.reference_contexts = Some(list),
            }
        } else {
            let Value::String(text) = value else {
                return Err(field_error(
                    key,
                    format!("expected a string, got {}", kind(&value)),
                ));
            };
            let text = Some(text);
            match field {
                Field::UserInput => self.user_input = text,
                Field::Response => self.response = text,
                Field::ChatbotRole => self.chatbot_role = text,
                _ => self.reference = text,
            }
        }
        Ok(())
    }

    /// Whether the field is present (for [`Field::References`], either
    /// `references` or a single `reference` will do).
    pub fn has(&self, field: Field) -> bool {
        match field {
            Field::UserInput => self.user_input.is_some(),
            Field::Response => self.response.is_some(),
            Field::RetrievedContexts => self.retrieved_contexts.is_some(),
            Field::Reference => self.reference.is_some(),
            Field::References => self.references.is_some() || self.reference.is_some(),
            Field::ReferenceContexts => self.reference_contexts.is_some(),
            Field::Messages => self.messages.is_some(),
            Field::ReferenceToolCalls => self.reference_tool_calls.is_some(),
            Field::ChatbotRole => self.chatbot_role.is_some(),
            Field::ReferenceTopics => self.reference_topics.is_some(),
        }
    }

    /// The row's own texts, the ones that tell its language: the
    /// question, the response, the contexts and the references.
    pub fn own_texts(&self) -> Vec<&str> {
        let mut texts: Vec<&str> = [&self.user_input, &self.response]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        texts.extend(self.retrieved_contexts.iter().flatten().map(String::as_str));
        texts.extend(self.reference_list().into_iter().flatten());
        texts
    }

    /// All references: `references`, else `reference` as a one-element list.
    pub fn reference_list(&self) -> Option<Vec<&str>> {
        match (&self.references, &self.reference) {
            (Some(list), _) => Some(list.iter().map(String::as_str).collect()),
            (None, Some(one)) => Some(vec![one.as_str()]),
            (None, None) => None,
        }
    }
}

fn string_list(key: &str, value: Value) -> Result<Vec<String>, FieldError> {
    let Value::Array(items) = value else {
        return Err(field_error(
            key,
            format!("expected a list of strings, got {}", kind(&value)),
        ));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) => Ok(s),
            other => Err(field_error(
                key,
                format!("item {i}: expected a string, got {}", kind(&other)),
            )),
        })
        .collect()
}

fn field_error(key: &str, message: String) -> FieldError {
    FieldError {
        field: key.to_string(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Sample, FieldError> {
        Sample::from_json(3, v.as_object().unwrap())
    }

    #[test]
    fn aliases_map_to_fields_and_round_trip() {
        for f in Field::ALL {
            assert_eq!(f.name().parse::<Field>().unwrap(), f);
            for a in f.aliases() {
                assert_eq!(a.parse::<Field>().unwrap(), f);
            }
        }
        assert!("responses".parse::<Field>().is_err());
    }

    #[test]
    fn conversations_are_read_not_rejected() {
        let s = parse(json!({
            "messages": [{"role": "assistant", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "[]"}}]}],
            "reference_tool_calls": [{"name": "f", "args": {}}],
            "response": "ok"}))
        .unwrap();
        let problem = s.messages.as_ref().unwrap().tool_calls().unwrap_err();
        assert_eq!(
            problem.field,
            "messages[0].tool_calls[0].function.arguments"
        );
        assert!(s.has(Field::Messages) && s.has(Field::Response));
        assert_eq!(s.reference_tool_calls.unwrap().unwrap()[0].name, "f");
        // ragas' spelling: user_input as a list of messages.
        let s = parse(json!({"user_input": [{"type": "human", "content": "hi"}]})).unwrap();
        assert!(s.user_input.is_none() && s.messages.unwrap().problems.is_empty());
        let e = parse(json!({"user_input": [], "messages": []})).unwrap_err();
        assert!(e.message.contains("given twice"), "{e}");
        // DeepEval's spelling: `turns` and `chatbot_role`; a turn of another
        // role, or a user turn that calls tools, names its field.
        let s = parse(json!({"chatbot_role": "a concierge", "turns": [
            {"role": "system", "content": "be kind"},
            {"role": "user", "content": "hi", "tools_called": [{"name": "f"}]},
            {"role": "assistant", "content": "hello", "tools_called": []}]}))
        .unwrap();
        assert_eq!(s.chatbot_role.as_deref(), Some("a concierge"));
        let c = s.messages.unwrap();
        let fields: Vec<&str> = c.problems.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(fields, ["turns[0].role", "turns[1].tools_called"]);
        assert_eq!(c.messages.len(), 2);
        let e = parse(json!({"turns": [], "messages": []})).unwrap_err();
        assert!(e.message.contains("given twice"), "{e}");
    }

    #[test]
    fn all_fields_and_numeric_id() {
        let s = parse(
            json!({"id": 12, "query": "q", "prediction": "p", "contexts": ["a", "b"],
            "ground_truths": ["x", "y"], "reference_contexts": [], "extra": {"ignored": true}}),
        )
        .unwrap();
        assert_eq!(s.id, "12");
        assert_eq!(s.user_input.as_deref(), Some("q"));
        assert_eq!(s.response.as_deref(), Some("p"));
        assert_eq!(s.retrieved_contexts.as_ref().unwrap().len(), 2);
        assert_eq!(s.reference_list(), Some(vec!["x", "y"]));
        assert!(s.has(Field::References) && !s.has(Field::Reference));
    }

    #[test]
    fn null_is_absent_and_id_defaults_to_row() {
        let s = parse(json!({"response": null, "id": null})).unwrap();
        assert_eq!(s.id, "3");
        assert!(!s.has(Field::Response));
    }

    #[test]
    fn wrong_types_name_the_field() {
        let e = parse(json!({"answer": 5})).unwrap_err();
        assert_eq!(e.field, "answer");
        assert!(e.message.contains("expected a string, got a number"), "{e}");
        let e = parse(json!({"contexts": ["ok", 1]})).unwrap_err();
        assert_eq!(e.field, "contexts");
        assert!(e.message.contains("item 1"), "{e}");
        let e = parse(json!({"references": "one"})).unwrap_err();
        assert!(e.message.contains("list of strings"), "{e}");
    }

    #[test]
    fn a_field_given_twice_is_an_error() {
        let e = parse(json!({"question": "a", "user_input": "b"})).unwrap_err();
        assert!(e.message.contains("given twice"), "{e}");
    }
}
