//! Samples that are conversations: chat messages with tool calls, parsed
//! once at the boundary into typed values.
//!
//! Two spellings are read:
//!
//! - `messages` in the OpenAI chat format: `role` is `system` (or
//!   `developer`), `user`, `assistant` or `tool`; an assistant turn may
//!   carry `tool_calls` (`id`, `type: "function"`, `function.name`,
//!   `function.arguments` as a JSON string holding an object, or `null`)
//!   and, for RAG agents, its own `retrieved_contexts`; a tool turn names
//!   its call by `tool_call_id`. The same list also reads as traces of two
//!   other APIs write it:
//!   - content given as a list of blocks: text blocks (`text`,
//!     `input_text`, `output_text`, `refusal`) are the message's text;
//!     Anthropic's `tool_use` blocks (`id`, `name`, `input`) are an
//!     assistant's tool calls and its `tool_result` blocks (`tool_use_id`,
//!     `content`) tool results, each read as its own tool message; images,
//!     audio, files and reasoning carry no text to judge and are passed
//!     over;
//!   - OpenAI Responses items: a `function_call` (`call_id`, `name`,
//!     `arguments`) is a call of the assistant turn it follows, a
//!     `function_call_output` (`call_id`, `output`) a tool result, and a
//!     `reasoning` item is passed over.
//! - ragas `MultiTurnSample` JSON: `user_input` as a list of messages whose
//!   `type` is `human`, `ai` or `tool`, an `ai` turn's `tool_calls` being
//!   `[{"name", "args"}]` with `args` an object.
//!
//! `reference_tool_calls` is `[{"name", "args"}]` in both.
//!
//! A malformed part does not make the row unreadable: it is kept as a
//! [`Problem`] beside the parts that were read well, so a metric that needs
//! it fails on that row (naming the message and the field) while a metric
//! that reads only well-formed parts scores the row.

use crate::json::kind;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// Who speaks a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    /// The OpenAI name of the role.
    pub fn name(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The name is not a role in either spelling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown role '{0}' (expected system, developer, user, assistant or tool; or ragas' human, ai or tool)"
)]
pub struct UnknownRole(pub String);

/// OpenAI names (`developer` is a system message), and ragas' `human`
/// and `ai` for user and assistant.
///
/// ```
/// use assay_core::conversation::Role;
/// assert_eq!("ai".parse::<Role>().unwrap(), Role::Assistant);
/// assert_eq!(Role::Assistant.to_string(), "assistant");
/// assert!("robot".parse::<Role>().is_err());
/// ```
impl FromStr for Role {
    type Err = UnknownRole;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "system" | "developer" => Ok(Role::System),
            "user" | "human" => Ok(Role::User),
            "assistant" | "ai" => Ok(Role::Assistant),
            "tool" => Ok(Role::Tool),
            other => Err(UnknownRole(other.to_string())),
        }
    }
}

/// One call of a tool: a name and its arguments, a JSON object.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The call's id (OpenAI `tool_calls[].id`), which tool results name.
    pub id: Option<String>,
    pub name: String,
    /// Empty when the arguments were `null`.
    pub args: Map<String, Value>,
    /// The input gave the arguments as JSON `null`: DeepEval keeps such a
    /// call (parameters `None`) apart from one with `{}`, ragas refuses it.
    pub null_args: bool,
}

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// 0-based position in the input's list, kept for messages.
    pub index: usize,
    pub role: Role,
    /// `None` where the input has no content or `null`.
    pub content: Option<String>,
    /// The assistant's calls, in order; empty for other roles.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
    /// Contexts retrieved for this assistant turn.
    pub retrieved_contexts: Option<Vec<String>>,
}

/// What a [`Problem`] makes unreadable, so that only the metrics that need
/// that part fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// The message itself (not an object, no role, an unknown role), or the
    /// whole list: the message is left out, so the order of the rest is
    /// uncertain.
    Message,
    /// An assistant's tool call (its list, name, type or arguments).
    ToolCalls,
    /// A tool result: no `tool_call_id`, or one no earlier call has.
    ToolResult,
    /// A tool result out of place: not right after an assistant message
    /// that called tools or after another tool result (system messages
    /// aside), the order ragas' `MultiTurnSample` insists on.
    Order,
    /// A tool call whose arguments are JSON `null`: the call is read (with
    /// [`ToolCall::null_args`]), but ragas' `ToolCall` refuses it.
    NullArguments,
    /// A message's content.
    Content,
    /// A message's retrieved contexts.
    Contexts,
    /// The reference tool calls.
    Reference,
}

/// One malformed part of a row's conversation or reference calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// 0-based index of the message at fault; `None` for the list itself or
    /// the reference calls.
    pub message: Option<usize>,
    /// The field, as a path in the input: `messages[2].tool_calls[0].function.arguments`.
    pub field: String,
    pub part: Part,
    pub detail: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(i) = self.message {
            write!(f, "message {i}, ")?;
        }
        write!(f, "field '{}': {}", self.field, self.detail)
    }
}

/// A row's conversation: the messages read well, in input order, and the
/// problems of the rest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conversation {
    pub messages: Vec<Message>,
    pub problems: Vec<Problem>,
}

impl Conversation {
    /// The assistant's tool calls in message order, or the first problem
    /// that makes them uncertain (a malformed call, or a message left out).
    ///
    /// ```
    /// use assay_core::conversation::Conversation;
    /// let v = serde_json::json!([
    ///     {"role": "user", "content": "weather?"},
    ///     {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ///         "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
    ///     {"role": "tool", "tool_call_id": "c1", "content": "rain"}]);
    /// let c = Conversation::from_openai("messages", &v);
    /// let calls = c.tool_calls().unwrap();
    /// assert_eq!((calls[0].name.as_str(), &calls[0].args["city"]), ("weather", &serde_json::json!("Oslo")));
    /// ```
    pub fn tool_calls(&self) -> Result<Vec<&ToolCall>, &Problem> {
        self.first_problem(&[Part::Message, Part::ToolCalls])?;
        Ok(self.messages.iter().flat_map(|m| &m.tool_calls).collect())
    }

