//! The HTML report: written by `assay eval --report` and `assay report`,
//! then loaded in a real headless Chromium driven over the W3C WebDriver
//! protocol (Debian's `chromium-driver`), clicked, screenshotted and read
//! back from the rendered DOM.

use crate::common::{assay, eval, results, stderr};
use crate::judged::{ok, Fixture, KEY};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";
/// The W3C name of an element reference in WebDriver answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
const PAYLOAD: &str =
    "<script>alert(1)</script>. The Eiffel Tower is in Paris. The Eiffel Tower is made of cheese";
const IMG_PAYLOAD: &str = "<img src=x onerror=\"window.__pwned=1\">Where is the Eiffel Tower";

/// Rows: a RAG sample, the same with markup in its texts, one without a
/// reference (reference metrics skip it) and one malformed (an input failure).
fn rows() -> Vec<Value> {
    let mut eiffel = assay_test_server::judge::eiffel_row();
    eiffel["id"] = json!("eiffel");
    let mut hostile = eiffel.clone();
    hostile["id"] = json!("xss</script>");
    hostile["response"] = json!(PAYLOAD);
    hostile["user_input"] = json!(IMG_PAYLOAD);
    let mut no_reference = eiffel.clone();
    no_reference["id"] = json!("noref");
    no_reference.as_object_mut().unwrap().remove("reference");
    let bad = json!({"id": "bad", "response": ["not", "a string"], "reference": "x"});
    vec![eiffel, hostile, no_reference, bad]
}

