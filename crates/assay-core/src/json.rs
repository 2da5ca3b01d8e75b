//! JSON values in the words a reader's error messages use, for the
//! sample's fields and the conversation's messages alike.

use serde_json::Value;

/// A JSON value's type, in the words an error message needs.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
