//! The one JSON Schema validator of assay, for live judge answers and for
//! the few-shot examples of prompt files alike.
//!
//! It covers the subset assay's output schemas use: `type` (a name or a
//! list of names), `properties`, `required`, `additionalProperties`
//! (boolean or schema), `items`, `minItems`, `maxItems`, `enum`, `const`,
//! `minimum` and `maximum`. Other keywords are ignored. Semantics follow
//! the JSON Schema specification: a number with a zero fractional part is
//! an integer (`2.0` is one), and `minimum` / `maximum` are inclusive.

use serde_json::Value;

/// Checks `value` against `schema` (the subset in the module docs). The
/// error names the JSON path of the first violation.
///
/// ```
/// use assay_core::schema::validate;
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
    if let Some(x) = value.as_f64() {
        // Inclusive bounds, as the specification has them.
        if let Some(min) = schema
            .get("minimum")
            .filter(|m| m.as_f64().is_some_and(|m| x < m))
        {
            return Err(format!("{path}: {value} is below the minimum {min}"));
        }
        if let Some(max) = schema
            .get("maximum")
            .filter(|m| m.as_f64().is_some_and(|m| x > m))
        {
            return Err(format!("{path}: {value} is above the maximum {max}"));
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

    /// Where assay's two former validators disagreed: the examples'
    /// rejected `2.0` as an integer, the live answers' ignored bounds.
    #[test]
    fn integers_by_value_and_inclusive_bounds() {
        let rating = json!({"type": "integer", "minimum": 1, "maximum": 5});
        for ok in [json!(1), json!(5), json!(2.0), json!(5.0)] {
            assert_eq!(validate(&ok, &rating), Ok(()), "{ok}");
        }
        assert_eq!(
            validate(&json!(0), &rating).unwrap_err(),
            "$: 0 is below the minimum 1"
        );
        assert_eq!(
            validate(&json!(5.5), &rating).unwrap_err(),
            "$: expected type \"integer\", found number"
        );
        assert_eq!(
            validate(&json!(6.0), &rating).unwrap_err(),
            "$: 6.0 is above the maximum 5"
        );
        let unit = json!({"type": "number", "minimum": 0, "maximum": 1});
        assert_eq!(validate(&json!(1.0), &unit), Ok(()));
        assert!(validate(&json!(1.0001), &unit).is_err());
        assert!(validate(&json!(-0.5), &unit).is_err());
    }
}
