//! Turns the typed command line into a resolved run.

use crate::cli::{EvalArgs, OutputFormat};
use anyhow::{bail, Context, Result};
use assay_core::{Format, Source};
use assay_metrics::{Metric, MetricId, Setting};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Everything `eval` needs, validated.
pub struct EvalConfig {
    pub source: Source,
    pub input_format: Option<Format>,
    pub metrics: Vec<Metric>,
    pub out: PathBuf,
    pub format: OutputFormat,
    pub strict: Strictness,
    pub threads: usize,
}

/// What a bad row does to the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strictness {
    /// Record it as a failed outcome and go on.
    RecordAndContinue,
    /// Stop the run with exit code 2.
    StopAtFirst,
}

/// A user error: bad flags or input, exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

pub fn resolve(args: EvalArgs) -> Result<EvalConfig> {
    let usage = |e: &dyn std::fmt::Display| anyhow::Error::new(UsageError(e.to_string()));
    let mut ids: Vec<MetricId> = Vec::new();
    for name in args
        .metrics
        .iter()
        .map(|m| m.trim())
        .filter(|m| !m.is_empty())
    {
        let id: MetricId = name.parse().map_err(|e| usage(&e))?;
        if ids.contains(&id) {
            return Err(usage(&format!("metric '{id}' listed twice")));
        }
        ids.push(id);
    }
    if ids.is_empty() {
        return Err(usage(&"--metrics lists no metric"));
    }
    let mut given: BTreeMap<MetricId, BTreeMap<String, String>> = BTreeMap::new();
    for raw in &args.settings {
        let s: Setting = raw.parse().map_err(|e| usage(&e))?;
        if !ids.contains(&s.metric) {
            return Err(usage(&format!(
                "--set {raw}: metric '{}' is not in --metrics",
                s.metric
            )));
        }
        given.entry(s.metric).or_default().insert(s.param, s.value);
    }
    let metrics = ids
        .iter()
        .map(|id| {
            Metric::configure(*id, given.get(id).unwrap_or(&BTreeMap::new())).map_err(|e| usage(&e))
        })
        .collect::<Result<Vec<_>>>()?;
    let input_format = args
        .input_format
        .as_deref()
        .map(|f| f.parse::<Format>().map_err(|e| usage(&e)))
        .transpose()?;
    let threads = match args.threads {
        Some(0) => bail!(UsageError("--threads must be at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let out = match args.out {
        Some(dir) => dir,
        None => PathBuf::from("runs")
            .join(utc_timestamp(std::time::SystemTime::now()).context("system clock")?),
    };
    Ok(EvalConfig {
        source: Source::parse(&args.data),
        input_format,
        metrics,
        out,
        format: args.format,
        strict: if args.strict {
            Strictness::StopAtFirst
        } else {
            Strictness::RecordAndContinue
        },
        threads,
    })
}

/// `20261121T210700Z`: sortable, and safe as a directory name everywhere.
fn utc_timestamp(now: std::time::SystemTime) -> Result<String> {
    let secs = now.duration_since(std::time::UNIX_EPOCH)?.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    Ok(format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    ))
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn timestamps() {
        assert_eq!(utc_timestamp(UNIX_EPOCH).unwrap(), "19700101T000000Z");
        // 2000-02-29 12:34:56 UTC, a leap day.
        assert_eq!(
            utc_timestamp(UNIX_EPOCH + Duration::from_secs(951_827_696)).unwrap(),
            "20000229T123456Z"
        );
    }
}