#[test]
fn report_of_a_judged_run_renders_escaped_and_clickable_in_chromium() {
    // Checked first, so a machine without the browser fails loudly rather
    // than passing without looking.
    assert!(
        Path::new(CHROMEDRIVER).exists() && Path::new(CHROMIUM).exists(),
        "{CHROMEDRIVER} or {CHROMIUM} is missing: run scripts/install-build-deps.sh \
         (Debian's chromium and chromium-driver packages)"
    );
    let fx = Fixture::content_reading();
    let data = fx.data(&rows());
    let o = fx.eval(&data, "faithfulness,rouge,bleu", "run", &["--report"]);
    ok(&o);
    let run = fx.path("run");
    let report = run.join("report.html");
    assert!(stderr(&o).contains("report.html"), "{}", stderr(&o));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(!html.contains("<script>alert"), "raw payload in the page");
    assert!(!html.contains("<img src=x"), "raw payload in the page");
    assert_eq!(
        html.matches("<script").count(),
        2,
        "only the page's own scripts"
    );
    assert!(html.contains("unchanged since the run"));
    assert!(!html.contains(KEY), "the API key is in the report");
    assert!(
        html.contains(
            "<dt>ragas_score</dt><dd>- (ragas_score needs at least two \
             higher-is-better metrics, the run has 1)</dd>"
        ),
        "the header says why there is no ragas_score"
    );

    let browser = Browser::start(&fx.path("chrome-profile"));
    browser.post(
        "url",
        json!({"url": format!("file://{}", report.display())}),
    );

    // The page ran without the payloads running: no alert blocked it, no
    // injected element or global exists.
    let page = browser.script(
        "return {scripts: document.querySelectorAll('script').length,
                 pwned: typeof window.__pwned,
                 injected: document.querySelectorAll('body img, main script').length,
                 rows: document.querySelectorAll('#samples tbody tr').length,
                 charts: document.querySelectorAll('svg.hist').length};",
    );
    assert_eq!(
        page,
        json!({"scripts": 2, "pwned": "undefined", "injected": 0, "rows": 4, "charts": 6}),
        "rouge1..rougeLsum, bleu and faithfulness each have a chart"
    );

    // Click into the hostile sample: its texts show as text, with the
    // faithfulness statements, verdicts and reasons.
    let row = browser.find("#samples tbody tr[data-row='2']");
    browser.post(&format!("element/{row}/click"), json!({}));
    let detail = browser.text(&browser.find("#detail"));
    for expected in [
        "Sample xss</script> (row 2)",
        PAYLOAD,
        IMG_PAYLOAD,
        "The Eiffel Tower is made of cheese",
        "fake idk",
        "fake yes",
        "faithfulness = 0.3333",
    ] {
        assert!(detail.contains(expected), "{expected:?} not in {detail}");
    }
    let response = browser.text(&browser.find("#detail pre.field-response"));
    assert_eq!(response, PAYLOAD);
    let after = browser.script(
        "return [typeof window.__pwned, document.querySelectorAll('#detail *:not(section,h2,h3,pre,ol,ul,li,p,div,span,dl,dt,dd)').length];",
    );
    assert_eq!(
        after,
        json!(["undefined", 0]),
        "only text elements in the detail view"
    );

    // A picture of the hostile sample's detail view.
    let shot = browser.get("screenshot");
    let png = base64_decode(shot.as_str().expect("a base64 screenshot"));
    let shot_path = fx.path("report.png");
    std::fs::write(&shot_path, &png).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&png[12..16], b"IHDR");
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert!(width >= 800 && height >= 600, "{width}x{height}");
    assert!(png.len() > 20_000, "a blank page: {} bytes", png.len());

    // The malformed row's failure carries its kind and evidence.
    browser.post(
        &format!(
            "element/{}/click",
            browser.find("#samples tbody tr[data-row='4']")
        ),
        json!({}),
    );
    let failed = browser.text(&browser.find("#detail"));
    assert!(failed.contains("failed (input):"), "{failed}");
    assert!(failed.contains("field 'response'"), "{failed}");
    assert!(
        failed.contains("could not be read from the input"),
        "{failed}"
    );

    // Sorting by rouge1 orders the scored rows by value, unscored last.
    let header = browser.script(
        "return Array.from(document.querySelectorAll('#samples thead th')).map(th => th.textContent);",
    );
    let column = header
        .as_array()
        .unwrap()
        .iter()
        .position(|h| h == "rouge1")
        .expect("a rouge1 column");
    let th = browser.find(&format!("#samples thead th:nth-child({})", column + 1));
    browser.post(&format!("element/{th}/click"), json!({}));
    browser.post(&format!("element/{th}/click"), json!({}));
    let mut scored: Vec<(f64, u64)> = results(&run)
        .iter()
        .filter(|r| r["metric"] == "rouge1" && r["status"] == "scored")
        .map(|r| (r["value"].as_f64().unwrap(), r["row"].as_u64().unwrap()))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    assert_eq!(
        scored.len(),
        2,
        "rows 3 (no reference) and 4 (malformed) are not scored"
    );
    let order = browser.script(
        "return Array.from(document.querySelectorAll('#samples tbody tr')).map(r => Number(r.dataset.row));",
    );
    let expected: Vec<u64> = scored.iter().map(|s| s.1).chain([3, 4]).collect();
    assert_eq!(order, json!(expected), "descending rouge1, unscored last");

    // The text filter and the status filter.
    let filter = browser.find("#filter");
    browser.post(
        &format!("element/{filter}/value"),
        json!({"text": "onerror"}),
    );
    assert_eq!(browser.script(ROWS), json!(["xss</script>"]));
    browser.post(&format!("element/{filter}/clear"), json!({}));
    let skipped = browser.find("#status-filter option[value='skipped']");
    browser.post(&format!("element/{skipped}/click"), json!({}));
    assert_eq!(browser.script(ROWS), json!(["noref"]));
}

