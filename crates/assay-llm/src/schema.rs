//! Structured output: tolerant JSON extraction, then validation by
//! assay's one JSON Schema validator ([`assay_core::schema::validate`]).

pub use assay_core::schema::validate;
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

    #[test]
    fn parse_structured_validates_what_it_extracts() {
        let schema = json!({"type": "object", "required": ["n"], "additionalProperties": false,
            "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 5}}});
        assert_eq!(
            parse_structured("n: {\"n\": 5.0}", &schema),
            Ok(json!({"n": 5.0}))
        );
        assert!(parse_structured("{\"n\": 6}", &schema)
            .unwrap_err()
            .contains("above the maximum"));
    }
}
