"""Every command the README shows runs as pasted, from the repository root, and exits 0 (on a machine
without a GPU, too: the GPU commands there run their documented CPU fallback). The Python sessions
run as well; one that needs PyTorch on a CUDA device is skipped, with the reason, where there is
none."""
import pathlib
import re
import subprocess
import sys

import pytest

import sumlab

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# The Quick start's own two commands install and build: they are what runs these tests.
NOT_HERE = ("scripts/main.sh", "scripts/test.sh", "pip install")


def blocks(language):
    return re.findall(rf"^```{language}\n(.*?)^```$", README, flags=re.S | re.M)


COMMANDS = [line for b in blocks("sh") for line in b.splitlines()
            if line.strip() and not line.startswith("#") and not any(s in line for s in NOT_HERE)]
SESSIONS = blocks("python")


def test_the_readme_shows_commands_and_sessions():
    assert len(COMMANDS) >= 10 and len(SESSIONS) >= 2


# The commands use the lab the Quick start's first command builds; a package installed alone
# (`pip install .`) has the library but not that build.
LAB = ROOT / "build" / "release" / "sumlab"


@pytest.mark.skipif(not LAB.exists(), reason=f"the README's commands need the lab's build ({LAB}: run scripts/main.sh)")
@pytest.mark.parametrize("command", COMMANDS)
def test_command_runs_as_pasted(command):
    r = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{command}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}"


@pytest.mark.parametrize("session", range(len(SESSIONS)))
def test_python_session_runs(session):
    code = SESSIONS[session]
    if "torch" in code:
        pytest.importorskip("torch")
        ok, why = sumlab.cuda_available()
        if not ok:
            pytest.skip(why)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