    /// The first problem in one of `parts`, as an error.
    pub fn first_problem(&self, parts: &[Part]) -> Result<(), &Problem> {
        match self.problems.iter().find(|p| parts.contains(&p.part)) {
            Some(p) => Err(p),
            None => Ok(()),
        }
    }

    /// Reads `messages` in the OpenAI chat format; `key` is the name the
    /// input gave the list.
    pub fn from_openai(key: &str, value: &Value) -> Conversation {
        Reader::new(key, Spelling::OpenAi).read(value)
    }

    /// Reads ragas' `MultiTurnSample.user_input` (messages with `type`).
    pub fn from_ragas(key: &str, value: &Value) -> Conversation {
        Reader::new(key, Spelling::Ragas).read(value)
    }

    /// Reads DeepEval's `ConversationalTestCase.turns`: roles `user` and
    /// `assistant`, an assistant turn's `tools_called` (`name`,
    /// `input_parameters`, `output`) as its tool calls, each `output` as the
    /// result of its call, and `retrieval_context` as the turn's contexts.
    ///
    /// ```
    /// use assay_core::conversation::{Conversation, Role};
    /// let v = serde_json::json!([
    ///     {"role": "user", "content": "weather in Oslo?"},
    ///     {"role": "assistant", "content": "Rain.", "retrieval_context": ["Oslo: rain"],
    ///      "tools_called": [{"name": "weather", "input_parameters": {"city": "Oslo"}, "output": "rain"}]}]);
    /// let c = Conversation::from_deepeval("turns", &v);
    /// assert!(c.problems.is_empty(), "{:?}", c.problems);
    /// let calls = c.tool_calls().unwrap();
    /// assert_eq!((calls[0].name.as_str(), &calls[0].args["city"]), ("weather", &serde_json::json!("Oslo")));
    /// assert_eq!(c.messages[2].role, Role::Tool);
    /// assert_eq!(c.messages[2].content.as_deref(), Some("rain"));
    /// ```
    pub fn from_deepeval(key: &str, value: &Value) -> Conversation {
        Reader::new(key, Spelling::DeepEval).read(value)
    }
}

/// Reads `reference_tool_calls`: `[{"name", "args"}]`, `args` an object
/// (`{}` for none; as in ragas' `ToolCall`, it cannot be left out).
///
/// ```
/// let v = serde_json::json!([{"name": "weather", "args": {"city": "Oslo"}}]);
/// let calls = assay_core::conversation::reference_tool_calls("reference_tool_calls", &v).unwrap();
/// assert_eq!(calls[0].name, "weather");
/// let bad = serde_json::json!([{"name": "weather", "args": "city=Oslo"}]);
/// let e = assay_core::conversation::reference_tool_calls("reference_tool_calls", &bad).unwrap_err();
/// assert_eq!(e.field, "reference_tool_calls[0].args");
/// ```
pub fn reference_tool_calls(key: &str, value: &Value) -> Result<Vec<ToolCall>, Problem> {
    let problem = |field: String, detail: String| Problem {
        message: None,
        field,
        part: Part::Reference,
        detail,
    };
    let Value::Array(items) = value else {
        return Err(problem(
            key.to_string(),
            format!("expected a list of tool calls, got {}", kind(value)),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let at = format!("{key}[{i}]");
            named_call(&at, item).map_err(|(field, detail)| problem(field, detail))
        })
        .collect()
}

/// A `{"name", "args"}` call (ragas' `ToolCall`); errors are (field, detail).
fn named_call(at: &str, item: &Value) -> Result<ToolCall, (String, String)> {
    let call = call_object(at, item)?;
    let name = required_string(call, "name", at)?;
    let args = match call.get("args") {
        Some(Value::Object(args)) => args.clone(),
        Some(other) => {
            return Err((
                format!("{at}.args"),
                format!("expected an object, got {}", kind(other)),
            ))
        }
        None => return Err((format!("{at}.args"), "missing".to_string())),
    };
    Ok(ToolCall {
        id: None,
        name,
        args,
        null_args: false,
    })
}

/// A DeepEval `ToolCall` at `at`: `name`, `input_parameters` (an object,
/// `{}` when left out) and `output` (text as it is, any other value as
/// JSON), its id the place it was read from.
fn deepeval_call(at: &str, item: &Value) -> Result<(ToolCall, Option<String>), (String, String)> {
    let call = call_object(at, item)?;
    let name = required_string(call, "name", at)?;
    let args = match call.get("input_parameters") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(args)) => args.clone(),
        Some(other) => {
            return Err((
                format!("{at}.input_parameters"),
                format!("expected an object, got {}", kind(other)),
            ))
        }
    };
    let output = match call.get("output") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    let id = Some(at.to_string());
    let call = ToolCall {
        id,
        name,
        args,
        null_args: false,
    };
    Ok((call, output))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Spelling {
    OpenAi,
    Ragas,
    DeepEval,
}

struct Reader<'k> {
    key: &'k str,
    spelling: Spelling,
    out: Conversation,
    /// Where a tool message read from a block or an item names its call,
    /// by its position in `out.messages` (the input has no `tool_call_id`
    /// there to name).
    id_fields: BTreeMap<usize, String>,
}

