//! What each question of a test set is to be made from, before any judge
//! call: its type, its chunk (and for a multi-hop or abstract question the
//! chunk's partner, [`crate::links`]), a persona, a query style and a
//! length, all drawn from a seed. The same chunks, quotas and seed give
//! the same plan. A slot that cannot be filled (a document without
//! chunks; a multi-hop slot in a document none of whose chunks has a
//! partner) is a [`Shortfall`] with its reason, to be counted and
//! reported, never dropped unseen.
//!
//! ```
//! use assay_generate::plan::{plan, PlanChunk, Shortfall};
//! let chunks = [
//!     PlanChunk { document: 0, partner: Some(2) },
//!     PlanChunk { document: 0, partner: None },
//!     PlanChunk { document: 1, partner: Some(0) },
//! ];
//! // Document 0: 2 single-hop, 1 multi-hop; document 1: 1 abstract.
//! let slots = plan(&chunks, &[[2, 1, 0, 0], [0, 0, 1, 0]], 3, 0, 7);
//! assert_eq!(slots.len(), 4);
//! let multi = slots[2].as_ref().unwrap();
//! assert_eq!((multi.chunk, multi.partner), (0, Some(2)));
//! assert_eq!(plan(&chunks, &[[0, 0, 0, 0], [0, 2, 0, 0]], 3, 0, 7).len(), 2);
//! let none = plan(&chunks[..2], &[[0, 0, 0, 0], [1, 0, 0, 0]], 3, 0, 7);
//! assert_eq!(none[0], Err(Shortfall::NoChunks { document: 1 }));
//! ```

use crate::quota::{QuestionType, TYPES};
use assay_core::aggregate::SplitMix64;
use std::fmt;

/// How a question is worded (ragas' query styles).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    PerfectGrammar,
    PoorGrammar,
    WebSearch,
    Misspelled,
}

impl Style {
    pub const ALL: [Style; 4] = [
        Style::PerfectGrammar,
        Style::PoorGrammar,
        Style::WebSearch,
        Style::Misspelled,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Style::PerfectGrammar => "perfect_grammar",
            Style::PoorGrammar => "poor_grammar",
            Style::WebSearch => "web_search",
            Style::Misspelled => "misspelled",
        }
    }
}

/// How long a question is (ragas' query lengths).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    Short,
    Medium,
    Long,
}

impl Length {
    pub const ALL: [Length; 3] = [Length::Short, Length::Medium, Length::Long];

    pub fn name(self) -> &'static str {
        match self {
            Length::Short => "short",
            Length::Medium => "medium",
            Length::Long => "long",
        }
    }
}

/// What the plan needs of a chunk: its document and its partner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanChunk {
    pub document: usize,
    pub partner: Option<usize>,
}

/// One question to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub kind: QuestionType,
    pub document: usize,
    pub chunk: usize,
    pub partner: Option<usize>,
    /// An index into the personas.
    pub persona: usize,
    pub style: Style,
    pub length: Length,
    /// An index into the evolutions asked for, where some are.
    pub evolution: Option<usize>,
}

/// Why a slot could not be planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shortfall {
    /// The document has no chunk (it is empty, or only headings).
    NoChunks { document: usize },
    /// No chunk of the document shares enough terms with another chunk
    /// for a question of two.
    NoLinkedChunk { document: usize, kind: QuestionType },
}

impl Shortfall {
    /// The document whose quota it leaves short.
    pub fn document(&self) -> usize {
        match self {
            Shortfall::NoChunks { document } | Shortfall::NoLinkedChunk { document, .. } => {
                *document
            }
        }
    }
}

impl fmt::Display for Shortfall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shortfall::NoChunks { .. } => f.write_str("no_chunks: the document has no text to ask about"),
            Shortfall::NoLinkedChunk { kind, .. } => write!(
                f,
                "no_linked_chunk: no chunk of the document shares {} or more terms with another, as a {kind} question needs",
                crate::links::MIN_SHARED
            ),
        }
    }
}

/// What the seed is mixed with for the evolutions' stream.
const EVOLUTION_STREAM: u64 = 0x6576_6f6c_7665; // "evolve"

/// `items` in the order of a Fisher-Yates shuffle drawn from `rng`.
fn shuffle<T>(rng: &mut SplitMix64, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i + 1));
    }
}

