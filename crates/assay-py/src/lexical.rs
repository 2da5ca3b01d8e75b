//! List-in, list-out lexical scorers over `assay-text`, each releasing the
//! GIL while it scores. The Python layer (`assay._lexical`) turns one pair
//! or lists into these calls and shapes the results as `rouge-score`, nltk
//! and sacreBLEU do.

use assay_text::bleu::{self, BleuConfig};
use assay_text::chrf::{self, ChrfConfig};
use assay_text::rouge::{RougeScorer, RougeType, Stemming};
use assay_text::sacrebleu::{self, BleuScore};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Precision, recall and F1.
type Prf = (f64, f64, f64);

/// sacreBLEU's `BLEUScore` fields: score, counts, totals, precisions, bp,
/// sys_len, ref_len.
type SacreScore = (f64, Vec<u64>, Vec<u64>, Vec<f64>, f64, u64, u64);

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// `score` of each prediction with its references, without the GIL; the
/// first pair that fails is named in the error.
fn per_pair<T: Send, E: std::fmt::Display>(
    py: Python<'_>,
    predictions: &[String],
    references: &[Vec<String>],
    score: impl Fn(&str, &[String]) -> Result<T, E> + Sync,
) -> PyResult<Vec<T>> {
    same_length(predictions.len(), references.len())?;
    py.detach(|| {
        predictions
            .iter()
            .zip(references)
            .enumerate()
            .map(|(i, (p, refs))| {
                score(p, refs).map_err(|e| PyValueError::new_err(format!("pair {i}: {e}")))
            })
            .collect()
    })
}

/// ROUGE of each prediction against its references (the best-scoring
/// reference per type, as `RougeScorer.score_multi` picks it): per pair, one
/// `(precision, recall, fmeasure)` per type in `types`' order.
#[pyfunction]
pub fn rouge(
    py: Python<'_>,
    predictions: Vec<String>,
    references: Vec<Vec<String>>,
    types: Vec<String>,
    use_stemmer: bool,
) -> PyResult<Vec<Vec<Prf>>> {
    let types = types
        .iter()
        .map(|t| t.parse::<RougeType>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(value_error)?;
    let stemming = if use_stemmer {
        Stemming::Porter
    } else {
        Stemming::Off
    };
    same_length(predictions.len(), references.len())?;
    py.detach(|| {
        // Built here: the scorer keeps per-thread scratch, so it stays on
        // the thread that scores.
        let scorer = RougeScorer::new(&types, stemming).map_err(value_error)?;
        Ok(predictions
            .iter()
            .zip(&references)
            .map(|(p, refs)| {
                scorer
                    .score_multi(refs, p)
                    .into_iter()
                    .map(|s| (s.precision, s.recall, s.fmeasure))
                    .collect()
            })
            .collect())
    })
}

fn bleu_config(weights: Vec<f64>, smoothing: &str) -> PyResult<BleuConfig> {
    Ok(BleuConfig {
        weights,
        smoothing: smoothing.parse().map_err(value_error)?,
        ..BleuConfig::default()
    })
}

/// nltk `sentence_bleu` of each prediction against its references
/// (tokenized by `str.split()`).
#[pyfunction]
pub fn sentence_bleu(
    py: Python<'_>,
    predictions: Vec<String>,
    references: Vec<Vec<String>>,
    weights: Vec<f64>,
    smoothing: &str,
) -> PyResult<Vec<f64>> {
    let config = bleu_config(weights, smoothing)?;
    per_pair(py, &predictions, &references, |p, refs| {
        bleu::sentence_bleu(p, refs, &config)
    })
}

/// nltk `corpus_bleu` over all pairs.
#[pyfunction]
pub fn corpus_bleu(
    py: Python<'_>,
    predictions: Vec<String>,
    references: Vec<Vec<String>>,
    weights: Vec<f64>,
    smoothing: &str,
) -> PyResult<f64> {
    let config = bleu_config(weights, smoothing)?;
    py.detach(|| bleu::corpus_bleu(&predictions, &references, &config))
        .map_err(value_error)
}

fn sacre(s: BleuScore) -> SacreScore {
    (
        s.score,
        s.counts.to_vec(),
        s.totals.to_vec(),
        s.precisions.to_vec(),
        s.bp,
        s.sys_len,
        s.ref_len,
    )
}

/// sacreBLEU `sentence_bleu` of each prediction against its references.
#[pyfunction]
pub fn sentence_sacrebleu(
    py: Python<'_>,
    predictions: Vec<String>,
    references: Vec<Vec<String>>,
) -> PyResult<Vec<SacreScore>> {
    per_pair(py, &predictions, &references, |p, refs| {
        sacrebleu::sentence_bleu(p, refs).map(sacre)
    })
}

/// sacreBLEU `corpus_bleu` over all pairs (each prediction with its own
/// references).
#[pyfunction]
pub fn corpus_sacrebleu(
    py: Python<'_>,
    predictions: Vec<String>,
    references: Vec<Vec<String>>,
) -> PyResult<SacreScore> {
    py.detach(|| sacrebleu::corpus_bleu(&predictions, &references).map(sacre))
        .map_err(value_error)
}

fn chrf_config(char_order: usize, word_order: usize, beta: u32) -> ChrfConfig {
    ChrfConfig {
        char_order,
        word_order,
        beta,
    }
}

/// sacreBLEU `sentence_chrf` of each prediction against its references.
#[pyfunction]
pub fn sentence_chrf(
    py: Python<'_>,
    predictions: Vec<String>,
    references: Vec<Vec<String>>,
    char_order: usize,
    word_order: usize,
    beta: u32,
) -> PyResult<Vec<f64>> {
    let config = chrf_config(char_order, word_order, beta);
    per_pair(py, &predictions, &references, |p, refs| {
        chrf::sentence_chrf(p, refs, &config)
    })
}

/// sacreBLEU `corpus_chrf` over all pairs.
#[pyfunction]
pub fn corpus_chrf(
    py: Python<'_>,
    predictions: Vec<String>,
    references: Vec<Vec<String>>,
    char_order: usize,
    word_order: usize,
    beta: u32,
) -> PyResult<f64> {
    let config = chrf_config(char_order, word_order, beta);
    py.detach(|| chrf::corpus_chrf(&predictions, &references, &config))
        .map_err(value_error)
}

fn same_length(predictions: usize, references: usize) -> PyResult<()> {
    if predictions == references {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{predictions} predictions but {references} reference lists: give one per prediction"
        )))
    }
}
