//! Property tests of the dataset readers and the results log: hostile bytes
//! in, per-row outcomes (or one clear error) out, never a panic.
//!
//! `cargo test` runs a few dozen cases per property; `scripts/fuzz.sh` sets
//! `PROPTEST_CASES` for long runs. Failures found are replayed from
//! `proptest-regressions/` before any new case.

use assay_core::dataset::{self, Format, Source};
use assay_core::{read_results, Outcome, OutcomeRecord, Position, Row};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::Path;

/// `default_cases` cases, or as many as `PROPTEST_CASES` says.
fn config(default_cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok());
    ProptestConfig::with_cases(cases.unwrap_or(default_cases))
}

/// Every row of `content` read as `format` from a file named `name`, or the
/// error that the input as a whole cannot be read.
fn read(name: &str, content: &[u8], format: Format) -> Result<Vec<Row>, dataset::DatasetError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, content).unwrap();
    let rows = dataset::open(&Source::Path(path), Some(format))?;
    // Bounded: no input has more rows than bytes (plus a final error).
    let all: Vec<Row> = rows.take(content.len() + 2).collect();
    assert!(all.len() <= content.len() + 1, "more rows than bytes");
    Ok(all)
}

/// Fragments that readers trip over, to be glued together.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    let tokens = prop::sample::select(vec![
        "{",
        "}",
        "[",
        "]",
        "\"",
        ",",
        ":",
        "\n",
        "\r",
        "\r\n",
        "\n\n",
        "\0",
        "\\",
        "\\u0000",
        "\\ud800",
        "\u{feff}",
        " ",
        "\t",
        "\x0c",
        "null",
        "true",
        "7",
        "-0.5e9",
        "1e999",
        "\"id\"",
        "\"1\"",
        "\"response\"",
        "\"answer\"",
        "\"reference\"",
        "\"contexts\"",
        "\"retrieved_contexts\"",
        "\"question\"",
        "id,response,reference\n",
        "é",
        "😀",
        "{\"id\":\"a\",\"response\":\"x\",\"reference\":\"y\"}\n",
        "{\"response\":\"x\",\"response\":\"y\"}\n",
        "{\"response\":3,\"contexts\":[1]}\n",
        "\"a,\"\"b\"\"\nc\"",
    ]);
    prop_oneof![
        6 => tokens.prop_map(|t| t.as_bytes().to_vec()),
        2 => prop::collection::vec(any::<u8>(), 0..8),
        1 => Just(b"\xEF\xBB\xBF".to_vec()),
        1 => (1usize..2000, prop::sample::select(vec![b'[', b'{'])).prop_map(|(n, b)| {
            // `{` alone is not valid nesting: give each a key.
            if b == b'[' { vec![b; n] } else { b"{\"a\":".repeat(n) }
        }),
        1 => (1usize..70_000).prop_map(|n| {
            let mut row = b"{\"response\":\"".to_vec();
            row.resize(row.len() + n, b'x');
            row.extend_from_slice(b"\"}\n");
            row
        }),
    ]
}

fn hostile_input() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(piece(), 0..24).prop_map(|pieces| pieces.concat())
}

/// The input as the reader sees it: without one leading byte order mark.
fn unmarked(content: &[u8]) -> &[u8] {
    content.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(content)
}

