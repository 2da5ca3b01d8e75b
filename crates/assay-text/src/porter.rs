//! TODO(helper): see crate docs.
