//! A one-line progress bar with ETA on stderr, shown only on a terminal:
//! rows done, outcomes by status and, when metrics are judged, the judge's
//! calls, cache hits, tokens and cost so far.

use assay_core::{Accumulator, Coverage};
use assay_llm::{PriceTable, UsageLedger};
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Progress {
    enabled: bool,
    total_bytes: Option<u64>,
    start: Instant,
    last_draw: Option<Instant>,
    /// The judge's ledger and prices, read at each redraw.
    judge: Option<(Arc<UsageLedger>, PriceTable)>,
}

impl Progress {
    /// `total_bytes` is the input's size when known (not for stdin).
    pub fn new(total_bytes: Option<u64>) -> Progress {
        Progress {
            enabled: std::io::stderr().is_terminal(),
            total_bytes,
            start: Instant::now(),
            last_draw: None,
            judge: None,
        }
    }

    /// Shows the judge's usage so far from `ledger`, priced with `prices`.
    pub fn with_judge(mut self, ledger: Arc<UsageLedger>, prices: PriceTable) -> Progress {
        self.judge = Some((ledger, prices));
        self
    }

    /// Redraws at most ten times a second; `outputs` are the run's
    /// accumulators, counted only when the line is drawn.
    pub fn update(&mut self, rows: u64, bytes_read: u64, outputs: &[Accumulator]) {
        if !self.enabled
            || self
                .last_draw
                .is_some_and(|t| t.elapsed() < Duration::from_millis(100))
        {
            return;
        }
        self.last_draw = Some(Instant::now());
        let elapsed = self.start.elapsed().as_secs_f64();
        let rate = rows as f64 / elapsed.max(1e-9);
        let mut line = match self.total_bytes.filter(|&t| t > 0) {
            Some(total) => {
                let done = (bytes_read as f64 / total as f64).min(1.0);
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
        for acc in outputs {
            c += acc.coverage();
        }
        line.push_str(&format!(
            " | {} scored {} skipped {} failed",
            c.scored, c.skipped, c.failed
        ));
        if let Some((ledger, prices)) = &self.judge {
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

    pub fn finish(&mut self) {
        if self.enabled && self.last_draw.is_some() {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

fn clock(secs: f64) -> String {
    let s = secs.round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}
