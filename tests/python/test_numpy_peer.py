"""numpy_pairwise claims NumPy's summation order, so it must give np.sum's bits, signed zeros
included, on every size where NumPy's blocking changes shape (8, 128, powers of two, odd sizes)."""
import json
import subprocess

import numpy as np
import pytest

SIZES = [0, 1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 255, 256, 257, 1000, 8191, 8192, 8193, 16385, 100003,
         1 << 20]


def numpy_pairwise_bits(binary, x, tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, x)
    out = subprocess.run([str(binary), "sum", "--input", str(path), "--algorithm", "numpy_pairwise", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return int(json.loads(out)[0]["hex"], 16)


def numpy_bits(x):
    s = np.sum(x)
    return int(np.array(s, dtype=x.dtype).view(np.uint32 if x.dtype == np.float32 else np.uint64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_same_bits_as_numpy_sum(sumlab_binary, tmp_path, dtype, n):
    rng = np.random.default_rng(n)
    # Mixed magnitudes and signs, so that a different order would change the last bits.
    x = (rng.standard_normal(n) * rng.choice([1.0, 1e4, 1e-4], n)).astype(dtype)
    assert numpy_pairwise_bits(sumlab_binary, x, tmp_path) == numpy_bits(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", ["one -0", "-0 x300", "+0,-0", "1,-1", "inf,1", "nan"])
def test_special_values_match_numpy(sumlab_binary, tmp_path, dtype, case):
    x = {
        "one -0": [-0.0],
        "-0 x300": [-0.0] * 300,
        "+0,-0": [0.0, -0.0],
        "1,-1": [1.0, -1.0],
        "inf,1": [np.inf, 1.0],
        "nan": [1.0, np.nan, 2.0],
    }[case]
    x = np.array(x, dtype=dtype)
    ours = numpy_pairwise_bits(sumlab_binary, x, tmp_path)
    if case == "nan":  # NaN payloads are the platform's: compare NaN-ness
        assert np.isnan(np.array([ours], dtype=np.uint32 if dtype == np.float32 else np.uint64).view(dtype)[0])
    else:
        assert ours == numpy_bits(x)
