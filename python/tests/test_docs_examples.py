"""Every code example of the README and of docs/ runs, so that none of them
rots: each page's ```python blocks in order, in one namespace (a block may
use what an earlier one defined; `test_*` functions a block defines are
called), and the ```sh blocks preceded by `<!-- test: sh -->` with bash.
They run in a temporary folder holding a copy of `examples/`, with a
temporary ASSAY_HOME (its cache) that sees the fetched local models.

A block that cannot run offline in seconds is preceded by
`<!-- not-tested: WHY -->` and listed in UNTESTED below, so that adding
one is a visible change to this file."""

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

# (page, the block's first line) of each block marked not-tested.
UNTESTED = {
    ("docs/python.md", "import ray, ray.data"),
    # An instrumented agent and its harness; test_instrumentations.py runs them.
    ("docs/tool-calls.md", "import json"),
    ("docs/tool-calls.md", "for question, wanted in tasks:"),
}

FENCE = re.compile(r"^```\s*([\w-]*)\s*$")
MARKER = re.compile(r"^<!--\s*(test|not-tested)\s*:\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    page: str  # relative to the repository
    line: int  # of the first code line, 1-based
    lang: str
    code: str
    marker: tuple[str, str] | None  # ("test", "sh") or ("not-tested", why)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        assert end < len(lines), f"{page.name}:{i + 1}: unclosed code fence"
        marked = MARKER.match(lines[i - 1]) if i else None
        found.append(
            Block(
                page=str(page.relative_to(REPO)),
                line=i + 2,
                lang=opening.group(1),
                code="\n".join(lines[i + 1 : end]) + "\n",
                marker=marked.groups() if marked else None,
            )
        )
        i = end + 1
    return found


ALL = [b for page in PAGES for b in blocks(page)]


def first_line(block: Block) -> str:
    return next(line for line in block.code.splitlines() if line.strip()).strip()


def runs(block: Block) -> bool:
    if block.lang == "python":
        return block.marker is None
    return block.marker == ("test", "sh")


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A folder with `examples/` as at the repository's root, and an
    ASSAY_HOME of its own (the examples' judge cache) whose models are the
    fetched ones."""
    models = Path(os.environ.get("ASSAY_HOME", Path.home() / ".cache/assay")) / "models"
    if not models.is_dir():
        pytest.fail(f"{models} is missing: run scripts/fetch-models.sh (the examples use them)")
    home = tmp_path / "assay-home"
    home.mkdir()
    (home / "models").symlink_to(models)
    work = tmp_path / "work"
    shutil.copytree(REPO / "examples", work / "examples")
    monkeypatch.setenv("ASSAY_HOME", str(home))
    monkeypatch.chdir(work)
    return work


PYTHON_PAGES = sorted({b.page for b in ALL if b.lang == "python" and runs(b)})


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_python_examples_run(page, workdir):
    namespace = {"__name__": "docs_example"}
    for block in (b for b in ALL if b.page == page and b.lang == "python" and runs(b)):
        # Padded so that a traceback names the page's own line numbers.
        code = compile("\n" * (block.line - 1) + block.code, block.page, "exec")
        before = set(namespace)
        exec(code, namespace)
        for name in sorted(set(namespace) - before):
            if name.startswith("test_") and callable(namespace[name]):
                namespace[name]()


SHELL = [b for b in ALL if b.lang in ("sh", "bash") and runs(b)]


@pytest.mark.parametrize("block", SHELL, ids=[b.where for b in SHELL])
def test_shell_examples_run(block, workdir):
    # The `assay` command the wheel installed beside this interpreter.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"{block.where}:\n{done.stdout}\n{done.stderr}"


def test_markers_are_few_and_justified():
    untested = {(b.page, first_line(b)): b for b in ALL if b.marker and b.marker[0] == "not-tested"}
    for block in untested.values():
        assert block.marker[1], f"{block.where}: not-tested needs a reason"
        assert block.lang == "python", f"{block.where}: not-tested is for python blocks"
    assert set(untested) == UNTESTED, "a block marked not-tested must be listed in UNTESTED"
    for block in ALL:
        if block.marker and block.marker[0] == "test":
            assert block.marker == ("test", "sh") and block.lang in ("sh", "bash"), block.where


def test_every_page_has_run_examples():
    # The extraction itself: a fence it misread would drop examples silently.
    assert {"README.md", "docs/python.md"} <= set(PYTHON_PAGES)
    assert any(b.page == "README.md" for b in SHELL)


LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def test_readme_links_resolve():
    # docs/ is checked by `mkdocs build --strict`; the README is outside it.
    text = (REPO / "README.md").read_text(encoding="utf-8")
    missing = [t for t in LINK.findall(text) if "://" not in t and not (REPO / t).exists()]
    assert not missing
