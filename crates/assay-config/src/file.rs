//! A configuration file: the declared run options in TOML, keyed by their
//! Python keywords (`concurrency = 4`, `judge = "openai:gpt-4o-mini"`),
//! either a file of its own or the `[tool.assay]` table of a
//! `pyproject.toml`. The command line's flags and Python's keywords are
//! given over it, so that a file holds a project's defaults and a run
//! changes what it names. A secret is never read from a file.
//!
//! Values are TOML's own: text, numbers and booleans as they are (`cache =
//! false` is `--no-cache`), a list for a repeatable option, and a table
//! for one of `KEY=VALUE` items (`[prices]` `"gpt-4o" = "2.5/10"`,
//! `[fail_under]` `faithfulness = 0.7`).
//! Relative paths are read from the directory the run starts in, as the
//! flags' are.
//!
//! ```
//! use assay_config::file::ConfigFile;
//! use assay_config::{EvalOptions, JudgeConfig};
//! let file = ConfigFile::parse("assay.toml", "concurrency = 4\nstrict = true\n").unwrap();
//! let judge: JudgeConfig = file.options().unwrap();
//! assert_eq!(judge.concurrency, 4);
//! let eval: EvalOptions = file.options().unwrap();
//! assert!(eval.strict);
//! let e = ConfigFile::parse("assay.toml", "concurrenc = 4").unwrap_err();
//! assert!(e.message.contains("assay.toml: key \"concurrenc\""), "{e}");
//! ```

use crate::options::{Cli, Declared, Kept, Spec};
use crate::{EvalOptions, FinishOption, FinishOptions, JudgeConfig, UsageError};
use std::path::Path;

/// A configuration file's options, checked against the declared ones.
#[derive(Clone, Debug)]
pub struct ConfigFile {
    /// The file as its user named it, for messages.
    name: String,
    keys: toml::Table,
}

impl ConfigFile {
    /// Reads `path`; a `pyproject.toml` gives its `[tool.assay]` table.
    pub fn read(path: &Path) -> Result<ConfigFile, UsageError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            UsageError::general(format!("{name}: cannot read the configuration file: {e}"))
        })?;
        ConfigFile::parse(&name, &text)
    }

    /// The options of `text`, a file named `name`.
    pub fn parse(name: &str, text: &str) -> Result<ConfigFile, UsageError> {
        let bad = |what: String| UsageError::general(format!("{name}: {what}"));
        let mut keys: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| bad(format!("not TOML: {}", e.message())))?;
        if Path::new(name)
            .file_name()
            .is_some_and(|f| f == "pyproject.toml")
        {
            keys = match keys
                .remove("tool")
                .and_then(|mut t| t.as_table_mut()?.remove("assay"))
            {
                Some(toml::Value::Table(t)) => t,
                _ => return Err(bad("has no [tool.assay] table".into())),
            };
        }
        for (key, value) in &keys {
            let bad = |what: String| bad(format!("key {key:?}: {what}"));
            let Some(spec) = spec(key) else {
                return Err(bad(format!(
                    "not a run option; the keys are the options of `assay eval`, named as Python names them: {}",
                    known().join(", ")
                )));
            };
            let cli = spec.how.cli;
            if let Cli::Environment(var) = cli {
                return Err(bad(format!(
                    "a secret is read from {var}, never from a file"
                )));
            }
            kept(value, matches!(cli, Cli::Repeated { .. })).map_err(bad)?;
        }
        Ok(ConfigFile {
            name: name.to_string(),
            keys,
        })
    }

    /// The file's values of `C`'s options over their defaults.
    pub fn options<C: Declared>(&self) -> Result<C, UsageError> {
        let mut given = Vec::new();
        for &option in C::all() {
            let spec = C::spec(option);
            if let Some(value) = self.keys.get(spec.name) {
                let repeated = matches!(spec.how.cli, Cli::Repeated { .. });
                // Checked when read.
                for kept in kept(value, repeated).unwrap_or_default() {
                    given.push((option, kept));
                }
            }
        }
        let mut config = C::default();
        config.give_over(&given).map_err(|(option, e)| {
            UsageError::general(format!(
                "{}: key {:?}: {e}",
                self.name,
                C::spec(option).name
            ))
        })?;
        Ok(config)
    }
}

