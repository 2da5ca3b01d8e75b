//! The command line's flags of a configuration `assay-config` declares
//! (see [`assay_config::options`]): each declared option becomes its flag,
//! with the declaration's help and default, and its values are given to
//! the configuration as the declaration parses them. The values given are
//! kept, to be given again over a configuration file's.

use assay_config::options::{self, Cli, Declared, Given, Kept};
use clap::builder::PossibleValuesParser;
use clap::error::ErrorKind;
use clap::{Arg, ArgAction, ArgMatches, Command, FromArgMatches};

/// A declared configuration, read from the command line: the options'
/// defaults with the flags given over them, and the flags given.
#[derive(Clone, Debug, Default)]
pub struct Flags<C: Declared> {
    pub config: C,
    pub given: Vec<(C::Option, Kept)>,
}

impl<C: Declared> Flags<C> {
    /// `base` (a configuration file's options) with the flags given over
    /// it: a flag wins over the file, and a repeated flag replaces the
    /// file's list.
    pub fn over(&self, mut base: C) -> Result<C, String> {
        base.give_over(&self.given)
            .map_err(|(option, e)| format!("{}: {e}", C::spec(option).flag()))?;
        Ok(base)
    }
}

/// The id of `--no-NAME`.
fn off(name: &str) -> String {
    format!("no_{name}")
}

impl<C: Declared + 'static> clap::Args for Flags<C> {
    fn augment_args(cmd: Command) -> Command {
        C::all().iter().fold(cmd, |cmd, &option| {
            let spec = C::spec(option);
            let shown = C::shown(option);
            let value = |value_name: &'static str| {
                let arg = Arg::new(spec.name)
                    .long(spec.long())
                    .value_name(value_name)
                    .help(options::help::<C>(option));
                if shown.choices.is_empty() {
                    arg.value_parser(move |text: &str| {
                        C::default()
                            .give(option, Given::Text(text))
                            .map(|()| text.to_string())
                    })
                } else {
                    arg.value_parser(PossibleValuesParser::new(shown.choices))
                }
            };
            match spec.how.cli {
                Cli::Value(v) => cmd.arg(value(v).action(ArgAction::Set)),
                Cli::Repeated { value_name, .. } => {
                    cmd.arg(value(value_name).action(ArgAction::Append))
                }
                Cli::ValueOrOff(v) => cmd.arg(value(v).action(ArgAction::Set)).arg(
                    Arg::new(off(spec.name))
                        .long(format!("no-{}", spec.long()))
                        .action(ArgAction::SetTrue)
                        .conflicts_with(spec.name)
                        .help(format!("Turns {} off.", spec.flag())),
                ),
                Cli::Switch => cmd.arg(
                    Arg::new(spec.name)
                        .long(spec.long())
                        .action(ArgAction::SetTrue)
                        .help(spec.help()),
                ),
                Cli::Off => cmd.arg(
                    Arg::new(off(spec.name))
                        .long(format!("no-{}", spec.long()))
                        .action(ArgAction::SetTrue)
                        .help(spec.help()),
                ),
                Cli::Environment(_) => cmd,
            }
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<C: Declared> FromArgMatches for Flags<C> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = Flags {
            config: C::default(),
            given: Vec::new(),
        };
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for &option in C::all() {
            let spec = C::spec(option);
            let (config, kept) = (&mut self.config, &mut self.given);
            let mut give = |given: Given<'_>| {
                config.give(option, given).map_err(|e| {
                    clap::Error::raw(
                        ErrorKind::ValueValidation,
                        format!("{}: {e}\n", spec.flag()),
                    )
                })?;
                kept.push((option, given.into()));
                Ok::<(), clap::Error>(())
            };
            match spec.how.cli {
                Cli::Environment(_) => {}
                Cli::Switch => {
                    if matches.get_flag(spec.name) {
                        give(Given::Switch(true))?;
                    }
                }
                Cli::Off => {
                    if matches.get_flag(&off(spec.name)) {
                        give(Given::Switch(false))?;
                    }
                }
                Cli::Value(_) | Cli::Repeated { .. } | Cli::ValueOrOff(_) => {
                    for text in matches.get_many::<String>(spec.name).into_iter().flatten() {
                        give(Given::Text(text))?;
                    }
                    if matches!(spec.how.cli, Cli::ValueOrOff(_))
                        && matches.get_flag(&off(spec.name))
                    {
                        give(Given::Switch(false))?;
                    }
                }
            }
        }
        Ok(())
    }
}
