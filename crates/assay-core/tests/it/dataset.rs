use assay_core::dataset::{self, Format, Source};
use assay_core::{Position, Row};
use std::io::Write;

fn rows_of(name: &str, content: &[u8], format: Option<Format>) -> (tempfile::TempDir, Vec<Row>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(content)
        .unwrap();
    let rows = dataset::open(&Source::Path(path), format)
        .unwrap()
        .collect();
    (dir, rows)
}

#[test]
fn jsonl_bad_rows_name_line_and_field_and_the_rest_go_on() {
    let content = b"{\"id\": \"a\", \"answer\": \"x\", \"ground_truth\": \"y\"}\n\n{not json}\n{\"response\": 3}\n[1]\n{\"response\": \"\\u00e9\"}\n\xff\xfe\n{\"question\": \"last\"}";
    let (_d, rows) = rows_of("d.jsonl", content, None);
    assert_eq!(rows.len(), 7, "blank line skipped, every other line a row");
    let (s, loc) = rows[0].as_ref().unwrap();
    assert_eq!(
        (s.id.as_str(), s.row, loc.position),
        ("a", 1, Position::Line(1))
    );
    let e = rows[1].as_ref().unwrap_err();
    assert_eq!(
        (e.row, e.location.position, e.field.as_deref()),
        (2, Position::Line(3), None)
    );
    assert!(e.to_string().contains("d.jsonl:3: invalid JSON"), "{e}");
    let e = rows[2].as_ref().unwrap_err();
    assert_eq!(e.field.as_deref(), Some("response"));
    assert!(
        e.to_string()
            .ends_with("d.jsonl:4: field 'response': expected a string, got a number"),
        "{e}"
    );
    assert!(rows[3]
        .as_ref()
        .unwrap_err()
        .message
        .contains("expected an object, got a list"));
    assert_eq!(rows[4].as_ref().unwrap().0.response.as_deref(), Some("é"));
    assert!(
        rows[5]
            .as_ref()
            .unwrap_err()
            .message
            .contains("invalid JSON"),
        "invalid UTF-8 is one bad row"
    );
    let (last, loc) = rows[6].as_ref().unwrap();
    assert_eq!(
        (last.id.as_str(), last.user_input.as_deref(), loc.position),
        ("7", Some("last"), Position::Line(8))
    );
}

#[test]
fn json_array_streams_elements() {
    let (_d, rows) = rows_of(
        "d.json",
        br#" [ {"response": "a"}, {"response": "b", "contexts": ["c1"]}, 5 ] "#,
        None,
    );
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[1].as_ref().unwrap().0.retrieved_contexts.as_deref(),
        Some(&["c1".to_string()][..])
    );
    let e = rows[2].as_ref().unwrap_err();
    assert_eq!(e.location.position, Position::Element(3));
    assert!(e.to_string().contains("d.json[element 3]"), "{e}");
}

#[test]
fn json_array_syntax_error_is_reported_after_the_good_elements() {
    let (_d, rows) = rows_of(
        "d.json",
        b"[{\"response\": \"a\"},\n{\"response\": }]",
        None,
    );
    assert_eq!(rows.len(), 2);
    assert!(rows[0].is_ok());
    let e = rows[1].as_ref().unwrap_err();
    assert_eq!(e.location.position, Position::Line(2));
}

#[test]
fn sniffing_without_extension() {
    let (_d, rows) = rows_of("data", b"\n  [{\"response\": \"a\"}]", None);
    assert_eq!(rows.len(), 1);
    let (_d, rows) = rows_of(
        "data",
        b"{\"response\": \"a\"}\n{\"response\": \"b\"}\n",
        None,
    );
    assert_eq!(rows.len(), 2);
    let (_d, rows) = rows_of("data.txt", b"response,reference\nx,y\n", Some(Format::Csv));
    assert_eq!(rows[0].as_ref().unwrap().0.reference.as_deref(), Some("y"));
}

