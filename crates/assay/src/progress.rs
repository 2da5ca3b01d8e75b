//! A one-line progress bar with ETA on stderr, shown only on a terminal:
//! rows done, outcomes by status and, when metrics are judged, the judge's
//! calls, cache hits, tokens and cost so far. It is the command line's
//! observer of the engine; notes go to stderr on their own lines.

use assay_core::Coverage;
use assay_engine::Observer;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Progress {
    enabled: bool,
    start: Instant,
    last_draw: Option<Instant>,
}

impl Progress {
    pub fn new() -> Progress {
        Progress {
            enabled: std::io::stderr().is_terminal(),
            start: Instant::now(),
            last_draw: None,
        }
    }

    fn clear(&self) {
        if self.enabled && self.last_draw.is_some() {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

impl Observer for Progress {
    /// Redraws at most ten times a second; the outputs are counted only
    /// when the line is drawn.
    fn progress(&mut self, p: &assay_engine::Progress<'_>) {
        if !self.enabled
            || self
                .last_draw
                .is_some_and(|t| t.elapsed() < Duration::from_millis(100))
        {
            return;
        }
        self.last_draw = Some(Instant::now());
        let rows = p.rows;
        let elapsed = self.start.elapsed().as_secs_f64();
        let rate = rows as f64 / elapsed.max(1e-9);
        let mut line = match p.total_bytes.filter(|&t| t > 0) {
            Some(total) => {
                let done = (p.bytes_read as f64 / total as f64).min(1.0);
                let width = 30;
                let filled = (done * width as f64) as usize;
                let eta = if done > 0.0 {
                    elapsed * (1.0 - done) / done
                } else {
                    0.0
                };
                format!(
                    "[{}{}] {:3.0}% {rows} rows {rate:.0}/s ETA {}",
                    "#".repeat(filled),
                    "-".repeat(width - filled),
                    done * 100.0,
                    clock(eta)
                )
            }
            None => format!("{rows} rows {rate:.0}/s elapsed {}", clock(elapsed)),
        };
        let mut c = Coverage::default();
        for acc in p.outputs {
            c += acc.coverage();
        }
        line.push_str(&format!(
            " | {} scored {} skipped {} failed",
            c.scored, c.skipped, c.failed
        ));
        if let Some((ledger, prices)) = p.usage {
            let u = ledger.total(assay_llm::CallKind::Chat, prices);
            line.push_str(&format!(
                " | judge {} calls {} cached {}+{} tokens",
                u.requests, u.cache_hits, u.prompt_tokens, u.completion_tokens
            ));
            // The ledger has no cost when a paid-for model has no price:
            // unknown is left out rather than shown as zero.
            if let Some(cost) = u.cost {
                line.push_str(&format!(" cost {cost:.4}"));
            }
        }
        let _ = write!(std::io::stderr(), "\r\x1b[2K{line}");
    }

    fn note(&mut self, message: &str) {
        self.clear();
        eprintln!("{message}");
    }

    fn finish(&mut self) {
        self.clear();
    }
}

fn clock(secs: f64) -> String {
    let s = secs.round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}
