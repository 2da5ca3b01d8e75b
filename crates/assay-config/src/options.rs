//! Run options declared once. [`declare!`] turns one list of options
//! (doc comment, name, type, default, how it is written) into the
//! configuration struct, its `Default`, an enum naming each option, and a
//! [`Declared`] implementation through which the command line (clap, in
//! the binary), Python's keywords (the binding), the docs' table and the
//! Python signatures all read the same declaration. Each value is given as
//! text ([`Given::Text`]: a flag's value, `str()` of a keyword) or as a
//! switch ([`Given::Switch`]: `--no-cache`, a Python `bool`), and parsed
//! here, once.
//!
//! ```
//! use assay_config::options::{Declared, Given};
//! use assay_config::{JudgeConfig, JudgeOption};
//! let mut config = JudgeConfig::default();
//! assert_eq!(config.concurrency, 16);
//! config.give(JudgeOption::Concurrency, Given::Text("4")).unwrap();
//! assert_eq!(config.concurrency, 4);
//! assert!(config.give(JudgeOption::Concurrency, Given::Text("four")).is_err());
//! assert_eq!(JudgeOption::MaxRetries.spec().flag(), "--max-retries");
//! ```

use std::path::PathBuf;

/// A value as its user gave it, before parsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Given<'a> {
    /// A flag's value, or `str()` of a Python keyword's.
    Text(&'a str),
    /// A flag without a value (`--no-cache`: false), or a Python `bool`.
    Switch(bool),
}

/// A [`Given`] kept for later: a value given on the command line, given
/// again over a configuration file's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kept {
    Text(String),
    Switch(bool),
}

impl From<Given<'_>> for Kept {
    fn from(given: Given<'_>) -> Kept {
        match given {
            Given::Text(t) => Kept::Text(t.to_string()),
            Given::Switch(b) => Kept::Switch(b),
        }
    }
}

impl Kept {
    pub fn given(&self) -> Given<'_> {
        match self {
            Kept::Text(t) => Given::Text(t),
            Kept::Switch(b) => Given::Switch(*b),
        }
    }
}

/// How the command line writes an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cli {
    /// `--NAME VALUE`, under the value's name in the help.
    Value(&'static str),
    /// `--FLAG VALUE`, repeatable, each value added.
    Repeated {
        flag: &'static str,
        value_name: &'static str,
    },
    /// `--NAME VALUE`, or `--no-NAME` for off.
    ValueOrOff(&'static str),
    /// `--NAME` turns it on.
    Switch,
    /// `--no-NAME` turns it off.
    Off,
    /// Not a flag: read from the named environment variable instead (a
    /// secret never goes on a command line).
    Environment(&'static str),
}

/// How an option is written by its callers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct How {
    pub cli: Cli,
    /// Whether Python takes it as a keyword.
    pub python: bool,
    /// The Python annotation, where Python takes more than the command
    /// line (rows as well as a file); else the type's.
    pub python_type: Option<&'static str>,
}

impl How {
    const fn cli(cli: Cli) -> How {
        How {
            cli,
            python: true,
            python_type: None,
        }
    }

    /// `--NAME VALUE` and a Python keyword.
    pub const fn value(value_name: &'static str) -> How {
        How::cli(Cli::Value(value_name))
    }

    /// `--FLAG VALUE`, repeatable.
    pub const fn repeated(flag: &'static str, value_name: &'static str) -> How {
        How::cli(Cli::Repeated { flag, value_name })
    }

    /// `--NAME VALUE` or `--no-NAME`.
    pub const fn value_or_off(value_name: &'static str) -> How {
        How::cli(Cli::ValueOrOff(value_name))
    }

    /// `--NAME`, a switch.
    pub const fn switch() -> How {
        How::cli(Cli::Switch)
    }

    /// `--no-NAME`, for an option that is on by default.
    pub const fn off() -> How {
        How::cli(Cli::Off)
    }

    /// Read from the environment variable `var` on the command line.
    pub const fn environment(var: &'static str) -> How {
        How::cli(Cli::Environment(var))
    }

    /// As given, without a Python keyword.
    pub const fn command_line_only(self) -> How {
        How {
            python: false,
            ..self
        }
    }

    /// As given, with this Python annotation.
    pub const fn python_type(self, annotation: &'static str) -> How {
        How {
            python_type: Some(annotation),
            ..self
        }
    }
}

/// One declared option: its name (the Python keyword; the flag is its
/// kebab-case form unless [`Cli`] says otherwise), help text and form.
#[derive(Debug, PartialEq, Eq)]
pub struct Spec {
    pub name: &'static str,
    /// The doc comment's lines.
    pub doc: &'static [&'static str],
    pub how: How,
}

