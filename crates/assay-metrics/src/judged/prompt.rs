//! Versioned prompt files: one per judge step, embedded in the binary and
//! overridable from a directory (`--prompts DIR`).
//!
//! A prompt file is JSON with `id`, `version` (integer), `instruction`,
//! `slots` (the named inputs it renders, in order), `examples` (few-shot
//! input/output pairs), `output_schema` (JSON Schema of one answer) and,
//! for the aspect prompt, `definitions` (built-in aspect texts). Its hash is
//! the SHA-256 of its canonical JSON (keys sorted, no spaces), so any edit,
//! even of an example, changes signatures and cache keys.

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// A prompt file as the code that uses it declares it: its id, its text
/// (embedded with `include_str!`), the slots the code fills, the answer
/// lists whose length the inputs fix, and the prompts that ask one item of
/// its lists at a time. The step that renders a prompt declares it, in its
/// own module; registering the metrics that use a step registers its
/// prompts.
#[derive(Debug)]
pub struct PromptDecl {
    pub name: &'static str,
    pub text: &'static str,
    pub slots: &'static [(&'static str, SlotKind)],
    pub counts: &'static [&'static str],
    /// How its lists are asked one item at a time (see
    /// [`Protocol::PerItem`]), one form per answer list; empty when they
    /// are not.
    pub per_item: &'static [ItemForm],
}

/// A prompt, by the id written in its file (`prompts/ID.json`): a handle
/// on its [`PromptDecl`]. Ids compare, order and hash by name.
///
/// ```
/// use assay_metrics::judged::steps;
/// assert_eq!(steps::FAITHFULNESS_VERDICTS.name(), "faithfulness_verdicts");
/// assert_eq!(steps::FAITHFULNESS_VERDICTS.path(), "prompts/faithfulness_verdicts.json");
/// ```
#[derive(Clone, Copy)]
pub struct PromptId(pub &'static PromptDecl);

impl PartialEq for PromptId {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for PromptId {}

impl PartialOrd for PromptId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PromptId {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl std::hash::Hash for PromptId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl fmt::Debug for PromptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PromptId({})", self.name())
    }
}

/// How one list of a list prompt is asked one item at a time: the item
/// prompt, the list slot the items come from, the text slot of the item
/// prompt that holds one of them, and the answer list the items' answers
/// form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemForm {
    pub prompt: PromptId,
    pub list: &'static str,
    pub item: &'static str,
    pub answers: &'static str,
}

/// How closed verdicts on a list of items are asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// One request judges the whole list, a reason before each verdict
    /// (the form of ragas and DeepEval; the default for remote judges).
    #[default]
    Listed,
    /// One short request per item whose answer is the verdict alone, read
    /// with its probabilities (a small model that writes a reason first
    /// tends to invent the evidence for it).
    PerItem,
    /// As [`Protocol::PerItem`], except for whether the response is
    /// grounded in the contexts (faithfulness, hallucination): that is
    /// read from how much more likely the judge finds the response's own
    /// words with the contexts than without them, and nothing is asked
    /// (see [`crate::judged::likelihood`]). In-process judges only; the
    /// default for them.
    Likelihood,
    /// As [`Protocol::PerItem`], except that closed grounding questions
    /// (a statement supported by the contexts, a context useful or
    /// contradicted, a statement matched by the reference) are answered by
    /// the trained grounding model of `assay_grounding`, toxicity and bias
    /// by a word screen, and nothing is asked for them (see
    /// [`crate::judged::grounding`], [`crate::judged::screen`]). The
    /// default of in-process judges.
    Grounding,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Listed => "listed",
            Protocol::PerItem => "per-item",
            Protocol::Likelihood => "likelihood",
            Protocol::Grounding => "grounding",
        }
    }

    /// The per-item forms `id` is asked in under this protocol (one per
    /// answer list), if any.
    pub fn item_forms(self, id: PromptId) -> Option<&'static [ItemForm]> {
        id.per_item().filter(|_| self != Protocol::Listed)
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "listed" => Ok(Protocol::Listed),
            "per-item" => Ok(Protocol::PerItem),
            "likelihood" => Ok(Protocol::Likelihood),
            "grounding" => Ok(Protocol::Grounding),
            _ => Err(format!(
                "unknown protocol '{s}' (listed, per-item, likelihood, grounding)"
            )),
        }
    }
}

