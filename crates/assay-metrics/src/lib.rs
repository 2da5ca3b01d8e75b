//! The metric registry.
