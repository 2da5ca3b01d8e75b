//! One integration-test binary for assay-text: parity against the Python
//! references over the whole public parity set, plus worked examples.

mod bleu_parity;
mod chrf_parity;
mod common;
mod rouge_parity;
mod sacrebleu_parity;
mod string_metrics;
mod tokenize_parity;
mod valor_vectors;
