//! Ctrl-C as a cancel of the run instead of the default death: a run
//! stopped by it flushes its results and writes its summary.

use anyhow::{Context, Result};
use assay_engine::CancelToken;

/// Takes over SIGINT for the rest of the process: the first Ctrl-C
/// cancels `token`. The handler is in place when this returns, so no
/// signal between here and the run's first check kills the process
/// half-way through a line.
pub fn cancel_on_ctrl_c(token: &CancelToken) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the signal runtime")?;
    let mut signal = {
        let _in_rt = rt.enter();
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
            .context("cannot handle Ctrl-C")?
    };
    let token = token.clone();
    std::thread::Builder::new()
        .name("assay-ctrl-c".into())
        .spawn(move || {
            if rt.block_on(signal.recv()).is_some() {
                token.cancel();
            }
        })
        .context("cannot start the signal thread")?;
    Ok(())
}
