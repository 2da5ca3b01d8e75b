//! The lists that repeat the declared run options outside Rust (the
//! Python signatures, the stub's keyword list, the docs' table) are
//! generated from the declaration, between marker lines, and this test
//! fails when one has drifted. `ASSAY_BLESS=1 cargo test -p assay-config
//! --test generated` rewrites them.

use assay_config::options::{markdown_table, python_parameters, Declared};
use assay_config::{EvalOptions, FinishOptions, JudgeConfig};
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The keyword list of the stub's TypedDict, whose path alias is private
/// there (the extension has no such name).
fn stub_keys<C: Declared>() -> String {
    C::all()
        .iter()
        .filter(|o| C::spec(**o).how.python)
        .map(|o| {
            let annotation = C::shown(*o).annotation.replace("PathLike", "_PathLike");
            format!("    {}: {annotation}\n", C::spec(*o).name)
        })
        .collect()
}

/// `file` with the lines between its markers `open`/`close` replaced by
/// `body`; an error when the markers are missing.
fn replaced(text: &str, open: &str, close: &str, body: &str) -> Result<String, String> {
    let start = text
        .find(open)
        .ok_or_else(|| format!("no marker line {open:?}"))?;
    let body_start = start + text[start..].find('\n').map_or(0, |i| i + 1);
    let end = text[body_start..]
        .find(close)
        .map(|i| body_start + i)
        .ok_or_else(|| format!("no marker line {close:?} after {open:?}"))?;
    // The closing marker's indentation stays with it.
    let end = text[..end].rfind('\n').map_or(end, |i| i + 1);
    Ok(format!("{}{body}{}", &text[..body_start], &text[end..]))
}

#[test]
fn the_generated_lists_match_the_declarations() {
    let bless = std::env::var_os("ASSAY_BLESS").is_some();
    let python = python_parameters::<JudgeConfig>("    ");
    let generated = [
        (
            "python/assay/_evaluate.py",
            "eval options",
            python_parameters::<EvalOptions>("    "),
        ),
        ("python/assay/_evaluate.py", "judge options", python.clone()),
        (
            "python/assay/_evaluate.py",
            "finish options",
            python_parameters::<FinishOptions>("    "),
        ),
        ("python/assay/_review.py", "judge options", python.clone()),
        ("python/assay/_generate.py", "judge options", python),
        (
            "python/assay/_assay.pyi",
            "eval options",
            stub_keys::<EvalOptions>(),
        ),
        (
            "python/assay/_assay.pyi",
            "judge options",
            stub_keys::<JudgeConfig>(),
        ),
        (
            "python/assay/_assay.pyi",
            "finish options",
            stub_keys::<FinishOptions>(),
        ),
        (
            "docs/cli.md",
            "finish options",
            markdown_table::<FinishOptions>(),
        ),
        (
            "docs/cli.md",
            "eval options",
            markdown_table::<EvalOptions>(),
        ),
        (
            "docs/cli.md",
            "judge options",
            markdown_table::<JudgeConfig>(),
        ),
    ];
    let mut drifted = Vec::new();
    for (file, what, body) in generated {
        let (open, close) = if file.ends_with(".md") {
            (
                format!("<!-- <generated: {what}> -->"),
                "<!-- </generated> -->",
            )
        } else {
            (format!("# <generated: {what}>"), "# </generated>")
        };
        let path = root().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let want = replaced(&text, &open, close, &body).unwrap_or_else(|e| panic!("{file}: {e}"));
        if want != text {
            if bless {
                std::fs::write(&path, want).unwrap();
            } else {
                drifted.push(format!("{file} ({what})"));
            }
        }
    }
    assert!(
        drifted.is_empty(),
        "{drifted:?} differ from the declared options: run \
         ASSAY_BLESS=1 cargo test -p assay-config --test generated"
    );
}

#[test]
fn markers_are_found_and_the_body_between_them_replaced() {
    let text = "a\n    # <x>\n    old\n    # </x>\nb\n";
    assert_eq!(
        replaced(text, "# <x>", "# </x>", "    new\n").unwrap(),
        "a\n    # <x>\n    new\n    # </x>\nb\n"
    );
    assert!(replaced("a\n", "# <x>", "# </x>", "").is_err());
}
