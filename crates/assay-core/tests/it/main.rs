//! Integration tests of assay-core: readers over real files.

mod dataset;
mod props;
mod references;
