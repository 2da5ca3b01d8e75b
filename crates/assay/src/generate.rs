//! `assay generate`: the flags as `assay-run`'s configuration, and what
//! it made (or, with `--dry-run`, planned) shown.

use crate::cli::{GenerateArgs, OutputFormat};
use crate::config;
use anyhow::Result;
use assay_generate::pipeline::Options;
use assay_run::generate::{DocumentSource, GenerateConfig};
use serde_json::Value;

pub fn generate(args: GenerateArgs) -> Result<u8> {
    let config = GenerateConfig {
        documents: args
            .documents
            .iter()
            .cloned()
            .map(DocumentSource::Path)
            .collect(),
        options: Options {
            size: args.size,
            mix: args.mix.clone().unwrap_or_default(),
            seed: args.seed,
            chunk_tokens: args.chunk_tokens,
            personas: args.personas.clone(),
            evolutions: args.evolutions.clone(),
            max_calls: args.max_calls,
            max_cost: args.max_cost,
            critic: args.critic,
            closed_book: args.closed_book,
            round_trip: args.round_trip,
            ..Options::default()
        },
        out: Some(args.out.clone()),
        judge: config::judge_config(&args.judged.judge, args.judged.config.as_deref())?,
        threads: args.judged.threads,
    };
    let done = if args.dry_run {
        assay_run::generate::plan(&config)?
    } else {
        let cancel = assay_engine::CancelToken::new();
        crate::interrupt::cancel_on_ctrl_c(&cancel)?;
        assay_run::generate::generate(&config, &mut crate::progress::Progress::new(), &cancel)?
    };
    for file in &done.unread {
        eprintln!("not read (not Markdown, text, HTML or PDF): {file}");
    }
    let s = &done.summary;
    if args.judged.format == OutputFormat::Json {
        println!("{}", serde_json::to_string_pretty(s)?);
    } else if args.dry_run {
        print!("{}", plan_table(s));
    } else {
        print!("{}", made_table(s));
    }
    Ok(if args.dry_run { 0 } else { done.exit_code() })
}

/// `{"a": 1, "b": 2}` as `a 1, b 2`.
fn counts(v: &Value) -> String {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

fn lines(v: &Value, lead: &str) -> String {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|l| format!("{lead}{}\n", l.as_str().unwrap_or("")))
        .collect()
}

fn plan_table(s: &Value) -> String {
    format!(
        "{} documents, {} chunks to ask about ({} near duplicates, {} too small, {} mostly markup and {} of reference lists set aside)\n\
         {} questions planned: {}\n\
         judge calls: {} to {}; about {} prompt tokens for the first attempts (4 characters a token)\n{}{}",
        s["documents"],
        s["chunks"]["asked_about"],
        s["chunks"]["near_duplicates"],
        s["chunks"]["too_small"],
        s["chunks"]["markup"],
        s["chunks"]["apparatus"],
        s["planned"],
        counts(&s["by_type"]),
        s["judge_calls"]["at_least"],
        s["judge_calls"]["at_most"],
        s["estimated_prompt_tokens"],
        cost_line(&s["estimated_cost"]),
        lines(&s["not_planned"], "not planned: "),
    )
}

/// The dry run's price, where the judge's is known.
fn cost_line(cost: &Value) -> String {
    match (cost["first_attempts"].as_f64(), cost["at_most"].as_f64()) {
        (Some(first), Some(most)) => format!(
            "estimated cost: {first:.4} for the first attempts, at most {most:.4} \
             (answers of {} tokens)\n",
            cost["completion_tokens_per_call"]
        ),
        _ => String::new(),
    }
}

fn made_table(s: &Value) -> String {
    let mut out = format!(
        "made {} of {} questions: {}\nby type: {}\njudge: {} answers ({} from the cache), {} + {} tokens\n",
        s["made"],
        s["requested"],
        s["test_set"].as_str().unwrap_or(""),
        counts(&s["by_type"]),
        s["judge"]["calls"],
        s["judge"]["cache_hits"],
        s["judge"]["prompt_tokens"],
        s["judge"]["completion_tokens"],
    );
    if let Some(cost) = s["judge"]["cost"].as_f64() {
        out.push_str(&format!("cost: {cost:.4}\n"));
    }
    match s["stopped"].as_str() {
        Some("interrupted") => out.push_str("stopped early: interrupted\n"),
        Some(why) => out.push_str(&format!("stopped early: the {why} budget was spent\n")),
        None => {}
    }
    if s["rejected"].as_object().is_some_and(|m| !m.is_empty()) {
        out.push_str(&format!(
            "rejected: {} ({})\n",
            counts(&s["rejected"]),
            s["rejected_candidates"].as_str().unwrap_or("")
        ));
    }
    out + &lines(&s["not_made"], "not made: ")
}
