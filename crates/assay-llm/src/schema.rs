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
    let mut first_err = None;
    for candidate in candidates(text) {
        match candidate {
            Ok(v) => return Ok(v),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or_else(|| "no JSON object or array found in the answer".to_owned()))
}

/// The JSON values an answer may hold, in order: the whole answer, else
/// each balanced `{...}` or `[...]` with trailing commas removed, an `Err`
/// for one that does not parse. Prose before the JSON may itself hold a
/// stray `{` or a citation such as `[1]`, so each opening bracket is tried
/// in turn; those inside a value already found are parts of it, not
/// answers, and are passed over.
fn candidates(text: &str) -> impl Iterator<Item = Result<Value, String>> + '_ {
    let whole = serde_json::from_str::<Value>(text.trim()).ok();
    let mut found_until = if whole.is_some() { text.len() } else { 0 };
    let brackets = text
        .char_indices()
        .filter(|(_, c)| *c == '{' || *c == '[')
        .filter_map(move |(start, _)| {
            if start < found_until {
                return None;
            }
            let end = start + balanced_end(&text[start..])?;
            let parsed = serde_json::from_str::<Value>(&strip_trailing_commas(&text[start..end]));
            if parsed.is_ok() {
                found_until = end;
            }
            Some(parsed.map_err(|e| e.to_string()))
        });
    whole.map(Ok).into_iter().chain(brackets)
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
///
/// The first value in the answer that satisfies the schema is taken, so a
/// citation like `[1]` in the prose before the answer does not hide it;
/// when none does, the error is that of the first value found.
pub fn parse_structured(text: &str, schema: &Value) -> Result<Value, String> {
    let mut first_err: Option<String> = None;
    let mut first_invalid: Option<String> = None;
    for candidate in candidates(text) {
        match candidate.map(|v| validate(&v, schema).map(|()| v)) {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) => {
                first_invalid.get_or_insert(e);
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(match (first_invalid, first_err) {
        (Some(e), _) => format!("the JSON does not satisfy the schema: {e}"),
        (None, e) => format!(
            "no valid JSON found: {}",
            e.unwrap_or_else(|| "no JSON object or array found in the answer".to_owned())
        ),
    })
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

    /// Found by the property tests: a citation before the answer was taken
    /// for the answer, which then failed the schema.
    #[test]
    fn a_citation_before_the_answer_does_not_hide_it() {
        let schema = json!({"type": "object", "required": ["verdict"]});
        assert_eq!(
            parse_structured("As the context [1] says, {\"verdict\":0}", &schema),
            Ok(json!({"verdict": 0}))
        );
        // A value inside the first one found is part of it, not an answer.
        let nested =
            json!({"type": "object", "required": ["verdict"], "additionalProperties": false});
        assert!(parse_structured("{\"x\": {\"verdict\": 1}}", &nested)
            .unwrap_err()
            .contains("$: missing required property \"verdict\""));
    }
}
