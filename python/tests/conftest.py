"""Shared fixtures: the repository, the bundled example, and the loopback
judge (`crates/assay-test-server`'s `loopback-judge`, a real HTTP server
speaking the OpenAI protocol whose answers follow from the request's
content), started as a process by the test."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "rag_qa.jsonl"
KEY = "sk-python-test-7f3a9c1e5b2d8046"


def _loopback_binary() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    path = Path(os.environ.get("ASSAY_LOOPBACK_JUDGE", target / "debug/loopback-judge"))
    if not path.exists():
        pytest.fail(f"{path} is missing: run scripts/python-test.sh (it builds it)")
    return path


class Judge:
    """A running loopback judge."""

    def __init__(self, *flags: str):
        self.process = subprocess.Popen(
            [str(_loopback_binary()), *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.base_url = self.process.stdout.readline().strip()
        assert self.base_url.startswith("http://127.0.0.1:"), self.base_url

    def kwargs(self, folder: Path) -> dict:
        """`assay.evaluate` keywords for this judge, the cache in `folder`."""
        return {
            "judge": "openai:judge-model",
            "embedder": "openai:embed-model",
            "base_url": self.base_url,
            "api_key": KEY,
            "cache": folder / "cache.sqlite",
            "progress": False,
        }

    def close(self) -> int:
        """Stops the judge; returns the most requests it was answering at
        once, as it reports on its way out."""
        self.process.stdin.close()
        last = self.process.stdout.read().split()
        self.process.wait()
        assert last[:1] == ["peak_in_flight"], last
        return int(last[1])


@pytest.fixture(scope="module")
def judge():
    j = Judge()
    yield j
    j.close()


@pytest.fixture
def assay_command() -> Path:
    """The `assay` command the wheel installed beside this interpreter."""
    path = Path(sys.executable).parent / "assay"
    assert path.exists(), path
    return path
