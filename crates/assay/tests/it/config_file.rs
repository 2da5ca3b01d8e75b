//! `--config FILE`: run and judge options from a TOML file (or a
//! `pyproject.toml`'s `[tool.assay]`), the flags given winning over it; a
//! mistake in the file names the file and key, and stops the run before
//! any row.

use crate::common::{assay, eval, read_json, repo, stderr};
use crate::judged::{by_metric, ok, rag_row, Fixture};

/// The file gives the run directory, a wrong input format and a gate
/// the run cannot pass: the flag given wins over the format, the file's
/// directory is used and its gate fails the run; a gate given as a flag
/// replaces the file's.
#[test]
fn a_file_gives_the_options_and_a_flag_wins_over_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("from-file");
    let config = dir.path().join("assay.toml");
    std::fs::write(
        &config,
        format!(
            "out = {:?}\ninput_format = \"csv\"\nthreads = 1\n\n[fail_under]\nrouge1 = 0.99\n",
            out.to_str().unwrap()
        ),
    )
    .unwrap();
    let data = repo().join("examples/rag_qa.jsonl");
    let run = |extra: &[&str]| {
        let mut args = vec!["eval", data.to_str().unwrap(), "-m", "rouge"];
        args.extend_from_slice(&["--config", config.to_str().unwrap()]);
        args.extend_from_slice(&["--input-format", "jsonl"]);
        args.extend_from_slice(extra);
        assay(&args, None)
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(printed.contains("gate failed: rouge1 mean"), "{printed}");
    let summary = read_json(&out.join("summary.json"));
    assert!(
        summary["outputs"].to_string().contains("rouge1"),
        "{summary}"
    );
    let other = dir.path().join("other");
    let o = run(&[
        "--out",
        other.to_str().unwrap(),
        "--fail-under",
        "rouge1=0.1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(printed.contains("gate passed: rouge1 mean"), "{printed}");
    assert!(!printed.contains("0.99"), "{printed}");
}

/// The judge, its endpoint and its limits from a pyproject's table: the
/// command names no judge, and the run is judged by the file's.
#[test]
fn a_pyproject_s_tool_assay_table_names_the_judge() {
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    let pyproject = fx.path("pyproject.toml");
    std::fs::write(
        &pyproject,
        format!(
            "[project]\nname = \"app\"\n\n[tool.assay]\njudge = \"openai:judge-model\"\n\
             embedder = \"openai:embed-model\"\nbase_url = {:?}\nmax_retries = 0\n\
             cache = {:?}\n",
            fx.server.base_url(),
            fx.path("cache.sqlite").to_str().unwrap()
        ),
    )
    .unwrap();
    let out = fx.path("run");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["eval", data.to_str().unwrap(), "-m", "faithfulness"])
        .args(["--config", pyproject.to_str().unwrap()])
        .args(["--out", out.to_str().unwrap()])
        .env("OPENAI_API_KEY", "sk-test-config-file")
        .env("ASSAY_HOME", fx.path(""))
        .output()
        .unwrap();
    ok(&o);
    assert!(fx.asked("faithfulness_verdicts") >= 1);
    let manifest = read_json(&out.join("manifest.json"));
    assert_eq!(manifest["judge"]["spec"], "openai:judge-model");
    assert_eq!(
        by_metric(&out, "eiffel")["faithfulness"]["status"],
        "scored"
    );
}

#[test]
fn a_mistake_in_the_file_names_the_file_and_key_before_any_row() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo().join("examples/rag_qa.jsonl");
    for (text, says) in [
        ("concurency = 4\n", "key \"concurency\": not a run option"),
        ("timeout = \"soon\"\n", "key \"timeout\": "),
        (
            "api_key = \"sk-secret-in-file\"\n",
            "key \"api_key\": a secret is read from OPENAI_API_KEY or ASSAY_API_KEY",
        ),
    ] {
        let config = dir.path().join("assay.toml");
        std::fs::write(&config, text).unwrap();
        let out = dir.path().join("run");
        let o = eval(
            &data,
            "rouge",
            &out,
            &["--config", config.to_str().unwrap()],
        );
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(&format!("{}: {says}", config.display())), "{e}");
        assert!(!e.contains("sk-secret-in-file"), "{e}");
        assert!(!out.exists(), "{text}");
    }
}
