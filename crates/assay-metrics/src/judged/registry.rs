//! Every judged metric (each registered by its line in `judged_metrics!`,
//! `judged/mod.rs`) and every prompt, listed once, so that the metrics and
//! steps themselves need no list of the others. The lexical and tool-call
//! metrics are in [`crate::lexical`]; [`crate::registry`] joins both for
//! users.

use crate::judged::metric::{JudgedDef, JudgedId, UnknownJudged};
use crate::judged::prompt::{Origin, Prompt, PromptError, PromptId, PromptSet, UnknownPrompt};
use crate::judged::{likelihood, reason, steps};
use std::path::Path;
use std::str::FromStr;

/// Every judged metric, in the order `assay metrics` lists them; each is
/// registered by its one line in `judged_metrics!` (`judged/mod.rs`),
/// which also declares its module.
pub static JUDGED: &[&JudgedDef] = super::METRICS;

impl JudgedId {
    /// Every judged metric, in [`JUDGED`] order.
    pub fn all() -> impl Iterator<Item = JudgedId> {
        JUDGED.iter().map(|d| JudgedId::of(d))
    }

    fn position(self) -> usize {
        JUDGED
            .iter()
            .position(|d| d.name == self.name())
            .unwrap_or(usize::MAX)
    }
}

crate::id::in_registry_order!(JudgedId);

impl FromStr for JudgedId {
    type Err = UnknownJudged;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        JudgedId::all()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownJudged(s.to_string()))
    }
}

impl PromptId {
    /// Every prompt: the built-in steps', the reason's and the likelihood
    /// protocol's, then those only one metric's own steps use, in the order
    /// run manifests list them.
    pub fn all() -> impl Iterator<Item = PromptId> {
        let shared = steps::PROMPTS
            .into_iter()
            .chain([reason::OUTCOME_REASON])
            .chain([likelihood::GROUNDED_REPLY, likelihood::OPEN_REPLY]);
        let mut all: Vec<PromptId> = shared.collect();
        for id in JUDGED.iter().flat_map(|d| d.prompts) {
            let forms = id.per_item().unwrap_or_default().iter().map(|f| f.prompt);
            for id in std::iter::once(*id).chain(forms) {
                if !all.contains(&id) {
                    all.push(id);
                }
            }
        }
        all.into_iter()
    }

    /// Whether every run's manifest lists the prompt (the built-in steps',
    /// and the likelihood protocol's), not only a run of the metric whose
    /// own step uses it.
    pub fn is_shared(self) -> bool {
        steps::PROMPTS.contains(&self)
            || [likelihood::GROUNDED_REPLY, likelihood::OPEN_REPLY].contains(&self)
    }
}

impl FromStr for PromptId {
    type Err = UnknownPrompt;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PromptId::all()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownPrompt(s.to_string()))
    }
}

impl PromptSet {
    /// The prompts embedded in the binary.
    pub fn builtin() -> Result<PromptSet, PromptError> {
        let prompts = PromptId::all()
            .map(|id| Prompt::parse(&Origin::Builtin(id), id, id.builtin_text()))
            .collect::<Result<_, PromptError>>()?;
        Ok(PromptSet::new(prompts))
    }

    /// The built-in prompts, each replaced by `DIR/ID.json` where that file
    /// exists. An override may change the version, instruction, examples
    /// and definitions, not the slots or the output schema: those are the
    /// code's contract with [`crate::judged::validate()`]. A `.json` file in
    /// `dir` that names no prompt is an error, so a typo cannot go unseen.
    pub fn load_dir(dir: &Path) -> Result<PromptSet, PromptError> {
        let io = |source| PromptError::Io {
            path: dir.to_path_buf(),
            source,
        };
        let mut set = PromptSet::builtin()?;
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let origin = path.display().to_string();
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            let id: PromptId = stem
                .parse()
                .map_err(|e: UnknownPrompt| PromptError::Invalid {
                    origin: origin.clone(),
                    message: e.to_string(),
                })?;
            let text = std::fs::read_to_string(&path).map_err(|source| PromptError::Io {
                path: path.clone(),
                source,
            })?;
            let prompt = Prompt::parse(&Origin::File(path.clone()), id, &text)?;
            if prompt.output_schema != set.get(id).output_schema {
                return Err(PromptError::Invalid {
                    origin,
                    message: "output_schema differs from the built-in one (only the version, \
                              instruction, examples and definitions may change)"
                        .into(),
                });
            }
            set.replace(prompt);
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_ids_round_trip_and_are_distinct() {
        let all: Vec<PromptId> = PromptId::all().collect();
        for id in &all {
            assert_eq!(id.name().parse::<PromptId>().unwrap(), *id);
            assert_eq!(id.to_string(), id.name());
        }
        let mut names: Vec<&str> = all.iter().map(|p| p.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len(), "two prompts declare one name");
        assert!("statement".parse::<PromptId>().is_err());
    }
}