impl ConfigFile {
    /// The file's options as Python keywords (of `assay.evaluate`, or of
    /// `assay.calibrate` with `judge_only`), their values as the file
    /// writes them; an option only the command line takes is an error.
    pub fn keywords(
        &self,
        judge_only: bool,
    ) -> Result<serde_json::Map<String, serde_json::Value>, UsageError> {
        let mut out = serde_json::Map::new();
        let mut gates = serde_json::Map::new();
        for (key, value) in &self.keys {
            let bound = match FinishOptions::named(key) {
                Some(FinishOption::FailUnder) => Some(">="),
                Some(FinishOption::FailOver) => Some("<="),
                _ => None,
            };
            if judge_only && JudgeConfig::named(key).is_none() {
                continue;
            }
            if let Some(symbol) = bound {
                // Python writes the bounds as `gates`: {"faithfulness": ">= 0.7"}.
                for kept in kept(value, true).unwrap_or_default() {
                    if let Kept::Text(item) = kept {
                        if let Some((name, v)) = item.split_once('=') {
                            gates.insert(name.to_string(), format!("{symbol} {v}").into());
                        }
                    }
                }
                continue;
            }
            if !spec(key).is_some_and(|s| s.how.python) {
                return Err(UsageError::general(format!(
                    "{}: key {key:?}: the command line's only, not a Python keyword",
                    self.name
                )));
            }
            out.insert(key.clone(), json(value));
        }
        if !gates.is_empty() {
            out.insert("gates".into(), gates.into());
        }
        Ok(out)
    }
}

/// A TOML value (of the kinds a file was checked to hold) as JSON.
fn json(value: &toml::Value) -> serde_json::Value {
    match value {
        toml::Value::String(s) => s.clone().into(),
        toml::Value::Integer(i) => (*i).into(),
        toml::Value::Float(f) => (*f).into(),
        toml::Value::Boolean(b) => (*b).into(),
        toml::Value::Array(items) => items.iter().map(json).collect(),
        toml::Value::Table(t) => t.iter().map(|(k, v)| (k.clone(), json(v))).collect(),
        toml::Value::Datetime(d) => d.to_string().into(),
    }
}

/// Every declared option's declaration.
fn specs() -> impl Iterator<Item = &'static Spec> {
    let eval = EvalOptions::all().iter().map(|o| EvalOptions::spec(*o));
    let judge = JudgeConfig::all().iter().map(|o| JudgeConfig::spec(*o));
    let finish = FinishOptions::all().iter().map(|o| FinishOptions::spec(*o));
    eval.chain(judge).chain(finish)
}

/// The declaration of the option named `key`.
fn spec(key: &str) -> Option<&'static Spec> {
    specs().find(|s| s.name == key)
}

/// Every key a file may hold.
fn known() -> Vec<&'static str> {
    specs()
        .filter(|s| !matches!(s.how.cli, Cli::Environment(_)))
        .map(|s| s.name)
        .collect()
}