/// Checks what holds for the rows of every format: numbered 1, 2, ... in
/// order, each naming the file, a row error saying what is wrong.
fn check_numbering(rows: &[Row], file_name: &str) {
    for (i, row) in rows.iter().enumerate() {
        let n = i as u64 + 1;
        match row {
            Ok((sample, location)) => {
                assert_eq!(sample.row, n);
                assert!(location.file.ends_with(file_name));
            }
            Err(e) => {
                assert_eq!(e.row, n);
                assert!(e.location.file.ends_with(file_name));
                assert!(!e.message.is_empty());
                assert!(e.to_string().contains(file_name), "{e}");
                if let Some(field) = &e.field {
                    assert!(e.to_string().contains(&format!("field '{field}'")), "{e}");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// JSONL: one outcome per non-blank line, at that line; a row read
    /// well is a JSON object on its line.
    #[test]
    fn jsonl_gives_one_outcome_per_non_blank_line(content in hostile_input()) {
        let rows = read("d.jsonl", &content, Format::Jsonl).expect("JSONL opens");
        check_numbering(&rows, "d.jsonl");
        let lines: Vec<(u64, &[u8])> = unmarked(&content)
            .split(|&b| b == b'\n')
            .zip(1u64..)
            .filter(|(l, _)| !l.iter().all(u8::is_ascii_whitespace))
            .map(|(l, n)| (n, l))
            .collect();
        prop_assert_eq!(rows.len(), lines.len());
        for (row, (n, line)) in rows.iter().zip(&lines) {
            match row {
                Ok((_, location)) => {
                    prop_assert_eq!(location.position, Position::Line(*n));
                    let value: Value = serde_json::from_slice(line).expect("a row read well parses");
                    prop_assert!(value.is_object());
                }
                Err(e) => prop_assert_eq!(e.location.position, Position::Line(*n)),
            }
        }
    }

    /// A JSON array: elements numbered in order, then at most one error at
    /// a line, which ends the rows; it comes exactly when the input is not
    /// one JSON array.
    #[test]
    fn json_array_gives_its_elements_or_ends_with_one_error(content in hostile_input()) {
        let rows = read("d.json", &content, Format::JsonArray).expect("a JSON array opens");
        check_numbering(&rows, "d.json");
        let syntax_error = rows.iter().position(|r| {
            matches!(r, Err(e) if matches!(e.location.position, Position::Line(_)))
        });
        if let Some(i) = syntax_error {
            prop_assert_eq!(i, rows.len() - 1, "the syntax error is the last row");
        }
        for (i, row) in rows.iter().enumerate().filter(|(i, _)| Some(*i) != syntax_error) {
            let at = match row { Ok((_, l)) => l.position, Err(e) => e.location.position };
            prop_assert_eq!(at, Position::Element(i as u64 + 1));
        }
        match serde_json::from_slice::<Vec<Value>>(unmarked(&content)) {
            Ok(elements) => {
                prop_assert_eq!(syntax_error, None);
                prop_assert_eq!(rows.len(), elements.len());
            }
            Err(_) => prop_assert!(syntax_error.is_some(), "a malformed array must say so"),
        }
    }

    /// CSV: the header is read or the input is refused as a whole; then
    /// rows in order at non-decreasing lines within the input.
    #[test]
    fn csv_gives_rows_at_lines_within_the_input(content in hostile_input()) {
        let Ok(rows) = read("d.csv", &content, Format::Csv) else {
            return Ok(());
        };
        check_numbering(&rows, "d.csv");
        let last_line = content.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        let mut previous = 1;
        for row in &rows {
            let at = match row { Ok((_, l)) => l.position, Err(e) => e.location.position };
            let Position::Line(n) = at else { panic!("a CSV row at {at}") };
            prop_assert!((previous..=last_line).contains(&n), "line {} after {} of {}", n, previous, last_line);
            previous = n;
        }
    }
}

/// One CSV cell: text with the characters that need quoting.
fn cell() -> impl Strategy<Value = String> {
    let chars = prop::sample::select(vec!['a', 'b', ' ', ',', '"', '\n', '\r', 'é', '\t']);
    prop::collection::vec(chars, 1..6).prop_map(String::from_iter)
}

/// `cell` as written in a CSV file: quoted when it has to be, or anyway.
fn quoted(cell: &str, always: bool) -> String {
    if always || cell.contains([',', '"', '\n', '\r']) || cell.starts_with(' ') {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// A CSV written from known records, with CRLF and LF line ends, blank
    /// lines between records, and quoted cells holding line breaks, reads
    /// back as those records, each at the line where it starts.
    #[test]
    fn csv_records_read_back_at_the_lines_they_start(
        records in prop::collection::vec(
            (cell(), cell(), any::<bool>(), 0usize..3, any::<bool>()),
            0..12,
        ),
        header_crlf in any::<bool>(),
    ) {
        let mut content = String::from(if header_crlf { "id,response\r\n" } else { "id,response\n" });
        let mut starts = Vec::new();
        for (i, (response, _, always, blanks, crlf)) in records.iter().enumerate() {
            let end = if *crlf { "\r\n" } else { "\n" };
            content.push_str(&end.repeat(*blanks));
            starts.push(content.matches('\n').count() as u64 + 1);
            content.push_str(&format!("r{i},{}{end}", quoted(response, *always)));
        }
        let rows = read("d.csv", content.as_bytes(), Format::Csv).expect("the header reads");
        prop_assert_eq!(rows.len(), records.len());
        for (i, row) in rows.iter().enumerate() {
            let (sample, location) = row.as_ref().expect("a well-formed record");
            prop_assert_eq!(&sample.id, &format!("r{i}"));
            prop_assert_eq!(sample.response.as_deref(), Some(records[i].0.as_str()));
            prop_assert_eq!(location.position, Position::Line(starts[i]), "{:?}", content);
        }
    }
}

/// Deeper than serde_json's recursion limit (128): a row error, not a
/// stack overflow, whatever the depth.
#[test]
fn nesting_beyond_the_recursion_limit_is_a_row_error() {
    let deep = "[".repeat(1_000_000);
    let rows = read(
        "d.jsonl",
        format!("{deep}\n{{}}\n").as_bytes(),
        Format::Jsonl,
    )
    .unwrap();
    assert_eq!(rows.len(), 2);
    let e = rows[0].as_ref().unwrap_err();
    assert!(e.message.contains("recursion limit exceeded"), "{e}");
    assert!(rows[1].is_ok());
    let rows = read(
        "d.json",
        format!("[{{}}, {{\"contexts\": {deep}").as_bytes(),
        Format::JsonArray,
    )
    .unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows[1]
        .as_ref()
        .unwrap_err()
        .message
        .contains("recursion limit exceeded"));
    let csv = format!("id,contexts\na,\"{deep}\"\n");
    let rows = read("d.csv", csv.as_bytes(), Format::Csv).unwrap();
    let e = rows[0].as_ref().unwrap_err();
    assert_eq!(e.field.as_deref(), Some("contexts"));
    assert!(e.message.contains("recursion limit exceeded"), "{e}");
}

fn record_line(id: &str, value: f64) -> String {
    let record = OutcomeRecord::new(id, 1, "rouge1", Outcome::scored(value, json!({})));
    serde_json::to_string(&record).unwrap() + "\n"
}

/// Lines that are not results records: another program's, or blank.
fn foreign_line() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "{\"oops\": 1}\n",
        "\n",
        "not json\n",
        "{\"format_version\":1,\"sample_id\":\"a\",\"row\":1,\"metric\":\"m\",\"status\":\"scored\"}\n",
        "\u{0}\n",
    ])
    .prop_map(str::to_string)
}

/// The log at `path` after cutting the file to its first `len` bytes.
fn read_cut(path: &Path, len: usize) -> Result<assay_core::ResultsLog, String> {
    // Cutting is far cheaper than writing the file anew for each length.
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(len as u64).unwrap();
    read_results(path).map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(config(32))]

    /// A results file torn at any byte: the whole lines before the tear
    /// are exactly the records written, the rest is counted as torn bytes.
    /// A repeated record reads back twice; a foreign whole line is an error
    /// naming its line.
    #[test]
    fn a_torn_results_file_keeps_every_whole_record(
        records in prop::collection::vec(("[a-c\"\\\\é]{0,4}", 0u32..5), 1..6),
        foreign in prop::option::of((foreign_line(), any::<prop::sample::Index>())),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let mut lines: Vec<String> = records
            .iter()
            .map(|(id, v)| record_line(id, f64::from(*v) / 4.0))
            .collect();
        // A line written twice, as a resumed run could.
        lines.push(lines[0].clone());
        let foreign_at = foreign.map(|(line, at)| {
            let i = at.index(lines.len() + 1);
            lines.insert(i, line);
            i
        });
        let content = lines.concat();
        let written: Vec<Option<OutcomeRecord>> =
            lines.iter().map(|l| serde_json::from_str(l).ok()).collect();
        std::fs::write(&path, &content).unwrap();
        for cut in (0..=content.len()).rev() {
            let torn = &content.as_bytes()[..cut];
            let whole = torn.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let complete = torn[..whole].iter().filter(|&&b| b == b'\n').count();
            match (read_cut(&path, cut), foreign_at) {
                (Err(e), Some(i)) if i < complete => {
                    prop_assert!(e.contains(&format!("results.jsonl:{}: not a results record", i + 1)), "{}", e);
                }
                (Ok(log), foreign_at) => {
                    prop_assert!(foreign_at.is_none_or(|i| i >= complete), "foreign line {:?} read", foreign_at);
                    prop_assert_eq!(log.valid_len, whole as u64);
                    prop_assert_eq!(log.torn_bytes, (cut - whole) as u64);
                    let want = written[..complete].iter().map(|r| r.as_ref().expect("a record"));
                    prop_assert!(log.records.iter().eq(want));
                }
                (Err(e), _) => prop_assert!(false, "cut at {}: {}", cut, e),
            }
        }
    }
}