/// A conversation shows as a transcript: each message with its role and
/// the verdicts about it beside it, tool calls and tool results folded
/// until clicked.
#[test]
fn a_conversation_shows_as_a_transcript_with_each_turn_s_verdicts() {
    let fx = Fixture::content_reading();
    let data = crate::common::repo().join("examples/agent.jsonl");
    let o = fx.eval(
        &data,
        "turn_relevancy,role_adherence,tool_call_accuracy",
        "run",
        &["--report"],
    );
    ok(&o);
    let report = fx.path("run").join("report.html");
    let browser = Browser::start(&fx.path("chrome-profile"));
    browser.post(
        "url",
        json!({"url": format!("file://{}", report.display())}),
    );
    let click = |css: &str| {
        browser.post(&format!("element/{}/click", browser.find(css)), json!({}));
    };
    let examples: Vec<Value> = std::fs::read_to_string(&data)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();

    // The forgotten fact: every message, and beside each assistant reply
    // the verdicts of the two judged metrics, as results.jsonl has them.
    click("#samples tbody tr[data-row='7']");
    let messages = browser.script(
        "return Array.from(document.querySelectorAll('#detail ol.transcript > li'))
                .map(li => li.querySelector('.badge.role').textContent);",
    );
    let roles: Vec<&str> = examples[6]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(messages, json!(roles));
    let by_turn = |turn: &str| -> Vec<String> {
        results(&fx.path("run"))
            .iter()
            .filter(|r| r["sample_id"] == "forgotten-fact")
            .flat_map(|r| {
                let metric = r["metric"].as_str().unwrap().to_string();
                r["details"]["turns"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|t| t["turn"] == turn)
                    .map(move |t| format!("{metric}: {}", t["verdict"].as_str().unwrap()))
            })
            .collect()
    };
    for (i, role) in roles.iter().enumerate() {
        let mut shown: Vec<String> = serde_json::from_value(browser.script(&format!(
            "return Array.from(document.querySelectorAll(
                 '#detail li[data-message=\"{i}\"] .turn-verdict .badge')).map(b => b.textContent);"
        )))
        .unwrap();
        let mut want = by_turn(&format!("messages[{i}]"));
        shown.sort();
        want.sort();
        assert_eq!(shown, want, "messages[{i}]");
        assert_eq!(want.is_empty(), *role != "assistant", "messages[{i}]");
    }

    // A correct tool use: the calls and results are folded, their
    // arguments out of sight until the call is opened.
    click("#samples tbody tr[data-row='1']");
    let folded = browser.script(
        "return [document.querySelectorAll('#detail details.tool-call').length,
                 document.querySelectorAll('#detail details.tool-result').length,
                 document.querySelectorAll('#detail details[open]').length];",
    );
    assert_eq!(folded, json!([2, 2, 0]));
    let detail = browser.text(&browser.find("#detail"));
    assert!(detail.contains("calls search_flights"), "{detail}");
    let folded = browser.text(&browser.find("#detail li[data-message='4']"));
    assert!(
        !folded.contains("SK4711"),
        "an argument shows while folded: {folded}"
    );
    click("#detail li[data-message='4'] details.tool-call summary");
    let opened = browser.text(&browser.find("#detail li[data-message='4']"));
    assert!(opened.contains("\"flight\": \"SK4711\""), "{opened}");
}

/// The ids of the table's rows, in order.
const ROWS: &str =
    "return Array.from(document.querySelectorAll('#samples tbody tr')).map(r => r.cells[0].textContent);";

