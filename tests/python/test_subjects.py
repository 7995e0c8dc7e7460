"""The user's reductions as study subjects (sumlab.Subject): classified like sumlab's own, and a
misbehaving one never stops a study."""
import collections
import csv
import itertools
import random
import re
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
    assert errors[("np_cumsum[a=1]", 4097)]["runs"] == 10 and errors[("np_cumsum[a=1]", 4097)]["distinct_runs"] == 1
    assert errors[("cpu_serial", 4097)]["runs"] == ""  # the lab's CPU scans are not rerun
    assert all(r["runs"] == "" for r in rows if r["algorithm"] == "block_blelloch")  # nor the model's
    assert det[("short_scan", "4097")]["measured"] == "failed"
    failed = [r for r in rows if r["algorithm"].startswith("subject") and r["note"]]
    assert failed and "not a float32 value" in failed[0]["note"]
    with pytest.raises(sumlab.SumlabError, match="of kind 'sum'"):
        sumlab.study.scan(str(tmp_path / "s2"), subjects=sumlab.Subject(exact_sum), quick=True, backend="model")


def as_float(x):
    """The lab's rows as float values (bfloat16 rows arrive as uint16 bit patterns)."""
    return sumlab.bfloat16_to_float32(x) if x.dtype == np.uint16 else x


def exact_variance(x):
    """Each row's variance in float64 from float64 moments, rounded once to the rows' float type."""
    xf = as_float(x)
    return np.var(xf.astype(np.float64), axis=1).astype(np.float32 if x.dtype == np.uint16 else x.dtype)


def shuffled_variance(x):
    """The textbook formula in float32 over a new column order on every call: run-to-run noise."""
    xf = as_float(x).astype(np.float32)[:, np.random.permutation(x.shape[1])]
    n = np.float32(x.shape[1])
    mean = np.add.accumulate(xf, axis=1, dtype=np.float32)[:, -1] / n
    return np.add.accumulate(xf * xf, axis=1, dtype=np.float32)[:, -1] / n - mean * mean


def layer_norm(x):
    xf = as_float(x)
    m = xf.mean(axis=1, keepdims=True, dtype=np.float64)
    v = xf.var(axis=1, keepdims=True, dtype=np.float64)
    return ((xf - m) / np.sqrt(v + 1e-5)).astype(xf.dtype)


