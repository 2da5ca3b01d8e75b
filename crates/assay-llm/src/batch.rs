//! OpenAI Batch API files: export requests as JSONL (`custom_id` = request
//! key; `vllm run-batch` reads the same file) and import a batch output
//! file into the cache.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Write};

use serde_json::{json, Value};

use crate::cache::Cache;
use crate::key::RequestKey;
use crate::model::{ChatModel, ChatRequest};
use crate::openai::{parse_chat_body, OpenAiChat};
use crate::schema::parse_structured;
use crate::{Error, FailureKind};

/// Writes one batch line per distinct request; returns how many were written.
pub fn export_batch(
    model: &OpenAiChat,
    requests: &[ChatRequest],
    mut out: impl Write,
) -> Result<usize, Error> {
    let mut seen = HashSet::new();
    for request in requests {
        let key = RequestKey::chat(model.identity(), request);
        if !seen.insert(key.clone()) {
            continue;
        }
        let line = json!({
            "custom_id": key.as_str(),
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": model.request_body(request),
        });
        writeln!(out, "{line}").map_err(|e| {
            Error::new(FailureKind::Config, format!("cannot write batch file: {e}"))
        })?;
    }
    Ok(seen.len())
}

/// What [`import_batch`] did.
#[derive(Debug, Default)]
pub struct ImportReport {
    /// Answers validated and stored in the cache.
    pub stored: usize,
    /// Lines whose answer failed (provider error, truncation, invalid JSON),
    /// by request key; these requests stay uncached and are asked again later.
    pub failed: Vec<(RequestKey, Error)>,
    /// Lines whose `custom_id` matches none of the given requests.
    pub unknown: usize,
}

/// Reads a batch output file and caches every answer that belongs to one of
/// `requests` and validates against its schema. A malformed line is a
/// [`FailureKind::Config`] error naming its line number.
pub fn import_batch(
    model: &OpenAiChat,
    cache: &Cache,
    requests: &[ChatRequest],
    input: impl BufRead,
) -> Result<ImportReport, Error> {
    let by_key: HashMap<RequestKey, &ChatRequest> = requests
        .iter()
        .map(|r| (RequestKey::chat(model.identity(), r), r))
        .collect();
    let mut report = ImportReport::default();
    for (n, line) in input.lines().enumerate() {
        let bad = |what: String| {
            Error::new(
                FailureKind::Config,
                format!("batch output line {}: {what}", n + 1),
            )
        };
        let line = line.map_err(|e| bad(e.to_string()))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line).map_err(|e| bad(e.to_string()))?;
        let custom_id = v
            .get("custom_id")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no custom_id".into()))?;
        let Some((key, request)) =
            RequestKey::parse(custom_id).and_then(|k| by_key.get_key_value(&k))
        else {
            report.unknown += 1;
            continue;
        };
        match answer(&v, request) {
            Ok(resp) => {
                cache.put_chat(key, &model.identity().model, &resp)?;
                report.stored += 1;
            }
            Err(e) => report.failed.push((key.clone(), e)),
        }
    }
    Ok(report)
}

fn answer(line: &Value, request: &ChatRequest) -> Result<crate::ChatResponse, Error> {
    if let Some(err) = line.get("error").filter(|e| !e.is_null()) {
        return Err(Error::new(
            FailureKind::Rejected,
            format!("batch error: {err}"),
        ));
    }
    let status = line
        .pointer("/response/status_code")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let body = line.pointer("/response/body").ok_or_else(|| {
        Error::new(
            FailureKind::InvalidResponse,
            "batch line has no response body",
        )
    })?;
    if status != 200 {
        return Err(Error::new(
            FailureKind::Rejected,
            format!("batch answer has status {status}"),
        ));
    }
    let bytes = serde_json::to_vec(body)
        .map_err(|e| Error::new(FailureKind::InvalidResponse, e.to_string()))?;
    let mut resp = parse_chat_body(&bytes)?;
    if let Some(schema) = &request.schema {
        let value = parse_structured(&resp.text, schema)
            .map_err(|e| Error::new(FailureKind::Parse, e).with_raw_output(resp.text.clone()))?;
        resp.json = Some(value);
    }
    Ok(resp)
}
