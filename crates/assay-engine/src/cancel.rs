//! Stopping a run from outside: the command line sets it on Ctrl-C, the
//! Python binding on `KeyboardInterrupt`. A cancelled run stops taking
//! rows, abandons the judge calls in flight (answers that came back are
//! in the cache), flushes its results and writes its summary with
//! `"complete": false`; the same run started again resumes it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// A cancellation flag shared between the run and whoever may stop it.
/// Cloning gives another handle on the same flag.
///
/// ```
/// let token = assay_engine::CancelToken::new();
/// let handle = token.clone();
/// assert!(!token.is_cancelled());
/// handle.cancel();
/// assert!(token.is_cancelled());
/// ```
#[derive(Clone, Default)]
pub struct CancelToken(Arc<Inner>);

#[derive(Default)]
struct Inner {
    set: AtomicBool,
    notify: Notify,
}

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Asks the run to stop. Safe from any thread, and from a signal
    /// thread; a second call does nothing more.
    pub fn cancel(&self) {
        self.0.set.store(true, Ordering::SeqCst);
        // A stored permit: a waiter that comes later still wakes.
        self.0.notify.notify_one();
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.set.load(Ordering::SeqCst)
    }

    /// Returns once [`CancelToken::cancel`] has been called.
    pub async fn cancelled(&self) {
        if !self.is_cancelled() {
            self.0.notify.notified().await;
        }
    }
}
