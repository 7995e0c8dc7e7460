"""examples/cuda_kernel_subject.py on a GPU: a CuPy-compiled and a Triton kernel as subjects, whose
atomic variant must measure not_deterministic and whose two-stage variant run_to_run. Skipped, with
the reason, where there is no CUDA device, CuPy or Triton."""
import pathlib
import subprocess
import sys

import pytest

import sumlab

ROOT = pathlib.Path(__file__).resolve().parents[2]
ok, why = sumlab.cuda_available()
pytestmark = pytest.mark.skipif(not ok, reason=why)


@pytest.mark.parametrize("compiler", ["cupy", "triton"])
def test_a_compiled_kernel_measures_the_class_its_order_gives(compiler, tmp_path):
    pytest.importorskip(compiler)
    if compiler == "triton":
        pytest.importorskip("torch")
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "cuda_kernel_subject.py"), "--with", compiler,
                        "--out", str(tmp_path / compiler), "--sizes", "2^20", "--runs", "20"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]  # 1: a class other than expected
    assert "block_atomic" in r.stdout and "block_partials" in r.stdout
