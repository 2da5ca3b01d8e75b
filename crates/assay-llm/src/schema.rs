//! Structured output: tolerant JSON extraction and a compact validator.
//!
//! The validator covers the JSON Schema subset assay's prompts use:
//! `type` (a name or a list of names), `properties`, `required`,
//! `additionalProperties` (boolean or schema), `items`, `minItems`,
//! `maxItems`, `enum` and `const`. Other keywords are ignored, so a schema
//! using them is only partly enforced; prompt authors stay within the subset.

use serde_json::Value;

/// Finds the JSON value in a model's answer: code fences and prose around it
/// are dropped, trailing commas removed. Returns a description of the
/// failure when nothing parses.
///
/// ```
/// use assay_llm::schema::extract_json;
/// let v = extract_json("Sure! ```json\n{\"a\": [1, 2,],}\n``` Hope this helps.").unwrap();
/// assert_eq!(v, serde_json::json!({"a": [1, 2]}));
/// ```
pub fn extract_json(text: &str) -> Result<Value, String> {
    if let Ok(v) = serde_json::from_str::<Value>(text.trim()) {
        return Ok(v);
    }
    let mut first_err = None;
    // Try each opening bracket in turn: prose before the JSON may itself
    // contain a stray `{` or `[`.
    for (start, _) in text.char_indices().filter(|(_, c)| *c == '{' || *c == '[') {
        let Some(end) = balanced_end(&text[start..]) else {
            continue;
        };
        let candidate = strip_trailing_commas(&text[start..start + end]);
        match serde_json::from_str::<Value>(&candidate) {
            Ok(v) => return Ok(v),
            Err(e) => {
                first_err.get_or_insert_with(|| e.to_string());
            }
        }
    }
    Err(first_err.unwrap_or_else(|| "no JSON object or array found in the answer".to_owned()))
}

