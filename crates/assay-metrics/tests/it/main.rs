//! The registry tested as a whole, and the lexical scorers on samples.

mod registry;
mod scoring;
