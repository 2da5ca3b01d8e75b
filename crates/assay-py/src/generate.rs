//! `assay.generate`: a test set from documents, over `assay-run`'s
//! generation, as `assay generate` makes it.

use crate::convert::{eval_error, to_python, UsageError};
use crate::evaluate::drive;
use crate::options::Keywords;
use assay_config::{EvalOption, Field};
use pyo3::prelude::*;
use std::path::PathBuf;

/// Makes a test set from documents, as `assay generate` does, and returns
/// `(rows, rejected, summary, unread)`; with `dry_run`, the plan and the
/// judge calls it needs, without a call. `options` maps
/// `assay.generate`'s keyword names to their values: `paths` (files or
/// folders), `texts` (`(name, text)` pairs), `size`, `mix`, `seed`,
/// `chunk_tokens`, `personas`, `evolutions`, `max_calls`, `max_cost`,
/// `critic`,
/// `out`, `dry_run`,
/// `threads`, and the judge
/// keywords of `evaluate`. `progress` and `stop` are `evaluate`'s: notes
/// go to `progress("note", line)`, and Ctrl-C or `stop` ends the
/// generation with what was made written, then raises
/// `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (options, progress=None, stop=None))]
pub fn generate(
    py: Python<'_>,
    options: &Bound<'_, PyAny>,
    progress: Option<Py<PyAny>>,
    stop: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    use assay_run::generate::{DocumentSource, GenerateConfig};
    let mut keywords = Keywords::new(options)?;
    let paths: Vec<PathBuf> = keywords.take("paths")?.unwrap_or_default();
    let texts: Vec<(String, String)> = keywords.take("texts")?.unwrap_or_default();
    let mut generation = assay_generate::pipeline::Options::default();
    if let Some(size) = keywords.take("size")? {
        generation.size = size;
    }
    if let Some(mix) = keywords.take::<String>("mix")? {
        generation.mix = mix
            .parse()
            .map_err(|e: String| UsageError::new_err(format!("mix: {e}")))?;
    }
    if let Some(seed) = keywords.take("seed")? {
        generation.seed = seed;
    }
    if let Some(tokens) = keywords.take("chunk_tokens")? {
        generation.chunk_tokens = tokens;
    }
    generation.personas = keywords.take("personas")?.unwrap_or_default();
    let evolutions: Vec<String> = keywords.take("evolutions")?.unwrap_or_default();
    generation.evolutions = evolutions
        .iter()
        .map(|e| e.parse())
        .collect::<Result<_, String>>()
        .map_err(|e| UsageError::new_err(format!("evolutions: {e}")))?;
    generation.max_calls = keywords.take("max_calls")?;
    generation.max_cost = keywords.take("max_cost")?;
    generation.critic = keywords.take("critic")?;
    generation.closed_book = keywords.take("closed_book")?.unwrap_or(false);
    generation.round_trip = keywords.take("round_trip")?.unwrap_or(false);
    let dry_run = keywords.take("dry_run")?.unwrap_or(false);
    let config = GenerateConfig {
        documents: paths
            .into_iter()
            .map(DocumentSource::Path)
            .chain(
                texts
                    .into_iter()
                    .map(|(name, text)| DocumentSource::Text { name, text }),
            )
            .collect(),
        options: generation,
        out: keywords.field(Field::Eval(EvalOption::Out))?,
        threads: keywords.field(Field::Eval(EvalOption::Threads))?,
        judge: keywords.declared()?,
    };
    keywords.finish()?;
    let done = drive(py, progress, stop, move |observer, cancel| {
        if dry_run {
            assay_run::generate::plan(&config)
        } else {
            assay_run::generate::generate(&config, observer, cancel)
        }
    })?
    .map_err(eval_error)?;
    let value = serde_json::json!([done.rows, done.rejected, done.summary, done.unread]);
    to_python(py, &value)
}