impl Spec {
    /// The help text, one paragraph.
    pub fn help(&self) -> String {
        self.doc
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The flag without its dashes: `max-retries`, `price`.
    pub fn long(&self) -> String {
        match self.how.cli {
            Cli::Repeated { flag, .. } => flag.to_string(),
            _ => self.name.replace('_', "-"),
        }
    }

    /// How `words`' caller names it: the flag, or the Python keyword.
    pub fn named(&self, words: crate::Words) -> String {
        match words {
            crate::Words::Cli => self.flag(),
            crate::Words::Python => self.name.to_string(),
        }
    }

    /// How the command line names it: `--max-retries`, `--no-stitch`, or
    /// the environment variable it is read from.
    pub fn flag(&self) -> String {
        match self.how.cli {
            Cli::Environment(var) => var.to_string(),
            Cli::Off => format!("--no-{}", self.long()),
            _ => format!("--{}", self.long()),
        }
    }
}

/// What one option's value looks like to its callers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    /// The default as the command line writes it; `None`: unset.
    pub default: Option<String>,
    /// The default as a Python literal.
    pub python_default: String,
    /// The Python annotation of the keyword.
    pub annotation: String,
    /// The values it accepts, when they are a closed set.
    pub choices: &'static [&'static str],
}

/// A configuration struct made by [`declare!`].
pub trait Declared: Default + Sized {
    /// The enum naming each option.
    type Option: Copy + Eq + std::fmt::Debug + Send + Sync + 'static;
    /// Every option, in declaration order.
    fn all() -> &'static [Self::Option];
    fn spec(option: Self::Option) -> &'static Spec;
    /// Sets `option` from `given` (adds to it, for a repeated one).
    fn give(&mut self, option: Self::Option, given: Given<'_>) -> Result<(), String>;
    /// Sets `option` back to its default (a repeated one to none).
    fn reset(&mut self, option: Self::Option);
    /// Gives each of `given` in turn over `self`; a repeated option given
    /// again starts from none, so that a later source replaces an
    /// earlier one's list instead of adding to it.
    fn give_over(&mut self, given: &[(Self::Option, Kept)]) -> Result<(), (Self::Option, String)> {
        let mut started: Vec<Self::Option> = Vec::new();
        for (option, value) in given {
            if !started.contains(option) {
                self.reset(*option);
                started.push(*option);
            }
            self.give(*option, value.given())
                .map_err(|e| (*option, e))?;
        }
        Ok(())
    }
    /// The option named `name` (its Python keyword).
    fn named(name: &str) -> Option<Self::Option> {
        Self::all()
            .iter()
            .copied()
            .find(|o| Self::spec(*o).name == name)
    }
    /// The option's default and type, for the docs and the signatures.
    fn shown(option: Self::Option) -> Shown;
    /// The field a mistake in `option` is about.
    fn field(option: Self::Option) -> crate::Field;
}

/// A type an option can hold.
pub trait Value: Sized {
    fn give(&mut self, given: Given<'_>) -> Result<(), String>;
    /// The value as the command line writes it; `None`: unset.
    fn shown(&self) -> Option<String>;
    fn python_literal(&self) -> String;
    fn annotation() -> String;
    fn choices() -> &'static [&'static str] {
        &[]
    }
}

/// A type given as one piece of text.
pub trait Scalar: Sized {
    /// The Python annotation of the keyword.
    const PYTHON: &'static str;
    fn parse(text: &str) -> Result<Self, String>;
    fn text(&self) -> String;
    fn choices() -> &'static [&'static str] {
        &[]
    }
}

/// A Python literal for `text`, a value of Python type `python`.
fn literal(python: &str, text: &str) -> String {
    match python {
        "int" | "float" => text.to_string(),
        _ => format!("{text:?}"),
    }
}