#[test]
fn csv_lists_are_json_cells_and_empty_cells_are_absent() {
    let content = "id,question,answer,contexts,ground_truths\n\
                   q1,What?,\"Yes, it is.\",\"[\"\"c1\"\", \"\"c2\"\"]\",\"[\"\"g\"\"]\"\n\
                   q2,Why?,,not-a-list,\n\
                   q3,Who?,\"multi\nline\",[],\n";
    let (_d, rows) = rows_of("d.csv", content.as_bytes(), None);
    assert_eq!(rows.len(), 3);
    let (s, loc) = rows[0].as_ref().unwrap();
    assert_eq!(s.response.as_deref(), Some("Yes, it is."));
    assert_eq!(s.retrieved_contexts.as_ref().unwrap(), &["c1", "c2"]);
    assert_eq!(s.reference_list(), Some(vec!["g"]));
    assert_eq!(loc.position, Position::Line(2));
    let e = rows[1].as_ref().unwrap_err();
    assert_eq!(
        (e.field.as_deref(), e.location.position),
        (Some("contexts"), Position::Line(3))
    );
    let (s, loc) = rows[2].as_ref().unwrap();
    assert_eq!(
        (s.response.as_deref(), s.row, loc.position),
        (Some("multi\nline"), 3, Position::Line(4))
    );
}

#[test]
fn csv_with_a_short_record_is_one_bad_row() {
    let (_d, rows) = rows_of("d.csv", b"response,reference\na,b\nonly\nc,d\n", None);
    assert_eq!(rows.len(), 3);
    assert!(rows[1]
        .as_ref()
        .unwrap_err()
        .message
        .contains("invalid CSV"));
    assert!(rows[2].is_ok());
}

#[test]
fn a_leading_byte_order_mark_is_skipped_in_every_format() {
    let array = &br#"[{"id": "a", "response": "x"},
                      {"id": "b"}]"#[..];
    for (name, content, first_at) in [
        (
            "d.jsonl",
            &b"{\"id\": \"a\", \"response\": \"x\"}\n\n{\"id\": \"b\"}\n"[..],
            Position::Line(1),
        ),
        ("d.json", array, Position::Element(1)),
        // Sniffed, as standard input is: the mark must go before the `[` is looked for.
        ("data", array, Position::Element(1)),
        (
            "d.csv",
            b"id,response\na,x\n\"b\",\"\n\"\n",
            Position::Line(2),
        ),
    ] {
        let marked = [&b"\xEF\xBB\xBF"[..], content].concat();
        let (_d, rows) = rows_of(name, &marked, None);
        let (_d, unmarked) = rows_of(name, content, None);
        assert_eq!(rows.len(), 2, "{name}: {rows:?}");
        let (s, loc) = rows[0].as_ref().unwrap();
        assert_eq!(
            (s.id.as_str(), s.response.as_deref(), loc.position),
            ("a", Some("x"), first_at),
            "{name}"
        );
        assert_eq!(rows[1].as_ref().unwrap().0.id, "b", "{name}");
        let positions = |rows: &[Row]| -> Vec<Position> {
            rows.iter()
                .map(|r| r.as_ref().unwrap().1.position)
                .collect()
        };
        assert_eq!(positions(&rows), positions(&unmarked), "{name}");
    }
}

#[test]
fn only_a_whole_byte_order_mark_is_skipped() {
    // Half a mark is invalid UTF-8, so the row stays bad rather than losing bytes.
    let (_d, rows) = rows_of("d.jsonl", b"\xEF\xBB{\"id\": \"a\"}\n{}\n", None);
    let first = rows[0].as_ref().map(|(s, _)| &s.id);
    assert!(
        matches!(first, Err(e) if e.message.contains("invalid JSON")),
        "{first:?}"
    );
    assert!(rows[1].is_ok());
    // An input shorter than a mark is read whole.
    let (_d, rows) = rows_of("d.jsonl", b"{}", None);
    assert_eq!(rows[0].as_ref().unwrap().0.id, "1");
}