impl<'k> Reader<'k> {
    fn new(key: &'k str, spelling: Spelling) -> Self {
        Reader {
            key,
            spelling,
            out: Conversation::default(),
            id_fields: BTreeMap::new(),
        }
    }

    /// Adds the tool message of input item `index` answering call `id`,
    /// read from `id_field`.
    fn push_result(&mut self, index: usize, id: String, content: Option<String>, id_field: String) {
        self.id_fields.insert(self.out.messages.len(), id_field);
        self.out.messages.push(Message {
            index,
            role: Role::Tool,
            content,
            tool_calls: Vec::new(),
            tool_call_id: Some(id),
            retrieved_contexts: None,
        });
    }

    fn problem(&mut self, message: Option<usize>, field: String, part: Part, detail: String) {
        self.out.problems.push(Problem {
            message,
            field,
            part,
            detail,
        });
    }

    /// Notes that message `i`'s call has `null` arguments at `field`.
    fn null_arguments(&mut self, i: usize, field: String) {
        let detail = "null arguments: ragas' ToolCall needs an object (DeepEval reads null as a \
                      call without arguments)"
            .to_string();
        self.problem(Some(i), field, Part::NullArguments, detail);
    }

    fn read(mut self, value: &Value) -> Conversation {
        let Value::Array(items) = value else {
            let detail = format!("expected a list of messages, got {}", kind(value));
            self.problem(None, self.key.to_string(), Part::Message, detail);
            return self.out;
        };
        for (i, item) in items.iter().enumerate() {
            if self.spelling == Spelling::OpenAi {
                if let Some(kind) = responses_item(item) {
                    self.responses_item(i, item, kind);
                    continue;
                }
            }
            if self.spelling == Spelling::DeepEval {
                self.deepeval_turn(i, item);
                continue;
            }
            if let Some(message) = self.message(i, item) {
                self.out.messages.push(message);
            }
        }
        if self.spelling == Spelling::OpenAi {
            self.check_tool_results();
        }
        self.check_order();
        self.out
    }

