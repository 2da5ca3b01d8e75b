use crate::common::assay;
use serde_json::Value;

#[test]
fn metrics_lists_every_metric_with_params_and_fields() {
    let o = assay(&["metrics", "--format", "json"], None);
    assert!(o.status.success());
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    for id in [
        "rouge",
        "bleu",
        "sacrebleu",
        "chrf",
        "chrfpp",
        "exact_match",
        "string_presence",
        "string_similarity",
        "tool_call_accuracy",
        "tool_call_f1",
        "tool_correctness",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    let bleu = list
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "bleu")
        .unwrap();
    assert_eq!(
        bleu["required"],
        serde_json::json!(["response", "references"])
    );
    assert!(bleu["params"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "smoothing" && p["default"] == "method0"));
    let table = String::from_utf8(assay(&["metrics"], None).stdout).unwrap();
    assert!(table.contains("--set rouge.use_stemmer=false"), "{table}");
}
