//! What a row's text becomes before it is a sample, for the input and for
//! the side files read beside it (`crate::references`) alike: a JSON value
//! checked for keys named twice, a CSV record as a JSON object, a row's
//! place in its file, and the errors that say the file cannot be read.

use serde::de::{MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::fmt;
use std::io;

/// The input as a whole cannot be read (as opposed to one bad row).
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{file}: {source}")]
    Io { file: String, source: io::Error },
    #[error("unknown input format '{0}' (expected jsonl, json, csv or otlp)")]
    UnknownFormat(String),
    #[error("{file}: {message}")]
    Malformed { file: String, message: String },
    /// The input holds no row, so there is nothing to score.
    #[error("{file}: no rows to score: {why}")]
    Empty { file: String, why: String },
}

/// A row's place within its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// 1-based line where the row starts (JSONL, CSV, a JSON syntax error).
    Line(u64),
    /// 1-based element of a JSON array.
    Element(u64),
    /// 1-based trace of an OTLP export, in the order its first span
    /// appears.
    Trace(u64),
    /// 1-based row of data given in memory ([`Original::Rows`]).
    Row(u64),
}

impl Position {
    pub(crate) fn number(self) -> u64 {
        match self {
            Position::Line(n) | Position::Element(n) | Position::Trace(n) | Position::Row(n) => n,
        }
    }

    /// The position of the same kind at number `n`.
    pub(crate) fn renumbered(self, n: u64) -> Position {
        match self {
            Position::Line(_) => Position::Line(n),
            Position::Element(_) => Position::Element(n),
            Position::Trace(_) => Position::Trace(n),
            Position::Row(_) => Position::Row(n),
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Line(n) => write!(f, "line {n}"),
            Position::Element(n) => write!(f, "element {n}"),
            Position::Trace(n) => write!(f, "trace {n}"),
            Position::Row(n) => write!(f, "index {}", n - 1),
        }
    }
}

/// A CSV record as a JSON object: empty cells are absent, list fields hold
/// JSON arrays, a conversation's cells (`messages`, `reference_tool_calls`)
/// JSON (kept as text when they are not, so that only the metrics reading
/// them fail), every other cell is a string.
pub(crate) fn csv_object(
    headers: &[String],
    record: &csv::StringRecord,
) -> Result<Map<String, Value>, (String, String)> {
    use crate::Field;
    let mut map = Map::new();
    for (name, cell) in headers.iter().zip(record.iter()) {
        if cell.is_empty() {
            continue;
        }
        let value = match name.parse::<Field>() {
            Ok(Field::RetrievedContexts | Field::References | Field::ReferenceContexts) => {
                serde_json::from_str(cell).map_err(|e| {
                    (
                        name.clone(),
                        format!("expected a JSON array of strings in the cell: {e}"),
                    )
                })?
            }
            Ok(Field::Messages | Field::ReferenceToolCalls) => {
                serde_json::from_str(cell).unwrap_or_else(|_| Value::String(cell.to_string()))
            }
            _ => Value::String(cell.to_string()),
        };
        map.insert(name.clone(), value);
    }
    Ok(map)
}

/// A JSON value with the first key that one of its objects names twice,
/// by its path (`response`, `messages[1].content`): serde_json would keep
/// the last value silently, and a row that says two things about one field
/// must not be scored on a guess.
pub(crate) struct Checked {
    pub(crate) value: Value,
    pub(crate) repeated: Option<String>,
}

impl Checked {
    fn plain(value: Value) -> Checked {
        Checked {
            value,
            repeated: None,
        }
    }
}

/// `inner`, a path within the value at `outer`.
fn within(outer: String, inner: String) -> String {
    if inner.starts_with('[') {
        outer + &inner
    } else {
        format!("{outer}.{inner}")
    }
}

impl<'de> serde::Deserialize<'de> for Checked {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Checked, D::Error> {
        d.deserialize_any(Any)
    }
}

/// Builds a [`Checked`] value.
struct Any;

impl<'de> Visitor<'de> for Any {
    type Value = Checked;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Checked, E> {
        Ok(Checked::plain(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Checked, E> {
        Ok(Checked::plain(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Checked, E> {
        Ok(Checked::plain(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Checked, E> {
        Ok(Checked::plain(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Checked, E> {
        Ok(Checked::plain(Value::String(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Checked, E> {
        Ok(Checked::plain(Value::String(v)))
    }
    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked::plain(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        let mut items = Vec::new();
        let mut repeated = None;
        while let Some(item) = seq.next_element::<Checked>()? {
            if repeated.is_none() {
                repeated = item
                    .repeated
                    .map(|p| within(format!("[{}]", items.len()), p));
            }
            items.push(item.value);
        }
        Ok(Checked {
            value: Value::Array(items),
            repeated,
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Checked, A::Error> {
        let row = RowVisitor.visit_map(map)?;
        let value = match row.entries {
            Ok(entries) => Value::Object(entries.into_iter().collect()),
            Err(other) => other,
        };
        Ok(Checked {
            value,
            repeated: row.repeated,
        })
    }
}

/// A row as read: a JSON object's entries in the order written (no map is
/// built, as the sample takes them apart at once), or the other value it
/// is, with the first key named twice anywhere within, as [`Checked`] has.
pub(crate) struct CheckedRow {
    pub(crate) entries: Result<Vec<(String, Value)>, Value>,
    pub(crate) repeated: Option<String>,
}

/// Past this many keys an object's keys are also kept in a set, so that
/// finding one named twice stays linear however wide the object.
const SCANNED_KEYS: usize = 32;

impl<'de> serde::Deserialize<'de> for CheckedRow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<CheckedRow, D::Error> {
        d.deserialize_any(RowVisitor)
    }
}

struct RowVisitor;

impl RowVisitor {
    fn other<E>(checked: Result<Checked, E>) -> Result<CheckedRow, E> {
        checked.map(|c| CheckedRow {
            entries: Err(c.value),
            repeated: c.repeated,
        })
    }
}

impl<'de> Visitor<'de> for RowVisitor {
    type Value = CheckedRow;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<CheckedRow, E> {
        Self::other(Any.visit_bool(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<CheckedRow, E> {
        Self::other(Any.visit_i64(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<CheckedRow, E> {
        Self::other(Any.visit_u64(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<CheckedRow, E> {
        Self::other(Any.visit_f64(v))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<CheckedRow, E> {
        Self::other(Any.visit_str(v))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<CheckedRow, E> {
        Self::other(Any.visit_string(v))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<CheckedRow, E> {
        Self::other(Any.visit_unit())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<CheckedRow, A::Error> {
        Self::other(Any.visit_seq(seq))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CheckedRow, A::Error> {
        let mut entries: Vec<(String, Value)> = Vec::new();
        let mut wide: HashSet<String> = HashSet::new();
        let mut repeated = None;
        while let Some(key) = map.next_key::<String>()? {
            let item: Checked = map.next_value()?;
            if repeated.is_none() {
                let twice = if entries.len() < SCANNED_KEYS {
                    entries.iter().any(|(k, _)| *k == key)
                } else {
                    if wide.is_empty() {
                        wide.extend(entries.iter().map(|(k, _)| k.clone()));
                    }
                    !wide.insert(key.clone())
                };
                repeated = if twice {
                    Some(key.clone())
                } else {
                    item.repeated.map(|p| within(key.clone(), p))
                };
            }
            entries.push((key, item.value));
        }
        Ok(CheckedRow {
            entries: Ok(entries),
            repeated,
        })
    }
}