    fn message(&mut self, i: usize, item: &Value) -> Option<Message> {
        let at = format!("{}[{i}]", self.key);
        let Value::Object(m) = item else {
            let detail = format!("expected a message object, got {}", kind(item));
            self.problem(Some(i), at, Part::Message, detail);
            return None;
        };
        let role_key = match self.spelling {
            Spelling::OpenAi | Spelling::DeepEval => "role",
            Spelling::Ragas => "type",
        };
        let role = match m.get(role_key) {
            Some(Value::String(s)) => match s.parse::<Role>() {
                // ragas has no system message; `human`/`ai` are its own names.
                Ok(Role::System) if self.spelling == Spelling::Ragas => {
                    Err(UnknownRole(s.clone()).to_string())
                }
                Ok(role) => Ok(role),
                Err(e) => Err(e.to_string()),
            },
            Some(other) => Err(format!("expected a string, got {}", kind(other))),
            None => Err("missing".to_string()),
        };
        let role = match role {
            Ok(role) => role,
            Err(detail) => {
                self.problem(Some(i), format!("{at}.{role_key}"), Part::Message, detail);
                return None;
            }
        };
        let mut message = Message {
            index: i,
            role,
            content: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            retrieved_contexts: None,
        };
        let mut results = Vec::new();
        match m.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => message.content = Some(s.clone()),
            Some(Value::Array(blocks)) => {
                let read = self.blocks(i, &format!("{at}.content"), role, blocks);
                message.content = read.text;
                message.tool_calls = read.calls;
                results = read.results;
            }
            Some(other) => {
                let detail = format!(
                    "expected a string, a list of content blocks or null, got {}",
                    kind(other)
                );
                self.problem(Some(i), format!("{at}.content"), Part::Content, detail);
            }
        }
        message.retrieved_contexts = self.contexts(i, &at, m, "retrieved_contexts");
        match m.get("tool_calls") {
            None | Some(Value::Null) => {}
            Some(_) if role != Role::Assistant => {
                let detail = format!("only an assistant message calls tools, this is {role}");
                self.problem(Some(i), format!("{at}.tool_calls"), Part::ToolCalls, detail);
            }
            Some(Value::Array(calls)) => {
                for (j, call) in calls.iter().enumerate() {
                    let call_at = format!("{at}.tool_calls[{j}]");
                    let read = match self.spelling {
                        Spelling::OpenAi => openai_call(&call_at, call),
                        Spelling::Ragas | Spelling::DeepEval => named_call(&call_at, call),
                    };
                    match read {
                        Ok(call) => {
                            if call.null_args {
                                let field = format!("{call_at}.function.arguments");
                                self.null_arguments(i, field);
                            }
                            message.tool_calls.push(call)
                        }
                        Err((field, detail)) => {
                            self.problem(Some(i), field, Part::ToolCalls, detail)
                        }
                    }
                }
            }
            Some(other) => {
                let detail = format!("expected a list of tool calls, got {}", kind(other));
                self.problem(Some(i), format!("{at}.tool_calls"), Part::ToolCalls, detail);
            }
        }
        if self.spelling == Spelling::OpenAi && role == Role::Tool {
            match m.get("tool_call_id") {
                Some(Value::String(id)) => message.tool_call_id = Some(id.clone()),
                Some(other) => {
                    let detail = format!("expected a string, got {}", kind(other));
                    self.problem(
                        Some(i),
                        format!("{at}.tool_call_id"),
                        Part::ToolResult,
                        detail,
                    );
                }
                None => {
                    let detail = "missing: a tool result names the call it answers".to_string();
                    self.problem(
                        Some(i),
                        format!("{at}.tool_call_id"),
                        Part::ToolResult,
                        detail,
                    );
                }
            }
        }
        // Anthropic's tool results come in a user message: each is read as
        // a tool message, and the user's own text, if any, follows them.
        if results.is_empty() {
            return Some(message);
        }
        for (tool_call_id, content, id_field) in results {
            self.push_result(i, tool_call_id, content, id_field);
        }
        message.content.is_some().then_some(message)
    }

    /// The contexts under `key` of message `i` (at `at`), if it has them
    /// and they read.
    fn contexts(
        &mut self,
        i: usize,
        at: &str,
        m: &Map<String, Value>,
        key: &str,
    ) -> Option<Vec<String>> {
        match m.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => strings(v)
                .map_err(|detail| {
                    self.problem(Some(i), format!("{at}.{key}"), Part::Contexts, detail)
                })
                .ok(),
        }
    }

    /// DeepEval turn `i`: its message, then the results of its tools.
    fn deepeval_turn(&mut self, i: usize, item: &Value) {
        let at = format!("{}[{i}]", self.key);
        let Value::Object(m) = item else {
            let detail = format!("expected a turn object, got {}", kind(item));
            self.problem(Some(i), at, Part::Message, detail);
            return;
        };
        let role = match m.get("role") {
            Some(Value::String(s)) if s == "user" => Role::User,
            Some(Value::String(s)) if s == "assistant" => Role::Assistant,
            Some(other) => {
                let detail = format!("expected \"user\" or \"assistant\", got {other}");
                self.problem(Some(i), format!("{at}.role"), Part::Message, detail);
                return;
            }
            None => {
                let detail = "missing".to_string();
                self.problem(Some(i), format!("{at}.role"), Part::Message, detail);
                return;
            }
        };
        let mut message = Message {
            index: i,
            role,
            content: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            retrieved_contexts: None,
        };
        match m.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => message.content = Some(s.clone()),
            Some(other) => {
                let detail = format!("expected a string, got {}", kind(other));
                self.problem(Some(i), format!("{at}.content"), Part::Content, detail);
            }
        }
        message.retrieved_contexts = self.contexts(i, &at, m, "retrieval_context");
        let mut outputs = Vec::new();
        match m.get("tools_called") {
            None | Some(Value::Null) => {}
            Some(Value::Array(calls)) if calls.is_empty() => {}
            Some(_) if role != Role::Assistant => {
                let detail = "only an assistant turn calls tools, this is user".to_string();
                self.problem(
                    Some(i),
                    format!("{at}.tools_called"),
                    Part::ToolCalls,
                    detail,
                );
            }
            Some(Value::Array(calls)) => {
                for (j, call) in calls.iter().enumerate() {
                    let call_at = format!("{at}.tools_called[{j}]");
                    match deepeval_call(&call_at, call) {
                        Ok((call, output)) => {
                            if let Some(output) = output {
                                let id = call.id.clone().unwrap_or_default();
                                outputs.push((id, output, format!("{call_at}.output")));
                            }
                            message.tool_calls.push(call);
                        }
                        Err((field, detail)) => {
                            self.problem(Some(i), field, Part::ToolCalls, detail)
                        }
                    }
                }
            }
            Some(other) => {
                let detail = format!("expected a list of tool calls, got {}", kind(other));
                self.problem(
                    Some(i),
                    format!("{at}.tools_called"),
                    Part::ToolCalls,
                    detail,
                );
            }
        }
        self.out.messages.push(message);
        for (id, output, field) in outputs {
            self.push_result(i, id, Some(output), field);
        }
    }

    /// A list of content blocks at `at`, of message `i` spoken by `role`.
    fn blocks(&mut self, i: usize, at: &str, role: Role, blocks: &[Value]) -> Blocks {
        let mut read = Blocks::default();
        let mut texts: Vec<String> = Vec::new();
        for (j, block) in blocks.iter().enumerate() {
            let at = format!("{at}[{j}]");
            let Value::Object(b) = block else {
                let detail = format!("expected a content block object, got {}", kind(block));
                self.problem(Some(i), at, Part::Content, detail);
                continue;
            };
            let kind_of = match required_string(b, "type", &at) {
                Ok(t) => t,
                Err((field, detail)) => {
                    self.problem(Some(i), field, Part::Content, detail);
                    continue;
                }
            };
            match kind_of.as_str() {
                "text" | "input_text" | "output_text" | "refusal" => {
                    let key = if kind_of == "refusal" {
                        "refusal"
                    } else {
                        "text"
                    };
                    match required_string(b, key, &at) {
                        Ok(t) => texts.push(t),
                        Err((field, detail)) => self.problem(Some(i), field, Part::Content, detail),
                    }
                }
                "tool_use" if role != Role::Assistant => {
                    let detail = format!("only an assistant message calls tools, this is {role}");
                    self.problem(Some(i), at, Part::ToolCalls, detail);
                }
                "tool_use" => match anthropic_call(&at, b) {
                    Ok(call) => read.calls.push(call),
                    Err((field, detail)) => self.problem(Some(i), field, Part::ToolCalls, detail),
                },
                "tool_result" if role != Role::User => {
                    let detail = format!("a tool result comes in a user message, this is {role}");
                    self.problem(Some(i), at, Part::ToolResult, detail);
                }
                "tool_result" => match anthropic_result(&at, b) {
                    Ok((id, content)) => {
                        read.results
                            .push((id, content, format!("{at}.tool_use_id")))
                    }
                    Err((field, detail)) => self.problem(Some(i), field, Part::ToolResult, detail),
                },
                "image" | "image_url" | "input_image" | "input_audio" | "file" | "input_file"
                | "document" | "thinking" | "redacted_thinking" => {}
                other => {
                    let detail = format!("unknown content block type '{other}'");
                    self.problem(Some(i), format!("{at}.type"), Part::Content, detail);
                }
            }
        }
        read.text = (!texts.is_empty()).then(|| texts.join("\n"));
        read
    }

    /// An OpenAI Responses item of kind `kind` at position `i`.
    fn responses_item(&mut self, i: usize, item: &Value, item_kind: ResponsesItem) {
        let at = format!("{}[{i}]", self.key);
        let Value::Object(m) = item else { return };
        match item_kind {
            ResponsesItem::Reasoning => {}
            ResponsesItem::FunctionCall => match responses_call(&at, m) {
                Ok(call) => {
                    if call.null_args {
                        self.null_arguments(i, format!("{at}.arguments"));
                    }
                    match self.out.messages.last_mut() {
                        Some(last) if last.role == Role::Assistant => last.tool_calls.push(call),
                        _ => self.out.messages.push(Message {
                            index: i,
                            role: Role::Assistant,
                            content: None,
                            tool_calls: vec![call],
                            tool_call_id: None,
                            retrieved_contexts: None,
                        }),
                    }
                }
                Err((field, detail)) => self.problem(Some(i), field, Part::ToolCalls, detail),
            },
            ResponsesItem::FunctionCallOutput => {
                let read = required_string(m, "call_id", &at).and_then(|id| {
                    let output = match m.get("output") {
                        None | Some(Value::Null) => None,
                        Some(Value::String(s)) => Some(s.clone()),
                        Some(other) => {
                            return Err((
                                format!("{at}.output"),
                                format!("expected a string, got {}", kind(other)),
                            ))
                        }
                    };
                    Ok((id, output))
                });
                match read {
                    Ok((id, content)) => self.push_result(i, id, content, format!("{at}.call_id")),
                    Err((field, detail)) => self.problem(Some(i), field, Part::ToolResult, detail),
                }
            }
        }
    }

    /// Each tool result follows an assistant message with calls, or another
    /// tool result.
    fn check_order(&mut self) {
        let mut previous: Option<&Message> = None;
        let mut problems = Vec::new();
        for m in self.out.messages.iter().filter(|m| m.role != Role::System) {
            if m.role == Role::Tool {
                let fits = previous.is_some_and(|p| {
                    p.role == Role::Tool || (p.role == Role::Assistant && !p.tool_calls.is_empty())
                });
                if !fits {
                    let after = match previous {
                        None => "nothing".to_string(),
                        Some(p) if p.role == Role::Assistant => {
                            "an assistant message without tool calls".to_string()
                        }
                        Some(p) => format!("a {} message", p.role),
                    };
                    problems.push(Problem {
                        message: Some(m.index),
                        field: format!("{}[{}]", self.key, m.index),
                        part: Part::Order,
                        detail: format!(
                            "a tool result must follow an assistant message with tool calls or \
                             another tool result, not {after}"
                        ),
                    });
                }
            }
            previous = Some(m);
        }
        self.out.problems.extend(problems);
    }

    /// Each tool result answers a call made before it.
    fn check_tool_results(&mut self) {
        let mut problems = Vec::new();
        for (n, m) in self.out.messages.iter().enumerate() {
            let Some(id) = &m.tool_call_id else { continue };
            let called = self.out.messages[..n]
                .iter()
                .flat_map(|earlier| &earlier.tool_calls)
                .any(|c| c.id.as_deref() == Some(id.as_str()));
            if !called {
                let field = self.id_fields.get(&n).cloned();
                problems.push(Problem {
                    message: Some(m.index),
                    field: field
                        .unwrap_or_else(|| format!("{}[{}].tool_call_id", self.key, m.index)),
                    part: Part::ToolResult,
                    detail: format!("'{id}' names no earlier tool call"),
                });
            }
        }
        self.out.problems.extend(problems);
    }
}

