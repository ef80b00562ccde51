"""Fixtures of the Python package's tests: the trail CLI (TRAIL_BIN), a run it trained on real
text, and helpers that run the CLI and parse its JSON."""

import json
import os
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("TRAIL_SOURCE", Path(__file__).resolve().parents[2]))
TRAIL = os.path.abspath(os.environ.get("TRAIL_BIN", SOURCE / "build/src/cli/trail"))
ASSETS = os.path.abspath(os.environ.get("TRAIL_ASSETS", SOURCE / "build/assets"))


def cli(*args, check=True, cwd=None) -> subprocess.CompletedProcess:
    """Runs `trail ARGS...`, returning the completed process (stdout as text)."""
    p = subprocess.run([TRAIL, *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if check and p.returncode != 0:
        raise AssertionError(f"trail {' '.join(map(str, args))} exited {p.returncode}:\n"
                             f"{p.stdout}\n{p.stderr}")
    return p


def cli_json(*args, check=True):
    return json.loads(cli(*args, check=check).stdout)


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> Path:
    """A folder holding manifest.json, tokenizer.json, trainer.key and run/ (30 steps)."""
    d = tmp_path_factory.mktemp("trail")
    subprocess.run([str(Path(__file__).with_name("make_run.sh")), TRAIL, ASSETS, str(SOURCE)],
                   cwd=d, check=True)
    return d


@pytest.fixture(scope="session")
def run_dir(workdir) -> Path:
    return workdir / "run"
