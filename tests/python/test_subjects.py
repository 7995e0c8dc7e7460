"""The user's reductions as study subjects (sumlab.Subject): classified like sumlab's own, and a
misbehaving one never stops a study."""
import csv
import random
import threading
import time

import numpy as np
import pytest

import sumlab


def racing_sum(x, threads=8):
    """A thread-racing sum: each thread adds its chunk's float32 sum into a shared total in
    whatever order the threads get there."""
    total = [np.float32(0)]
    lock = threading.Lock()

    def work(chunk):
        s = np.float32(np.sum(chunk, dtype=np.float32))
        time.sleep(random.random() * 0.002)
        with lock:
            total[0] = np.float32(total[0] + s)

    ts = [threading.Thread(target=work, args=(c,)) for c in np.array_split(x, threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return total[0]


def exact_sum(x, **_):
    return np.float32(sumlab.reference(x))


def classes(rows):
    return {r["kernel"]: r for r in rows}


def test_a_racing_sum_is_not_deterministic_and_an_exact_one_is_shape_invariant(tmp_path):
    # Magnitudes spread over 2^-20..2^20 with random signs: the order of eight partials shows.
    rows = sumlab.study.determinism(
        [sumlab.Subject(racing_sum, configs=[{"threads": 4}, {"threads": 8}]),
         sumlab.Subject(exact_sum, configs=[{"grid": 1}, {"grid": 2}], declared="shape_invariant")],
        str(tmp_path / "d"), runs=20, dtypes=["float32"], dists=["cancellation"], sizes=["4096"], backend="model")
    c = classes(rows)
    assert c["racing_sum"]["measured"] == "not_deterministic"
    assert c["racing_sum"]["distinct_within_shape_max"] >= 2
    assert c["exact_sum"]["measured"] == "shape_invariant"
    assert c["exact_sum"]["agreement"] == "matches"
    assert c["exact_sum"]["max_abs_ulps"] == 0


def bad_raises(x):
    raise RuntimeError("my kernel failed")


def bad_shape(x):
    return x[:2]


def bad_nan(x):
    return np.float32("nan")


def bad_hang(x):
    time.sleep(60)


def bad_dtype(x):
    return float(np.sum(x, dtype=np.float64)) + 2.0 ** -40  # not a float32 value


def test_a_misbehaving_subject_gives_error_rows_and_the_study_goes_on(tmp_path):
    subjects = [sumlab.Subject(f, timeout=0.3) for f in (bad_raises, bad_shape, bad_nan, bad_hang, bad_dtype)]
    subjects.append(sumlab.Subject(exact_sum))
    out = tmp_path / "bad"
    rows = sumlab.study.determinism(subjects, str(out), runs=2, dtypes=["float32"], dists=["uniform"],
                                    sizes=["1000"], backend="model")
    # One configuration: the runs agree, invariance across configurations is not measured.
    assert classes(rows)["exact_sum"]["measured"] == "run_to_run"
    with open(out / "determinism_runs.csv", newline="") as f:
        failed = {r["kernel"]: r["note"] for r in csv.DictReader(f) if r["source"] == "failed"}
    assert failed["bad_raises"] == "RuntimeError: my kernel failed"  # the message, not a traceback
    assert "shape (2,)" in failed["bad_shape"]
    assert "NaN" in failed["bad_nan"]
    assert "no result within" in failed["bad_hang"]
    assert "not a float32 value" in failed["bad_dtype"]


def test_subjects_in_the_accuracy_studies(tmp_path):
    rows = sumlab.study.error_vs_n(str(tmp_path / "e"), subjects=[np.sum, sumlab.Subject(bad_raises)], quick=True,
                                   dtypes=["float64"], dists=["normal"], seeds=1, log2_max=12, backend="cpu")
    ext = [r for r in rows if r["backend"] == "external"]
    assert {r["algorithm"] for r in ext} == {"sum", "bad_raises"}
    assert all(r["verdict"] == "no_bound" for r in ext if r["algorithm"] == "sum")
    assert all(r["verdict"] == "failed" and "my kernel failed" in r["note"] for r in ext if r["algorithm"] == "bad_raises")
    # numpy's own sum is NumPy's pairwise order: the lab's numpy_pairwise gives the same bits.
    by = {(r["n"], r["algorithm"]): r["hex"] for r in rows}
    for n in {r["n"] for r in rows}:
        assert by[(n, "sum")] == by[(n, "numpy_pairwise")]


def test_two_configurations_with_the_same_label_are_refused():
    with pytest.raises(ValueError):
        sumlab.Subject(np.sum, configs=[{"a": 1}, {"a": 1}])


def racing_scan(x, threads=8):
    """A scan whose chunk carries are added in whatever order the threads finish: each chunk's
    local prefix sums get the running total of the chunks that finished before it."""
    chunks = np.array_split(np.asarray(x, dtype=np.float32), threads)
    local = [np.cumsum(c, dtype=np.float32) for c in chunks]
    out = [None] * threads
    carry = [np.float32(0)]
    lock = threading.Lock()

    def work(i):
        time.sleep(random.random() * 0.002)
        with lock:
            out[i] = (local[i] + carry[0]).astype(np.float32)
            if len(local[i]):
                carry[0] = np.float32(carry[0] + local[i][-1])

    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return np.concatenate(out)


def test_user_scans_in_the_scan_study(tmp_path):
    """numpy.cumsum is the serial scan (its bits, shape-invariant over its configurations), a racing
    scan is not deterministic, and a broken one is an error row while the study goes on."""
    subjects = [sumlab.Subject(lambda x, **_: np.cumsum(x, dtype=x.dtype), name="np_cumsum",
                               configs=[{"a": 1}, {"a": 2}], declared="shape_invariant", kind="scan"),
                sumlab.Subject(racing_scan, configs=[{"threads": 4}, {"threads": 8}], kind="scan"),
                sumlab.Subject(lambda x: x[:3], name="short_scan", kind="scan"),
                lambda x: np.cumsum(x, dtype=np.float64)]  # float64 outputs of float32 data: not float32 values
    out = tmp_path / "scan"
    rows = sumlab.study.scan(str(out), subjects=subjects, quick=True, dtypes=["float32"], dists=["uniform"],
                             ops=["plus"], algorithms=["cpu_serial"], runs=10, backend="model")
    errors = {(r["algorithm"], r["n"]): r for r in rows}
    for n in (1000, 4097):
        assert errors[("np_cumsum[a=1]", n)]["max_ulps"] == errors[("cpu_serial", n)]["max_ulps"]
        assert errors[("short_scan", n)]["note"] == "TypeError: returned an array of shape (3,), not (" + str(n) + ",)"
    with open(out / "scan_determinism.csv", newline="") as f:
        det = {(r["algorithm"], r["n"]): r for r in csv.DictReader(f)}
    assert det[("np_cumsum", "4097")]["measured"] == "shape_invariant"
    assert det[("racing_scan", "4097")]["measured"] == "not_deterministic"
    assert det[("short_scan", "4097")]["measured"] == "failed"
    failed = [r for r in rows if r["algorithm"].startswith("subject") and r["note"]]
    assert failed and "not a float32 value" in failed[0]["note"]
    with pytest.raises(sumlab.SumlabError, match="is a sum"):
        sumlab.study.scan(str(tmp_path / "s2"), subjects=sumlab.Subject(exact_sum), quick=True, backend="model")