/// Whether a slot holds one text or a numbered list of texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlotKind {
    Text,
    List,
}

impl PromptId {
    /// The id written in the file.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The answer lists whose length a request's inputs fix.
    pub fn counts(self) -> &'static [&'static str] {
        self.0.counts
    }

    /// The prompts that ask about one item of this prompt's lists at a
    /// time (see [`Protocol::PerItem`]), one form per answer list, if it
    /// has them.
    pub fn per_item(self) -> Option<&'static [ItemForm]> {
        Some(self.0.per_item).filter(|forms| !forms.is_empty())
    }

    /// The file's path relative to `crates/assay-metrics/` (or to a
    /// `--prompts` directory, without the `prompts/` part).
    pub fn path(self) -> String {
        format!("prompts/{}.json", self.name())
    }

    /// The slots the code fills for this prompt; a file must declare
    /// exactly these (in any order: its order is the rendering order).
    pub fn slots(self) -> &'static [(&'static str, SlotKind)] {
        self.0.slots
    }

    /// The text embedded in the binary.
    pub fn builtin_text(self) -> &'static str {
        self.0.text
    }
}

impl fmt::Display for PromptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Not a prompt id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown prompt '{0}'")]
pub struct UnknownPrompt(pub String);

/// A few-shot example: slot values in, one answer out.
#[derive(Clone, Debug, PartialEq)]
pub struct Example {
    /// Slot name -> a string (text slot) or a list of strings (list slot).
    pub input: BTreeMap<String, SlotValue>,
    pub output: Value,
}

/// The value of one slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotValue {
    Text(String),
    List(Vec<String>),
    /// An optional input the sample lacks; rendered as "(not given)".
    Absent,
}

/// A parsed, checked prompt file.
#[derive(Clone, Debug, PartialEq)]
pub struct Prompt {
    pub id: PromptId,
    pub version: u32,
    pub instruction: String,
    /// Slot names in rendering order.
    pub slots: Vec<String>,
    pub examples: Vec<Example>,
    /// JSON Schema of one answer, without item counts (rendering adds
    /// `minItems`/`maxItems` per request).
    pub output_schema: Value,
    /// Named texts the prompt refers to (the built-in aspects' definitions).
    pub definitions: BTreeMap<String, String>,
    /// Lower-case hex SHA-256 of the file's canonical JSON.
    pub hash: String,
}

/// A prompt file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{origin}: not valid JSON: {source}")]
    Json {
        origin: String,
        source: serde_json::Error,
    },
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrompt {
    id: String,
    version: u32,
    instruction: String,
    slots: Vec<RawSlot>,
    examples: Vec<RawExample>,
    output_schema: Value,
    #[serde(default)]
    definitions: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSlot {
    name: String,
    kind: SlotKind,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExample {
    input: BTreeMap<String, Value>,
    output: Value,
}

/// Where a prompt's text comes from, for error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Embedded in the binary.
    Builtin(PromptId),
    /// A file of a `--prompts` directory.
    File(PathBuf),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Builtin(id) => write!(f, "built-in {}", id.path()),
            Origin::File(path) => write!(f, "{}", path.display()),
        }
    }
}

