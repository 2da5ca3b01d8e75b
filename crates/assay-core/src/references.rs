//! References kept beside the samples (`--references FILE`): a JSONL or
//! CSV file whose rows each name a sample, by `trace_id` (the trace a
//! row was read from, for OTLP exports and any row with a `trace_id`),
//! `sample_id` or `id` (the sample's id), and give its reference fields
//! (`reference`, `references`, `reference_contexts`,
//! `reference_tool_calls`, `reference_topics`, `chatbot_role`). The
//! dataset reader joins them onto the rows before samples are built, so
//! every metric sees one complete sample.
//!
//! A references row without a key, with two keys, with a key an earlier
//! row had, or with a field that is not a reference field is an error that
//! names the file, the row and the field. Which samples found no
//! references row and which references rows matched no sample is counted
//! ([`ReferencesReport`]), never silent.

use crate::json::kind;
use crate::read::{self, DatasetError, Position};
use crate::sample::{Field, Sample};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// The fields a references file may give.
pub const FIELDS: [Field; 6] = [
    Field::Reference,
    Field::References,
    Field::ReferenceContexts,
    Field::ReferenceToolCalls,
    Field::ReferenceTopics,
    Field::ChatbotRole,
];

/// How a references row names its sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// `trace_id`: the trace the row was read from.
    Trace,
    /// `id` or `sample_id`: the sample's id.
    Sample,
}

/// One references row.
#[derive(Debug)]
struct Entry {
    /// The key as written, for messages: `trace_id=5bf9...`.
    named: String,
    position: Position,
    /// Canonical field name to value.
    fields: Map<String, Value>,
    used: bool,
}

/// A references file, read whole, and what joining it found so far.
#[derive(Debug)]
pub struct References {
    file: String,
    entries: Vec<Entry>,
    index: HashMap<(Key, String), usize>,
    /// Samples that got a references row.
    joined: u64,
    /// Samples that got none, and the ids of the first [`NAMED`].
    without: u64,
    without_ids: Vec<String>,
}

/// How many ids a report names.
const NAMED: usize = 20;

/// What joining a references file did: `summary.json`'s `input.references`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReferencesReport {
    /// The file, as given.
    pub file: String,
    /// Its rows.
    pub rows: u64,
    /// Samples that found a references row.
    pub joined: u64,
    /// Samples that found none, and the ids of the first 20.
    pub samples_without: u64,
    pub samples_without_ids: Vec<String>,
    /// References rows whose key matched no sample, and the first 20 keys
    /// (`trace_id=...`, `id=...`). `None` when the run stopped before the
    /// input's end, so it is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmatched: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmatched_keys: Vec<String>,
}

impl std::fmt::Display for ReferencesReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let some = |ids: &[String], n: u64| {
            let mut text = ids.join(", ");
            if n > ids.len() as u64 {
                text.push_str(&format!(" and {} more", n - ids.len() as u64));
            }
            text
        };
        write!(
            f,
            "{}: {} rows, joined to {} samples",
            self.file, self.rows, self.joined
        )?;
        if self.samples_without > 0 {
            write!(
                f,
                "; {} samples without a references row: {}",
                self.samples_without,
                some(&self.samples_without_ids, self.samples_without)
            )?;
        }
        match self.unmatched {
            Some(0) => {}
            Some(n) => write!(
                f,
                "; {n} references rows matched no sample: {}",
                some(&self.unmatched_keys, n)
            )?,
            None => write!(f, "; the run stopped before the input's end")?,
        }
        Ok(())
    }
}