/// The annotation of a scalar: its choices as a `Literal`, else its type.
fn scalar_annotation<T: Scalar>() -> String {
    match T::choices() {
        [] => T::PYTHON.to_string(),
        choices => format!(
            "Literal[{}]",
            choices
                .iter()
                .map(|c| format!("{c:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

pub(crate) fn needs_text(given: Given<'_>) -> Result<&str, String> {
    match given {
        Given::Text(t) => Ok(t),
        Given::Switch(_) => Err("expected a value, not a boolean".to_string()),
    }
}

impl<T: Scalar> Value for T {
    fn give(&mut self, given: Given<'_>) -> Result<(), String> {
        *self = T::parse(needs_text(given)?)?;
        Ok(())
    }
    fn shown(&self) -> Option<String> {
        Some(self.text())
    }
    fn python_literal(&self) -> String {
        literal(T::PYTHON, &self.text())
    }
    fn annotation() -> String {
        scalar_annotation::<T>()
    }
    fn choices() -> &'static [&'static str] {
        T::choices()
    }
}

impl<T: Scalar> Value for Option<T> {
    fn give(&mut self, given: Given<'_>) -> Result<(), String> {
        *self = Some(T::parse(needs_text(given)?)?);
        Ok(())
    }
    fn shown(&self) -> Option<String> {
        self.as_ref().map(T::text)
    }
    fn python_literal(&self) -> String {
        self.as_ref()
            .map_or("None".to_string(), |v| literal(T::PYTHON, &v.text()))
    }
    fn annotation() -> String {
        format!("{} | None", scalar_annotation::<T>())
    }
    fn choices() -> &'static [&'static str] {
        T::choices()
    }
}

impl Value for bool {
    fn give(&mut self, given: Given<'_>) -> Result<(), String> {
        *self = match given {
            Given::Switch(b) => b,
            Given::Text("true") => true,
            Given::Text("false") => false,
            Given::Text(other) => return Err(format!("{other:?}: expected true or false")),
        };
        Ok(())
    }
    fn shown(&self) -> Option<String> {
        Some(self.to_string())
    }
    fn python_literal(&self) -> String {
        if *self { "True" } else { "False" }.to_string()
    }
    fn annotation() -> String {
        "bool".to_string()
    }
}

/// Parses with `FromStr`, for the scalars whose error is displayable.
pub(crate) fn from_str<T: std::str::FromStr>(text: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    text.parse().map_err(|e: T::Err| e.to_string())
}

macro_rules! scalar {
    ($ty:ty, $python:literal) => {
        impl Scalar for $ty {
            const PYTHON: &'static str = $python;
            fn parse(text: &str) -> Result<Self, String> {
                from_str(text)
            }
            fn text(&self) -> String {
                self.to_string()
            }
        }
    };
}

scalar!(usize, "int");
scalar!(u32, "int");
scalar!(String, "str");
scalar!(assay_engine::ModelChoice, "str");

impl Scalar for f64 {
    const PYTHON: &'static str = "float";
    fn parse(text: &str) -> Result<Self, String> {
        from_str(text)
    }
    fn text(&self) -> String {
        // `60.0`, which Python and the command line both read as a float.
        format!("{self:?}")
    }
}

impl Scalar for PathBuf {
    const PYTHON: &'static str = "PathLike";
    fn parse(text: &str) -> Result<Self, String> {
        Ok(PathBuf::from(text))
    }
    fn text(&self) -> String {
        self.display().to_string()
    }
}

impl Scalar for assay_llm::Secret {
    const PYTHON: &'static str = "str";
    fn parse(text: &str) -> Result<Self, String> {
        Ok(assay_llm::Secret::new(text))
    }
    /// Masked: a secret is never shown.
    fn text(&self) -> String {
        self.to_string()
    }
}

impl Scalar for assay_metrics::judged::Protocol {
    const PYTHON: &'static str = "str";
    fn parse(text: &str) -> Result<Self, String> {
        from_str(text)
    }
    fn text(&self) -> String {
        self.to_string()
    }
    fn choices() -> &'static [&'static str] {
        &["listed", "per-item", "likelihood", "grounding"]
    }
}

impl Scalar for assay_engine::Reasons {
    const PYTHON: &'static str = "str";
    fn parse(text: &str) -> Result<Self, String> {
        match text {
            "composed" => Ok(assay_engine::Reasons::Composed),
            "llm" => Ok(assay_engine::Reasons::Llm),
            other => Err(format!("{other:?}: expected \"composed\" or \"llm\"")),
        }
    }
    fn text(&self) -> String {
        match self {
            assay_engine::Reasons::Composed => "composed",
            assay_engine::Reasons::Llm => "llm",
        }
        .to_string()
    }
    fn choices() -> &'static [&'static str] {
        &["composed", "llm"]
    }
}

/// The response cache: a path, `--no-cache` (Python `False`), or the
/// default place (Python `True`).
impl Value for assay_llm::CacheLocation {
    fn give(&mut self, given: Given<'_>) -> Result<(), String> {
        *self = match given {
            Given::Switch(true) => assay_llm::CacheLocation::Default,
            Given::Switch(false) => assay_llm::CacheLocation::Disabled,
            Given::Text(path) => assay_llm::CacheLocation::Path(PathBuf::from(path)),
        };
        Ok(())
    }
    fn shown(&self) -> Option<String> {
        match self {
            assay_llm::CacheLocation::Path(p) => Some(p.display().to_string()),
            _ => None,
        }
    }
    fn python_literal(&self) -> String {
        match self {
            assay_llm::CacheLocation::Path(p) => format!("{:?}", p.display().to_string()),
            assay_llm::CacheLocation::Default => "True".to_string(),
            assay_llm::CacheLocation::Disabled => "False".to_string(),
        }
    }
    fn annotation() -> String {
        "bool | PathLike".to_string()
    }
}

/// Declares a configuration struct of run options; see the module docs.
/// Each option: its doc comment (the help text), then
/// `Variant field: Type = default, how;`.
#[macro_export]
macro_rules! declare {
    (
        $(#[$meta:meta])*
        pub struct $config:ident, options $option:ident, field $fieldpath:path {
            $(
                $(#[doc = $doc:literal])*
                $variant:ident $field:ident : $ty:ty = $default:expr, $how:expr;
            )*
        }
    ) => {
        $(#[$meta])*
        pub struct $config {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl Default for $config {
            fn default() -> Self {
                $config { $( $field: $default, )* }
            }
        }

        #[doc = concat!("The options of [`", stringify!($config), "`], one per field.")]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $option {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl $option {
            /// Its declaration.
            pub fn spec(self) -> &'static $crate::options::Spec {
                <$config as $crate::options::Declared>::spec(self)
            }
        }

        impl $crate::options::Declared for $config {
            type Option = $option;
            fn all() -> &'static [$option] {
                &[$($option::$variant),*]
            }
            fn spec(option: $option) -> &'static $crate::options::Spec {
                match option {
                    $( $option::$variant => {
                        static SPEC: $crate::options::Spec = $crate::options::Spec {
                            name: stringify!($field),
                            doc: &[$($doc),*],
                            how: $how,
                        };
                        &SPEC
                    } )*
                }
            }
            fn give(
                &mut self,
                option: $option,
                given: $crate::options::Given<'_>,
            ) -> ::std::result::Result<(), String> {
                match option {
                    $( $option::$variant => $crate::options::Value::give(&mut self.$field, given), )*
                }
            }
            fn reset(&mut self, option: $option) {
                match option {
                    $( $option::$variant => self.$field = $config::default().$field, )*
                }
            }
            fn field(option: $option) -> $crate::Field {
                $fieldpath(option)
            }
            fn shown(option: $option) -> $crate::options::Shown {
                let default = $config::default();
                match option {
                    $( $option::$variant => $crate::options::Shown {
                        default: $crate::options::Value::shown(&default.$field),
                        python_default: $crate::options::Value::python_literal(&default.$field),
                        annotation: option.spec()
                            .how
                            .python_type
                            .map_or_else(
                                <$ty as $crate::options::Value>::annotation,
                                String::from,
                            ),
                        choices: <$ty as $crate::options::Value>::choices(),
                    }, )*
                }
            }
        }
    };
}

/// The help text with its default, as `--help` and the docs print it.
pub fn help<C: Declared>(option: C::Option) -> String {
    let help = C::spec(option).help();
    match C::shown(option).default {
        Some(d) if !help.contains("[default:") => format!("{help} [default: {d}]"),
        _ => help,
    }
}

/// The Python parameters of the options Python takes, one per line as a
/// signature lists them (`    concurrency: int = 16,`).
pub fn python_parameters<C: Declared>(indent: &str) -> String {
    C::all()
        .iter()
        .filter(|o| C::spec(**o).how.python)
        .map(|o| {
            let shown = C::shown(*o);
            format!(
                "{indent}{}: {} = {},\n",
                C::spec(*o).name,
                shown.annotation,
                shown.python_default
            )
        })
        .collect()
}

/// The options as a Markdown table: flag, Python keyword, default and
/// meaning.
pub fn markdown_table<C: Declared>() -> String {
    let mut out = String::from("| flag | Python | default | meaning |\n|---|---|---|---|\n");
    for o in C::all() {
        let spec = C::spec(*o);
        let shown = C::shown(*o);
        let flag = match spec.how.cli {
            Cli::Value(v) => format!("`{} {v}`", spec.flag()),
            Cli::Repeated { value_name, .. } => {
                format!("`{} {value_name}` (repeatable)", spec.flag())
            }
            Cli::ValueOrOff(v) => format!("`{} {v}`, `--no-{}`", spec.flag(), spec.long()),
            Cli::Switch | Cli::Off => format!("`{}`", spec.flag()),
            Cli::Environment(var) => format!("`{var}` (environment)"),
        };
        let python = if spec.how.python {
            format!("`{}`", spec.name)
        } else {
            "-".to_string()
        };
        let default = shown.default.map_or("-".to_string(), |d| format!("`{d}`"));
        let mut meaning = spec.help().replace('|', "\\|");
        if !shown.choices.is_empty() {
            meaning.push_str(&format!(" One of: {}.", shown.choices.join(", ")));
        }
        out.push_str(&format!("| {flag} | {python} | {default} | {meaning} |\n"));
    }
    out
}
