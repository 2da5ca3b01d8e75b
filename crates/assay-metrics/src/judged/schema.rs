//! The subset of JSON Schema our output schemas use, small enough for
//! every schema-following server and constrained decoder: `type` (object,
//! array, string, integer, number, boolean), `properties`, `required`,
//! `additionalProperties: false`, `items`, `minItems`, `maxItems`, `enum`
//! (strings), `minimum`, `maximum`, `description`. Values are checked
//! against such schemas by [`assay_core::schema::validate`], the one
//! validator for live answers and few-shot examples alike.

use serde_json::{Map, Value};

const KEYWORDS: [&str; 11] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "enum",
    "minimum",
    "maximum",
    "description",
];

/// Checks that `schema` uses only the subset, consistently (every object
/// lists its properties and requires them all; every array has `items`).
pub fn check_subset(schema: &Value) -> Result<(), String> {
    check_at(schema, "$")
}

fn check_at(schema: &Value, at: &str) -> Result<(), String> {
    let Value::Object(map) = schema else {
        return Err(format!("{at}: a schema must be an object"));
    };
    if let Some(k) = map.keys().find(|k| !KEYWORDS.contains(&k.as_str())) {
        return Err(format!("{at}: keyword '{k}' is outside the subset"));
    }
    let ty = map
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{at}: missing 'type'"))?;
    let allowed: &[&str] = match ty {
        "object" => &["properties", "required", "additionalProperties"],
        "array" => &["items", "minItems", "maxItems"],
        "string" => &["enum"],
        "integer" | "number" => &["minimum", "maximum"],
        "boolean" => &[],
        other => return Err(format!("{at}: type '{other}' is outside the subset")),
    };
    if let Some(k) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "type" | "description") && !allowed.contains(&k.as_str()))
    {
        return Err(format!("{at}: '{k}' does not apply to type '{ty}'"));
    }
    match ty {
        "object" => check_object(map, at),
        "array" => {
            let items = map
                .get("items")
                .ok_or_else(|| format!("{at}: array without 'items'"))?;
            for k in ["minItems", "maxItems"] {
                if map.get(k).is_some_and(|v| v.as_u64().is_none()) {
                    return Err(format!("{at}: '{k}' must be a non-negative integer"));
                }
            }
            check_at(items, &format!("{at}[]"))
        }
        "string" => match map.get("enum") {
            Some(Value::Array(values))
                if !values.is_empty() && values.iter().all(Value::is_string) =>
            {
                Ok(())
            }
            Some(_) => Err(format!("{at}: 'enum' must be a non-empty list of strings")),
            None => Ok(()),
        },
        "integer" | "number" => {
            for k in ["minimum", "maximum"] {
                if map.get(k).is_some_and(|v| !v.is_number()) {
                    return Err(format!("{at}: '{k}' must be a number"));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_object(map: &Map<String, Value>, at: &str) -> Result<(), String> {
    let Some(Value::Object(props)) = map.get("properties") else {
        return Err(format!("{at}: object without 'properties'"));
    };
    if map.get("additionalProperties") != Some(&Value::Bool(false)) {
        return Err(format!(
            "{at}: objects must set additionalProperties: false"
        ));
    }
    let required: Vec<&str> = match map.get("required") {
        Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
        _ => return Err(format!("{at}: object without 'required'")),
    };
    let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
    let mut req = required.clone();
    names.sort_unstable();
    req.sort_unstable();
    if names != req {
        return Err(format!("{at}: 'required' must list every property"));
    }
    for (name, sub) in props {
        check_at(sub, &format!("{at}.{name}"))?;
    }
    Ok(())
}

/// Sets `minItems = maxItems = n` on the array at `path` (a chain of
/// property names from the root object); a path that names no array
/// leaves the schema unchanged.
pub fn with_exact_items(mut schema: Value, path: &[&str], n: usize) -> Value {
    let mut node = &mut schema;
    for name in path {
        match node.get_mut("properties").and_then(|p| p.get_mut(*name)) {
            Some(next) => node = next,
            None => return schema,
        }
    }
    if let Some(obj) = node.as_object_mut() {
        obj.insert("minItems".into(), Value::from(n));
        obj.insert("maxItems".into(), Value::from(n));
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use assay_core::schema::validate;
    use serde_json::json;

    fn verdicts() -> Value {
        json!({"type": "object", "additionalProperties": false, "required": ["verdicts"],
               "properties": {"verdicts": {"type": "array", "items": {"type": "string", "enum": ["yes", "no"]}}}})
    }

    #[test]
    fn subset_accepts_ours_and_rejects_the_rest() {
        assert_eq!(check_subset(&verdicts()), Ok(()));
        let mut loose = verdicts();
        loose["additionalProperties"] = json!(true);
        assert!(check_subset(&loose).is_err());
        let mut other = verdicts();
        other["properties"]["verdicts"]["pattern"] = json!("x");
        assert!(check_subset(&other).unwrap_err().contains("pattern"));
    }

    #[test]
    fn exact_items_are_enforced() {
        let s = with_exact_items(verdicts(), &["verdicts"], 2);
        assert_eq!(s["properties"]["verdicts"]["maxItems"], json!(2));
        assert!(validate(&json!({"verdicts": ["yes", "no"]}), &s).is_ok());
        assert!(validate(&json!({"verdicts": ["yes"]}), &s).is_err());
        assert!(validate(&json!({"verdicts": ["yes", "maybe"]}), &s).is_err());
        assert!(validate(&json!({"verdicts": ["yes", "no"], "x": 1}), &s).is_err());
    }
}