impl References {
    /// Reads `path`: CSV by its extension `.csv`, else JSONL (blank lines
    /// skipped).
    pub fn load(path: &Path) -> Result<References, DatasetError> {
        let file = path.display().to_string();
        let io = |source| DatasetError::Io {
            file: file.clone(),
            source,
        };
        let reader = BufReader::new(File::open(path).map_err(io)?);
        let mut refs = References {
            file: file.clone(),
            entries: Vec::new(),
            index: HashMap::new(),
            joined: 0,
            without: 0,
            without_ids: Vec::new(),
        };
        let csv = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        if csv {
            let mut csv = csv::ReaderBuilder::new().from_reader(reader);
            let headers: Vec<String> = csv
                .headers()
                .map_err(|e| refs.malformed(None, None, format!("invalid CSV: {e}")))?
                .iter()
                .map(str::to_string)
                .collect();
            for record in csv.records() {
                let record =
                    record.map_err(|e| refs.malformed(None, None, format!("invalid CSV: {e}")))?;
                let at = Position::Line(record.position().map_or(0, |p| p.line()));
                let map = read::csv_object(&headers, &record)
                    .map_err(|(field, message)| refs.malformed(Some(at), Some(&field), message))?;
                refs.add(map, at)?;
            }
        } else {
            for (n, line) in reader.lines().enumerate() {
                let line = line.map_err(io)?;
                if line.trim().is_empty() {
                    continue;
                }
                let at = Position::Line(n as u64 + 1);
                let checked: read::Checked = serde_json::from_str(&line)
                    .map_err(|e| refs.malformed(Some(at), None, format!("invalid JSON: {e}")))?;
                if let Some(key) = checked.repeated {
                    return Err(refs.malformed(
                        Some(at),
                        Some(&key),
                        "named twice in one object".into(),
                    ));
                }
                match checked.value {
                    Value::Object(map) => refs.add(map, at)?,
                    other => {
                        return Err(refs.malformed(
                            Some(at),
                            None,
                            format!("expected an object, got {}", kind(&other)),
                        ))
                    }
                }
            }
        }
        Ok(refs)
    }

    fn malformed(
        &self,
        at: Option<Position>,
        field: Option<&str>,
        message: String,
    ) -> DatasetError {
        let at = at.map(|p| format!("{p}: ")).unwrap_or_default();
        let field = field.map(|f| format!("field '{f}': ")).unwrap_or_default();
        DatasetError::Malformed {
            file: self.file.clone(),
            message: format!("{at}{field}{message}"),
        }
    }

    /// Adds one row of the file, read at `at`.
    fn add(&mut self, map: Map<String, Value>, at: Position) -> Result<(), DatasetError> {
        let mut key: Option<(Key, &str, String)> = None;
        let mut fields = Map::new();
        for (name, value) in &map {
            if value.is_null() {
                continue;
            }
            let kind_of = match name.as_str() {
                "trace_id" => Some(Key::Trace),
                "id" | "sample_id" => Some(Key::Sample),
                _ => None,
            };
            if let Some(k) = kind_of {
                let text = match value {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    other => {
                        return Err(self.malformed(
                            Some(at),
                            Some(name),
                            format!("expected a string or number, got {}", kind(other)),
                        ))
                    }
                };
                if let Some((_, first, _)) = &key {
                    return Err(self.malformed(
                        Some(at),
                        Some(name),
                        format!(
                            "the row is already keyed by '{first}': name its sample by one key"
                        ),
                    ));
                }
                key = Some((k, name.as_str(), text));
                continue;
            }
            let field = match name.parse::<Field>() {
                Ok(f) if FIELDS.contains(&f) => f,
                Ok(_) => {
                    return Err(self.malformed(
                        Some(at),
                        Some(name),
                        format!(
                            "not a reference field (a references file gives {})",
                            expected()
                        ),
                    ))
                }
                Err(_) => {
                    return Err(self.malformed(
                        Some(at),
                        Some(name),
                        format!("unknown field (a references file gives {})", expected()),
                    ))
                }
            };
            if fields.contains_key(field.name()) {
                return Err(self.malformed(
                    Some(at),
                    Some(name),
                    format!("gives '{}' a second time, under another name", field.name()),
                ));
            }
            fields.insert(field.name().to_string(), value.clone());
        }
        let Some((k, name, value)) = key else {
            return Err(self.malformed(
                Some(at),
                None,
                "no key: a references row names its sample by 'trace_id', 'sample_id' or 'id'"
                    .into(),
            ));
        };
        // Read as a sample would be, so a value of the wrong type is named
        // here, with this file's row.
        Sample::from_json(0, &fields)
            .map_err(|e| self.malformed(Some(at), Some(&e.field), e.message))?;
        let named = format!("{name}={value}");
        if let Some(&first) = self.index.get(&(k, value.clone())) {
            return Err(self.malformed(
                Some(at),
                Some(name),
                format!(
                    "'{value}' repeats {} (which references are meant is unclear)",
                    self.entries[first].position
                ),
            ));
        }
        self.index.insert((k, value), self.entries.len());
        self.entries.push(Entry {
            named,
            position: at,
            fields,
            used: false,
        });
        Ok(())
    }