/// The tool call at `at` as an object; errors are (field, detail).
fn call_object<'v>(at: &str, item: &'v Value) -> Result<&'v Map<String, Value>, (String, String)> {
    match item {
        Value::Object(call) => Ok(call),
        other => Err((
            at.to_string(),
            format!("expected a tool call object, got {}", kind(other)),
        )),
    }
}

/// `object[key]`, which must be a string; errors are (field, detail).
fn required_string(
    object: &Map<String, Value>,
    key: &str,
    at: &str,
) -> Result<String, (String, String)> {
    match object.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err((
            format!("{at}.{key}"),
            format!("expected a string, got {}", kind(other)),
        )),
        None => Err((format!("{at}.{key}"), "missing".to_string())),
    }
}

/// An OpenAI `tool_calls[]` item; errors are (field, detail).
fn openai_call(at: &str, item: &Value) -> Result<ToolCall, (String, String)> {
    let call = call_object(at, item)?;
    let id = match call.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err((
                format!("{at}.id"),
                format!("expected a string, got {}", kind(other)),
            ))
        }
    };
    match call.get("type") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "function" => {}
        Some(other) => {
            return Err((
                format!("{at}.type"),
                format!("expected \"function\", got {other}"),
            ))
        }
    }
    let Some(Value::Object(function)) = call.get("function") else {
        let got = call.get("function").map_or("nothing", kind);
        return Err((
            format!("{at}.function"),
            format!("expected an object with name and arguments, got {got}"),
        ));
    };
    let name = required_string(function, "name", &format!("{at}.function"))?;
    let args = arguments(
        format!("{at}.function.arguments"),
        function.get("arguments"),
    )?;
    Ok(ToolCall {
        id,
        name,
        null_args: args.is_none(),
        args: args.unwrap_or_default(),
    })
}

