"""What every test here needs: the `phishbloom` binary the Python answers are compared with.

It is `PHISHBLOOM_BIN` when set, else the repository's `target/release/phishbloom`, else
`phishbloom` on PATH. Without one the tests that need it fail with that said: CI builds it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _binary() -> str | None:
    candidates = [os.environ.get("PHISHBLOOM_BIN"), str(REPO / "target" / "release" / "phishbloom")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    return shutil.which("phishbloom")


@pytest.fixture(scope="session")
def cli():
    """Runs the `phishbloom` binary: `cli(*args, input=bytes)` -> CompletedProcess."""
    binary = _binary()
    if binary is None:
        pytest.fail(
            "no phishbloom binary: build it (cargo build --release) or set PHISHBLOOM_BIN",
            pytrace=False,
        )

    def run(*args: str, input: bytes | None = None, check: bool = True):
        done = subprocess.run([binary, *map(str, args)], input=input, capture_output=True)
        if check and done.returncode not in (0, 1):
            raise AssertionError(f"phishbloom {' '.join(map(str, args))}: {done.stderr.decode()}")
        return done

    return run
