//! The committed model is what the training program makes of the
//! training files (`../shared/data/train`, or `ASSAY_TRAIN_DATA`).

use std::path::PathBuf;

#[test]
fn training_reproduces_the_committed_model_exactly() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::var_os("ASSAY_TRAIN_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../../../shared/data/train"));
    assert!(
        dir.is_dir(),
        "the training files are not at {} (set ASSAY_TRAIN_DATA)",
        dir.display()
    );
    let model = assay_grounding::train::train(&dir).unwrap();
    let committed = std::fs::read_to_string(root.join("model/grounding.json")).unwrap();
    assert_eq!(assay_grounding::train::to_json(&model), committed);
    assert_eq!(&model, assay_grounding::Model::builtin());
}