impl Prompt {
    /// Parses and checks one prompt file's text, which must be the file of
    /// prompt `id`.
    pub fn parse(origin: &Origin, id: PromptId, text: &str) -> Result<Prompt, PromptError> {
        let origin = origin.to_string();
        let origin = origin.as_str();
        let invalid = |message: String| PromptError::Invalid {
            origin: origin.to_string(),
            message,
        };
        let value: Value = serde_json::from_str(text).map_err(|source| PromptError::Json {
            origin: origin.to_string(),
            source,
        })?;
        let raw: RawPrompt =
            serde_json::from_value(value.clone()).map_err(|source| PromptError::Json {
                origin: origin.to_string(),
                source,
            })?;
        if raw.id != id.name() {
            return Err(invalid(format!("file of '{id}' declares id '{}'", raw.id)));
        }
        if raw.version == 0 {
            return Err(invalid("version must be at least 1".into()));
        }
        if raw.instruction.trim().is_empty() {
            return Err(invalid("empty instruction".into()));
        }
        let expected = id.slots();
        let mut names = Vec::with_capacity(raw.slots.len());
        for slot in &raw.slots {
            match expected.iter().find(|(n, _)| *n == slot.name) {
                Some((_, kind)) if *kind == slot.kind => {}
                Some(_) => return Err(invalid(format!("slot '{}' has the wrong kind", slot.name))),
                None => {
                    return Err(invalid(format!(
                        "unknown slot '{}' (this prompt's slots: {})",
                        slot.name,
                        slot_names(expected)
                    )))
                }
            }
            if names.contains(&slot.name) {
                return Err(invalid(format!("slot '{}' declared twice", slot.name)));
            }
            names.push(slot.name.clone());
        }
        if names.len() != expected.len() {
            return Err(invalid(format!(
                "declares {} slots, expected all of: {}",
                names.len(),
                slot_names(expected)
            )));
        }
        crate::judged::schema::check_subset(&raw.output_schema)
            .map_err(|e| invalid(format!("output_schema: {e}")))?;
        let mut examples = Vec::with_capacity(raw.examples.len());
        for (i, ex) in raw.examples.into_iter().enumerate() {
            let mut input = BTreeMap::new();
            for (name, kind) in expected {
                let value = match (kind, ex.input.get(*name)) {
                    (_, None) | (_, Some(Value::Null)) => SlotValue::Absent,
                    (SlotKind::Text, Some(Value::String(s))) => SlotValue::Text(s.clone()),
                    (SlotKind::List, Some(Value::Array(items))) => SlotValue::List(
                        items
                            .iter()
                            .map(|v| v.as_str().map(str::to_string))
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| {
                                invalid(format!("example {i}: slot '{name}' must hold strings"))
                            })?,
                    ),
                    _ => {
                        return Err(invalid(format!(
                            "example {i}: slot '{name}' has the wrong type"
                        )))
                    }
                };
                input.insert(name.to_string(), value);
            }
            if let Some(extra) = ex
                .input
                .keys()
                .find(|k| !expected.iter().any(|(n, _)| n == k))
            {
                return Err(invalid(format!("example {i}: unknown slot '{extra}'")));
            }
            assay_core::schema::validate(&ex.output, &raw.output_schema).map_err(|e| {
                invalid(format!("example {i}: output does not fit the schema: {e}"))
            })?;
            examples.push(Example {
                input,
                output: ex.output,
            });
        }
        Ok(Prompt {
            id,
            version: raw.version,
            instruction: raw.instruction,
            slots: names,
            examples,
            output_schema: raw.output_schema,
            definitions: raw.definitions,
            hash: sha256_hex(canonical_json(&value).as_bytes()),
        })
    }
}

fn slot_names(slots: &[(&str, SlotKind)]) -> String {
    slots.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// Every prompt a run uses, one per [`PromptId`], and the protocol that
/// picks between a list prompt and its per-item form. The built-in set and
/// a `--prompts` directory's are made by [`PromptSet::builtin`] and
/// [`PromptSet::load_dir`], which know every registered prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptSet {
    /// In registration order, one per id.
    prompts: Vec<Prompt>,
    protocol: Protocol,
    /// The grounding model that answers the closed grounding questions
    /// under any protocol, where one is given.
    grounding: Option<GroundingModel>,
    /// The lexical verdict's combiner, where an alignment replaces the
    /// built-in one.
    combiner: Option<Combiner>,
    /// The language the lexical verdict reads every row in, where one is
    /// given (`--language`); else each row's own.
    language: Option<assay_grounding::words::Lexicon>,
}

/// A refitted combiner of the lexical grounding verdict (an alignment
/// file's), named by the file's hash, with the file's demonstrations for
/// LLM judges.
#[derive(Clone, Debug)]
pub struct Combiner {
    pub model: std::sync::Arc<assay_grounding::Model>,
    pub identity: String,
    pub demonstrations: std::sync::Arc<assay_grounding::demonstrations::Pool>,
}

impl PartialEq for Combiner {
    fn eq(&self, other: &Combiner) -> bool {
        self.identity == other.identity
    }
}

/// A grounding model read from a folder, shared by the runs that ask it;
/// two are the same model when their identities are.
#[derive(Clone)]
pub struct GroundingModel(pub std::sync::Arc<dyn assay_grounding::Verifier>);

