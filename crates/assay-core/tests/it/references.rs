//! `--references FILE` joined onto the rows of any input, and inputs
//! that hold no row.

use assay_core::dataset::{self, DatasetError, Format, InputOptions, Source};
use assay_core::Row;
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

fn open(data: &Path, references: &Path) -> Result<dataset::Rows, DatasetError> {
    let options = InputOptions {
        references: Some(references.to_path_buf()),
        ..InputOptions::default()
    };
    dataset::open_with(&Source::Path(data.to_path_buf()), None, &options)
}

#[test]
fn references_join_by_id_and_trace_id_and_what_matched_nothing_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let data = write(
        dir.path(),
        "chats.jsonl",
        concat!(
            r#"{"id": "a", "messages": [{"role": "user", "content": "Hi"}]}"#,
            "\n",
            r#"{"id": "b", "trace_id": "5bf9", "response": "x"}"#,
            "\n",
            r#"{"response": "no id, row 3"}"#,
            "\n",
            r#"{"id": "d", "response": "y"}"#,
            "\n",
        ),
    );
    let refs = write(
        dir.path(),
        "refs.csv",
        concat!(
            "id,trace_id,reference_tool_calls,ground_truth\n",
            "a,,\"[{\"\"name\"\": \"\"search\"\", \"\"args\"\": {}}]\",\n",
            ",5bf9,,the answer\n",
            "3,,,third\n",
            ",ffff,,nobody's\n",
        ),
    );
    let mut rows = open(&data, &refs).unwrap();
    let samples: Vec<Row> = rows.by_ref().collect();
    let sample = |i: usize| &samples[i].as_ref().unwrap().0;
    let calls = sample(0).reference_tool_calls.clone().unwrap().unwrap();
    assert_eq!(calls[0].name, "search");
    assert_eq!(sample(1).reference.as_deref(), Some("the answer"));
    assert_eq!(
        sample(2).reference.as_deref(),
        Some("third"),
        "by row number"
    );
    assert_eq!(sample(3).reference, None);
    let report = rows.report().unwrap().references.unwrap();
    assert_eq!(
        (report.rows, report.joined, report.samples_without),
        (4, 3, 1)
    );
    assert_eq!(report.samples_without_ids, ["d"]);
    assert_eq!(report.unmatched, Some(1));
    assert_eq!(report.unmatched_keys, ["trace_id=ffff"]);
    assert!(
        report.to_string().ends_with(
            "refs.csv: 4 rows, joined to 3 samples; 1 samples without a references row: d; \
             1 references rows matched no sample: trace_id=ffff"
        ),
        "{report}"
    );
}

#[test]
fn a_reference_the_row_gives_otherwise_is_a_bad_row() {
    let dir = tempfile::tempdir().unwrap();
    let data = write(
        dir.path(),
        "d.jsonl",
        "{\"id\": \"a\", \"ground_truth\": \"mine\"}\n{\"id\": \"b\", \"reference\": \"same\"}\n",
    );
    let refs = write(
        dir.path(),
        "r.jsonl",
        "{\"id\": \"a\", \"reference\": \"theirs\"}\n{\"id\": \"b\", \"reference\": \"same\"}\n",
    );
    let rows: Vec<Row> = open(&data, &refs).unwrap().collect();
    let e = rows[0].as_ref().unwrap_err();
    assert_eq!(e.field.as_deref(), Some("ground_truth"));
    assert_eq!(
        e.message,
        format!(
            "given by the row and, otherwise, by {} (line 1, id=a)",
            refs.display()
        )
    );
    assert_eq!(
        rows[1].as_ref().unwrap().0.reference.as_deref(),
        Some("same")
    );
}

#[test]
fn bad_references_rows_name_the_file_row_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let data = write(dir.path(), "d.jsonl", "{\"id\": \"a\"}\n");
    for (content, expected) in [
        (
            "{\"reference\": \"x\"}\n",
            "r.jsonl: line 1: no key: a references row names its sample by 'trace_id', 'sample_id' or 'id'",
        ),
        (
            "{\"id\": \"a\", \"reference\": \"x\"}\n\n{\"id\": \"a\", \"reference\": \"y\"}\n",
            "r.jsonl: line 3: field 'id': 'a' repeats line 1 (which references are meant is unclear)",
        ),
        (
            "{\"id\": \"a\", \"response\": \"x\"}\n",
            "r.jsonl: line 1: field 'response': not a reference field",
        ),
        (
            "{\"id\": \"a\", \"refrence\": \"x\"}\n",
            "r.jsonl: line 1: field 'refrence': unknown field",
        ),
        (
            "{\"id\": \"a\", \"trace_id\": \"b\"}\n",
            "r.jsonl: line 1: field 'trace_id': the row is already keyed by 'id'",
        ),
        (
            "{\"id\": \"a\", \"reference_topics\": \"x\"}\n",
            "r.jsonl: line 1: field 'reference_topics': expected",
        ),
        ("{\"id\": [1]}\n", "r.jsonl: line 1: field 'id': expected a string or number"),
        ("{\"id\": \"a\"\n", "r.jsonl: line 1: invalid JSON"),
    ] {
        let refs = write(dir.path(), "r.jsonl", content);
        let e = match open(&data, &refs) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{content}: accepted"),
        };
        assert!(e.contains(expected), "{content}: {e}");
    }
}

#[test]
fn an_input_without_rows_says_why() {
    let dir = tempfile::tempdir().unwrap();
    for (name, content, format, why) in [
        (
            "e.jsonl",
            "\n\n",
            None,
            "e.jsonl: no rows to score: it holds no line with a row",
        ),
        (
            "e.csv",
            "response,reference\n",
            None,
            "e.csv: no rows to score: it holds no row below its header",
        ),
        (
            "e.json",
            " [ ] ",
            None,
            "e.json: no rows to score: the JSON array is empty",
        ),
        (
            "e.otlp",
            "",
            Some(Format::Otlp),
            "e.otlp: no rows to score: the export holds no span",
        ),
    ] {
        let path = write(dir.path(), name, content);
        let mut rows = dataset::open(&Source::Path(path), format).unwrap();
        let e = rows.check_not_empty().unwrap_err().to_string();
        assert!(
            e.ends_with(why) || e.starts_with(&format!("{}/{why}", dir.path().display())),
            "{e}"
        );
    }
    // A bad row is a row; the first row read ahead is not lost.
    let path = write(
        dir.path(),
        "one.jsonl",
        "{not json}\n{\"response\": \"r\"}\n",
    );
    let mut rows = dataset::open(&Source::Path(path), None).unwrap();
    rows.check_not_empty().unwrap();
    let all: Vec<Row> = rows.collect();
    assert_eq!(all.len(), 2);
    assert!(all[0].is_err() && all[1].is_ok());
}