def softmax(x):
    xf = as_float(x)
    e = np.exp(xf - xf.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_user_row_reductions_in_the_variance_study(tmp_path):
    """Variance, layer_norm and softmax subjects on float32 and bfloat16 rows: a variance from float64
    moments is within an ulp or two of the exact one and gives one output in every run, a
    shuffled float32 one gives several, a layer norm's outputs are near the exact normalised rows,
    and a subject returning the wrong shape is an error row while the study goes on."""
    subjects = [sumlab.Subject(exact_variance, kind="variance"),
                sumlab.Subject(shuffled_variance, kind="variance"),
                sumlab.Subject(layer_norm, kind="layer_norm"),
                sumlab.Subject(softmax, kind="softmax"),
                sumlab.Subject(lambda x: x[:2], name="wrong_shape", kind="variance")]
    out = tmp_path / "rows"
    rows = sumlab.study.variance(str(out), subjects=subjects, quick=True, dtypes=["float32", "bfloat16"],
                                 offsets=[0, 100], scales=[1], runs=5, backend="model")
    by = {(r["dtype"], r["offset"], r["method"], r["layout"]): r for r in rows}
    for dtype in ("float32", "bfloat16"):
        for offset in (0, 100):
            exact = by[(dtype, offset, "exact_variance", "external")]
            assert exact["max_rel_error"] < 2 ** -22 and exact["runs"] == 5 and exact["distinct_outputs"] == 1
            assert exact["max_out_abs_error"] == ""
            ln = by[(dtype, offset, "layer_norm", "external")]
            assert ln["max_rel_error"] == "" and 0 <= ln["max_out_abs_error"] < 1e-5 and ln["nan_output_rows"] == 0
            # The lab's two-pass kernel has the same measure of its normalised rows.
            assert by[(dtype, offset, "two_pass", "warp_per_row")]["max_out_abs_error"] < 1e-4
            bad = by[(dtype, offset, "wrong_shape", "external")]
            assert bad["note"].startswith("TypeError: returned an array of shape (2, 1024)")
    assert by[("float32", 100, "shuffled_variance", "external")]["distinct_outputs"] > 1
    soft = {(r["dtype"], r["method"]): r for r in sumlab.study.read_table(str(out / "row_softmax.csv"))}
    for dtype in ("float32", "bfloat16"):
        assert soft[(dtype, "softmax")]["max_rel_error"] < 1e-5 and soft[(dtype, "softmax")]["distinct_outputs"] == 1
    with pytest.raises(sumlab.SumlabError, match="of kind 'scan'"):
        sumlab.study.variance(str(tmp_path / "v2"), subjects=sumlab.Subject(np.cumsum, kind="scan"), quick=True)


def test_user_segment_sums_in_the_segmented_study(tmp_path):
    """An exact segment sum has 0 ulps, and with one configuration its declared shape_invariant is
    not measured (run_to_run, the most one configuration shows; consistent, not violated); an order
    that changes on every call is not deterministic; one that returns too few sums is an error row."""
    import math

    def exact_segments(data):
        x, off = data
        return np.array([math.fsum(x[a:b]) for a, b in zip(off[:-1], off[1:])]).astype(x.dtype)

    def shuffled_segments(data):
        x, off = data
        return np.array([np.float32(np.add.accumulate(np.random.permutation(x[a:b]), dtype=np.float32)[-1])
                         if b > a else np.float32(0) for a, b in zip(off[:-1], off[1:])], dtype=np.float32)

    subjects = [sumlab.Subject(exact_segments, kind="segment_sums", declared="shape_invariant",
                               configs=[{}]),
                sumlab.Subject(shuffled_segments, kind="segment_sums"),
                sumlab.Subject(lambda d: d[0][:1], name="too_few", kind="segment_sums")]
    out = tmp_path / "seg"
    rows = sumlab.study.segmented(str(out), subjects=subjects, quick=True, dtypes=["float32"],
                                  distributions=["uniform"], runs=4, backend="model")
    errors = {r["strategy"]: r for r in rows if r["where"] == "external"}
    assert errors["exact_segments"]["max_ulps"] == 0 and errors["exact_segments"]["wrong_empty"] == 0
    assert errors["shuffled_segments"]["max_ulps"] >= 1
    assert errors["exact_segments"]["distinct_runs"] == 1 and errors["shuffled_segments"]["distinct_runs"] > 1
    assert errors["too_few"]["note"] == "TypeError: returned an array of shape (1,), not (512,)"
    det = {r["strategy"]: r for r in sumlab.study.read_table(str(out / "segmented_determinism.csv"))}
    assert det["exact_segments"]["shapes"] == 1
    assert det["exact_segments"]["measured"] == "run_to_run" and det["exact_segments"]["consistent"] == 1
    assert det["shuffled_segments"]["measured"] == "not_deterministic" and det["shuffled_segments"]["runs"] == 4
    assert det["too_few"]["measured"] == ""


def test_bfloat16_round_is_round_to_nearest_even():
    """bfloat16 keeps 8 significant bits: the spacing at 1 is 2^-7, so 1 + 2^-8 is a tie (to 1, the
    even neighbour) and 1 + 3·2^-8 another (to 1 + 2^-6); past bfloat16's largest value, infinity."""
    x = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, -(1 + 2 ** -8), 3.0e38, -3.4e38,
                  np.inf, 0.0, -0.0, 2 ** -130], dtype=np.float32)
    # 3.0e38 = 1.76324·2^127; with 7 fraction bits the nearest is 226/128 = 1.765625.
    want = np.array([1.0, 1 + 2 ** -6, 1 + 2 ** -7, -1.0, np.float32(2.0 ** 127 * 1.765625),
                     -np.inf, np.inf, 0.0, -0.0, 2 ** -130], dtype=np.float32)
    got = sumlab.bfloat16_round(x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert np.isnan(sumlab.bfloat16_round(np.array([np.nan], dtype=np.float32)))[0]
    again = sumlab.bfloat16_round(got)  # bfloat16 values are fixed points
    np.testing.assert_array_equal(again.view(np.uint32), got.view(np.uint32))


def test_a_bfloat16_sum_on_bfloat16_data(tmp_path):
    """A sum that returns a bfloat16 value (here the correctly rounded one, as a float32) on data of
    bfloat16 values: measured against the exact sum of exactly what it adds, its relative error is
    at most bfloat16's unit roundoff 2^-8, and it is shape-invariant."""
    rng = np.random.default_rng(7)
    data = sumlab.bfloat16_round(rng.standard_normal(1 << 14).astype(np.float32) + 4)

    def bf16_sum(x, chunks=1):
        # Partial sums in float64 are exact here (8-bit significands, |x| < 16, n <= 2^14): any
        # chunking gives the exact sum, rounded once to bfloat16.
        total = sum(np.sum(c, dtype=np.float64) for c in np.array_split(x, chunks))
        return sumlab.bfloat16_round(np.array([total], dtype=np.float32))[0]

    rows = sumlab.study.error_vs_n(str(tmp_path / "evn"), data=data, subjects=sumlab.Subject(bf16_sum),
                                   algorithms=["exact"], gpu_kernels=["none"], seeds=1, log2_min=8, log2_max=14,
                                   log2_step=2, backend="cpu")
    mine = [r for r in rows if r["algorithm"] == "bf16_sum"]
    assert sorted(r["n"] for r in mine) == [256, 1000, 1024, 4096, 16384]  # 1000: the study's non-power of two
    assert all(r["rel_error"] <= 2 ** -8 for r in mine) and any(r["rel_error"] > 2 ** -20 for r in mine)
    det = sumlab.study.determinism(sumlab.Subject(bf16_sum, configs=[{"chunks": 1}, {"chunks": 7}]),
                                   str(tmp_path / "det"), data=data, runs=3, backend="model")
    assert det[0]["measured"] == "shape_invariant"


def test_misbehaving_row_subjects_give_error_rows(tmp_path):
    """The row kinds fail like the sums: a raise, a NaN for finite rows, a value that is not a float32
    value, and a hang past the timeout each give a row whose note says why; the study goes on."""
    subjects = [sumlab.Subject(lambda x: bad_raises(x), name="raises", kind="variance"),
                sumlab.Subject(lambda x: np.full(x.shape[0], np.nan, np.float32), name="nan", kind="variance"),
                sumlab.Subject(lambda x: np.var(x.astype(np.float64), axis=1) + 2.0 ** -40, name="wide",
                               kind="variance"),
                sumlab.Subject(lambda x: bad_hang(x), name="hangs", kind="softmax", timeout=0.3)]
    rows = sumlab.study.variance(str(tmp_path / "bad_rows"), subjects=subjects, quick=True, dtypes=["float32"],
                                 offsets=[0], scales=[1], backend="model")
    notes = {r["method"]: r["note"] for r in rows if r["layout"] == "external"}
    assert notes["raises"] == "RuntimeError: my kernel failed"
    assert "NaN" in notes["nan"]
    assert "not a float32 value" in notes["wide"]
    soft = {r["method"]: r for r in sumlab.study.read_table(str(tmp_path / "bad_rows" / "row_softmax.csv"))}
    assert "no result within 0.3 s" in soft["hangs"]["note"] and soft["hangs"]["max_rel_error"] == ""
    assert soft["softmax_online"]["note"] == ""  # the lab's kernels still measured


def test_bfloat16_round_of_a_double_rounds_once():
    """1 + 2^-8 + 2^-30 lies just above the tie between 1 and 1 + 2^-7: its nearest bfloat16 is
    1 + 2^-7, while rounding to float32 first (1 + 2^-8, the tie) and then to bfloat16 gives 1."""
    x = np.array([1 + 2 ** -8 + 2 ** -30, -(1 + 2 ** -8 + 2 ** -30), 1 + 2 ** -8, 2.0 ** -134 * 1.5, 1e300], np.float64)
    want = np.array([1 + 2 ** -7, -(1 + 2 ** -7), 1.0, 2.0 ** -133, np.inf], np.float32)
    np.testing.assert_array_equal(sumlab.bfloat16_round(x).view(np.uint32), want.view(np.uint32))


def test_a_subject_gets_the_input_of_the_call_not_a_cached_one(tmp_path):
    """Inputs that agree at both ends and share a buffer are still different inputs: each call is
    measured on the data the lab holds at that moment, prepared or not."""
    data = np.ones(100_000, np.float32)
    data[50_000] = 7
    for prepare in (None, np.array):
        rows = sumlab.study.error_vs_n(str(tmp_path / f"p{prepare is None}"), data=data, backend="cpu",
                                       subjects=sumlab.Subject(np.sum, name="np_sum", prepare=prepare),
                                       algorithms=["exact"], seeds=3, log2_min=16, log2_max=16)
        by = {(r["seed"], r["algorithm"]): r for r in rows}
        for seed in (1, 2, 3):
            assert by[(seed, "np_sum")]["hex"] == by[(seed, "exact")]["hex"]


def test_a_subject_that_works_in_place_does_not_change_its_next_input(tmp_path):
    def scale_then_sum(x):
        x *= 2
        return np.float32(np.sum(x, dtype=np.float64) / 2)

    rows = sumlab.study.determinism(sumlab.Subject(scale_then_sum), str(tmp_path / "d"), runs=3, dtypes=["float32"],
                                    dists=["uniform"], sizes=["1000"], backend="model")
    assert classes(rows)["scale_then_sum"]["measured"] == "run_to_run"


def test_a_device_subject_takes_numpy_where_the_lab_holds_its_data_on_the_host(tmp_path):
    """device=True changes nothing off a CUDA backend: prepare gets the lab's copy as a NumPy array,
    which speaks DLPack too, so one prepare (np.from_dlpack here, torch.from_dlpack on a device)
    serves both places."""
    seen = []

    def prepare(a):
        seen.append((type(a), a.__dlpack_device__()))
        return np.from_dlpack(a)

    subject = sumlab.Subject(exact_sum, prepare=prepare, device=True, configs=[{"grid": 1}, {"grid": 2}],
                             declared="shape_invariant")
    rows = sumlab.study.determinism(subject, str(tmp_path / "d"), runs=3, dtypes=["float32"], dists=["normal"],
                                    sizes=["1000"], backend="model")
    assert classes(rows)["exact_sum"]["measured"] == "shape_invariant"
    assert seen and all(t is np.ndarray and where == (1, 0) for t, where in seen)


def test_a_device_view_is_copied_on_the_device_once_an_input(monkeypatch):
    """The lab's CUDA view (here a stand-in whose __dlpack_device__ says CUDA) goes through
    _sumlab.device_copy in the lab's thread, once an input where prepare's result is kept, and
    prepare gets that copy, never the view."""
    from sumlab import _sumlab

    class CudaView:
        shape, size = (3,), 3

        def __dlpack_device__(self):
            return (2, 0)

    copied = np.arange(3, dtype=np.float32)
    threads = []
    monkeypatch.setattr(_sumlab, "device_copy", lambda v: threads.append(threading.get_ident()) or copied)
    got = []
    subject = sumlab.Subject(lambda x: np.float32(x.sum()), prepare=lambda a: got.append(a) or a, device=True)
    assert subject(0, CudaView(), input_id=7) == 3.0
    assert subject(0, CudaView(), input_id=7) == 3.0
    assert threads == [threading.get_ident()]
    assert len(got) == 1 and got[0] is copied
    assert subject(0, CudaView(), input_id=8) == 3.0  # another input: copied and prepared again
    assert len(threads) == 2 and len(got) == 2


def test_device_input_is_for_sum_subjects():
    with pytest.raises(ValueError, match="device=True is for sum subjects"):
        sumlab.Subject(np.cumsum, kind="scan", device=True)


def test_failing_calls_are_a_class_row_and_no_class_is_claimed(tmp_path):
    calls = iter(range(1000))

    def flaky(x):
        if next(calls) % 2:
            raise RuntimeError("flaky")
        return np.sum(x)

    rows = sumlab.study.determinism([sumlab.Subject(flaky), sumlab.Subject(bad_raises)], str(tmp_path / "d"), runs=4,
                                    dtypes=["float32"], dists=["uniform"], sizes=["1000"], backend="model")
    c = classes(rows)
    for name in ("flaky", "bad_raises"):
        assert c[name]["measured"] == "failed" and c[name]["agreement"] == "failed"
        assert "calls failed on 1 of 1 inputs" in c[name]["note"]


def test_an_overrunning_call_fails_even_when_it_held_the_gil(tmp_path):
    def hog(x):  # one C call that holds the GIL: the watcher cannot time it out, only find it late
        t = time.perf_counter()
        while time.perf_counter() - t < 0.3:
            re.match(r"(a+)+$", "a" * 22 + "b")
        return np.sum(x)

    out = tmp_path / "d"
    sumlab.study.determinism(sumlab.Subject(hog, timeout=0.05), str(out), runs=2, dtypes=["float32"],
                             dists=["uniform"], sizes=["1000"], backend="model")
    rows = sumlab.study.read_table(str(out / "determinism_runs.csv"))
    assert rows and all(r["source"] == "failed" for r in rows)
    assert any("past the 0.05 s timeout" in r["note"] or "no result within" in r["note"] for r in rows)


def test_a_subject_named_or_configured_ambiguously_is_refused():
    for bad in ("a,b", "x[1]", ""):
        with pytest.raises(ValueError):
            sumlab.Subject(np.sum, name=bad or " ")
    with pytest.raises(ValueError):
        sumlab.Subject(np.sum, configs=[{"a": "1,b=2"}])
    with pytest.raises(ValueError):
        sumlab.Subject(np.sum, declared="bogus")


def test_studies_from_several_threads_keep_their_own_subjects(tmp_path):
    results = {}

    def run(i):
        value = np.float32(i + 1)
        rows = sumlab.study.determinism(sumlab.Subject(lambda x: value, name="s"), str(tmp_path / f"d{i}"), runs=2,
                                        dtypes=["float32"], dists=["uniform"], sizes=["100"], backend="model")
        runs = sumlab.study.read_table(str(tmp_path / f"d{i}" / "determinism_runs.csv"))
        results[i] = ({r["value"] for r in runs}, rows)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {i: r[0] for i, r in results.items()} == {i: {i + 1} for i in range(4)}


def test_a_subject_named_like_a_lab_algorithm_is_refused(tmp_path):
    # Its rows would merge with the lab's own: two "serial" rows a cell, one growth fit over both.
    with pytest.raises(sumlab.SumlabError, match="share its rows' name"):
        sumlab.study.error_vs_n(str(tmp_path / "e"), subjects=sumlab.Subject(np.sum, name="serial"), quick=True,
                                dtypes=["float32"], dists=["normal"], seeds=1, log2_max=10, backend="cpu")


def test_a_scan_subject_named_like_a_lab_scan_is_refused(tmp_path):
    with pytest.raises(sumlab.SumlabError, match="share its rows' name"):
        sumlab.study.scan(str(tmp_path / "s"), subjects=sumlab.Subject(np.cumsum, name="cpu_serial", kind="scan"),
                          quick=True, backend="model")


def test_a_subjects_time_is_its_own_call_not_the_harness(tmp_path):
    """The ms column times fn and the reading of its result: not prepare (here 0.3 s on the first
    call of each input), the lab's copy or the watcher thread."""
    def slow_prepare(a):
        time.sleep(0.3)
        return a

    def fn(x):
        time.sleep(0.02)
        return np.sum(x)

    out = tmp_path / "d"
    sumlab.study.determinism(sumlab.Subject(fn, prepare=slow_prepare), str(out), runs=2, dtypes=["float32"],
                             dists=["uniform"], sizes=["1000"], backend="model")
    # The median of two calls: with prepare's 0.3 s in the first, it would be over 150 ms.
    ms = [float(r["ms"]) for r in sumlab.study.read_table(str(out / "determinism_runs.csv")) if r["source"] == "measured"]
    assert ms and all(19 <= m < 100 for m in ms), ms


def test_bfloat16_round_of_integers_and_long_doubles_rounds_their_exact_value():
    """2^60 + 2^52 + 1 lies just above the tie between 128 and 129 times 2^53: its nearest bfloat16 is
    129·2^53, while float64 first rounds it to the tie (2^60 + 2^52) and bfloat16 then to 2^60. The
    same for a long double that float64 does not hold (where long double is wider than double)."""
    v = np.array([2 ** 60 + 2 ** 52 + 1, -(2 ** 60 + 2 ** 52 + 1), 2 ** 60 + 2 ** 52, 2 ** 63 - 1, 7], np.int64)
    want = np.array([129 * 2.0 ** 53, -129 * 2.0 ** 53, 2.0 ** 60, 2.0 ** 63, 7.0], np.float32)
    np.testing.assert_array_equal(sumlab.bfloat16_round(v).view(np.uint32), want.view(np.uint32))
    u = np.array([2 ** 64 - 1, 2 ** 60 + 2 ** 52 + 1], np.uint64)
    np.testing.assert_array_equal(sumlab.bfloat16_round(u), np.array([2.0 ** 64, 129 * 2.0 ** 53], np.float32))
    if np.finfo(np.longdouble).nmant > 52:
        ld = np.array([1, -1], np.longdouble) * (np.longdouble(1) + np.longdouble(2.0 ** -8) + np.longdouble(2.0 ** -60))
        np.testing.assert_array_equal(sumlab.bfloat16_round(ld), np.array([1 + 2 ** -7, -(1 + 2 ** -7)], np.float32))


def test_bfloat16_rounding_in_integers_agrees_with_the_round_to_odd_path():
    """The exact path (integers) and the fast one (float32 rounded to odd, then to bfloat16) give the
    same bits on doubles across the whole range: subnormal bfloat16s, ties, overflow to infinity."""
    from sumlab.subjects import _bfloat16_of_ratio
    rng = np.random.default_rng(1)
    d = rng.standard_normal(20000) * 10.0 ** rng.integers(-45, 39, 20000)
    d[:4] = [2.0 ** -133, 2.0 ** -134, 3 * 2.0 ** -135, (2 - 2 ** -8) * 2.0 ** 127]  # ties at both ends
    slow = np.array([_bfloat16_of_ratio(*float(t).as_integer_ratio()) for t in d], np.float32)
    np.testing.assert_array_equal(sumlab.bfloat16_round(d).view(np.uint32), slow.view(np.uint32))


def test_a_prepared_input_is_known_by_the_labs_id_without_a_copy_of_it():
    """prepare runs once per input: the lab names each input by an id no other input of the process
    gets, and a call with the id of the input last prepared reuses prepare's result. The subject
    keeps nothing of the data to know it again (a kept copy is as large as the input: gigabytes at a
    GPU's sizes) and reads none of it to tell; another id, or none (0), is prepared again, whatever
    its bytes."""
    import gc
    import tracemalloc

    prepared = []

    def prepare(a):
        prepared.append(1)
        return a[-4:].copy()  # small beside the data, as a device copy is to the host's memory

    subject = sumlab.Subject(lambda x: float(x[-1]), prepare=prepare)
    x = np.arange(1 << 24, dtype=np.float32)  # 64 MiB
    tracemalloc.start()
    try:
        assert subject(0, x, input_id=7) == float(x[-1])
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        assert subject(0, x, input_id=7) == float(x[-1])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert prepared == [1]
    assert held < 1 << 20, f"{held} bytes kept after preparing a {x.nbytes}-byte input"
    assert peak < 1 << 20, f"{peak} bytes allocated to know a {x.nbytes}-byte input again"
    assert subject(0, x, input_id=8) == float(x[-1])
    assert prepared == [1, 1]
    y = x.copy()
    y[-1] = np.float32(-1)
    assert subject(0, y) == -1.0 and subject(0, y) == -1.0
    assert prepared == [1, 1, 1, 1]


def _segment_sums(data):
    x, off = data
    return np.array([np.sum(x[a:b], dtype=x.dtype) for a, b in zip(off[:-1], off[1:])], dtype=x.dtype)


@pytest.mark.parametrize("kind", ["sum", "scan", "variance", "segment_sums"])
def test_every_study_prepares_each_input_once(tmp_path, kind):
    """The lab passes each input's id to the subject from every family's runner: every input is
    prepared once, and that one result serves all of its calls (configurations x runs)."""
    serial = itertools.count()
    prepared, uses = [], collections.Counter()

    def prepare(data):
        prepared.append(1)
        return next(serial), data

    fns = {"sum": lambda x: np.sum(x), "scan": lambda x: np.cumsum(x, dtype=x.dtype),
           "variance": lambda x: x.var(axis=1, dtype=np.float64).astype(x.dtype),
           "segment_sums": _segment_sums}

    def fn(p, **_):
        uses[p[0]] += 1
        return fns[kind](p[1])

    subject = sumlab.Subject(fn, name="prepared", prepare=prepare, kind=kind, configs=[{"a": 1}, {"a": 2}])
    out = str(tmp_path / kind)
    if kind == "sum":
        sumlab.study.determinism(subject, out, runs=3, dtypes=["float32"], dists=["uniform"], sizes=["1000", "4099"],
                                 backend="model")
    elif kind == "scan":
        sumlab.study.scan(out, subjects=subject, quick=True, dtypes=["float32"], dists=["uniform"], ops=["plus"],
                          algorithms=["cpu_serial"], runs=3, backend="model")
    elif kind == "variance":
        sumlab.study.variance(out, subjects=subject, quick=True, dtypes=["float32"], offsets=[0, 100], scales=[1],
                              runs=3, backend="model")
    else:
        sumlab.study.segmented(out, subjects=subject, quick=True, dtypes=["float32"], distributions=["uniform"],
                               runs=3, backend="model")
    assert len(prepared) == len(uses) >= 1
    assert min(uses.values()) >= 2 * 3, uses
