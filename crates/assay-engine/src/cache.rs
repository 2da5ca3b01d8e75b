//! The answer cache of a run's judge, opened where the caller says.

use crate::error::{EngineError, OutputContext, Result};
use assay_llm::{Cache, CacheLocation};
use std::sync::Arc;

/// Opens the answer cache at `location`, creating its folder; `None` when
/// caching is off.
pub fn open_cache(location: CacheLocation) -> Result<Option<Arc<Cache>>> {
    if let Ok(Some(path)) = location.resolve() {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
    }
    Ok(Cache::open_location(&location)
        .map_err(|e| EngineError::Usage(format!("cache: {e}")))?
        .map(Arc::new))
}
