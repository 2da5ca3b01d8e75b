//! Prompt files in another language, written by the judge: the request
//! that asks it to translate one prompt file's instruction, examples and
//! definitions (as ragas' `adapt_prompts` does), and the check that makes
//! its answer a prompt file again. I/O (the judge, the folder) is the
//! caller's: `assay prompts adapt` drives it.
//!
//! What may change is what [`crate::judged::registry`]'s `load_dir` lets a
//! prompt file change: the instruction, the examples' texts and the
//! definitions. The answer must keep the document's shape: the same keys,
//! as many list items, the same numbers, and every label the output
//! schema allows (`yes`, `no`, `idk`) where it was, so that the examples
//! still teach the answers the code reads.
//!
//! ```
//! use assay_metrics::judged::adapt::{adapted, request};
//! use assay_metrics::judged::steps::FAITHFULNESS_VERDICTS;
//! let original = FAITHFULNESS_VERDICTS.builtin_text();
//! let asked = request(original, "German").unwrap();
//! assert!(asked.system.contains("German"));
//! // The document unchanged is the same file in English, and no German one.
//! let document: serde_json::Value = serde_json::from_str(&asked.user).unwrap();
//! let text = adapted(FAITHFULNESS_VERDICTS, original, &document, "English").unwrap();
//! let again: serde_json::Value = serde_json::from_str(&text).unwrap();
//! assert_eq!(again, serde_json::from_str::<serde_json::Value>(original).unwrap());
//! assert_eq!(
//!     adapted(FAITHFULNESS_VERDICTS, original, &document, "German").unwrap_err(),
//!     "4 of its 4 texts read as another language than German, e.g. English: \"For each statement, in the order given, decide from the cont\""
//! );
//! ```

use crate::judged::prompt::{Origin, Prompt, PromptId};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// The version of the translation request, in cache keys: a change to
/// [`INSTRUCTION`] asks again.
pub const VERSION: u32 = 1;

/// What the judge is told; `{language}` is the target language's name.
pub const INSTRUCTION: &str = "You translate the prompt of an evaluation judge into {language}. \
The user message is a JSON document: the prompt's instruction, its worked examples (inputs and \
answers) and its definitions. Translate every natural-language text in it into {language}: the \
instruction, the example texts, statements, questions and reasons. Keep unchanged: every JSON key, \
every label the judge answers with (yes, no, idk and the like), numbers, and the names of people, \
places and works that have no usual {language} form. Keep every list the same length and in the \
same order. Answer with the translated JSON document only.";

/// One translation request: the system and user messages and the schema
/// the answer must fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub system: String,
    /// The document to translate, as JSON text.
    pub user: String,
    pub schema: Value,
}

/// The request that translates the prompt file `text` into `language`
/// (an English name: "German").
pub fn request(text: &str, language: &str) -> Result<Request, String> {
    let file: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let document = document(&file)?;
    let labels = labels(&file["output_schema"]);
    Ok(Request {
        system: INSTRUCTION.replace("{language}", language),
        user: serde_json::to_string_pretty(&document).unwrap_or_default(),
        schema: shape(&document, &labels),
    })
}

/// The prompt file `text` of `id` with the translated `answer` in place of
/// its texts, checked as `--prompts` will read it; or why the answer
/// cannot be one. `language` (an English name) is checked: the texts
/// must read as that language, and the instruction must keep a fair
/// share of its length, so that a judge that answers a word, or leaves
/// the texts (or some of them) in English, is caught.
pub fn adapted(id: PromptId, text: &str, answer: &Value, language: &str) -> Result<String, String> {
    let mut file: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let original = document(&file)?;
    let labels = labels(&file["output_schema"]);
    same_shape(&original, answer, &labels, "$")?;
    let chars = |v: &Value| v.as_str().map_or(0, |s| s.chars().count());
    let (before, after) = (
        chars(&original["instruction"]),
        chars(&answer["instruction"]),
    );
    if after * 3 < before {
        return Err(format!(
            "$.instruction: {after} characters for {before}: not a translation"
        ));
    }
    let mut texts = Vec::new();
    strings(answer, &labels, &mut texts);
    // Each text the detector is sure of (a few words are not enough to
    // tell), at least four in five of them in the language.
    let read: Vec<(String, &str)> = texts
        .iter()
        .filter_map(|t| assay_grounding::language::detected(&[t]).map(|l| (l, *t)))
        .collect();
    let wrong: Vec<&(String, &str)> = read.iter().filter(|(l, _)| l != language).collect();
    if let Some((other, text)) = wrong.first().filter(|_| wrong.len() * 5 > read.len()) {
        let excerpt: String = text.chars().take(60).collect();
        return Err(format!(
            "{} of its {} texts read as another language than {language}, e.g. {other}: \"{excerpt}\"",
            wrong.len(),
            read.len()
        ));
    }
    file["instruction"] = answer["instruction"].clone();
    if let Some(examples) = answer.get("examples").and_then(Value::as_array) {
        for (i, example) in examples.iter().enumerate() {
            file["examples"][i]["input"] = example["input"].clone();
            file["examples"][i]["output"] = example["output"].clone();
        }
    }
    if let Some(definitions) = answer.get("definitions") {
        file["definitions"] = definitions.clone();
    }
    let mut out = serde_json::to_string_pretty(&file).unwrap_or_default();
    out.push('\n');
    Prompt::parse(&Origin::Builtin(id), id, &out).map_err(|e| e.to_string())?;
    Ok(out)
}