impl std::fmt::Debug for GroundingModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.identity())
    }
}

impl PartialEq for GroundingModel {
    fn eq(&self, other: &GroundingModel) -> bool {
        self.0.identity() == other.0.identity()
    }
}

impl PromptSet {
    /// The set of `prompts`, one per id, in the order given.
    pub(crate) fn new(prompts: Vec<Prompt>) -> PromptSet {
        PromptSet {
            prompts,
            protocol: Protocol::default(),
            grounding: None,
            combiner: None,
            language: None,
        }
    }

    /// Puts `prompt` in place of the prompt of its id.
    pub(crate) fn replace(&mut self, prompt: Prompt) {
        if let Some(slot) = self.prompts.iter_mut().find(|p| p.id == prompt.id) {
            *slot = prompt;
        }
    }

    /// The same prompts asked under `protocol`.
    pub fn with_protocol(mut self, protocol: Protocol) -> PromptSet {
        self.protocol = protocol;
        self
    }

    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The same prompts with `model` answering every closed grounding
    /// question, whatever the protocol.
    pub fn with_grounding(mut self, model: GroundingModel) -> PromptSet {
        self.grounding = Some(model);
        self
    }

    /// The grounding model given, if any.
    pub fn grounding(&self) -> Option<&GroundingModel> {
        self.grounding.as_ref()
    }

    /// The same prompts with `combiner` in place of the lexical grounding
    /// verdict's built-in one.
    pub fn with_combiner(mut self, combiner: Combiner) -> PromptSet {
        self.combiner = Some(combiner);
        self
    }

    /// Whether the grounding verdicts are the built-in lexical model's
    /// (no grounding model given, no alignment): the one the committed
    /// agreement figures were measured with.
    pub fn builtin_grounding(&self) -> bool {
        self.grounding.is_none() && self.combiner.is_none()
    }

    /// The lexical grounding verdict's combiner and its identity: an
    /// alignment's, else the built-in model.
    pub fn combiner(&self) -> (&assay_grounding::Model, &str) {
        match &self.combiner {
            Some(c) => (&c.model, &c.identity),
            None => (
                assay_grounding::Model::builtin(),
                assay_grounding::Model::builtin_identity(),
            ),
        }
    }

    /// The same prompts with every row read in the language of `lexicon`.
    pub fn with_language(mut self, lexicon: assay_grounding::words::Lexicon) -> PromptSet {
        self.language = Some(lexicon);
        self
    }

    /// The language given for every row, if any.
    pub fn language(&self) -> Option<assay_grounding::words::Lexicon> {
        self.language
    }

    /// An alignment's demonstrations and its identity, where it has any.
    pub fn demonstrations(&self) -> Option<(&assay_grounding::demonstrations::Pool, &str)> {
        self.combiner
            .as_ref()
            .filter(|c| !c.demonstrations.is_empty())
            .map(|c| (c.demonstrations.as_ref(), c.identity.as_str()))
    }

    /// The per-item form `id` is asked in under this set's protocol, if
    /// any.
    pub fn item_forms(&self, id: PromptId) -> Option<&'static [ItemForm]> {
        self.protocol.item_forms(id)
    }

    /// The prompt of `id`.
    pub fn get(&self, id: PromptId) -> &Prompt {
        self.prompts
            .iter()
            .find(|p| p.id == id)
            .expect("a prompt set holds every registered prompt (a guard test checks)")
    }

    /// Every prompt, in [`PromptId::all`] order.
    pub fn iter(&self) -> impl Iterator<Item = &Prompt> {
        self.prompts.iter()
    }
}

/// JSON with object keys sorted and no insignificant whitespace: the same
/// value always gives the same bytes, whatever the file's layout.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    assay_core::hash::hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_ignores_layout_and_key_order() {
        let a: Value =
            serde_json::from_str("{ \"b\": [1, {\"y\":2,\"x\":\"é\"}],\n \"a\": null }").unwrap();
        let b = json!({"a": null, "b": [1, {"x": "é", "y": 2}]});
        assert_eq!(canonical_json(&a), r#"{"a":null,"b":[1,{"x":"é","y":2}]}"#);
        assert_eq!(canonical_json(&a), canonical_json(&b));
    }
}