/// An attribute an LLM span may carry, with a value that may be anything:
/// the keys the OTLP reader looks at, values of every `AnyValue` kind.
fn span_attribute() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "llm.input_messages.0.message.role",
        "llm.input_messages.1.message.content",
        "llm.input_messages.x.message.role",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
        "llm.output_messages.0.message.contents.0.message_content.text",
        "gen_ai.prompt.0.role",
        "gen_ai.completion.0.tool_calls.0.arguments",
        "retrieval.documents.0.document.content",
        "http.method",
    ]);
    let text = prop::sample::select(vec![
        "user",
        "assistant",
        "tool",
        "[]",
        "[{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"content\": \"hi\"}]}]",
        "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"tool_call\", \"name\": 1}]}]",
        "[{\"role\": \"tool\", \"parts\": [{\"type\": \"tool_call_response\", \"id\": null}]}]",
        "[{\"parts\": 5}]",
        "[\"x\"]",
        "{\"role\": \"user\"}",
        "[{\"role\": 3}",
        "",
        "\u{0}\u{feff}",
    ]);
    let value = prop_oneof![
        text.prop_map(|t| json!({"stringValue": t})),
        any::<i64>().prop_map(|n| json!({"intValue": n.to_string()})),
        any::<bool>().prop_map(|b| json!({"boolValue": b})),
        Just(json!({"arrayValue": {"values": [{"stringValue": "a"}, {}]}})),
        Just(json!({"kvlistValue": {"values": [{"key": "k"}]}})),
        Just(json!(null)),
        Just(json!([])),
    ];
    (key, value).prop_map(|(key, value)| json!({"key": key, "value": value}))
}