/// The texts of a prompt file that a translation changes.
fn document(file: &Value) -> Result<Value, String> {
    let instruction = file
        .get("instruction")
        .and_then(Value::as_str)
        .ok_or("no instruction")?;
    let examples: Vec<Value> = file
        .get("examples")
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .map(|e| json!({"input": e["input"], "output": e["output"]}))
                .collect()
        })
        .unwrap_or_default();
    let mut document = Map::new();
    document.insert("instruction".into(), instruction.into());
    if !examples.is_empty() {
        document.insert("examples".into(), examples.into());
    }
    if let Some(d) = file
        .get("definitions")
        .filter(|d| d.as_object().is_some_and(|d| !d.is_empty()))
    {
        document.insert("definitions".into(), d.clone());
    }
    Ok(Value::Object(document))
}

/// The texts of `v` that are not labels.
fn strings<'v>(v: &'v Value, labels: &BTreeSet<String>, out: &mut Vec<&'v str>) {
    match v {
        Value::Object(m) => m.values().for_each(|v| strings(v, labels, out)),
        Value::Array(a) => a.iter().for_each(|v| strings(v, labels, out)),
        Value::String(s) if !labels.contains(s) => out.push(s),
        _ => {}
    }
}

/// Every string an output schema allows by name (`enum`): the labels a
/// translation keeps.
fn labels(schema: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if let Some(Value::Array(values)) = map.get("enum") {
                    out.extend(values.iter().filter_map(Value::as_str).map(String::from));
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    out
}

/// The schema of every document shaped like `v`: its keys, its lists'
/// lengths, its labels; any text where it has a text.
fn shape(v: &Value, labels: &BTreeSet<String>) -> Value {
    match v {
        Value::Object(map) => json!({
            "type": "object",
            "properties": map.iter().map(|(k, v)| (k.clone(), shape(v, labels))).collect::<Map<_, _>>(),
            "required": map.keys().collect::<Vec<_>>(),
            "additionalProperties": false,
        }),
        // The items of one list differ (an example without a question, a
        // verdict of another label): their shapes merged.
        Value::Array(items) => json!({
            "type": "array",
            "minItems": items.len(),
            "maxItems": items.len(),
            "items": items
                .iter()
                .map(|item| shape(item, labels))
                .reduce(merge)
                .unwrap_or(json!({"type": "string"})),
        }),
        Value::String(s) if labels.contains(s) => json!({"type": "string", "enum": [s]}),
        Value::String(_) => json!({"type": "string"}),
        Value::Number(_) if v.as_i64().is_some() => json!({"type": "integer"}),
        Value::Number(_) => json!({"type": "number"}),
        Value::Bool(_) => json!({"type": "boolean"}),
        Value::Null => json!({"type": "null"}),
    }
}

/// A schema that [`shape`]'s `a` and `b` both satisfy: either type, the
/// keys of either (those of both required), either's labels.
fn merge(a: Value, b: Value) -> Value {
    let types = |s: &Value| -> Vec<String> {
        match &s["type"] {
            Value::String(t) => vec![t.clone()],
            Value::Array(ts) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect(),
            _ => Vec::new(),
        }
    };
    let mut all = types(&a);
    all.extend(types(&b));
    all.sort();
    all.dedup();
    let mut out = Map::new();
    out.insert(
        "type".into(),
        match all.as_slice() {
            [one] => one.clone().into(),
            _ => all.iter().cloned().collect(),
        },
    );
    let (pa, pb) = (&a["properties"], &b["properties"]);
    if pa.is_object() || pb.is_object() {
        let mut properties = pa.as_object().cloned().unwrap_or_default();
        for (k, v) in pb.as_object().cloned().unwrap_or_default() {
            let merged = match properties.remove(&k) {
                Some(mine) => merge(mine, v),
                None => v,
            };
            properties.insert(k, merged);
        }
        let required = |s: &Value| -> BTreeSet<String> {
            s["required"]
                .as_array()
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default()
        };
        let both: Vec<String> = match (pa.is_object(), pb.is_object()) {
            (true, true) => required(&a).intersection(&required(&b)).cloned().collect(),
            (true, false) => required(&a).into_iter().collect(),
            _ => required(&b).into_iter().collect(),
        };
        out.insert("properties".into(), Value::Object(properties));
        out.insert("required".into(), both.into());
        out.insert("additionalProperties".into(), false.into());
    }
    let items = match (a.get("items"), b.get("items")) {
        (Some(x), Some(y)) => Some(merge(x.clone(), y.clone())),
        (x, y) => x.or(y).cloned(),
    };
    if let Some(items) = items {
        let bound = |k: &str, pick: fn(u64, u64) -> u64| match (a[k].as_u64(), b[k].as_u64()) {
            (Some(x), Some(y)) => Some(pick(x, y)),
            (x, y) => x.or(y),
        };
        out.insert("items".into(), items);
        if let Some(n) = bound("minItems", u64::min) {
            out.insert("minItems".into(), n.into());
        }
        if let Some(n) = bound("maxItems", u64::max) {
            out.insert("maxItems".into(), n.into());
        }
    }
    if let (Some(Value::Array(x)), Some(Value::Array(y))) = (a.get("enum"), b.get("enum")) {
        let mut labels: Vec<Value> = x.clone();
        labels.extend(y.iter().filter(|v| !x.contains(v)).cloned());
        out.insert("enum".into(), labels.into());
    }
    Value::Object(out)
}

/// Whether `got` has the shape of `want`: the same keys, as many items,
/// equal numbers and labels, a text where it had a text.
fn same_shape(
    want: &Value,
    got: &Value,
    labels: &BTreeSet<String>,
    at: &str,
) -> Result<(), String> {
    match (want, got) {
        (Value::Object(a), Value::Object(b)) => {
            let (ka, kb): (Vec<&String>, Vec<&String>) = (a.keys().collect(), b.keys().collect());
            let (sa, sb): (BTreeSet<_>, BTreeSet<_>) =
                (ka.into_iter().collect(), kb.into_iter().collect());
            if sa != sb {
                return Err(format!("{at}: keys {sb:?}, expected {sa:?}"));
            }
            a.iter()
                .try_for_each(|(k, v)| same_shape(v, &b[k], labels, &format!("{at}.{k}")))
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Err(format!("{at}: {} items, expected {}", b.len(), a.len()));
            }
            a.iter()
                .zip(b)
                .enumerate()
                .try_for_each(|(i, (x, y))| same_shape(x, y, labels, &format!("{at}[{i}]")))
        }
        (Value::String(a), Value::String(b)) => {
            if labels.contains(a) && a != b {
                return Err(format!("{at}: the label {a:?} became {b:?}"));
            }
            if b.trim().is_empty() && !a.trim().is_empty() {
                return Err(format!("{at}: empty"));
            }
            Ok(())
        }
        (a, b) if a == b => Ok(()),
        (a, b) => Err(format!("{at}: {b}, expected {a}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judged::steps::FAITHFULNESS_VERDICTS;

    const GERMAN: &str =
        "Die Brücke über den Fluss wurde im Jahr 1932 eröffnet und ist bis heute offen. ";

    /// Every text of `v` "in German": German sentences of about its
    /// length, labels kept.
    fn translated(v: &Value, labels: &BTreeSet<String>) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), translated(v, labels)))
                    .collect(),
            ),
            Value::Array(a) => a.iter().map(|v| translated(v, labels)).collect(),
            Value::String(s) if labels.contains(s) => v.clone(),
            Value::String(s) => GERMAN.repeat(s.len() / GERMAN.len() + 1).into(),
            other => other.clone(),
        }
    }

    #[test]
    fn a_translation_keeps_keys_lists_and_labels_and_reads_as_a_prompt() {
        let original = FAITHFULNESS_VERDICTS.builtin_text();
        let asked = request(original, "German").unwrap();
        let document: Value = serde_json::from_str(&asked.user).unwrap();
        let file: Value = serde_json::from_str(original).unwrap();
        let labels = labels(&file["output_schema"]);
        assert!(
            labels.contains("yes") && labels.contains("no"),
            "{labels:?}"
        );
        let answer = translated(&document, &labels);
        assay_core::schema::validate(&answer, &asked.schema).unwrap();
        let text = adapted(FAITHFULNESS_VERDICTS, original, &answer, "German").unwrap();
        let prompt = Prompt::parse(
            &Origin::Builtin(FAITHFULNESS_VERDICTS),
            FAITHFULNESS_VERDICTS,
            &text,
        )
        .unwrap();
        assert!(prompt.instruction.starts_with(GERMAN));
        let before = Prompt::parse(
            &Origin::Builtin(FAITHFULNESS_VERDICTS),
            FAITHFULNESS_VERDICTS,
            original,
        )
        .unwrap();
        assert_eq!(prompt.output_schema, before.output_schema);
        assert_eq!(prompt.examples.len(), before.examples.len());
        assert_ne!(prompt.hash, before.hash);
    }

    #[test]
    fn every_prompt_unchanged_fits_its_request_and_reads_back_the_same() {
        for id in PromptId::all() {
            let original = id.builtin_text();
            let asked = request(original, "German").unwrap();
            let document: Value = serde_json::from_str(&asked.user).unwrap();
            assay_core::schema::validate(&document, &asked.schema)
                .unwrap_or_else(|e| panic!("{id}: {e}"));
            let file: Value = serde_json::from_str(original).unwrap();
            let labels = labels(&file["output_schema"]);
            assay_core::schema::validate(&translated(&document, &labels), &asked.schema)
                .unwrap_or_else(|e| panic!("{id}: {e}"));
            let again: Value =
                serde_json::from_str(&adapted(id, original, &document, "English").unwrap())
                    .unwrap();
            assert_eq!(again, file, "{id}");
        }
    }

    #[test]
    fn a_half_translation_or_a_word_for_the_instruction_is_refused() {
        let original = FAITHFULNESS_VERDICTS.builtin_text();
        let document: Value =
            serde_json::from_str(&request(original, "German").unwrap().user).unwrap();
        let mut half = document.clone();
        half["instruction"] = GERMAN.repeat(6).into();
        // The instruction German, the examples English.
        let e = adapted(FAITHFULNESS_VERDICTS, original, &half, "German").unwrap_err();
        assert!(e.starts_with("3 of its 4 texts read as another language than German, e.g. English: \"Marie Curie"), "{e}");
        let labels = labels(&serde_json::from_str::<Value>(original).unwrap()["output_schema"]);
        let mut word = translated(&document, &labels);
        word["instruction"] = "Ja".into();
        let e = adapted(FAITHFULNESS_VERDICTS, original, &word, "German").unwrap_err();
        assert!(e.starts_with("$.instruction: 2 characters for "), "{e}");
        let whole = translated(&document, &labels);
        let e = adapted(FAITHFULNESS_VERDICTS, original, &whole, "French").unwrap_err();
        assert!(
            e.starts_with(
                "9 of its 9 texts read as another language than French, e.g. German: \"Die Br"
            ),
            "{e}"
        );
    }

    #[test]
    fn an_answer_that_changes_the_shape_or_a_label_is_refused() {
        let original = FAITHFULNESS_VERDICTS.builtin_text();
        let document: Value =
            serde_json::from_str(&request(original, "German").unwrap().user).unwrap();
        let mut fewer = document.clone();
        fewer["examples"][0]["input"]["statements"]
            .as_array_mut()
            .unwrap()
            .pop();
        let e = adapted(FAITHFULNESS_VERDICTS, original, &fewer, "German").unwrap_err();
        assert!(e.contains("$.examples[0].input.statements:"), "{e}");
        let mut relabelled = document.clone();
        relabelled["examples"][0]["output"]["verdicts"][0]["verdict"] = "ja".into();
        let e = adapted(FAITHFULNESS_VERDICTS, original, &relabelled, "German").unwrap_err();
        assert!(
            e.contains("the label \"yes\" became \"ja\"") || e.contains("became \"ja\""),
            "{e}"
        );
        let mut renamed = document.clone();
        let instruction = renamed
            .as_object_mut()
            .unwrap()
            .remove("instruction")
            .unwrap();
        renamed["anweisung"] = instruction;
        assert!(adapted(FAITHFULNESS_VERDICTS, original, &renamed, "German")
            .unwrap_err()
            .contains("keys"));
    }
}
