//! JSON Schema (assay's subset) to a llama.cpp GBNF grammar.
//!
//! The grammar accepts compact JSON only (no insignificant whitespace), so
//! a greedy decoder spends no tokens on layout and the position of every
//! value in the output is easy to follow (see [`value_schema_at`]).
//!
//! Every object is written with *all* of its declared properties: the
//! `required` ones first, in the order of the `required` array (prompt
//! authors use that order to make the model reason before it decides),
//! then the others in name order. Writing an optional property is always
//! valid, and it keeps the grammar free of the combinatorics of optional
//! members. No undeclared property is ever written, so
//! `additionalProperties: false` holds by construction.
//!
//! Supported keywords: `type` (a name or a list), `properties`, `required`,
//! `items`, `minItems`, `maxItems`, `enum`, `const`, and `minimum` with
//! `maximum` on an integer spanning at most [`MAX_INT_CHOICES`] values (a
//! rating scale: written as the closed choice of its values). A schema
//! with none of them accepts any JSON value.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::Error;

/// The most values an integer range may span to be decoded as a closed
/// choice (so that a 1-5 rating gets its probabilities); a wider range is
/// an open integer.
pub const MAX_INT_CHOICES: i64 = 16;

/// Nesting depth beyond which a schema is refused (it is surely a mistake,
/// and the grammar would be unbounded in size).
const MAX_DEPTH: usize = 32;

/// A GBNF grammar whose start rule is `root`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grammar {
    text: String,
}

impl Grammar {
    /// The grammar text (GBNF).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The name of the start rule.
    pub const ROOT: &'static str = "root";
}

/// Builds the grammar of the JSON values that satisfy `schema`.
///
/// ```
/// let g = assay_local::grammar::schema_to_grammar(&serde_json::json!({"enum": ["yes", "no"]})).unwrap();
/// assert!(g.as_str().starts_with("root ::= "));
/// ```
pub fn schema_to_grammar(schema: &Value) -> Result<Grammar, Error> {
    let mut b = Builder {
        rules: Vec::new(),
        needs_string: false,
        needs_any: false,
    };
    let root = b.value(schema, 0)?;
    let mut text = format!("root ::= {root}\n");
    for (name, body) in &b.rules {
        let _ = writeln!(text, "{name} ::= {body}");
    }
    if b.needs_string || b.needs_any {
        text.push_str(STRING_RULES);
    }
    if b.needs_any {
        text.push_str(ANY_RULES);
    }
    Ok(Grammar { text })
}