#[test]
fn report_command_says_when_the_input_changed_and_renders_calibration() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.jsonl");
    let text: Vec<String> = rows().iter().map(Value::to_string).collect();
    std::fs::write(&data, text.join("\n")).unwrap();
    let run = dir.path().join("run");
    let o = assay(
        &[
            "eval",
            data.to_str().unwrap(),
            "-m",
            "rouge",
            "--out",
            run.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!run.join("report.html").exists(), "no report unless asked");

    let calibration = json!({"tables": [{
        "title": "Agreement <b>with humans</b>",
        "columns": ["metric", "kappa", "n"],
        "rows": [["faithfulness", 0.61, 40], ["<i>x</i>", null, 3]]
    }]});
    std::fs::write(run.join("calibration.json"), calibration.to_string()).unwrap();
    let report = |args: &[&str]| {
        let o = assay(
            &[&["report", run.to_str().unwrap()][..], args].concat(),
            None,
        );
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(run.join("report.html")).unwrap()
    };
    let html = report(&[]);
    assert!(html.contains("unchanged since the run"));
    assert!(html.contains("<h2>Calibration</h2>"));
    assert!(html.contains("<h3>Agreement &lt;b&gt;with humans&lt;/b&gt;</h3>"));
    assert!(html.contains("<td>&lt;i&gt;x&lt;/i&gt;</td>"));
    assert!(html.contains("<td class=\"num\">0.6100</td>"));
    assert!(
        html.contains("\\u003cscript\\u003ealert(1)"),
        "the payload as JSON text"
    );

    std::fs::write(&data, "{}\n").unwrap();
    let html = report(&[]);
    assert!(html.contains("has changed since the run"), "changed input");
    assert!(
        !html.contains("alert(1)"),
        "fields of a changed input are not shown"
    );
    std::fs::remove_file(&data).unwrap();
    assert!(report(&["--input-format", "jsonl"]).contains("cannot be read"));

    let o = assay(&["report", dir.path().to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a run directory"), "{}", stderr(&o));
}

#[test]
fn report_reads_the_input_in_the_format_the_manifest_records() {
    let dir = tempfile::tempdir().unwrap();
    // No extension, and CSV: without the recorded format the first byte
    // would say JSONL.
    let data = dir.path().join("data");
    std::fs::write(
        &data,
        "id,response,reference\nq1,zebras graze quietly,zebras graze\n",
    )
    .unwrap();
    let run = dir.path().join("run");
    let o = eval(&data, "rouge", &run, &["--input-format", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["input"]["format"], "csv");
    let o = assay(&["report", run.to_str().unwrap()], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        html.contains("zebras graze quietly"),
        "the input's fields are shown"
    );
}

/// A chromedriver process and one headless Chromium session on it; both
/// end when this drops.
struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

impl Browser {
    fn start(profile: &Path) -> Browser {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        // chromedriver says on stdout when it listens.
        let mut lines = BufReader::new(driver.stdout.take().unwrap()).lines();
        let ready = lines.any(|l| l.is_ok_and(|l| l.contains("started successfully")));
        assert!(ready, "chromedriver exited before listening");
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
        };
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--disable-background-networking", "--disable-component-update",
                         "--disable-sync", "--no-first-run", "--window-size=1280,900",
                         format!("--user-data-dir={}", profile.display())],
            }
        }}});
        let created = browser.http("POST", "/session", Some(&caps));
        browser.session = created["sessionId"].as_str().unwrap().to_string();
        browser
    }

    /// One WebDriver command; its `value`.
    fn http(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let (status, raw) = self
            .request(method, path, body)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let answer: Value = serde_json::from_slice(&raw)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}: {}", String::from_utf8_lossy(&raw)));
        assert!(status == "200", "{method} {path}: {status} {answer}");
        answer["value"].clone()
    }

    /// Sends one HTTP/1.1 request; the status code and body of the answer.
    fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> std::io::Result<(String, Vec<u8>)> {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        // A bound on a hung browser, not a synchronisation.
        stream.set_read_timeout(Some(Duration::from_secs(120)))?;
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        )?;
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status)?;
        let mut length = None;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line)?;
            if line.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse::<usize>().ok();
                }
            }
        }
        let mut raw = Vec::new();
        match length {
            Some(n) => {
                raw.resize(n, 0);
                reader.read_exact(&mut raw)?;
            }
            None => {
                reader.read_to_end(&mut raw)?;
            }
        }
        let code = status.split(' ').nth(1).unwrap_or_default().to_string();
        Ok((code, raw))
    }

    fn post(&self, command: &str, body: Value) -> Value {
        let path = format!("/session/{}/{command}", self.session);
        self.http("POST", &path, Some(&body))
    }

    fn get(&self, command: &str) -> Value {
        self.http("GET", &format!("/session/{}/{command}", self.session), None)
    }

    /// The id of the element `css` selects.
    fn find(&self, css: &str) -> String {
        let found = self.post("element", json!({"using": "css selector", "value": css}));
        found[ELEMENT].as_str().unwrap().to_string()
    }

    fn text(&self, element: &str) -> String {
        let text = self.get(&format!("element/{element}/text"));
        text.as_str().unwrap().to_string()
    }

    fn script(&self, body: &str) -> Value {
        self.post("execute/sync", json!({"script": body, "args": []}))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let path = format!("/session/{}", self.session);
            // Closing the session ends Chromium; chromedriver is ours to kill.
            let _ = self.request("DELETE", &path, None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Standard base64 (with padding), as WebDriver sends screenshots.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a') as u32 + 26,
            b'0'..=b'9' => (c - b'0') as u32 + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {:?}", c as char),
        }
    };
    let bytes: Vec<u8> = text.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &c)| acc | value(c) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}
