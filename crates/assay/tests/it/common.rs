use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Held by a test while it runs a local model. llama.cpp takes every core
/// and its threads spin while they wait for each other, so two models at
/// once on a two-core machine each run many times slower (8 local-model
/// tests: 17.8 minutes at once).
pub fn one_local_model_at_a_time() -> MutexGuard<'static, ()> {
    static CORES: Mutex<()> = Mutex::new(());
    // A failed test still ran its model to the end; the next may go.
    CORES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `assay eval DATA -m METRICS --out OUT EXTRA...`.
pub fn eval(data: &Path, metrics: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "eval",
        data.to_str().unwrap(),
        "-m",
        metrics,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    assay(&args, None)
}

/// Runs the `assay` binary of this build with `args`, writing `stdin` to
/// its standard input (else it reads none), and waits for its output.
pub fn assay(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn assay");
    if let Some(input) = stdin {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    child.wait_with_output().unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

/// The rows of a JSONL file.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn results(dir: &Path) -> Vec<Value> {
    read_jsonl(&dir.join("results.jsonl"))
}

/// A run's result rows by (sample id, metric).
pub fn results_by_key(dir: &Path) -> BTreeMap<(String, String), Value> {
    results(dir)
        .into_iter()
        .map(|r| {
            let key = (
                r["sample_id"].as_str().unwrap().to_string(),
                r["metric"].as_str().unwrap().to_string(),
            );
            (key, r)
        })
        .collect()
}

/// The entry of output `name` in a `summary.json`.
pub fn output<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["outputs"]
        .as_array()
        .and_then(|o| o.iter().find(|x| x["name"] == name))
        .unwrap_or_else(|| panic!("no output {name} in {summary}"))
}

/// Every file under `dir`, symbolic links included (not followed).
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if std::fs::symlink_metadata(&path).unwrap().is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
