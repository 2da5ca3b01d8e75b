//! `assay align`: a user's labelled rows (a built-in set or their own
//! JSONL in the calibrate format) read into [`assay_grounding::align`]'s
//! rows, the grounding verdict's combiner refitted on them, and the
//! versioned alignment file written (`eval --alignment FILE` reads it).

use crate::calibrate::{lookup, BuiltinSet, Data};
use crate::{Error, Result};
use assay_grounding::align::{align as refit, Alignment, Row};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

/// What to align on, and where the file goes.
#[derive(Clone, Debug)]
pub struct AlignOptions {
    pub data: Data,
    /// The yes/no label field (under `labels`, else at the top level);
    /// `hallucinated` when not given.
    pub labels: Option<String>,
    /// What a `true` label means: `false` (the default, for
    /// `hallucinated`): not supported; `true`: supported.
    pub true_means_supported: bool,
    /// The alignment file to write.
    pub out: PathBuf,
}

/// An alignment made and written.
#[derive(Clone, Debug)]
pub struct Aligned {
    pub alignment: Alignment,
    pub path: PathBuf,
}

/// Reads the rows, refits, and writes the alignment file.
pub fn align(options: &AlignOptions) -> Result<Aligned> {
    // Rows are grouped by task as `assay calibrate` groups them.
    let (name, text, task_field) = match &options.data {
        Data::Set(name) => {
            let set: BuiltinSet = name.parse().map_err(Error::Usage)?;
            (
                format!("{}.jsonl", set.name()),
                String::from_utf8_lossy(set.bytes()).into_owned(),
                set.group_field(),
            )
        }
        Data::File(path) => (
            path.display().to_string(),
            std::fs::read_to_string(path).map_err(Error::io("read", path))?,
            "task",
        ),
    };
    let field = options.labels.as_deref().unwrap_or("hallucinated");
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |what: String| Error::Usage(format!("{name}, line {}: {what}", i + 1));
        let row: Value = serde_json::from_str(line).map_err(|e| bad(format!("not JSON: {e}")))?;
        rows.push(read_row(&row, field, task_field, options.true_means_supported).map_err(bad)?);
    }
    let sha256: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let alignment =
        refit(&rows, &name, &sha256).map_err(|e| Error::Usage(format!("{name}: {e}")))?;
    if let Some(dir) = options.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(Error::io("create", dir))?;
    }
    std::fs::write(&options.out, alignment.to_json()).map_err(Error::io("write", &options.out))?;
    Ok(Aligned {
        alignment,
        path: options.out.clone(),
    })
}

/// One labelled row, or what is wrong with it (naming the field).
fn read_row(
    row: &Value,
    field: &str,
    task_field: &str,
    true_means_supported: bool,
) -> std::result::Result<Row, String> {
    let text = |name: &str| row.get(name).and_then(Value::as_str);
    let response = text("response")
        .ok_or("response: missing or not a string")?
        .to_string();
    let label = row
        .get("labels")
        .and_then(|l| l.get(field))
        .or_else(|| row.get(field))
        .ok_or(format!("labels.{field}: missing"))?
        .as_bool()
        .ok_or(format!("labels.{field}: not true or false"))?;
    let hallucinated = label != true_means_supported;
    let mut contexts: Vec<String> = Vec::new();
    match row.get("retrieved_contexts") {
        Some(Value::Array(c)) => {
            for (k, x) in c.iter().enumerate() {
                contexts.push(
                    x.as_str()
                        .ok_or(format!("retrieved_contexts[{k}]: not a string"))?
                        .to_string(),
                );
            }
        }
        Some(_) => return Err("retrieved_contexts: not a list".into()),
        None => {}
    }
    // People's spans say which sentences are unsupported; they mark
    // hallucinations, so they are read only for such a label.
    let spans = (field == "hallucinated")
        .then(|| row.get("labels")?.get("spans")?.as_array().cloned())
        .flatten()
        .map(|spans| byte_ranges(&response, &spans));
    let group = row
        .get("meta")
        .and_then(|m| m.get("source_id"))
        .map(Value::to_string)
        .unwrap_or_else(|| contexts.join("\n"));
    Ok(Row {
        id: text("id").unwrap_or_default().to_string(),
        group,
        question: text("user_input").unwrap_or_default().to_string(),
        contexts,
        response,
        hallucinated,
        spans,
        task: lookup(row, task_field)
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// Spans' character offsets as byte ranges of `text`.
fn byte_ranges(text: &str, spans: &[Value]) -> Vec<(usize, usize)> {
    let at = assay_grounding::train::byte_offsets(text);
    spans
        .iter()
        .filter_map(|s| Some((at(s.get("start")?.as_u64()?), at(s.get("end")?.as_u64()?))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_reads_its_texts_label_and_spans_in_bytes() {
        let row = json!({"id": "a", "user_input": "Q?", "response": "Ünï. Bad part.",
            "retrieved_contexts": ["C"], "labels": {"hallucinated": true, "spans": [{"start": 5, "end": 14}]},
            "meta": {"source_id": "7", "ragtruth_task": "QA"}});
        let r = read_row(&row, "hallucinated", "meta.ragtruth_task", false).unwrap();
        assert_eq!(r.task.as_deref(), Some("QA"));
        assert_eq!(
            (r.question.as_str(), r.contexts.as_slice()),
            ("Q?", &["C".to_string()][..])
        );
        assert!(r.hallucinated);
        assert_eq!(r.group, "\"7\"");
        // "Ünï. " is 5 characters and 7 bytes.
        assert_eq!(r.spans, Some(vec![(7, 16)]));
        assert_eq!(&r.response[7..16], "Bad part.");
        let faithful = json!({"response": "x", "faithful": true});
        assert!(
            !read_row(&faithful, "faithful", "task", true)
                .unwrap()
                .hallucinated
        );
        assert_eq!(
            read_row(&json!({"response": "x"}), "hallucinated", "task", false).unwrap_err(),
            "labels.hallucinated: missing"
        );
    }
}