/// A call's `arguments`: a JSON string holding an object, `None` for
/// `null` (as text or as the value); errors are (field, detail).
fn arguments(
    field: String,
    value: Option<&Value>,
) -> Result<Option<Map<String, Value>>, (String, String)> {
    match value {
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(args)) => Ok(Some(args)),
            Ok(Value::Null) => Ok(None),
            Ok(other) => Err((
                field,
                format!("expected a JSON object, got {}", kind(&other)),
            )),
            Err(e) => Err((field, format!("not JSON: {e}"))),
        },
        // Some producers write the object itself; it means the same.
        Some(Value::Object(args)) => Ok(Some(args.clone())),
        Some(Value::Null) => Ok(None),
        Some(other) => Err((
            field,
            format!(
                "expected a JSON string holding an object, got {}",
                kind(other)
            ),
        )),
        None => Err((field, "missing".to_string())),
    }
}

/// What a list of content blocks holds.
#[derive(Default)]
struct Blocks {
    /// The text blocks, joined by newlines; `None` when there is none.
    text: Option<String>,
    /// Anthropic `tool_use` blocks.
    calls: Vec<ToolCall>,
    /// Anthropic `tool_result` blocks: the call answered, the result's
    /// text, and the field naming the call.
    results: Vec<(String, Option<String>, String)>,
}

/// An Anthropic `tool_use` block; errors are (field, detail).
fn anthropic_call(at: &str, block: &Map<String, Value>) -> Result<ToolCall, (String, String)> {
    let id = required_string(block, "id", at)?;
    let name = required_string(block, "name", at)?;
    let args = match block.get("input") {
        Some(Value::Object(input)) => input.clone(),
        Some(other) => {
            return Err((
                format!("{at}.input"),
                format!("expected an object, got {}", kind(other)),
            ))
        }
        None => return Err((format!("{at}.input"), "missing".to_string())),
    };
    Ok(ToolCall {
        id: Some(id),
        name,
        args,
        null_args: false,
    })
}

/// An Anthropic `tool_result` block: the call it answers and its text
/// (a string, or text blocks); errors are (field, detail).
fn anthropic_result(
    at: &str,
    block: &Map<String, Value>,
) -> Result<(String, Option<String>), (String, String)> {
    let id = required_string(block, "tool_use_id", at)?;
    let content = match block.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => {
            let mut texts = Vec::new();
            for (j, part) in parts.iter().enumerate() {
                let part_at = format!("{at}.content[{j}]");
                let Value::Object(p) = part else {
                    return Err((
                        part_at,
                        format!("expected a block object, got {}", kind(part)),
                    ));
                };
                // Images in a result carry no text to judge.
                if p.get("type").and_then(Value::as_str) == Some("text") {
                    texts.push(required_string(p, "text", &part_at)?);
                }
            }
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        Some(other) => {
            return Err((
                format!("{at}.content"),
                format!("expected a string or a list of blocks, got {}", kind(other)),
            ))
        }
    };
    Ok((id, content))
}

/// The OpenAI Responses items read besides messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ResponsesItem {
    FunctionCall,
    FunctionCallOutput,
    Reasoning,
}

/// The Responses item `item` is, if it is one that is not a message (it
/// has no `role`).
fn responses_item(item: &Value) -> Option<ResponsesItem> {
    let m = item.as_object()?;
    if m.contains_key("role") {
        return None;
    }
    match m.get("type")?.as_str()? {
        "function_call" => Some(ResponsesItem::FunctionCall),
        "function_call_output" => Some(ResponsesItem::FunctionCallOutput),
        "reasoning" => Some(ResponsesItem::Reasoning),
        _ => None,
    }
}

/// A Responses `function_call` item; errors are (field, detail).
fn responses_call(at: &str, item: &Map<String, Value>) -> Result<ToolCall, (String, String)> {
    let id = required_string(item, "call_id", at)?;
    let name = required_string(item, "name", at)?;
    let args = arguments(format!("{at}.arguments"), item.get("arguments"))?;
    Ok(ToolCall {
        id: Some(id),
        name,
        null_args: args.is_none(),
        args: args.unwrap_or_default(),
    })
}