#[test]
fn a_repeated_id_is_a_bad_row_naming_both_rows() {
    let content = b"{\"id\": \"q1\"}\n\
                    {\"id\": \"q3\"}\n\
                    \n\
                    {\"id\": \"4\"}\n\
                    {\"response\": \"no id, row 4\"}\n\
                    {\"id\": \"q3\", \"response\": \"again\"}\n\
                    {\"id\": null}\n\
                    {\"id\": 1}\n\
                    {\"id\": \"q3\"}\n";
    let (_d, rows) = rows_of("d.jsonl", content, None);
    assert_eq!(rows.len(), 8);
    assert_eq!(
        ids(&rows),
        [
            Some("q1"),
            Some("q3"),
            Some("4"),
            // It wrote no id, and its row number is another row's id.
            None,
            None,
            // A null id is no id.
            Some("6"),
            // The number 1 and the string "q1" differ; "1" was only row 1's number.
            Some("1"),
            None
        ]
    );
    let e = rows[4].as_ref().unwrap_err();
    assert_eq!(
        (e.row, e.location.position, e.field.as_deref()),
        (5, Position::Line(6), Some("id"))
    );
    assert_error_ends(
        &rows[3],
        "d.jsonl:5: field 'id': the row has no id and its number 4 is the id of row 3 (line 4): give it an id",
    );
    assert_error_ends(
        &rows[4],
        "d.jsonl:6: field 'id': id 'q3' repeats row 2 (line 2)",
    );
    // A third use still names the first row.
    assert_error_ends(
        &rows[7],
        "d.jsonl:9: field 'id': id 'q3' repeats row 2 (line 2)",
    );
}

/// Each row's sample id, `None` for a bad row.
fn ids(rows: &[Row]) -> Vec<Option<&str>> {
    rows.iter()
        .map(|r| r.as_ref().ok().map(|(s, _)| s.id.as_str()))
        .collect()
}

/// Asserts that `row` is an error whose message (after the temporary
/// directory) ends with `expected`.
fn assert_error_ends(row: &Row, expected: &str) {
    let shown = row.as_ref().map(|(s, _)| &s.id).map_err(|e| e.to_string());
    assert!(
        matches!(&shown, Err(e) if e.ends_with(expected)),
        "{shown:?}"
    );
}

#[test]
fn an_id_that_an_unnamed_row_goes_by_is_a_bad_row() {
    let content = b"{\"response\": \"a\"}\n\
                    {\"response\": \"b\"}\n\
                    {\"id\": \"x\"}\n\
                    {\"response\": \"c\"}\n\
                    {\"id\": 2}\n\
                    {\"id\": \"3\"}\n\
                    {\"id\": \"04\"}\n\
                    {\"id\": 4}\n\
                    {\"id\": 9}\n\
                    {\"response\": \"d\"}\n";
    let (_d, rows) = rows_of("d.jsonl", content, None);
    // Row 3's own id is "x", so "3" is free; "04" is not row 4's spelling.
    assert_eq!(
        ids(&rows),
        [
            Some("1"),
            Some("2"),
            Some("x"),
            Some("4"),
            None,
            Some("3"),
            Some("04"),
            None,
            Some("9"),
            Some("10")
        ]
    );
    assert_error_ends(
        &rows[4],
        "d.jsonl:5: field 'id': id '2' is the number row 2 goes by, as it has no id of its own",
    );
    assert_error_ends(
        &rows[7],
        "d.jsonl:8: field 'id': id '4' is the number row 4 goes by, as it has no id of its own",
    );
}

#[test]
fn repeated_ids_in_json_arrays_and_csv() {
    let (_d, rows) = rows_of(
        "d.json",
        br#"[{"id": 7}, {"id": "7"}, {"response": "x"}]"#,
        None,
    );
    // A number and a string that read alike are one id.
    assert_eq!(ids(&rows), [Some("7"), None, Some("3")]);
    assert_error_ends(
        &rows[1],
        "d.json[element 2]: field 'id': id '7' repeats row 1 (element 1)",
    );
    // Empty id cells are no id; a quoted cell spanning lines moves the lines on.
    let (_d, rows) = rows_of(
        "d.csv",
        b"id,response\n,a\na,\"two\nlines\"\n,b\na,c\n",
        None,
    );
    assert_eq!(ids(&rows), [Some("1"), Some("a"), Some("3"), None]);
    assert_error_ends(
        &rows[3],
        "d.csv:6: field 'id': id 'a' repeats row 2 (line 3)",
    );
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let err = dataset::open(&Source::Path("/nonexistent/x.jsonl".into()), None)
        .err()
        .unwrap();
    assert!(
        err.to_string().starts_with("/nonexistent/x.jsonl: "),
        "{err}"
    );
}

