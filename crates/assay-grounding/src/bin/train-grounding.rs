//! Rebuilds the grounding model from the labelled training files.
//!
//! ```sh
//! train-grounding DIR [OUT]   # DIR: ../shared/data/train; OUT: model/grounding.json
//! ```
//!
//! Writes OUT (or standard output) and prints the cross-validated figures
//! to standard error.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: train-grounding DIR [OUT]");
        return ExitCode::from(2);
    };
    let model = match assay_grounding::train::train(std::path::Path::new(dir)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("train-grounding: {e}");
            return ExitCode::FAILURE;
        }
    };
    for f in &model.provenance.files {
        eprintln!(
            "{}: {} rows, {} claims ({} supported)",
            f.name, f.rows, f.claims, f.supported
        );
    }
    eprintln!("out-of-fold ROC-AUC per fold: {:?}", model.provenance.folds);
    eprintln!(
        "out-of-fold ROC-AUC per source: {:?}",
        model.provenance.sources
    );
    let json = assay_grounding::train::to_json(&model);
    match args.get(1) {
        Some(out) => {
            if let Err(e) = std::fs::write(out, json) {
                eprintln!("train-grounding: {out}: {e}");
                return ExitCode::FAILURE;
            }
        }
        None => print!("{json}"),
    }
    ExitCode::SUCCESS
}
