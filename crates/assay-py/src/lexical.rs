//! List-in, list-out lexical scorers over `assay-text`, each releasing the
//! GIL while it scores. The Python layer (`assay._lexical`) turns one pair
//! or lists into these calls and shapes the results as `rouge-score`, nltk
//! and sacreBLEU do.

use assay_text::bleu::{self, BleuConfig};
use assay_text::chrf::{self, ChrfConfig, Whitespace};
use assay_text::rouge::{RougeScorer, RougeTokenizer, RougeType, Stemming, Tokenized};
use assay_text::sacrebleu::{BleuScore, Case, SacreBleuConfig};
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

fn rouge_types(types: &[String]) -> PyResult<Vec<RougeType>> {
    types
        .iter()
        .map(|t| t.parse::<RougeType>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(value_error)
}

/// ROUGE of each prediction against its references (the best-scoring
/// reference per type, as `RougeScorer.score_multi` picks it): per pair, one
/// `(precision, recall, fmeasure)` per type in `types`' order. `tokenizer`
/// names one of assay's (`default` is rouge-score's).
#[pyfunction]
pub fn rouge(
    py: Python<'_>,
    predictions: Vec<String>,
    references: Vec<Vec<String>>,
    types: Vec<String>,
    use_stemmer: bool,
    tokenizer: &str,
) -> PyResult<Vec<Vec<Prf>>> {
    let types = rouge_types(&types)?;
    let tokenizer: RougeTokenizer = tokenizer.parse().map_err(value_error)?;
    let stemming = if use_stemmer {
        Stemming::Porter
    } else {
        Stemming::Off
    };
    same_length(predictions.len(), references.len())?;
    py.detach(|| {
        // Built here: the scorer keeps per-thread scratch, so it stays on
        // the thread that scores.
        let scorer = RougeScorer::new(&types, stemming)
            .map_err(value_error)?
            .with_tokenizer(tokenizer);
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

/// One text as a caller's tokenizer split it, tokens as ids (equal tokens,
/// equal ids): the whole text's, and each sentence's.
type TokenIds = (Vec<u32>, Vec<Vec<u32>>);

/// ROUGE on texts tokenized by the caller (rouge-score's `tokenizer=`): per
/// pair, one `(precision, recall, fmeasure)` per type, the best reference
/// per type.
#[pyfunction]
pub fn rouge_tokens(
    py: Python<'_>,
    predictions: Vec<TokenIds>,
    references: Vec<Vec<TokenIds>>,
    types: Vec<String>,
) -> PyResult<Vec<Vec<Prf>>> {
    let types = rouge_types(&types)?;
    same_length(predictions.len(), references.len())?;
    let tokenized = |(tokens, sentences): TokenIds| Tokenized { tokens, sentences };
    py.detach(|| {
        let scorer = RougeScorer::new(&types, Stemming::Off).map_err(value_error)?;
        Ok(predictions
            .into_iter()
            .zip(references)
            .map(|(p, refs)| {
                let refs: Vec<Tokenized<u32>> = refs.into_iter().map(tokenized).collect();
                scorer
                    .score_multi_tokens(&refs, &tokenized(p))
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

fn case(lowercase: bool) -> Case {
    if lowercase {
        Case::Lower
    } else {
        Case::Mixed
    }
}

fn sacrebleu_config(tokenize: &str, lowercase: bool) -> PyResult<SacreBleuConfig> {
    Ok(SacreBleuConfig {
        tokenizer: tokenize.parse().map_err(value_error)?,
        case: case(lowercase),
    })
}

/// sacreBLEU `sentence_bleu` of each prediction against its references.
#[pyfunction]
pub fn sentence_sacrebleu(
    py: Python<'_>,
    predictions: Vec<String>,
    references: Vec<Vec<String>>,
    tokenize: &str,
    lowercase: bool,
) -> PyResult<Vec<SacreScore>> {
    let config = sacrebleu_config(tokenize, lowercase)?;
    per_pair(py, &predictions, &references, |p, refs| {
        config.sentence_bleu(p, refs).map(sacre)
    })
}

/// sacreBLEU `corpus_bleu` over all pairs (each prediction with its own
/// references).
#[pyfunction]
pub fn corpus_sacrebleu(
    py: Python<'_>,
    predictions: Vec<String>,
    references: Vec<Vec<String>>,
    tokenize: &str,
    lowercase: bool,
) -> PyResult<SacreScore> {
    let config = sacrebleu_config(tokenize, lowercase)?;
    py.detach(|| config.corpus_bleu(&predictions, &references).map(sacre))
        .map_err(value_error)
}

/// chrF settings as `assay.chrf` and `assay.corpus_chrf` pass them: a dict
/// of their keyword arguments.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct ChrfOptions {
    char_order: usize,
    word_order: usize,
    beta: u32,
    whitespace: bool,
    lowercase: bool,
}

impl From<ChrfOptions> for ChrfConfig {
    fn from(o: ChrfOptions) -> ChrfConfig {
        ChrfConfig {
            char_order: o.char_order,
            word_order: o.word_order,
            beta: o.beta,
            case: case(o.lowercase),
            whitespace: if o.whitespace {
                Whitespace::Included
            } else {
                Whitespace::Excluded
            },
        }
    }
}

/// sacreBLEU `CHRF(...).sentence_score` of each prediction against its
/// references.
#[pyfunction]
pub fn sentence_chrf(
    py: Python<'_>,
    predictions: Vec<String>,
    references: Vec<Vec<String>>,
    options: ChrfOptions,
) -> PyResult<Vec<f64>> {
    let config = ChrfConfig::from(options);
    per_pair(py, &predictions, &references, |p, refs| {
        chrf::sentence_chrf(p, refs, &config)
    })
}

/// sacreBLEU `CHRF(...).corpus_score` over all pairs.
#[pyfunction]
pub fn corpus_chrf(
    py: Python<'_>,
    predictions: Vec<String>,
    references: Vec<Vec<String>>,
    options: ChrfOptions,
) -> PyResult<f64> {
    let config = ChrfConfig::from(options);
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
