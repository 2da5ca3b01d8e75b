//! Ctrl-C as a flag the run loops check, instead of the default death:
//! a run stopped by it flushes its results and writes its summary.

use anyhow::{Context, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// Set once SIGINT (Ctrl-C) arrives.
pub struct Interrupt {
    set: AtomicBool,
    notify: Notify,
}

impl Interrupt {
    /// Takes over SIGINT for the rest of the process. The handler is in
    /// place when this returns, so no signal between here and the run's
    /// first check kills the process half-way through a line.
    pub fn install() -> Result<Arc<Interrupt>> {
        let interrupt = Arc::new(Interrupt {
            set: AtomicBool::new(false),
            notify: Notify::new(),
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the signal runtime")?;
        let mut signal = {
            let _in_rt = rt.enter();
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
                .context("cannot handle Ctrl-C")?
        };
        let flag = Arc::clone(&interrupt);
        std::thread::Builder::new()
            .name("assay-ctrl-c".into())
            .spawn(move || {
                if rt.block_on(signal.recv()).is_some() {
                    flag.set.store(true, Ordering::SeqCst);
                    // A stored permit: a waiter that comes later still wakes.
                    flag.notify.notify_one();
                }
            })
            .context("cannot start the signal thread")?;
        Ok(interrupt)
    }

    pub fn is_set(&self) -> bool {
        self.set.load(Ordering::SeqCst)
    }

    /// Returns once Ctrl-C has arrived.
    pub async fn wait(&self) {
        if !self.is_set() {
            self.notify.notified().await;
        }
    }
}
