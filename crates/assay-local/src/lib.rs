//! In-process models (see issue 4).
