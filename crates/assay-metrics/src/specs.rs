//! The entry of every lexical and tool-call metric, read by `assay
//! metrics` (and so the metrics reference) and by parameter checking.
//! The judged metrics are in [`crate::judged::registry`].

use crate::params::ParamSpec;
use crate::spec::{Direction, MetricSpec};
use crate::MetricId;
use assay_core::Field;

const RESPONSE_AND_REFERENCES: &[Field] = &[Field::Response, Field::References];

/// chrF's parameters after `word_order`, the same for chrF and chrF++.
const CHRF_SPACE_AND_CASE: [ParamSpec; 2] = [
    ParamSpec {
        name: "whitespace",
        default: "false",
        doc:
            "keep white space in character n-grams (sacreBLEU whitespace=True; signature space:yes)",
    },
    ParamSpec {
        name: "lowercase",
        default: "false",
        doc: "lowercase both texts first (Python's str.lower(); signature case:lc)",
    },
];

const CHRF_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "word_order",
        default: "0",
        doc: "word n-gram orders added to the 6 character orders, 0 to 9 (2 is chrF++)",
    },
    CHRF_SPACE_AND_CASE[0],
    CHRF_SPACE_AND_CASE[1],
];

const CHRFPP_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "word_order",
        default: "2",
        doc: "word n-gram orders added to the 6 character orders, 0 to 9",
    },
    CHRF_SPACE_AND_CASE[0],
    CHRF_SPACE_AND_CASE[1],
];

/// The spec of a metric.
pub fn spec(id: MetricId) -> &'static MetricSpec {
    SPECS.iter().find(|s| s.id == id).unwrap_or(&SPECS[0])
}