/// Bytes from a fixed-seed xorshift, biased towards JSON/CSV punctuation so
/// the readers meet half-valid rows, not only noise.
fn garbage(seed: u64, len: usize) -> Vec<u8> {
    const ALPHABET: &[u8] = b"{}[]\",:\n\r\\ abc01-.eE\t\xff\xc3\xa9nulltrue";
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ALPHABET[(x % ALPHABET.len() as u64) as usize]
        })
        .collect()
}

#[test]
fn arbitrary_bytes_never_panic_and_every_row_is_accounted_for() {
    for seed in 0..300u64 {
        let bytes = garbage(seed, 400);
        for (name, format) in [
            ("g.jsonl", None),
            ("g.json", None),
            ("g.csv", None),
            ("g", Some(Format::Jsonl)),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let rows: Vec<Row> = match dataset::open(&Source::Path(path.clone()), format) {
                Ok(rows) => rows.collect(),
                // Only a CSV header can make the whole input unreadable.
                Err(e) => {
                    assert!(
                        name.ends_with(".csv") && e.to_string().contains(&*path.to_string_lossy()),
                        "{e}"
                    );
                    continue;
                }
            };
            let mut expected_row = 0;
            for row in &rows {
                expected_row += 1;
                let n = match row {
                    Ok((s, _)) => s.row,
                    Err(e) => e.row,
                };
                assert_eq!(
                    n, expected_row,
                    "rows are numbered consecutively ({name}, seed {seed})"
                );
            }
        }
    }
}

#[test]
fn csv_rows_after_blank_lines_name_their_own_lines() {
    let lf = "id,response\n\na,x\n\n\nb\nc,\"two\n\nlines\"\n\nd\n";
    for content in [lf.to_owned(), lf.replace('\n', "\r\n")] {
        let (_d, rows) = rows_of("d.csv", content.as_bytes(), None);
        let at = |i: usize| rows[i].as_ref().err().map(|e| e.to_string());
        assert_eq!(rows.len(), 4);
        assert!(rows[0].is_ok() && rows[2].is_ok());
        assert!(at(1).unwrap().contains("d.csv:6:"), "{:?}", at(1));
        assert!(at(3).unwrap().contains("d.csv:11:"), "{:?}", at(3));
    }
}

#[test]
fn conversations_read_in_every_format_and_a_malformed_one_reads_as_a_row() {
    let good = r#"{"id": "ok", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}]}, {"role": "tool", "tool_call_id": "a", "content": "done"}], "reference_tool_calls": [{"name": "f", "args": {"x": 1}}]}"#;
    let bad = r#"{"id": "bad", "response": "r", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "x=1"}}]}], "reference_tool_calls": [{"name": "f", "args": {"x": 1}}]}"#;
    let unknown = r#"{"id": "who", "messages": [{"role": "robot", "content": "beep"}], "reference_tool_calls": []}"#;
    let check = |rows: &[Row]| {
        assert_eq!(rows.len(), 3);
        let (s, _) = rows[0].as_ref().unwrap();
        let calls = s.messages.as_ref().unwrap().tool_calls().unwrap();
        assert_eq!((calls.len(), calls[0].args["x"].as_i64()), (1, Some(1)));
        let (s, _) = rows[1].as_ref().unwrap();
        assert_eq!(
            (s.id.as_str(), s.row, s.response.as_deref()),
            ("bad", 2, Some("r"))
        );
        let p = s.messages.as_ref().unwrap().tool_calls().unwrap_err();
        assert_eq!(p.message, Some(1));
        assert_eq!(p.field, "messages[1].tool_calls[0].function.arguments");
        assert!(p.detail.starts_with("not JSON"), "{p}");
        let (s, _) = rows[2].as_ref().unwrap();
        let p = s.messages.as_ref().unwrap().tool_calls().unwrap_err();
        assert_eq!((p.message, p.field.as_str()), (Some(0), "messages[0].role"));
        assert!(p.detail.starts_with("unknown role 'robot'"), "{p}");
    };
    let jsonl = format!("{good}\n{bad}\n{unknown}\n");
    check(&rows_of("c.jsonl", jsonl.as_bytes(), None).1);
    let array = format!("[{good},\n{bad},\n{unknown}]");
    check(&rows_of("c.json", array.as_bytes(), None).1);
    let mut csv = String::from("id,response,messages,reference_tool_calls\n");
    for row in [good, bad, unknown] {
        let v: serde_json::Value = serde_json::from_str(row).unwrap();
        let cell = |k: &str| format!("\"{}\"", v[k].to_string().replace('"', "\"\""));
        let response = v["response"].as_str().unwrap_or("");
        csv.push_str(&format!(
            "{},{response},{},{}\n",
            v["id"].as_str().unwrap(),
            cell("messages"),
            cell("reference_tool_calls")
        ));
    }
    check(&rows_of("c.csv", csv.as_bytes(), None).1);
}

