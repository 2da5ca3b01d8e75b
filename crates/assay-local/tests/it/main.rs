//! Integration tests of assay-local with the real small models (SmolLM2-135M
//! and all-MiniLM-L6-v2) from `scripts/fetch-models.sh`.

mod embed;
mod judge;