fn otlp_export() -> impl Strategy<Value = String> {
    let span = (
        prop::sample::select(vec![
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "S/kvNXezTaajzpKdDg5HNg==",
            "",
            "zz",
        ]),
        any::<u8>(),
        prop::collection::vec(span_attribute(), 0..6),
    )
        .prop_map(|(trace, start, attributes)| {
            json!({"traceId": trace, "spanId": "00f067aa0ba902b7", "name": "s",
                   "startTimeUnixNano": start.to_string(), "endTimeUnixNano": 300,
                   "attributes": attributes})
        });
    prop::collection::vec(prop::collection::vec(span, 0..4), 0..3).prop_map(|batches| {
        batches
            .into_iter()
            .map(|spans| json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

proptest! {
    #![proptest_config(config(64))]

    /// An OTLP export of hostile spans, whole or cut at any byte: the
    /// export is refused with one error, or read as at most one row per
    /// span (calls without a parent are stitched into conversations, so a
    /// trace may give several), numbered in order, each a sample or a bad
    /// row naming the attribute at fault; never a panic.
    #[test]
    fn otlp_exports_give_a_row_per_conversation_or_one_error(export in otlp_export(), cut in any::<prop::sample::Index>()) {
        let spans = export.matches("\"spanId\"").count();
        for content in [export.as_bytes(), &export.as_bytes()[..cut.index(export.len() + 1)]] {
            let Ok(rows) = read("t.json", content, Format::Otlp) else {
                continue;
            };
            check_numbering(&rows, "t.json");
            prop_assert!(rows.len() <= spans, "{} rows of {spans} spans", rows.len());
            for row in &rows {
                match row {
                    Ok((sample, location)) => {
                        prop_assert!(matches!(location.position, Position::Trace(_)));
                        prop_assert!(sample.messages.is_some());
                    }
                    Err(e) => prop_assert!(e.field.is_some(), "{}", e),
                }
            }
        }
    }
}