/// Byte length of the balanced `{...}` or `[...]` at the start of `s`,
/// skipping brackets inside strings.
fn balanced_end(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Drops commas that directly precede `}` or `]` (outside strings).
fn strip_trailing_commas(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// The validated JSON value of an answer: [`extract_json`], then
/// [`validate`]; the error says which step failed and why.
pub fn parse_structured(text: &str, schema: &Value) -> Result<Value, String> {
    let value = extract_json(text).map_err(|e| format!("no valid JSON found: {e}"))?;
    validate(&value, schema).map_err(|e| format!("the JSON does not satisfy the schema: {e}"))?;
    Ok(value)
}

/// Checks `value` against `schema` (the subset in the module docs). The
/// error names the JSON path of the first violation.
///
/// ```
/// use assay_llm::schema::validate;
/// use serde_json::json;
/// let schema = json!({"type": "object", "required": ["verdict"],
///     "properties": {"verdict": {"enum": ["yes", "no"]}}});
/// assert!(validate(&json!({"verdict": "yes"}), &schema).is_ok());
/// assert_eq!(validate(&json!({"verdict": "maybe"}), &schema).unwrap_err(),
///     "$.verdict: value \"maybe\" is not one of [\"yes\",\"no\"]");
/// ```
pub fn validate(value: &Value, schema: &Value) -> Result<(), String> {
    check(value, schema, &mut "$".to_owned())
}

fn type_matches(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => {
            value.as_i64().is_some()
                || value.as_u64().is_some()
                || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    }
}

fn check(value: &Value, schema: &Value, path: &mut String) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        // `true`/`false` schemas.
        return match schema {
            Value::Bool(false) => Err(format!("{path}: no value is allowed here")),
            _ => Ok(()),
        };
    };
    if let Some(t) = schema.get("type") {
        let ok = match t {
            Value::String(name) => type_matches(value, name),
            Value::Array(names) => names
                .iter()
                .filter_map(Value::as_str)
                .any(|n| type_matches(value, n)),
            _ => true,
        };
        if !ok {
            return Err(format!(
                "{path}: expected type {t}, found {}",
                kind_of(value)
            ));
        }
    }
    if let Some(c) = schema.get("const") {
        if c != value {
            return Err(format!("{path}: expected {c}, found {value}"));
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        if !allowed.contains(value) {
            return Err(format!(
                "{path}: value {value} is not one of {}",
                Value::Array(allowed.clone())
            ));
        }
    }
    if let Value::Object(map) = value {
        if let Some(Value::Array(required)) = schema.get("required") {
            if let Some(missing) = required
                .iter()
                .filter_map(Value::as_str)
                .find(|k| !map.contains_key(*k))
            {
                return Err(format!("{path}: missing required property {missing:?}"));
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, v) in map {
            let len = path.len();
            path.push('.');
            path.push_str(k);
            let result = match (
                props.and_then(|p| p.get(k)),
                schema.get("additionalProperties"),
            ) {
                (Some(sub), _) => check(v, sub, path),
                (None, Some(Value::Bool(false))) => Err(format!("{path}: property is not allowed")),
                (None, Some(extra)) => check(v, extra, path),
                (None, None) => Ok(()),
            };
            path.truncate(len);
            result?;
        }
    }
    if let Value::Array(items) = value {
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64) {
            if (items.len() as u64) < min {
                return Err(format!(
                    "{path}: {} items, at least {min} required",
                    items.len()
                ));
            }
        }
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64) {
            if items.len() as u64 > max {
                return Err(format!(
                    "{path}: {} items, at most {max} allowed",
                    items.len()
                ));
            }
        }
        if let Some(item_schema) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let result = check(item, item_schema, path);
                path.truncate(len);
                result?;
            }
        }
    }
    Ok(())
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn extraction_handles_fences_prose_and_trailing_commas() {
        assert_eq!(extract_json("{\"a\":1}").unwrap(), json!({"a": 1}));
        assert_eq!(extract_json("```\n[1,2,]\n```").unwrap(), json!([1, 2]));
        assert_eq!(
            extract_json("I think {not json} but here: {\"s\": \"a, }\", \"b\": [true,],}")
                .unwrap(),
            json!({"s": "a, }", "b": [true]})
        );
        assert_eq!(
            extract_json("{\"q\": \"say \\\"}\\\" ok\"}").unwrap(),
            json!({"q": "say \"}\" ok"})
        );
        assert!(extract_json("no json here").is_err());
        assert!(extract_json("{\"a\": 1").is_err());
    }

    fn statements_schema() -> Value {
        json!({
            "type": "object",
            "required": ["statements"],
            "additionalProperties": false,
            "properties": {
                "statements": {
                    "type": "array", "minItems": 1, "maxItems": 2,
                    "items": {"type": "object", "required": ["text", "verdict"],
                        "properties": {"text": {"type": "string"}, "verdict": {"type": "integer", "enum": [0, 1]},
                            "kind": {"const": "claim"}}}
                }
            }
        })
    }

    #[test]
    fn validator_accepts_conforming_values() {
        let v = json!({"statements": [{"text": "x", "verdict": 1, "kind": "claim"}]});
        assert_eq!(validate(&v, &statements_schema()), Ok(()));
        assert_eq!(validate(&json!(3.0), &json!({"type": "integer"})), Ok(()));
        assert_eq!(
            validate(&json!(null), &json!({"type": ["string", "null"]})),
            Ok(())
        );
    }

    #[test]
    fn validator_names_the_first_violation() {
        let s = statements_schema();
        let cases = [
            (json!([]), "$: expected type \"object\", found array"),
            (json!({}), "$: missing required property \"statements\""),
            (
                json!({"statements": [], }),
                "$.statements: 0 items, at least 1 required",
            ),
            (
                json!({"statements": [{"text": "a", "verdict": 1}, {"text": "b", "verdict": 0}, {"text": "c", "verdict": 0}]}),
                "$.statements: 3 items, at most 2 allowed",
            ),
            (
                json!({"statements": [{"text": "a", "verdict": 2}]}),
                "$.statements[0].verdict: value 2 is not one of [0,1]",
            ),
            (
                json!({"statements": [{"text": 5, "verdict": 1}]}),
                "$.statements[0].text: expected type \"string\", found number",
            ),
            (
                json!({"statements": [{"text": "a", "verdict": 1.5}]}),
                "$.statements[0].verdict: expected type \"integer\", found number",
            ),
            (
                json!({"statements": [{"text": "a", "verdict": 1, "kind": "x"}]}),
                "$.statements[0].kind: expected \"claim\", found \"x\"",
            ),
            (
                json!({"statements": [{"text": "a", "verdict": 1}], "extra": 1}),
                "$.extra: property is not allowed",
            ),
        ];
        for (value, want) in cases {
            assert_eq!(validate(&value, &s).unwrap_err(), want);
        }
        assert!(validate(
            &json!({"x": "s"}),
            &json!({"additionalProperties": {"type": "number"}})
        )
        .is_err());
    }
}