/// Characters of a JSON string, escapes included; shared by every string.
/// A `\u` escape of a UTF-16 surrogate comes in a pair, high then low: a
/// lone one is grammatical JSON text that no parser reads as a string.
const STRING_RULES: &str = r#"jstring ::= "\"" jchar* "\""
jchar ::= [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" jbmp | "u" [dD] [89abAB] jhex jhex "\\u" [dD] [c-fC-F] jhex jhex)
jbmp ::= [0-9a-cA-Ce-fE-F] jhex jhex jhex | [dD] [0-7] jhex jhex
jhex ::= [0-9a-fA-F]
jint ::= "-"? ("0" | [1-9] [0-9]{0,17})
jnum ::= jint ("." [0-9]{1,17})? ([eE] [-+]? [0-9]{1,2})?
"#;

/// Any JSON value, for schemas that do not constrain it.
const ANY_RULES: &str = r#"jany ::= jstring | jnum | "true" | "false" | "null" | jarr | jobj
jarr ::= "[" (jany ("," jany)*)? "]"
jobj ::= "{" (jstring ":" jany ("," jstring ":" jany)*)? "}"
"#;

struct Builder {
    rules: Vec<(String, String)>,
    needs_string: bool,
    needs_any: bool,
}

impl Builder {
    /// Adds a named rule and returns its name.
    fn rule(&mut self, body: String) -> String {
        let name = format!("r{}", self.rules.len());
        self.rules.push((name.clone(), body));
        name
    }

    /// The grammar expression for one value of `schema`.
    fn value(&mut self, schema: &Value, depth: usize) -> Result<String, Error> {
        if depth > MAX_DEPTH {
            return Err(Error::Schema(format!(
                "schema nested deeper than {MAX_DEPTH} levels"
            )));
        }
        let obj = match schema {
            Value::Bool(true) => return Ok(self.any()),
            Value::Object(o) => o,
            other => return Err(Error::Schema(format!("not a schema: {other}"))),
        };
        if let Some(c) = obj.get("const") {
            return Ok(literal(c));
        }
        if let Some(e) = obj.get("enum") {
            let Value::Array(choices) = e else {
                return Err(Error::Schema("`enum` must be an array".into()));
            };
            if choices.is_empty() {
                return Err(Error::Schema("`enum` has no values".into()));
            }
            let alts: Vec<String> = choices.iter().map(literal).collect();
            return Ok(format!("({})", alts.join(" | ")));
        }
        let types: Vec<&str> = match obj.get("type") {
            None => {
                if obj.contains_key("properties") {
                    vec!["object"]
                } else if obj.contains_key("items") {
                    vec!["array"]
                } else {
                    return Ok(self.any());
                }
            }
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts
                .iter()
                .map(|t| {
                    t.as_str()
                        .ok_or_else(|| Error::Schema(format!("`type` entry {t} is not a name")))
                })
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(Error::Schema(format!("`type` {other} is not a name"))),
        };
        if types.is_empty() {
            return Err(Error::Schema("`type` lists no types".into()));
        }
        let mut alts = Vec::with_capacity(types.len());
        for t in types {
            alts.push(self.typed(t, obj, depth)?);
        }
        if alts.len() == 1 {
            Ok(alts.remove(0))
        } else {
            Ok(format!("({})", alts.join(" | ")))
        }
    }

    fn any(&mut self) -> String {
        self.needs_any = true;
        "jany".into()
    }

    fn typed(&mut self, t: &str, obj: &Map<String, Value>, depth: usize) -> Result<String, Error> {
        Ok(match t {
            "string" => {
                self.needs_string = true;
                "jstring".into()
            }
            "integer" => match int_choices(obj) {
                Some(values) => {
                    let alts: Vec<String> = values.map(|v| gbnf_literal(&v.to_string())).collect();
                    format!("({})", alts.join(" | "))
                }
                None => {
                    self.needs_string = true;
                    "jint".into()
                }
            },
            "number" => {
                self.needs_string = true;
                "jnum".into()
            }
            "boolean" => "(\"true\" | \"false\")".into(),
            "null" => "\"null\"".into(),
            "object" => self.object(obj, depth)?,
            "array" => self.array(obj, depth)?,
            other => return Err(Error::Schema(format!("unknown type {other:?}"))),
        })
    }

    fn object(&mut self, obj: &Map<String, Value>, depth: usize) -> Result<String, Error> {
        let props = match obj.get("properties") {
            None => None,
            Some(Value::Object(p)) => Some(p),
            Some(_) => return Err(Error::Schema("`properties` must be an object".into())),
        };
        let Some(props) = props.filter(|p| !p.is_empty()) else {
            return Ok("\"{}\"".into());
        };
        let mut members = Vec::with_capacity(props.len());
        for key in property_order(obj, props)? {
            let Some(sub) = props.get(key) else {
                continue;
            };
            let value = self.value(sub, depth + 1)?;
            members.push(format!(
                "{} {value}",
                gbnf_literal(&format!("{}:", json_str(key)))
            ));
        }
        let body = format!("\"{{\" {} \"}}\"", members.join(" \",\" "));
        Ok(self.rule(body))
    }

    fn array(&mut self, obj: &Map<String, Value>, depth: usize) -> Result<String, Error> {
        let item = match obj.get("items") {
            Some(items) => self.value(items, depth + 1)?,
            None => self.any(),
        };
        let item = self.rule(item);
        let min = bound(obj, "minItems")?.unwrap_or(0);
        let max = bound(obj, "maxItems")?;
        if let Some(max) = max {
            if max < min {
                return Err(Error::Schema(format!(
                    "maxItems {max} is below minItems {min}"
                )));
            }
            if max == 0 {
                return Ok("\"[]\"".into());
            }
        }
        let tail_min = min.saturating_sub(1);
        let tail = match max {
            Some(max) => format!("(\",\" {item}){{{tail_min},{}}}", max - 1),
            None => format!("(\",\" {item}){{{tail_min},}}"),
        };
        let list = format!("{item} {tail}");
        let body = if min == 0 {
            format!("\"[\" ({list})? \"]\"")
        } else {
            format!("\"[\" {list} \"]\"")
        };
        Ok(self.rule(body))
    }
}

/// The values of an integer schema bounded by `minimum` and `maximum` that
/// spans at most [`MAX_INT_CHOICES`] of them.
fn int_choices(obj: &Map<String, Value>) -> Option<std::ops::RangeInclusive<i64>> {
    let min = obj.get("minimum")?.as_i64()?;
    let max = obj.get("maximum")?.as_i64()?;
    (min <= max && max - min < MAX_INT_CHOICES).then_some(min..=max)
}

/// Required properties in their listed order, then the rest by name.
fn property_order<'a>(
    obj: &'a Map<String, Value>,
    props: &'a Map<String, Value>,
) -> Result<Vec<&'a str>, Error> {
    let mut order: Vec<&str> = Vec::with_capacity(props.len());
    if let Some(req) = obj.get("required") {
        let Value::Array(req) = req else {
            return Err(Error::Schema("`required` must be an array".into()));
        };
        for r in req {
            let name = r
                .as_str()
                .ok_or_else(|| Error::Schema(format!("`required` entry {r} is not a name")))?;
            if !props.contains_key(name) {
                return Err(Error::Schema(format!(
                    "required property {name:?} is not declared in `properties`"
                )));
            }
            if !order.contains(&name) {
                order.push(name);
            }
        }
    }
    // By name whatever map order serde_json keeps (`preserve_order` is on).
    let mut rest: Vec<&str> = props
        .keys()
        .map(String::as_str)
        .filter(|k| !order.contains(k))
        .collect();
    rest.sort_unstable();
    order.extend(rest);
    Ok(order)
}