#[test]
fn the_agent_example_reads_whole() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agent.jsonl");
    let rows: Vec<Row> = dataset::open(&Source::Path(path), None).unwrap().collect();
    assert_eq!(rows.len(), 7);
    for row in rows {
        let (s, _) = row.unwrap();
        let c = s.messages.unwrap();
        assert!(c.problems.is_empty(), "{}: {:?}", s.id, c.problems);
        // Five agent runs with the calls they should make; two chats
        // (an off-topic answer, a forgotten fact) without tools.
        match s.reference_tool_calls {
            Some(reference) => {
                assert!(!c.tool_calls().unwrap().is_empty());
                assert_eq!(reference.unwrap().len(), 2);
            }
            None => assert!(c.tool_calls().unwrap().is_empty(), "{}", s.id),
        }
    }
}

/// An OTLP export is found by its first key whatever its extension, and
/// read one row per trace: a trace's conversation and tool calls as the
/// row's messages, a trace whose messages cannot be read a bad row naming
/// the trace and attribute, the rows after it still read.
#[test]
fn otlp_exports_read_one_row_per_trace() {
    let span = |trace: &str, messages: &str| {
        serde_json::json!({"traceId": trace, "spanId": "00f067aa0ba902b7", "name": "openai.chat",
            "startTimeUnixNano": "1", "endTimeUnixNano": "2",
            "attributes": [{"key": "gen_ai.input.messages", "value": {"stringValue": messages}}]})
    };
    let good = r#"[{"role": "user", "parts": [{"type": "text", "content": "Hi"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c", "name": "greet", "arguments": {"to": "you"}}]}]"#;
    let export = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        span("4bf92f3577b34da6a3ce929d0e0e4736", good),
        span("5bf92f3577b34da6a3ce929d0e0e4736", "not json"),
        span("6bf92f3577b34da6a3ce929d0e0e4736", good),
    ]}]}]});
    for (name, format) in [("traces.json", None), ("traces.data", Some(Format::Otlp))] {
        let (_d, rows) = rows_of(name, export.to_string().as_bytes(), format);
        assert_eq!(rows.len(), 3);
        let (sample, at) = rows[0].as_ref().unwrap();
        assert_eq!(sample.id, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(at.position, Position::Trace(1));
        let calls = sample.messages.as_ref().unwrap().tool_calls().unwrap();
        assert_eq!(calls[0].name, "greet");
        assert_eq!(sample.user_input.as_deref(), Some("Hi"));
        let e = rows[1].as_ref().unwrap_err();
        assert_eq!(e.field.as_deref(), Some("gen_ai.input.messages"));
        assert!(
            e.to_string().contains(&format!(
                "{name}[trace 2]: field 'gen_ai.input.messages': trace 5bf92f3577b34da6a3ce929d0e0e4736: span 'openai.chat'"
            )),
            "{e}"
        );
        assert_eq!(rows[2].as_ref().unwrap().0.row, 3);
    }
    let dir = tempfile::tempdir().unwrap();
    let rows = dir.path().join("rows.jsonl");
    std::fs::write(&rows, "{\"response\": \"x\"}\n").unwrap();
    let e = dataset::open(&Source::Path(rows), Some(Format::Otlp))
        .err()
        .unwrap();
    assert!(
        e.to_string().ends_with(
            "rows.jsonl: object 1: expected an OTLP trace export ({\"resourceSpans\": [...]})"
        ),
        "{e}"
    );
}