/// A TOML value as the values given: one for a scalar, each item of a
/// list, `KEY=VALUE` for each entry of a table (the last two only for a
/// repeated option).
fn kept(value: &toml::Value, repeated: bool) -> Result<Vec<Kept>, String> {
    let scalar = |v: &toml::Value| -> Result<Kept, String> {
        match v {
            toml::Value::String(s) => Ok(Kept::Text(s.clone())),
            toml::Value::Integer(i) => Ok(Kept::Text(i.to_string())),
            toml::Value::Float(f) => Ok(Kept::Text(f.to_string())),
            toml::Value::Boolean(b) => Ok(Kept::Switch(*b)),
            other => Err(format!(
                "expected text, a number or a boolean, not {}",
                other.type_str()
            )),
        }
    };
    match value {
        toml::Value::Array(items) if repeated => items.iter().map(scalar).collect(),
        toml::Value::Table(entries) if repeated => entries
            .iter()
            .map(|(k, v)| match scalar(v)? {
                Kept::Text(t) => Ok(Kept::Text(format!("{k}={t}"))),
                Kept::Switch(b) => Ok(Kept::Text(format!("{k}={b}"))),
            })
            .collect(),
        toml::Value::Array(_) | toml::Value::Table(_) => {
            Err(format!("expected one value, not {}", value.type_str()))
        }
        other => Ok(vec![scalar(other)?]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Given;
    use crate::JudgeOption;
    use assay_llm::CacheLocation;

    #[test]
    fn values_are_toml_s_own_and_a_list_or_table_gives_a_repeated_option() {
        let file = ConfigFile::parse(
            "assay.toml",
            r#"
judge = "openai:gpt-4o-mini"
timeout = 30
cache = false
threads = 2
stitch = false
[prices]
"gpt-4o-mini" = "0.15/0.6"
"gpt-4o" = "2.5/10"
"#,
        )
        .unwrap();
        let judge: JudgeConfig = file.options().unwrap();
        assert_eq!(judge.judge.to_string(), "openai:gpt-4o-mini");
        assert_eq!(judge.timeout, 30.0);
        assert_eq!(judge.cache, CacheLocation::Disabled);
        assert_eq!(judge.prices.0.len(), 2);
        let eval: EvalOptions = file.options().unwrap();
        assert_eq!(eval.threads, Some(2));
        assert!(!eval.stitch);
        let listed = ConfigFile::parse("a.toml", "prices = [\"m=1/2\"]").unwrap();
        assert_eq!(listed.options::<JudgeConfig>().unwrap().prices.0.len(), 1);
    }

    /// The bounds are `assay eval`'s `--fail-under`/`--fail-over`, and
    /// Python's `gates`.
    #[test]
    fn gates_are_bounds_on_the_command_line_and_gates_in_python() {
        let text = "max_failed_fraction = 0.1\n[fail_under]\nfaithfulness = 0.7\n[fail_over]\nbias = 0.2\n";
        let file = ConfigFile::parse("c.toml", text).unwrap();
        let finish: FinishOptions = file.options().unwrap();
        assert_eq!(finish.fail_under.0.len(), 1);
        assert_eq!(finish.fail_over.0.len(), 1);
        assert_eq!(finish.max_failed_fraction, Some(0.1));
        let keywords = file.keywords(false).unwrap();
        assert_eq!(
            serde_json::Value::Object(keywords),
            serde_json::json!({
                "max_failed_fraction": 0.1,
                "gates": {"faithfulness": ">= 0.7", "bias": "<= 0.2"},
            })
        );
        assert!(file.keywords(true).unwrap().is_empty());
        let bad = ConfigFile::parse("c.toml", "fail_under = [\"rouge1\"]").unwrap();
        let e = bad.options::<FinishOptions>().unwrap_err().message;
        assert!(e.contains("expected METRIC=VALUE"), "{e}");
    }

    #[test]
    fn a_pyproject_gives_its_tool_assay_table() {
        let text = "[project]\nname = \"x\"\n[tool.assay]\nconcurrency = 3\n";
        let file = ConfigFile::parse("sub/pyproject.toml", text).unwrap();
        assert_eq!(file.options::<JudgeConfig>().unwrap().concurrency, 3);
        let e = ConfigFile::parse("pyproject.toml", "[project]\nname = \"x\"\n").unwrap_err();
        assert_eq!(e.message, "pyproject.toml: has no [tool.assay] table");
    }

    #[test]
    fn mistakes_name_the_file_and_key() {
        let e = |text: &str| ConfigFile::parse("c.toml", text).unwrap_err().message;
        assert!(e("api_key = \"sk-123\"").contains(
            "c.toml: key \"api_key\": a secret is read from OPENAI_API_KEY or ASSAY_API_KEY, never from a file"
        ));
        assert!(!e("api_key = \"sk-123\"").contains("sk-123"));
        assert!(e("timeout = [1, 2]")
            .starts_with("c.toml: key \"timeout\": expected one value, not array"));
        assert!(e("concurency = 2").contains("not a run option; the keys are"));
        assert!(e("x = ").starts_with("c.toml: not TOML"));
        let bad = ConfigFile::parse("c.toml", "concurrency = \"many\"").unwrap();
        let e = bad.options::<JudgeConfig>().unwrap_err().message;
        assert!(e.starts_with("c.toml: key \"concurrency\": "), "{e}");
        let bad = ConfigFile::parse("c.toml", "protocol = \"loud\"").unwrap();
        assert!(bad.options::<JudgeConfig>().is_err());
    }

    /// What a later source gives replaces the file's: a scalar, and a
    /// repeated option's whole list.
    #[test]
    fn given_over_the_file_a_value_wins_and_a_list_is_replaced() {
        let file = ConfigFile::parse(
            "c.toml",
            "concurrency = 3\nrpm = 60\nprices = [\"a=1/2\", \"b=1/2\"]",
        )
        .unwrap();
        let mut judge: JudgeConfig = file.options().unwrap();
        judge
            .give_over(&[
                (JudgeOption::Concurrency, Given::Text("16").into()),
                (JudgeOption::Prices, Given::Text("c=3/4").into()),
            ])
            .unwrap();
        assert_eq!(judge.concurrency, 16);
        assert_eq!(judge.rpm, Some(60));
        assert_eq!(judge.prices.0.len(), 1);
    }
}
