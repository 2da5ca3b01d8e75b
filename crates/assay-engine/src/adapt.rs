//! A prompts folder in another language, translated by the judge
//! (`assay prompts adapt`): each prompt file asked of the judge with
//! [`assay_metrics::judged::adapt`]'s request, its answer checked to be
//! the same prompt in other words, and written where `--prompts DIR`
//! reads it, with the original beside it in `DIR/original/` for review.
//! A prompt whose answer is not one is named and not written, so the
//! built-in one serves for it.

use crate::judging::answered;
use crate::{EngineError, Result};
use assay_llm::{ChatRequest, Judge, JudgeHistory, Message, PromptRef};
use assay_metrics::judged::adapt;
use assay_metrics::judged::prompt::PromptId;
use std::path::{Path, PathBuf};

/// The folder of originals, inside the adapted folder: `--prompts` reads
/// only the folder's own `.json` files.
pub const ORIGINALS: &str = "original";

/// What one adaptation wrote.
#[derive(Debug)]
pub struct Adapted {
    pub out: PathBuf,
    pub written: Vec<PromptId>,
    /// The prompts left out, with why.
    pub failed: Vec<(PromptId, String)>,
}

/// Translates `ids` into `language` (an English name) with `judge`, from
/// `source` (a `--prompts` folder, for the prompts it holds) or the
/// built-in prompts, into the folder `out` (new, or one it wrote before).
pub fn adapt_prompts(
    judge: &Judge,
    source: Option<&Path>,
    ids: &[PromptId],
    language: &str,
    out: &Path,
) -> Result<Adapted> {
    // A folder this command wrote is written again (the judge's cache
    // answers what it translated before): the same command resumes.
    let ours = out.join(ORIGINALS).is_dir();
    if out.exists() && !ours && std::fs::read_dir(out).map_or(true, |mut d| d.next().is_some()) {
        return Err(EngineError::Usage(format!(
            "{}: exists, is not empty and was not written by `assay prompts adapt`; name a new folder",
            out.display()
        )));
    }
    let write = |path: &Path, text: &str| {
        std::fs::write(path, text)
            .map_err(|e| EngineError::Output(format!("{}: {e}", path.display())))
    };
    let originals = out.join(ORIGINALS);
    std::fs::create_dir_all(&originals)
        .map_err(|e| EngineError::Output(format!("{}: {e}", originals.display())))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| EngineError::Internal(format!("cannot start the async runtime: {e}")))?;
    let mut done = Adapted {
        out: out.to_path_buf(),
        written: Vec::new(),
        failed: Vec::new(),
    };
    let mut history = JudgeHistory::NothingAnswered;
    for &id in ids {
        let text = match source.map(|dir| dir.join(format!("{}.json", id.name()))) {
            Some(path) if path.exists() => std::fs::read_to_string(&path)
                .map_err(|e| EngineError::Usage(format!("{}: {e}", path.display())))?,
            _ => id.builtin_text().to_string(),
        };
        write(&originals.join(format!("{}.json", id.name())), &text)?;
        let asked = adapt::request(&text, language)
            .map_err(|e| EngineError::Usage(format!("{}: {e}", id.name())))?;
        let request = ChatRequest::new(
            PromptRef {
                id: format!("adapt/{}", id.name()),
                version: adapt::VERSION.to_string(),
            },
            vec![Message::system(asked.system), Message::user(asked.user)],
        )
        .with_schema(asked.schema);
        let outcome = rt.block_on(judge.chat(&request));
        let answer = match answered(
            outcome,
            judge,
            &mut history,
            "what was translated is written",
        )? {
            Ok(answer) => answer,
            Err(e) => {
                done.failed.push((id, e.to_string()));
                continue;
            }
        };
        match answer
            .json
            .ok_or_else(|| "no JSON answer".to_string())
            .and_then(|json| adapt::adapted(id, &text, &json, language))
        {
            Ok(file) => {
                write(&out.join(format!("{}.json", id.name())), &file)?;
                done.written.push(id);
            }
            Err(e) => done.failed.push((id, e)),
        }
    }
    Ok(done)
}
