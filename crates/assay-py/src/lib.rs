//! The native part of the Python package `assay` (`assay._assay`): the
//! lexical scorers (`lexical`), `evaluate` over the engine (`evaluate`),
//! calibration, comparison, reports and gates (`review`), and test sets
//! from documents (`generate`). The Rust crates it calls know nothing of Python.

mod convert;
mod evaluate;
mod generate;
mod lexical;
mod options;
mod review;

use pyo3::prelude::*;

/// Runs the `assay` command line with `argv` (the program name first), the
/// GIL released, and returns its exit code: the `assay` command that
/// `pip install` puts on the PATH.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| assay::main_with(argv))
}

#[pymodule]
fn _assay(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(lexical::rouge, m)?)?;
    m.add_function(wrap_pyfunction!(lexical::rouge_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(lexical::sentence_bleu, m)?)?;
    m.add_function(wrap_pyfunction!(lexical::corpus_bleu, m)?)?;
    m.add_function(wrap_pyfunction!(lexical::sentence_sacrebleu, m)?)?;
    m.add_function(wrap_pyfunction!(lexical::corpus_sacrebleu, m)?)?;
    m.add_function(wrap_pyfunction!(lexical::sentence_chrf, m)?)?;
    m.add_function(wrap_pyfunction!(lexical::corpus_chrf, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate::evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate::merge, m)?)?;
    m.add_function(wrap_pyfunction!(review::report, m)?)?;
    m.add_function(wrap_pyfunction!(review::compare, m)?)?;
    m.add_function(wrap_pyfunction!(review::calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(review::align, m)?)?;
    m.add_function(wrap_pyfunction!(generate::generate, m)?)?;
    m.add_function(wrap_pyfunction!(options::config_file, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add("UsageError", m.py().get_type::<convert::UsageError>())?;
    m.add("AuthError", m.py().get_type::<convert::AuthError>())?;
    m.add(
        "JudgeUnavailableError",
        m.py().get_type::<convert::JudgeUnavailableError>(),
    )?;
    Ok(())
}
