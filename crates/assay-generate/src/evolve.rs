//! Evolutions, after DeepEval's: a way to make a question harder
//! (reasoning, more context, more concrete, constrained, comparative,
//! hypothetical, in breadth), each an instruction added to the question
//! prompt of a slot that draws it (`prompts/evolutions.json`, versioned).
//! A test set asks for them by name (`--evolution reasoning`); each
//! planned question then draws one of those named from the seed.
//!
//! ```
//! use assay_generate::evolve::Evolution;
//! let e: Evolution = "comparative".parse().unwrap();
//! assert!(e.instruction().contains("comparison"));
//! assert!("harder".parse::<Evolution>().is_err());
//! ```

use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

/// One evolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Evolution {
    Reasoning,
    MultiContext,
    Concretizing,
    Constrained,
    Comparative,
    Hypothetical,
    InBreadth,
}

impl Evolution {
    pub const ALL: [Evolution; 7] = [
        Evolution::Reasoning,
        Evolution::MultiContext,
        Evolution::Concretizing,
        Evolution::Constrained,
        Evolution::Comparative,
        Evolution::Hypothetical,
        Evolution::InBreadth,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Evolution::Reasoning => "reasoning",
            Evolution::MultiContext => "multi_context",
            Evolution::Concretizing => "concretizing",
            Evolution::Constrained => "constrained",
            Evolution::Comparative => "comparative",
            Evolution::Hypothetical => "hypothetical",
            Evolution::InBreadth => "in_breadth",
        }
    }

    /// What the question prompt is told to do.
    pub fn instruction(self) -> &'static str {
        file()
            .evolutions
            .get(self.name())
            .map_or("", String::as_str)
    }

    /// The version of the evolutions' file, in the generator's signature.
    pub fn version() -> u32 {
        file().version
    }
}

#[derive(Deserialize)]
struct File {
    version: u32,
    evolutions: BTreeMap<String, String>,
}

fn file() -> &'static File {
    static FILE: OnceLock<File> = OnceLock::new();
    FILE.get_or_init(|| {
        serde_json::from_str(include_str!("../prompts/evolutions.json"))
            .expect("the built-in evolutions file parses")
    })
}

impl fmt::Display for Evolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Evolution {
    type Err = String;

    fn from_str(name: &str) -> Result<Evolution, String> {
        crate::by_name(&Evolution::ALL, Evolution::name, name, "an evolution")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_evolution_has_an_instruction_and_the_file_no_other() {
        for e in Evolution::ALL {
            assert!(e.instruction().starts_with("Then "), "{e}");
        }
        assert_eq!(file().evolutions.len(), Evolution::ALL.len());
    }
}