#[test]
fn a_copy_is_named_as_what_it_stands_for() {
    use assay_core::Original;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input-3f2a.jsonl");
    std::fs::write(
        &path,
        "{\"id\": \"a\", \"response\": \"x\"}\n{\"id\": \"b\", \"response\": 3}\n{\"id\": \"a\"}\n",
    )
    .unwrap();
    let errors = |of: Original| -> Vec<String> {
        let source = Source::Copy {
            path: path.clone(),
            of,
        };
        dataset::open(&source, None)
            .unwrap()
            .filter_map(|r| r.err().map(|e| e.to_string()))
            .collect()
    };
    // Rows given in memory: by their place in the data, the file unsaid.
    assert_eq!(
        errors(Original::Rows),
        [
            "data row 2 (index 1): field 'response': expected a string, got a number",
            "data row 3 (index 2): field 'id': id 'a' repeats row 1 (index 0)",
        ]
    );
    // A copy of another file: as that file, with its lines.
    assert_eq!(
        errors(Original::File("/data/rag.jsonl".into())),
        [
            "/data/rag.jsonl:2: field 'response': expected a string, got a number",
            "/data/rag.jsonl:3: field 'id': id 'a' repeats row 1 (line 1)",
        ]
    );
}

#[test]
fn a_key_named_twice_is_a_bad_row_naming_it_and_the_rest_go_on() {
    // Wide objects, past the keys found twice by a scan alone: a key
    // repeated there, one repeated in a wide nested object, and a wide row
    // without repeats.
    let wide = |extra: &str| {
        let keys: Vec<String> = (0..40).map(|i| format!(r#""k{i}": {i}"#)).collect();
        format!("{}{extra}", keys.join(", "))
    };
    let rows = [
        r#"{"id": "a", "response": "x", "response": "y"}"#.to_string(),
        r#"{"id": "b", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "a", "content": "b"}]}"#.to_string(),
        r#"{"id": "c", "response": "fine", "details": {"n": 1}, "more": [{"n": 1}, {"n": 2}]}"#.to_string(),
        format!(r#"{{"id": "d", {}}}"#, wide(r#", "k35": 0, "response": "r""#)),
        format!(r#"{{"id": "e", "meta": {{{}}}}}"#, wide(r#", "k3": 1"#)),
        format!(r#"{{"id": "f", "response": "r", {}}}"#, wide("")),
    ];
    let unclear = "named twice in one object: which value is meant is unclear";
    let jsonl = rows.join("\n");
    let array = format!("[{}]", rows.join(",\n"));
    for (name, content) in [("d.jsonl", jsonl), ("d.json", array)] {
        let (_d, read) = rows_of(name, content.as_bytes(), None);
        assert_eq!(read.len(), 6, "{name}");
        let first = read[0].as_ref().unwrap_err();
        assert_eq!(first.field.as_deref(), Some("response"), "{name}");
        assert!(
            first
                .to_string()
                .ends_with(&format!("field 'response': {unclear}")),
            "{first}"
        );
        let second = read[1].as_ref().unwrap_err();
        assert_eq!(
            second.field.as_deref(),
            Some("messages[1].content"),
            "{name}"
        );
        assert_eq!(ids(&read)[2], Some("c"), "{name}");
        let fields: Vec<_> = read[3..5]
            .iter()
            .map(|r| r.as_ref().unwrap_err().field.as_deref())
            .collect();
        assert_eq!(fields, [Some("k35"), Some("meta.k3")], "{name}");
        assert_eq!(ids(&read)[5], Some("f"), "{name}");
    }

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.csv");
    std::fs::write(&path, "id,response,user_input,response\na,x,q,y\n").unwrap();
    let e = dataset::open(&Source::Path(path), None).err().unwrap();
    assert!(
        e.to_string()
            .contains("names column 'response' twice (columns 2 and 4)"),
        "{e}"
    );
}
