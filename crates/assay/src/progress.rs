//! A one-line progress bar with ETA on stderr, shown only on a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Progress {
    enabled: bool,
    total_bytes: Option<u64>,
    start: Instant,
    last_draw: Option<Instant>,
}

impl Progress {
    /// `total_bytes` is the input's size when known (not for stdin).
    pub fn new(total_bytes: Option<u64>) -> Progress {
        Progress {
            enabled: std::io::stderr().is_terminal(),
            total_bytes,
            start: Instant::now(),
            last_draw: None,
        }
    }

    /// Redraws at most ten times a second.
    pub fn update(&mut self, rows: u64, bytes_read: u64) {
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
        let line = match self.total_bytes.filter(|&t| t > 0) {
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
