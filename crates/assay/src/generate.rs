//! `assay generate`: the documents read, the plan made
//! (`assay-generate`), the judge asked (`assay-engine`), and the test set,
//! its rejected candidates and its summary written; exit code 5 when no
//! question was made.

use crate::cli::{GenerateArgs, OutputFormat};
use crate::config;
use anyhow::Result;
use assay_generate::pipeline::{prepare, Options, Prepared};
use assay_generate::quota::QuestionType;
use assay_metrics::judged::prompt::PromptSet;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub fn generate(args: GenerateArgs) -> Result<u8> {
    let (documents, left) = assay_generate::document::read_paths(&args.documents)
        .map_err(|e| config::UsageError::general(e.to_string()))?;
    for file in &left {
        eprintln!("not read (not Markdown, text or HTML): {file}");
    }
    if documents.is_empty() {
        return Err(config::UsageError::general("no document to read in the paths given").into());
    }
    let options = Options {
        size: args.size,
        mix: args.mix.clone().unwrap_or_default(),
        seed: args.seed,
        chunk_tokens: args.chunk_tokens,
        personas: args.personas.clone(),
        ..Options::default()
    };
    let mut prepared = prepare(&documents, &options);
    if args.dry_run {
        let plan = plan_summary(&prepared);
        match args.format {
            OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&plan)?),
            OutputFormat::Table => print!("{}", plan_table(&plan)),
        }
        return Ok(0);
    }
    let judge_config = config::judge_config(&args.judge, args.config.as_deref())?;
    let threads = assay_config::threads(args.threads)?;
    let run = assay_config::judged_run(Vec::new(), PromptSet::builtin()?, &judge_config, threads)?;
    let done = assay_engine::generate::generate(&run.judge, &mut prepared)?;
    let rejected_path = beside(&args.out, "rejected.jsonl");
    let summary_path = beside(&args.out, "summary.json");
    write_jsonl(&args.out, &done.rows)?;
    write_jsonl(&rejected_path, &done.rejected)?;
    let mut by_type: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_document: BTreeMap<String, usize> = BTreeMap::new();
    for row in &done.rows {
        *by_type.entry(type_name(&row["question_type"])).or_default() += 1;
        *by_document
            .entry(row["meta"]["document"].as_str().unwrap_or("").to_string())
            .or_default() += 1;
    }
    let mut by_reason: BTreeMap<String, usize> = BTreeMap::new();
    for r in &done.rejected {
        *by_reason
            .entry(r["rejection"]["reason"].as_str().unwrap_or("").to_string())
            .or_default() += 1;
    }
    let summary = json!({
        "requested": args.size,
        "made": done.rows.len(),
        "by_type": by_type,
        "by_document": by_document,
        "rejected": by_reason,
        "not_made": done.shortfalls,
        "judge": {
            "calls": done.calls,
            "cache_hits": done.cache_hits,
            "prompt_tokens": done.usage.prompt_tokens,
            "completion_tokens": done.usage.completion_tokens,
        },
        "chunks": {
            "asked_about": prepared.pieces.len(),
            "near_duplicates": prepared.duplicate_chunks,
            "too_small": prepared.small_chunks,
        },
        "generator": prepared.signature(&run.judge_spec.to_string()),
        "test_set": args.out,
        "rejected_candidates": rejected_path,
    });
    std::fs::write(
        &summary_path,
        serde_json::to_string_pretty(&summary)? + "\n",
    )
    .map_err(|e| anyhow::anyhow!("{}: {e}", summary_path.display()))?;
    match args.format {
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&summary)?),
        OutputFormat::Table => {
            println!(
                "made {} of {} questions: {}",
                done.rows.len(),
                args.size,
                args.out.display()
            );
            for (t, n) in &by_type {
                println!("  {t:<12} {n}");
            }
            println!(
                "judge: {} answers ({} from the cache), {} + {} tokens",
                done.calls, done.cache_hits, done.usage.prompt_tokens, done.usage.completion_tokens
            );
            if !by_reason.is_empty() {
                let reasons: Vec<String> =
                    by_reason.iter().map(|(r, n)| format!("{r} {n}")).collect();
                println!(
                    "rejected: {} ({})",
                    reasons.join(", "),
                    rejected_path.display()
                );
            }
            for line in &done.shortfalls {
                println!("not made: {line}");
            }
        }
    }
    Ok(if done.rows.is_empty() { 5 } else { 0 })
}

/// `out` with `suffix` in place of its extension: `set.jsonl` ->
/// `set.rejected.jsonl`.
fn beside(out: &Path, suffix: &str) -> PathBuf {
    let stem = out
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}.{suffix}"))
}

fn type_name(value: &Value) -> &'static str {
    QuestionType::ALL
        .into_iter()
        .find(|t| value == t.name())
        .map_or("", QuestionType::name)
}

fn write_jsonl(path: &Path, rows: &[Value]) -> Result<()> {
    let mut text = String::new();
    for row in rows {
        text.push_str(&row.to_string());
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// What a dry run prints: the chunks, the planned questions and the judge
/// calls and tokens they need.
fn plan_summary(prepared: &Prepared<'_>) -> Value {
    let planned: Vec<_> = prepared.slots.iter().flatten().collect();
    let mut by_type: BTreeMap<&str, usize> = BTreeMap::new();
    for slot in &planned {
        *by_type.entry(slot.kind.name()).or_default() += 1;
    }
    let not_planned: Vec<String> = prepared
        .slots
        .iter()
        .filter_map(|s| s.as_ref().err())
        .map(ToString::to_string)
        .collect();
    json!({
        "documents": prepared.documents.len(),
        "chunks": {
            "asked_about": prepared.pieces.len(),
            "near_duplicates": prepared.duplicate_chunks,
            "too_small": prepared.small_chunks,
        },
        "planned": planned.len(),
        "by_type": by_type,
        "not_planned": not_planned,
        "judge_calls": {"at_least": planned.len(), "at_most": planned.len() * prepared.options.attempts.max(1)},
        "estimated_prompt_tokens": prepared.estimated_tokens(),
    })
}

fn plan_table(plan: &Value) -> String {
    let mut out = format!(
        "{} documents, {} chunks to ask about ({} near duplicates and {} too small set aside)\n\
         {} questions planned: {}\n\
         judge calls: {} to {}; about {} prompt tokens for the first attempts (4 characters a token)\n",
        plan["documents"],
        plan["chunks"]["asked_about"],
        plan["chunks"]["near_duplicates"],
        plan["chunks"]["too_small"],
        plan["planned"],
        plan["by_type"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", "))
            .unwrap_or_default(),
        plan["judge_calls"]["at_least"],
        plan["judge_calls"]["at_most"],
        plan["estimated_prompt_tokens"],
    );
    for line in plan["not_planned"].as_array().into_iter().flatten() {
        out.push_str(&format!("not planned: {}\n", line.as_str().unwrap_or("")));
    }
    out
}
