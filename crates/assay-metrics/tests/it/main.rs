//! The registry tested as a whole, the lexical scorers on samples, and the
//! judged metrics' pure layer.

mod grounding;
mod judged;
mod judged_golden;
mod judged_params;
mod judged_prompts;
mod modules;
mod registry;
mod scoring;
mod tool_calls;
mod tool_parity;