/// The slots of `quotas` (per document, per type in
/// [`QuestionType::ALL`]'s order) over `chunks`, with `personas` personas
/// and `evolutions` evolutions (none drawn when 0) to draw from, in document order and within a document in type order.
/// Each document's chunks are taken in a shuffled order, again from the
/// start when its quota outnumbers them.
pub fn plan(
    chunks: &[PlanChunk],
    quotas: &[[usize; TYPES]],
    personas: usize,
    evolutions: usize,
    seed: u64,
) -> Vec<Result<Slot, Shortfall>> {
    let mut rng = SplitMix64(seed);
    // Evolutions come from a stream of their own, so that asking for
    // them changes nothing else of the plan.
    let mut evolving = SplitMix64(seed ^ EVOLUTION_STREAM);
    let mut out = Vec::new();
    for (document, quota) in quotas.iter().enumerate() {
        let mut own: Vec<usize> = (0..chunks.len())
            .filter(|&c| chunks[c].document == document)
            .collect();
        shuffle(&mut rng, &mut own);
        let linked: Vec<usize> = own
            .iter()
            .copied()
            .filter(|&c| chunks[c].partner.is_some())
            .collect();
        let (mut next_own, mut next_linked) = (0, 0);
        for (kind, &n) in QuestionType::ALL.iter().zip(quota) {
            for _ in 0..n {
                let (pool, at) = if kind.linked() {
                    (&linked, &mut next_linked)
                } else {
                    (&own, &mut next_own)
                };
                let slot = if own.is_empty() {
                    Err(Shortfall::NoChunks { document })
                } else if pool.is_empty() {
                    Err(Shortfall::NoLinkedChunk {
                        document,
                        kind: *kind,
                    })
                } else {
                    let chunk = pool[*at % pool.len()];
                    *at += 1;
                    Ok(Slot {
                        kind: *kind,
                        document,
                        chunk,
                        partner: kind.linked().then_some(chunks[chunk].partner).flatten(),
                        persona: rng.below(personas.max(1)),
                        style: Style::ALL[rng.below(Style::ALL.len())],
                        length: Length::ALL[rng.below(Length::ALL.len())],
                        evolution: (evolutions > 0).then(|| evolving.below(evolutions)),
                    })
                };
                out.push(slot);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_plan_and_another_seed_another() {
        let chunks: Vec<PlanChunk> = (0..12)
            .map(|i| PlanChunk {
                document: i % 3,
                partner: (i % 2 == 0).then_some((i + 1) % 12),
            })
            .collect();
        let quotas = [[3, 1, 1, 1], [2, 2, 1, 0], [2, 1, 2, 1]];
        let a = plan(&chunks, &quotas, 4, 0, 1);
        assert_eq!(a, plan(&chunks, &quotas, 4, 0, 1));
        assert_ne!(a, plan(&chunks, &quotas, 4, 0, 2));
        // Evolutions are drawn after the rest: the same chunks and personas.
        let evolved = plan(&chunks, &quotas, 4, 3, 1);
        for (x, y) in a.iter().zip(&evolved) {
            let (x, y) = (x.as_ref().unwrap(), y.as_ref().unwrap());
            assert_eq!(x.chunk, y.chunk);
            assert!(x.evolution.is_none() && y.evolution.is_some_and(|e| e < 3));
        }
        for slot in a.iter().map(|s| s.as_ref().unwrap()) {
            assert_eq!(chunks[slot.chunk].document, slot.document);
            assert!(slot.persona < 4);
            match slot.kind.linked() {
                false => assert_eq!(slot.partner, None),
                true => assert_eq!(slot.partner, chunks[slot.chunk].partner),
            }
        }
    }

    /// A document's four chunks for six single-hop questions: each chunk
    /// once before any twice.
    #[test]
    fn chunks_are_used_evenly_before_any_again() {
        let chunks: Vec<PlanChunk> = (0..4)
            .map(|_| PlanChunk {
                document: 0,
                partner: None,
            })
            .collect();
        let slots = plan(&chunks, &[[6, 0, 0, 0]], 1, 0, 9);
        let used: Vec<usize> = slots.iter().map(|s| s.as_ref().unwrap().chunk).collect();
        let mut first: Vec<usize> = used[..4].to_vec();
        first.sort_unstable();
        assert_eq!(first, [0, 1, 2, 3]);
        assert_eq!(used[4..], used[..2]);
        let short = plan(&chunks, &[[0, 1, 0, 0]], 1, 0, 9);
        assert_eq!(
            short,
            [Err(Shortfall::NoLinkedChunk {
                document: 0,
                kind: QuestionType::MultiHop
            })]
        );
    }
}
