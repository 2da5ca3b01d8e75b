//! Test sets from documents, the part that needs no judge: each document
//! read by its structure ([`document`]: plain text, Markdown, HTML, PDF), cut
//! into chunks of at most a token budget along that structure, each chunk
//! keeping its character span in the document's text ([`chunk`]),
//! near-duplicate chunks removed by the Jaccard similarity of their word
//! shingles ([`dedup`]), and the questions a test set asks for shared
//! exactly between question types and documents ([`quota`]); then each
//! planned question's request ([`request`]), the checks of the judge's
//! answer ([`check`]) against the sentences it cites ([`evidence`]), the
//! critic's request and verdict ([`critic`]), the closed-book check's
//! ([`closed_book`]) and the round-trip check's ([`round_trip`]).
//!
//! Everything here is a pure function of its inputs: the same documents
//! and settings give the same chunks and quotas, bit for bit.

pub mod check;
pub mod chunk;
pub mod closed_book;
pub mod critic;
pub mod dedup;
pub mod document;
pub mod evidence;
pub mod evolve;
pub mod links;
pub mod pipeline;
pub mod plan;
pub mod quota;
pub mod request;
pub mod round_trip;

/// The one of `all` that `name_of` names `name`, or an error saying it is
/// not `what` and listing the names.
pub(crate) fn by_name<T: Copy>(
    all: &[T],
    name_of: fn(T) -> &'static str,
    name: &str,
    what: &str,
) -> Result<T, String> {
    all.iter()
        .copied()
        .find(|t| name_of(*t) == name.trim())
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|t| name_of(*t)).collect();
            format!("{name:?}: not {what} (one of {})", names.join(", "))
        })
}