/// Every metric's spec, in [`MetricId::ALL`] order.
pub static SPECS: [MetricSpec; 11] = [
    MetricSpec {
        id: MetricId::Rouge,
        summary: "n-gram and longest-common-subsequence overlap with the reference (F-measure)",
        definition: "rouge-score 0.1.2 RougeScorer.score_multi(references, response): lowercased ASCII \
                     alphanumeric tokens, optional NLTK Porter stemming of tokens longer than 3 characters; \
                     per ROUGE type the reference with the best F (first on ties); value = F, details = P/R/F. \
                     rouge-score's tokenizer finds no token in text without ASCII letters or digits (Chinese, \
                     Arabic, Hindi, Russian...): for such text set tokenizer=unicode (or char, whitespace), \
                     assay's own tokenizers, which rouge-score does not have.",
        required: RESPONSE_AND_REFERENCES,
        params: &[
            ParamSpec {
                name: "types",
                default: "rouge1,rouge2,rougeL,rougeLsum",
                doc: "comma-separated ROUGE types: rouge1..rouge9, rougeL, rougeLsum (summary-level LCS over lines)",
            },
            ParamSpec {
                name: "use_stemmer",
                default: "false",
                doc: "apply NLTK's Porter stemmer (NLTK_EXTENSIONS mode) to tokens longer than 3 characters",
            },
            ParamSpec {
                name: "tokenizer",
                default: "default",
                doc: "default: rouge-score's (lowercased runs of [a-z0-9]); unicode: lowercased runs of letters, \
                      marks and digits of any script, each Chinese character and kana a token; whitespace: \
                      lowercased str.split(), for pre-segmented text; char: each lowercased letter, mark or digit \
                      a token. The stemmer applies to [a-z0-9] tokens only",
            },
        ],
        direction: Direction::HigherIsBetter,
        empty_inputs: "0 when either side has no tokens (including text with no ASCII letters or digits)",
        outputs: "rouge1, rouge2, rougeL, rougeLsum (one per type)",
    },
    MetricSpec {
        id: MetricId::Bleu,
        summary: "n-gram precision against the references with a brevity penalty (nltk sentence BLEU)",
        definition: "nltk 3.10.4 sentence_bleu: counts clipped by the maximum in any one reference, closest \
                     reference length (ties: shorter), brevity penalty, weighted geometric mean of modified \
                     precisions; values below 1e-9 reported as 0 (valor-lite). Corpus BLEU (nltk corpus_bleu) \
                     in the summary.",
        required: RESPONSE_AND_REFERENCES,
        params: &[
            ParamSpec {
                name: "weights",
                default: "0.25,0.25,0.25,0.25",
                doc: "comma-separated n-gram weights; their count is the maximum order",
            },
            ParamSpec {
                name: "smoothing",
                default: "method0",
                doc: "nltk SmoothingFunction method0..method7 (epsilon 0.1, alpha 5, k 5)",
            },
            ParamSpec {
                name: "tokenizer",
                default: "regex",
                doc: "regex: valor-lite's \\w+|\\$[\\d]+|[^\\s\\.]+; whitespace: Python str.split()",
            },
        ],
        direction: Direction::HigherIsBetter,
        empty_inputs: "0 for an empty response (no unigram matches)",
        outputs: "bleu",
    },
    MetricSpec {
        id: MetricId::Sacrebleu,
        summary: "sacreBLEU sentence BLEU (13a tokenizer by default, exp smoothing, effective order), scaled to [0, 1]",
        definition: "sacrebleu 2.6.0 sentence_bleu(response, references, tokenize=..., lowercase=...) / 100; \
                     corpus BLEU (effective order off) and its sacreBLEU signature in the summary.",
        required: RESPONSE_AND_REFERENCES,
        params: &[
            ParamSpec {
                name: "tokenize",
                default: "13a",
                doc: "sacreBLEU's tokenizer: 13a (mteval-v13a); intl (mteval-v14: Unicode punctuation and \
                      symbols split off, numbers kept whole); zh (each Chinese character a token, then 13a's \
                      punctuation rules); char (each character a token); none (split on white space only). \
                      sacreBLEU's ja-mecab, ko-mecab and spm need external models and are not offered",
            },
            ParamSpec {
                name: "lowercase",
                default: "false",
                doc: "lowercase both texts first (Python's str.lower(); signature case:lc)",
            },
        ],
        direction: Direction::HigherIsBetter,
        empty_inputs: "0 for an empty response",
        outputs: "sacrebleu",
    },
    MetricSpec {
        id: MetricId::Chrf,
        summary: "character n-gram F-score (chrF2), scaled to [0, 1]",
        definition: "sacrebleu 2.6.0 CHRF(word_order, whitespace, lowercase).sentence_score: character order 6, \
                     beta 2, the best reference's statistics; / 100. Corpus chrF in the summary.",
        required: RESPONSE_AND_REFERENCES,
        params: CHRF_PARAMS,
        direction: Direction::HigherIsBetter,
        empty_inputs: "0 when either side is empty",
        outputs: "chrf",
    },
    MetricSpec {
        id: MetricId::Chrfpp,
        summary: "chrF++: chrF plus word unigrams and bigrams, scaled to [0, 1]",
        definition: "sacrebleu 2.6.0 CHRF(word_order=2, whitespace, lowercase).sentence_score; / 100. Corpus \
                     chrF++ in the summary.",
        required: RESPONSE_AND_REFERENCES,
        params: CHRFPP_PARAMS,
        direction: Direction::HigherIsBetter,
        empty_inputs: "0 when either side is empty",
        outputs: "chrfpp",
    },
    MetricSpec {
        id: MetricId::ExactMatch,
        summary: "1 if the response equals a reference exactly, else 0",
        definition: "ragas ExactMatch: reference == response, compared as Unicode strings; several references: \
                     1 if any matches.",
        required: RESPONSE_AND_REFERENCES,
        params: &[],
        direction: Direction::HigherIsBetter,
        empty_inputs: "1 when response and reference are both empty",
        outputs: "exact_match",
    },
    MetricSpec {
        id: MetricId::StringPresence,
        summary: "1 if a reference occurs in the response as a substring, else 0",
        definition: "ragas StringPresence: reference in response; several references: 1 if any occurs.",
        required: RESPONSE_AND_REFERENCES,
        params: &[],
        direction: Direction::HigherIsBetter,
        empty_inputs: "1 for an empty reference (the empty string occurs everywhere, as in Python)",
        outputs: "string_presence",
    },
    MetricSpec {
        id: MetricId::StringSimilarity,
        summary: "1 - normalised edit distance between response and reference",
        definition: "ragas NonLLMStringSimilarity with rapidfuzz 3.x semantics over Unicode code points; \
                     several references: the best.",
        required: RESPONSE_AND_REFERENCES,
        params: &[ParamSpec {
            name: "distance",
            default: "levenshtein",
            doc: "levenshtein (normalised by the longer length), hamming (unequal lengths padded), jaro, jaro_winkler",
        }],
        direction: Direction::HigherIsBetter,
        empty_inputs: "1 when both are empty, 0 when exactly one is",
        outputs: "string_similarity",
    },
    crate::tools::tool_call_accuracy::SPEC,
    crate::tools::tool_call_f1::SPEC,
    crate::tools::tool_correctness::SPEC,
];