    /// Joins the references of the sample `id` (read from trace `trace_id`
    /// or traces `trace_ids`, when the row says so) onto `row`. The error
    /// is the field that the row and the references give differently.
    pub(crate) fn join(
        &mut self,
        id: &str,
        row: &mut Map<String, Value>,
    ) -> Result<(), (String, String)> {
        let mut traces: Vec<String> = Vec::new();
        if let Some(Value::String(t)) = row.get("trace_id") {
            traces.push(t.clone());
        }
        if let Some(Value::Array(ts)) = row.get("trace_ids") {
            traces.extend(ts.iter().filter_map(Value::as_str).map(str::to_string));
        }
        let mut found: Vec<usize> = Vec::new();
        let keys = std::iter::once((Key::Sample, id.to_string()))
            .chain(traces.into_iter().map(|t| (Key::Trace, t)));
        for key in keys {
            if let Some(&i) = self.index.get(&key) {
                if !found.contains(&i) {
                    found.push(i);
                }
            }
        }
        if found.is_empty() {
            self.without += 1;
            if self.without_ids.len() < NAMED {
                self.without_ids.push(id.to_string());
            }
            return Ok(());
        }
        self.joined += 1;
        for i in found {
            self.entries[i].used = true;
            let entry = &self.entries[i];
            for (field, value) in &entry.fields {
                let given = row
                    .iter()
                    .find(|(k, v)| {
                        !v.is_null() && k.parse::<Field>().is_ok_and(|f| f.name() == field.as_str())
                    })
                    .map(|(k, v)| (k.clone(), v.clone()));
                match given {
                    Some((_, v)) if v == *value => {}
                    Some((k, _)) => {
                        return Err((
                            k,
                            format!(
                                "given by the row and, otherwise, by {} ({}, {})",
                                self.file, entry.position, entry.named
                            ),
                        ))
                    }
                    None => {
                        row.insert(field.clone(), value.clone());
                    }
                }
            }
        }
        Ok(())
    }

    /// What the join found; `finished`: whether every row of the input
    /// was read (else which references rows matched nothing is unknown).
    pub fn report(&self, finished: bool) -> ReferencesReport {
        let unused: Vec<&Entry> = self.entries.iter().filter(|e| !e.used).collect();
        ReferencesReport {
            file: self.file.clone(),
            rows: self.entries.len() as u64,
            joined: self.joined,
            samples_without: self.without,
            samples_without_ids: self.without_ids.clone(),
            unmatched: finished.then_some(unused.len() as u64),
            unmatched_keys: if finished {
                unused.iter().take(NAMED).map(|e| e.named.clone()).collect()
            } else {
                Vec::new()
            },
        }
    }
}

fn expected() -> String {
    let names: Vec<&str> = FIELDS.iter().map(|f| f.name()).collect();
    format!(
        "{} and its key, trace_id, sample_id or id",
        names.join(", ")
    )
}