fn bound(obj: &Map<String, Value>, key: &str) -> Result<Option<u64>, Error> {
    match obj.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| Error::Schema(format!("`{key}` must be a non-negative integer"))),
    }
}

/// The compact JSON text of `v` as a grammar literal.
fn literal(v: &Value) -> String {
    gbnf_literal(&v.to_string())
}

fn json_str(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// A GBNF double-quoted literal matching exactly `s`.
fn gbnf_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A closed choice: the compact JSON texts a value may take.
///
/// `enum` values, booleans and small integer ranges (see
/// [`MAX_INT_CHOICES`]) are closed choices; everything else is open.
///
/// ```
/// use assay_local::grammar::closed_choices;
/// let rating = serde_json::json!({"type": "integer", "minimum": 1, "maximum": 3});
/// assert_eq!(closed_choices(&rating).unwrap(), ["1", "2", "3"]);
/// ```
pub fn closed_choices(schema: &Value) -> Option<Vec<String>> {
    let obj = schema.as_object()?;
    if obj.contains_key("const") {
        return None;
    }
    if let Some(Value::Array(choices)) = obj.get("enum") {
        return (choices.len() >= 2).then(|| choices.iter().map(Value::to_string).collect());
    }
    match obj.get("type") {
        Some(Value::String(t)) if t == "boolean" => Some(vec!["true".into(), "false".into()]),
        Some(Value::String(t)) if t == "integer" => int_choices(obj)
            .filter(|r| r.start() < r.end())
            .map(|r| r.map(|v| v.to_string()).collect()),
        _ => None,
    }
}

/// Where a partial compact-JSON text stands: if the next character starts
/// a value, its JSON Pointer and its schema.
///
/// `text` is a prefix of grammar output (compact JSON). Returns `None` when
/// the text is inside a token of a value, or between members.
pub fn value_schema_at<'s>(text: &str, schema: &'s Value) -> Option<(String, &'s Value)> {
    let path = value_path_at(text)?;
    let mut node = schema;
    let mut pointer = String::new();
    for step in &path {
        match step {
            Step::Key(k) => {
                node = node.get("properties")?.get(k.as_str())?;
                pointer.push('/');
                pointer.push_str(&k.replace('~', "~0").replace('/', "~1"));
            }
            Step::Index(i) => {
                node = node.get("items")?;
                let _ = write!(pointer, "/{i}");
            }
        }
    }
    Some((pointer, node))
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// The path of the value that starts right after `text`, if one does.
fn value_path_at(text: &str) -> Option<Vec<Step>> {
    // Containers open, with the current member: for objects the key (once
    // read), for arrays the index.
    enum Frame {
        Object(Option<String>),
        Array(usize),
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut at_value = true;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut s = String::new();
                let mut closed = false;
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => {
                            s.push(d);
                            if let Some(e) = chars.next() {
                                s.push(e);
                            }
                        }
                        '"' => {
                            closed = true;
                            break;
                        }
                        d => s.push(d),
                    }
                }
                if !closed {
                    return None;
                }
                // A string right after `{` or `,` in an object is a key.
                if let Some(Frame::Object(key @ None)) = stack.last_mut() {
                    if !at_value {
                        let decoded: String =
                            serde_json::from_str(&format!("\"{s}\"")).unwrap_or(s);
                        *key = Some(decoded);
                        continue;
                    }
                }
                at_value = false;
            }
            '{' => {
                stack.push(Frame::Object(None));
                at_value = false;
            }
            '[' => {
                stack.push(Frame::Array(0));
                at_value = true;
            }
            '}' | ']' => {
                stack.pop();
                at_value = false;
            }
            ':' => at_value = true,
            ',' => match stack.last_mut() {
                Some(Frame::Object(key)) => {
                    *key = None;
                    at_value = false;
                }
                Some(Frame::Array(i)) => {
                    *i += 1;
                    at_value = true;
                }
                None => return None,
            },
            _ => at_value = false,
        }
    }
    if !at_value {
        return None;
    }
    stack
        .into_iter()
        .map(|f| match f {
            Frame::Object(Some(k)) => Some(Step::Key(k)),
            Frame::Object(None) => None,
            Frame::Array(i) => Some(Step::Index(i)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn g(schema: Value) -> String {
        schema_to_grammar(&schema).unwrap().as_str().to_owned()
    }

    #[test]
    fn enum_and_const_are_literals() {
        assert_eq!(
            g(json!({"enum": ["yes", "no"]})),
            "root ::= (\"\\\"yes\\\"\" | \"\\\"no\\\"\")\n"
        );
        assert_eq!(g(json!({"const": 1})), "root ::= \"1\"\n");
    }

    #[test]
    fn small_integer_ranges_are_closed_choices_and_wide_ones_open() {
        let rating = json!({"type": "integer", "minimum": 1, "maximum": 5});
        assert_eq!(
            g(rating.clone()),
            "root ::= (\"1\" | \"2\" | \"3\" | \"4\" | \"5\")\n"
        );
        assert_eq!(closed_choices(&rating).unwrap(), ["1", "2", "3", "4", "5"]);
        let wide = json!({"type": "integer", "minimum": 0, "maximum": MAX_INT_CHOICES});
        assert!(g(wide.clone()).starts_with("root ::= jint\n"));
        assert_eq!(closed_choices(&wide), None);
        let one = json!({"type": "integer", "minimum": 2, "maximum": 2});
        assert!(g(one.clone()).starts_with("root ::= (\"2\")\n"));
        assert_eq!(closed_choices(&one), None);
        assert_eq!(
            closed_choices(&json!({"type": "integer", "minimum": 1})),
            None
        );
    }

    #[test]
    fn object_members_follow_required_order() {
        let text = g(json!({
            "type": "object",
            "properties": {"verdict": {"enum": [0, 1]}, "reason": {"type": "string"}, "extra": {"type": "boolean"}, "also": {"type": "boolean"}},
            "required": ["reason", "verdict"],
            "additionalProperties": false
        }));
        let root = text.lines().find(|l| l.starts_with("r0 ::=")).unwrap();
        let reason = root.find("reason").unwrap();
        let verdict = root.find("verdict").unwrap();
        let also = root.find("also").unwrap();
        let extra = root.find("extra").unwrap();
        assert!(reason < verdict && verdict < also && also < extra, "{root}");
        assert!(text.contains("jstring ::="));
    }

    #[test]
    fn arrays_carry_their_bounds() {
        let text =
            g(json!({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 4}));
        assert!(text.contains("(\",\" r0){1,3}"), "{text}");
        let text = g(json!({"type": "array", "items": {"type": "integer"}}));
        assert!(
            text.contains("(\"[\" (r0 (\",\" r0){0,})? \"]\")")
                || text.contains("\"[\" (r0 (\",\" r0){0,})? \"]\""),
            "{text}"
        );
        assert!(g(json!({"type": "array", "maxItems": 0})).contains("\"[]\""));
    }

    #[test]
    fn bad_schemas_are_errors() {
        for bad in [
            json!({"type": "thing"}),
            json!({"enum": []}),
            json!({"type": "array", "minItems": 3, "maxItems": 2}),
            json!({"type": "object", "properties": {"a": {}}, "required": ["b"]}),
            json!(3),
        ] {
            assert!(schema_to_grammar(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn literals_escape_quotes_and_controls() {
        assert_eq!(gbnf_literal("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\x01\"");
    }

    #[test]
    fn value_positions_are_found() {
        let schema = json!({
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "object", "properties": {"v": {"enum": [0, 1]}, "s": {"type": "string"}}}},
                "ok": {"type": "boolean"}
            }
        });
        let at = |t: &str| value_schema_at(t, &schema).map(|(p, s)| (p, closed_choices(s)));
        assert_eq!(
            at(r#"{"items":[{"s":"a,\"b","v":"#),
            Some(("/items/0/v".into(), Some(vec!["0".into(), "1".into()])))
        );
        assert_eq!(
            at(r#"{"items":[{"s":"x","v":1},{"s":"y","v":"#).map(|x| x.0),
            Some("/items/1/v".into())
        );
        assert_eq!(
            at(r#"{"items":[],"ok":"#),
            Some(("/ok".into(), Some(vec!["true".into(), "false".into()])))
        );
        assert_eq!(at(r#"{"items":[{"s":"#).map(|x| x.1), Some(None));
        assert_eq!(at(r#"{"items":[{"s":"ab"#), None);
        assert_eq!(at(r#"{"items""#), None);
        assert_eq!(at(r#"{"#), None);
    }
}