fn strings(value: &Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = value else {
        return Err(format!("expected a list of strings, got {}", kind(value)));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) => Ok(s.clone()),
            other => Err(format!("item {i}: expected a string, got {}", kind(other))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, name: &str, args: &str) -> Value {
        json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
    }

    #[test]
    fn a_well_formed_conversation_is_typed() {
        let c = Conversation::from_openai(
            "messages",
            &json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "weather in Oslo and Rome?"},
                {"role": "assistant", "content": null, "retrieved_contexts": ["doc"],
                 "tool_calls": [call("a", "weather", r#"{"city": "Oslo"}"#),
                                call("b", "weather", r#"{"city": "Rome", "days": [1, 2]}"#)]},
                {"role": "tool", "tool_call_id": "a", "content": "rain"},
                {"role": "tool", "tool_call_id": "b", "content": "sun"},
                {"role": "assistant", "content": "Rain in Oslo, sun in Rome."}
            ]),
        );
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        let roles: Vec<Role> = c.messages.iter().map(|m| m.role).collect();
        use Role::*;
        assert_eq!(roles, [System, User, Assistant, Tool, Tool, Assistant]);
        let calls = c.tool_calls().unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].args["days"], json!([1, 2]));
        assert_eq!(
            c.messages[2].retrieved_contexts.as_deref(),
            Some(&["doc".to_string()][..])
        );
    }

    /// `null` arguments, as text or as the value, in chat messages and
    /// Responses items: the call is read, with a problem only ragas' metrics
    /// need; objects keep their keys' input order.
    #[test]
    fn null_arguments_are_a_call_without_arguments() {
        let c = Conversation::from_openai(
            "messages",
            &json!([
                {"role": "assistant", "tool_calls": [
                    call("a", "f", "null"),
                    {"id": "b", "type": "function", "function": {"name": "f", "arguments": null}},
                    call("c", "f", r#"{"z": {"b": 1, "a": 2}, "y": 0}"#)]},
                {"type": "function_call", "call_id": "d", "name": "g", "arguments": "null"}
            ]),
        );
        let calls = c.tool_calls().unwrap();
        let null: Vec<bool> = calls.iter().map(|c| c.null_args).collect();
        assert_eq!(null, [true, true, false, true]);
        assert!(calls[0].args.is_empty());
        assert_eq!(calls[2].args.keys().collect::<Vec<_>>(), ["z", "y"]);
        assert_eq!(calls[2].args["z"].to_string(), r#"{"b":1,"a":2}"#);
        let fields: Vec<(&str, Part)> = c
            .problems
            .iter()
            .map(|p| (p.field.as_str(), p.part))
            .collect();
        assert_eq!(
            fields,
            [
                (
                    "messages[0].tool_calls[0].function.arguments",
                    Part::NullArguments
                ),
                (
                    "messages[0].tool_calls[1].function.arguments",
                    Part::NullArguments
                ),
                ("messages[1].arguments", Part::NullArguments),
            ]
        );
    }

    #[test]
    fn each_malformed_part_names_message_and_field() {
        let cases = [
            (json!({"role": "robot"}), "messages[0].role", Part::Message),
            (json!("hi"), "messages[0]", Part::Message),
            (
                json!({"role": "assistant", "tool_calls": [call("a", "f", "[1]")]}),
                "messages[0].tool_calls[0].function.arguments",
                Part::ToolCalls,
            ),
            (
                json!({"role": "assistant", "tool_calls": [call("a", "f", "{")]}),
                "messages[0].tool_calls[0].function.arguments",
                Part::ToolCalls,
            ),
            (
                json!({"role": "assistant", "tool_calls": [{"type": "web", "function": {"name": "f", "arguments": "{}"}}]}),
                "messages[0].tool_calls[0].type",
                Part::ToolCalls,
            ),
            (
                json!({"role": "assistant", "tool_calls": {"name": "f"}}),
                "messages[0].tool_calls",
                Part::ToolCalls,
            ),
            (
                json!({"role": "tool", "tool_call_id": "zz", "content": "x"}),
                "messages[0].tool_call_id",
                Part::ToolResult,
            ),
            (
                json!({"role": "tool", "content": "x"}),
                "messages[0].tool_call_id",
                Part::ToolResult,
            ),
            (
                json!({"role": "user", "content": 3}),
                "messages[0].content",
                Part::Content,
            ),
        ];
        for (message, field, part) in cases {
            let c = Conversation::from_openai("messages", &json!([message]));
            let p = c.problems.iter().find(|p| p.part == part);
            let p = p.unwrap_or_else(|| panic!("{message}: {:?}", c.problems));
            assert_eq!((p.message, p.field.as_str()), (Some(0), field), "{message}");
        }
        let c = Conversation::from_openai("messages", &json!({"role": "user"}));
        assert_eq!(
            c.problems[0].to_string(),
            "field 'messages': expected a list of messages, got an object"
        );
    }

    #[test]
    fn an_orphan_tool_result_leaves_the_calls_readable() {
        let c = Conversation::from_openai(
            "messages",
            &json!([
                {"role": "tool", "tool_call_id": "a", "content": "early"},
                {"role": "assistant", "tool_calls": [call("a", "f", "{}")]},
            ]),
        );
        let orphan = c.first_problem(&[Part::ToolResult]).unwrap_err();
        assert_eq!(
            orphan.to_string(),
            "message 0, field 'messages[0].tool_call_id': 'a' names no earlier tool call"
        );
        assert_eq!(
            c.first_problem(&[Part::Order]).unwrap_err().field,
            "messages[0]"
        );
        assert_eq!(c.tool_calls().unwrap().len(), 1);
        // A result in its place but naming no call is out of order for no one.
        let c = Conversation::from_openai(
            "messages",
            &json!([
                {"role": "assistant", "tool_calls": [call("a", "f", "{}")]},
                {"role": "system", "content": "note"},
                {"role": "tool", "tool_call_id": "b", "content": "x"},
            ]),
        );
        assert!(c.first_problem(&[Part::Order]).is_ok());
        assert!(c.first_problem(&[Part::ToolResult]).is_err());
    }

    #[test]
    fn ragas_multi_turn_messages() {
        let c = Conversation::from_ragas(
            "user_input",
            &json!([
                {"type": "human", "content": "weather?"},
                {"type": "ai", "content": "", "tool_calls": [{"name": "weather", "args": {"city": "Oslo"}}]},
                {"type": "tool", "content": "rain"},
                {"type": "system", "content": "x"}
            ]),
        );
        assert_eq!(c.messages.len(), 3);
        assert_eq!(c.tool_calls().unwrap_err().field, "user_input[3].type");
        assert_eq!(c.messages[1].tool_calls[0].args["city"], json!("Oslo"));
    }

    #[test]
    fn anthropic_blocks_read_as_the_same_conversation_as_openai_messages() {
        let openai = Conversation::from_openai(
            "messages",
            &json!([
                {"role": "user", "content": "weather in Oslo?"},
                {"role": "assistant", "content": "Let me look.",
                 "tool_calls": [call("toolu_1", "weather", r#"{"city": "Oslo"}"#)]},
                {"role": "tool", "tool_call_id": "toolu_1", "content": "rain"},
                {"role": "assistant", "content": "Rain in Oslo."}
            ]),
        );
        let anthropic = Conversation::from_openai(
            "messages",
            &json!([
                {"role": "user", "content": [{"type": "text", "text": "weather in Oslo?"}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "they want the weather", "signature": "x"},
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1",
                     "content": [{"type": "text", "text": "rain"}]}]},
                {"role": "assistant", "content": [{"type": "text", "text": "Rain in Oslo."}]}
            ]),
        );
        assert!(openai.problems.is_empty(), "{:?}", openai.problems);
        assert_eq!(anthropic, openai);
    }

    #[test]
    fn a_user_message_with_tool_results_and_text_reads_as_results_then_the_text() {
        let c = Conversation::from_openai(
            "messages",
            &json!([
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "a", "name": "f", "input": {}},
                    {"type": "tool_use", "id": "b", "name": "g", "input": {"x": 1}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": "one"},
                    {"type": "tool_result", "tool_use_id": "b", "is_error": true},
                    {"type": "image", "source": {"type": "base64", "data": ""}},
                    {"type": "text", "text": "and now?"}]}
            ]),
        );
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        let read: Vec<(Role, Option<&str>, Option<&str>)> = c
            .messages
            .iter()
            .map(|m| (m.role, m.content.as_deref(), m.tool_call_id.as_deref()))
            .collect();
        use Role::*;
        assert_eq!(
            read,
            [
                (Assistant, None, None),
                (Tool, Some("one"), Some("a")),
                (Tool, None, Some("b")),
                (User, Some("and now?"), None)
            ]
        );
        let names: Vec<&str> = c
            .tool_calls()
            .unwrap()
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["f", "g"]);
    }

    #[test]
    fn responses_items_read_as_calls_of_the_turn_they_follow_and_results() {
        let items = |answer_first: bool| {
            let mut list = vec![
                json!({"type": "message", "role": "developer",
                       "content": [{"type": "input_text", "text": "be brief"}]}),
                json!({"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "weather in Oslo?"}]}),
                json!({"type": "reasoning", "id": "rs_1", "summary": []}),
            ];
            if answer_first {
                list.push(json!({"type": "message", "role": "assistant",
                                 "content": [{"type": "output_text", "text": "Let me look."}]}));
            }
            list.extend([
                json!({"type": "function_call", "call_id": "call_1", "name": "weather",
                       "arguments": "{\"city\": \"Oslo\"}"}),
                json!({"type": "function_call_output", "call_id": "call_1", "output": "rain"}),
                json!({"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": "Rain in Oslo."}]}),
            ]);
            Conversation::from_openai("messages", &Value::Array(list))
        };
        for answer_first in [false, true] {
            let c = items(answer_first);
            assert!(c.problems.is_empty(), "{:?}", c.problems);
            use Role::*;
            let roles: Vec<Role> = c.messages.iter().map(|m| m.role).collect();
            assert_eq!(roles, [System, User, Assistant, Tool, Assistant]);
            let expected = answer_first.then_some("Let me look.");
            assert_eq!(c.messages[2].content.as_deref(), expected);
            let calls = c.tool_calls().unwrap();
            assert_eq!(calls.len(), 1);
            assert_eq!(calls[0].id.as_deref(), Some("call_1"));
            assert_eq!(calls[0].args["city"], json!("Oslo"));
            assert_eq!(c.messages[3].content.as_deref(), Some("rain"));
        }
    }

    #[test]
    fn malformed_blocks_and_items_name_their_field() {
        let cases = [
            (
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "x"}]}),
                "messages[0].content[0].input",
                Part::ToolCalls,
            ),
            (
                json!({"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}),
                "messages[0].content[0]",
                Part::ToolCalls,
            ),
            (
                json!({"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]}),
                "messages[0].content[0]",
                Part::ToolResult,
            ),
            (
                json!({"role": "user", "content": [{"type": "tool_result", "content": "x"}]}),
                "messages[0].content[0].tool_use_id",
                Part::ToolResult,
            ),
            (
                json!({"role": "user", "content": [{"type": "video"}]}),
                "messages[0].content[0].type",
                Part::Content,
            ),
            (
                json!({"role": "user", "content": [{"text": "no type"}]}),
                "messages[0].content[0].type",
                Part::Content,
            ),
            (
                json!({"role": "user", "content": [7]}),
                "messages[0].content[0]",
                Part::Content,
            ),
            (
                json!({"role": "user", "content": [{"type": "text", "text": 7}]}),
                "messages[0].content[0].text",
                Part::Content,
            ),
            (
                json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": "{"}),
                "messages[0].arguments",
                Part::ToolCalls,
            ),
            (
                json!({"type": "function_call_output", "output": "x"}),
                "messages[0].call_id",
                Part::ToolResult,
            ),
            (
                json!({"role": "user", "content": [{"type": "text", "text": "hi"},
                    {"type": "tool_result", "tool_use_id": "nobody", "content": "x"}]}),
                "messages[0].content[1].tool_use_id",
                Part::ToolResult,
            ),
            (
                json!({"type": "function_call_output", "call_id": "nobody", "output": "x"}),
                "messages[0].call_id",
                Part::ToolResult,
            ),
        ];
        for (message, field, part) in cases {
            let c = Conversation::from_openai("messages", &json!([message]));
            let p = c
                .problems
                .iter()
                .find(|p| p.part == part)
                .unwrap_or_else(|| panic!("{field}: {:?}", c.problems));
            assert_eq!((p.field.as_str(), p.message), (field, Some(0)));
        }
    }
}
