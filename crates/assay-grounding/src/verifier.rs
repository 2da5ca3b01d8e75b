//! The decision step of the grounding metrics as a trait, so that a model
//! read from a folder (`assay-classifier`) answers in place of the
//! lexical [`crate::Model`] without the metrics knowing which answered.

/// A claim's support by some texts, as a grounding model reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Verified {
    /// P(the texts support the claim).
    pub probability: f64,
    /// The part of the texts the verdict rests on (a grounding model's
    /// best window); empty when there was nothing to read.
    pub evidence: String,
}

/// A model that answers "do these texts support this claim?".
pub trait Verifier: Send + Sync {
    /// What names the model in signatures and cache keys: its weights'
    /// hash, and every setting that changes its answers.
    fn identity(&self) -> &str;

    /// Each claim's support by `sources`, in order.
    fn verify(&self, claims: &[&str], sources: &[&str]) -> Result<Vec<Verified>, String>;

    /// P(supported) from which a claim reads as supported.
    fn threshold(&self) -> f64 {
        0.5
    }
}
