"""Shared fixtures for the Python tests: the sumlab binary the CLI tests run."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def sumlab_binary() -> pathlib.Path:
    """$SUMLAB_BINARY, or the release build's binary."""
    path = pathlib.Path(os.environ.get("SUMLAB_BINARY", ROOT / "build" / "release" / "sumlab"))
    if not path.exists():
        pytest.fail(f"no sumlab binary at {path}: build it (scripts/build.sh) or set SUMLAB_BINARY")
    return path
