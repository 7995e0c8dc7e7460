"""sumlab.study: the CLI's run folders from Python, on generated inputs and on the user's data, and
Ctrl-C that leaves a study resumable."""
import csv
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import sumlab


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_error_vs_n_writes_the_clis_run_folder(tmp_path, sumlab_binary):
    out = tmp_path / "evn"
    rows = sumlab.study.error_vs_n(str(out), quick=True, dtypes=["float32"], dists=["uniform"], seeds=1,
                                   log2_max=10, backend="model", gpu_kernels=["gpu_two_pass", "gpu_exact"])
    assert rows and {r["verdict"] for r in rows} <= {"within", "no_bound"}
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["study"] == "error-vs-n" and prov["plan"]["dtypes"] == ["float32"]
    # The same command through the CLI gives the same rows.
    cli = tmp_path / "cli"
    subprocess.run([str(sumlab_binary), "study", "error-vs-n", "--quick", "--dtypes", "float32", "--dists", "uniform",
                    "--seeds", "1", "--log2-max", "10", "--backend", "model", "--gpu-kernels", "gpu_two_pass,gpu_exact",
                    "--out", str(cli)], check=True, capture_output=True)
    assert rows_of(out / "error_vs_n.csv") == rows_of(cli / "error_vs_n.csv")
    # And `sumlab report` renders it.
    subprocess.run([str(sumlab_binary), "report", str(out)], check=True, capture_output=True)
    assert (out / "report" / "report.html").exists()


def test_cells_side_by_side_and_the_kernels_alone(tmp_path):
    # cells= changes no row; algorithms=["none"] leaves the GPU kernels alone, each still measured.
    common = dict(dtypes=["float32", "float64"], dists=["normal"], seeds=2, log2_min=8, log2_max=14, log2_step=2,
                  backend="model", gpu_kernels=["gpu_exact", "gpu_kahan"])
    one = sumlab.study.error_vs_n(str(tmp_path / "one"), cells=1, **common)
    four = sumlab.study.error_vs_n(str(tmp_path / "four"), cells=4, **common)
    assert one == four and len(one) > 16
    alone = sumlab.study.error_vs_n(str(tmp_path / "alone"), algorithms=["none"], **common)
    assert {r["algorithm"] for r in alone} == {"gpu_exact", "gpu_kahan"}
    assert all(r["hex"] == r["reference_hex"] for r in alone if r["algorithm"] == "gpu_exact")
    summary = json.loads((tmp_path / "alone" / "summary.json").read_text())
    assert summary["reference"].startswith("MPFR")  # the model's data is on the host
    with pytest.raises(sumlab.SumlabError):
        sumlab.study.error_vs_cond(str(tmp_path / "bad"), cells=0, backend="model", quick=True)


def test_studies_on_the_users_data(tmp_path):
    rng = np.random.default_rng(7)
    data = (rng.standard_normal(20000) * rng.choice([1.0, 1e6], 20000)).astype(np.float64)
    rows = sumlab.study.error_vs_n(str(tmp_path / "d"), data=data, seeds=2, log2_min=8, backend="cpu")
    sizes = sorted({r["n"] for r in rows})
    assert sizes[-1] == 20000 and sizes[0] == 256
    assert {r["dist"] for r in rows} == {"data"}
    # seed 1 is the prefix: its exact sum is the prefix's.
    prefix = [r for r in rows if r["n"] == 256 and r["seed"] == 1 and r["algorithm"] == "exact"][0]
    assert prefix["value"] == sumlab.reference(data[:256])
    prov = json.loads((tmp_path / "d" / "provenance.json").read_text())
    assert prov["plan"]["input"]["n"] == 20000 and len(prov["plan"]["input"]["fnv1a64"]) == 16
    cond = sumlab.study.error_vs_cond(str(tmp_path / "c"), data=data, seeds=1, backend="cpu")
    assert {r["requested_condition"] for r in cond} == {"data"}
    det = sumlab.study.determinism(None, str(tmp_path / "det"), data=data, kernels=["gpu_two_pass", "gpu_exact"],
                                   quick=True, backend="model")
    assert {r["kernel"]: r["measured"] for r in det}["gpu_exact"] == "shape_invariant"


def _study_on_data(study, out, data, fn):
    """One small run of `study` on data, with fn (a sum, or a scan for the scan study) as subject."""
    if study == "determinism":
        return sumlab.study.determinism(fn, out, data=data, kernels=["gpu_two_pass"], quick=True, backend="model")
    if study == "scan":
        return sumlab.study.scan(out, data=data, subjects=sumlab.Subject(fn, kind="scan"), sizes=[1000],
                                 ops=["plus"], algorithms=["cpu_serial"], backend="model")
    if study == "segmented":
        return sumlab.study.segmented(out, data=data, offsets=[0, 100, len(data)], quick=True, backend="model",
                                      subjects=sumlab.Subject(fn, kind="segment_sums"))
    return getattr(sumlab.study, study)(out, data=data, subjects=fn, seeds=2, backend="cpu")


def _segment_sums(d):
    x, off = d
    return np.array([np.sum(x[a:b]) for a, b in zip(off[:-1], off[1:])])


@pytest.mark.parametrize("study", ["error_vs_n", "error_vs_cond", "determinism", "scan", "segmented"])
def test_the_users_data_is_read_in_place_and_a_change_meanwhile_is_refused(tmp_path, study):
    """A study reads the caller's array where it lies (no copy of it), so a change while it runs
    would mix two inputs in its rows: here a subject writes into the data through its closure, and
    the study ends with the lab's reason instead of a summary."""
    data = np.random.default_rng(3).standard_normal(5000)
    seen = []
    reduce = {"scan": np.cumsum, "segmented": _segment_sums}.get(study, np.sum)

    def meddling(x):
        seen.append(1)
        if len(seen) == 2:
            data[7] += 1.0  # the caller's array, which the lab is reading
        return reduce(x)

    with pytest.raises(sumlab.SumlabError, match=r"the data \(an array from Python\) changed while the study read it"):
        _study_on_data(study, str(tmp_path / study), data, meddling)
    assert len(seen) >= 2 and not (tmp_path / study / "summary.json").exists()
    # Unchanged data passes the same check.
    _study_on_data(study, str(tmp_path / "again"), data, lambda x: reduce(x))
    assert (tmp_path / "again" / "summary.json").exists()


def test_the_users_data_is_not_copied_to_be_studied():
    """Registering a study's data takes no copy of a contiguous float32 or float64 array: the peak
    resident memory of a process that registers 256 MiB grows by far less than that (a copy grew it
    by the whole array). In a process of its own, whose peak is the array's."""
    code = ("import resource, numpy as np\n"
            "from sumlab import _sumlab\n"
            "x = np.ones(1 << 26, np.float32)\n"
            "peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
            "before = peak()\n"
            "_sumlab.register_array('t', x, '')\n"
            "print(peak() - before)\n"
            "_sumlab.unregister_array('t')\n")
    grew = int(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
    assert grew < (1 << 26), f"registering 256 MiB grew the peak by {grew} bytes"


def test_a_scan_study_on_the_users_data(tmp_path):
    """data= in place of the scan study's distributions: the vector's prefixes at the sizes below its
    length and the whole of it. numpy's float32 cumsum adds left to right, so it is the serial scan
    bit for bit, and the serial scan's last prefix lies as many ulps from the exact prefix sum as
    counting them here says."""
    x = (np.random.default_rng(5).standard_normal(3000) * 1e3).astype(np.float32)
    cumsum = sumlab.Subject(lambda a: np.cumsum(a, dtype=a.dtype), name="np_cumsum", kind="scan")
    rows = sumlab.study.scan(str(tmp_path / "s"), data=x, subjects=cumsum, sizes=[1000, 5000], ops=["plus"],
                             algorithms=["cpu_serial"], backend="model")
    assert {r["distribution"] for r in rows} == {"data"} and sorted({r["n"] for r in rows}) == [1000, 3000]
    by = {(r["algorithm"], r["n"]): r for r in rows}
    for n in (1000, 3000):
        assert by[("np_cumsum", n)]["max_ulps"] == by[("cpu_serial", n)]["max_ulps"]
        last, exact = np.cumsum(x[:n], dtype=np.float32)[-1], np.float32(sumlab.reference(x[:n]))
        ulps = abs(int(last.view(np.int32)) - int(exact.view(np.int32)))  # same sign here: ordinal distance
        assert np.sign(last) == np.sign(exact) and by[("cpu_serial", n)]["last_ulps"] == ulps


def test_a_segmented_study_on_the_users_values_and_layout(tmp_path):
    """data= with offsets=: your values summed over your segments (an index_add_ on your data), empty
    segments included, against the exact per-segment sums: math.fsum rounded once is exact."""
    import math
    rng = np.random.default_rng(9)
    x = rng.standard_normal(2000) * 10.0 ** rng.integers(-8, 9, 2000)  # sums that round
    offsets = np.array([0, 0, 5, 5, 1500, 1999, 2000], dtype=np.int64)

    def exact_segments(d):
        v, off = d
        return np.array([math.fsum(v[a:b]) for a, b in zip(off[:-1], off[1:])])

    rows = sumlab.study.segmented(str(tmp_path / "g"), data=x, offsets=offsets, quick=True, backend="model",
                                  subjects=sumlab.Subject(exact_segments, kind="segment_sums"))
    assert {r["values"] for r in rows} == {"data"} and {r["dtype"] for r in rows} == {"float64"}
    by = {r["strategy"]: r for r in rows}
    assert by["exact_segments"]["max_ulps"] == 0 and by["exact_segments"]["wrong_empty"] == 0
    assert by["exact_segments"]["segments"] == 6 and by["exact_segments"]["empty_segments"] == 2
    # The layout as a list, or as int32, gives the same rows; floats are refused, not truncated.
    for layout in (offsets.tolist(), offsets.astype(np.int32)):
        again = sumlab.study.segmented(str(tmp_path / "l"), data=x, offsets=layout, quick=True, backend="model",
                                       force=True)
        assert [r["max_ulps"] for r in again] == [r["max_ulps"] for r in rows if r["strategy"] != "exact_segments"]
    with pytest.raises(sumlab.SumlabError, match="1-D sequence of integers"):
        sumlab.study.segmented(str(tmp_path / "f"), data=x, offsets=offsets.astype(np.float64), backend="model")


def test_a_variance_study_on_the_users_rows(tmp_path):
    """data= in place of the variance study's generated rows: activations of shape (2, 32, 1024) are
    64 rows of 1024 (a layer norm's rows), offset by 1e4 as a residual stream can be. A subject
    that takes each row's variance in float64 and rounds it once is within float32's rounding of the
    lab's exact reference on every row, the textbook formula goes negative there as the seeds say,
    and argmax's first row is numpy's."""
    rng = np.random.default_rng(3)
    x = (1e4 + rng.standard_normal((2, 32, 1024))).astype(np.float32)
    exact = sumlab.Subject(lambda r: np.var(r.astype(np.float64), axis=1).astype(np.float32), name="np_var64",
                           kind="variance")
    rows = sumlab.study.variance(str(tmp_path / "v"), data=x, subjects=exact, backend="model")
    assert {r["offset"] for r in rows} == {"data"} and {r["rows"] for r in rows} == {64}
    by = {(r["method"], r["layout"]): r for r in rows}
    assert by[("np_var64", "external")]["max_rel_error"] <= 2.0 ** -24
    assert by[("textbook", "warp_per_row")]["negative_variance_rows"] > 0
    assert by[("two_pass", "warp_per_row")]["max_rel_error"] < 1e-5
    argmax = sumlab.study.read_table(str(tmp_path / "v" / "row_argmax.csv"))
    assert {r["expected_index_row0"] for r in argmax} == {int(np.argmax(x.reshape(64, 1024)[0]))}
    assert all(r["index_mismatches"] == 0 for r in argmax)
    # A 1-D array needs its row length; float16 rows (no row kernels) need dtypes=["float32"].
    with pytest.raises(sumlab.SumlabError, match="needs cols="):
        sumlab.study.variance(str(tmp_path / "w"), data=x.reshape(-1), backend="model")
    with pytest.raises(sumlab.SumlabError, match="holds float16 values"):
        sumlab.study.variance(str(tmp_path / "w"), data=x.astype(np.float16), backend="model")
    assert not (tmp_path / "w").exists()
    flat = sumlab.study.variance(str(tmp_path / "f"), data=x.reshape(-1), cols=1024, backend="model")
    assert [r["median_rel_error"] for r in flat] == [r["median_rel_error"] for r in rows if r["layout"] != "external"]


def test_bfloat16_activations_are_studied_by_the_bfloat16_row_kernels(tmp_path):
    """A bfloat16 array's rows are studied as bfloat16 (the row kernels' bfloat16 loads), the same
    rows as the array's float32 widening with dtypes=["bfloat16"] (how a .npy file brings them), and
    beside the float32 kernels on the same values when asked. A subject sees the rows as their uint16
    bit patterns; float32 values that bfloat16 does not hold are refused."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(5)
    x = (3 + rng.standard_normal((16, 512))).astype(ml_dtypes.bfloat16)
    seen = []

    def var64(r):
        seen.append(r.dtype)
        return np.var(sumlab.bfloat16_to_float32(r).astype(np.float64), axis=1).astype(np.float32)

    rows = sumlab.study.variance(str(tmp_path / "b"), data=x, subjects=sumlab.Subject(var64, kind="variance"),
                                 backend="model")
    assert {r["dtype"] for r in rows} == {"bfloat16"} and set(seen) == {np.dtype(np.uint16)}
    by = {(r["method"], r["layout"]): r for r in rows}
    assert by[("var64", "external")]["max_rel_error"] <= 2.0 ** -24
    assert 0 < by[("two_pass", "warp_per_row")]["max_rel_error"] < 1e-5
    widened = sumlab.study.variance(str(tmp_path / "w"), data=x.astype(np.float32), dtypes=["bfloat16"],
                                    backend="model")
    kernels = [r for r in rows if r["layout"] != "external"]
    assert [(r["method"], r["max_rel_error"]) for r in widened] == [(r["method"], r["max_rel_error"]) for r in kernels]
    both = sumlab.study.variance(str(tmp_path / "2"), data=x, dtypes=["bfloat16", "float32"], backend="model")
    assert {r["dtype"] for r in both} == {"bfloat16", "float32"}
    plan = open(tmp_path / "b" / "provenance.json").read()
    assert '"widened_from": "bfloat16"' in plan
    off = x.astype(np.float32)
    off[3, 7] = np.nextafter(off[3, 7], np.float32(np.inf))
    with pytest.raises(sumlab.SumlabError, match=f"value {3 * 512 + 7} .* is not a bfloat16 value"):
        sumlab.study.variance(str(tmp_path / "x"), data=off, dtypes=["bfloat16"], backend="model")


def test_resume_with_other_data_is_refused(tmp_path):
    a = np.arange(1000, dtype=np.float64)
    sumlab.study.error_vs_n(str(tmp_path / "r"), data=a, seeds=1, log2_min=8, backend="cpu")
    with pytest.raises(sumlab.SumlabError):
        sumlab.study.error_vs_n(str(tmp_path / "r"), data=a + 1, seeds=1, log2_min=8, backend="cpu", resume=True)
    sumlab.study.error_vs_n(str(tmp_path / "r"), data=a, seeds=1, log2_min=8, backend="cpu", resume=True)


def test_ctrl_c_stops_the_study_cleanly_and_resume_finishes_it(tmp_path):
    calls = {"n": 0}

    def interrupting(x):
        calls["n"] += 1
        if calls["n"] == 3:
            os.kill(os.getpid(), signal.SIGINT)  # as the user's Ctrl-C
        return np.sum(x)

    out = str(tmp_path / "int")
    kwargs = dict(quick=True, dtypes=["float32"], dists=["uniform"], seeds=1, log2_max=12, backend="cpu")
    with pytest.raises(KeyboardInterrupt):
        sumlab.study.error_vs_n(out, subjects=sumlab.Subject(interrupting, name="s"), **kwargs)
    done = len(open(os.path.join(out, "cells.log")).read().splitlines())
    assert 0 < done < 5
    rows = sumlab.study.error_vs_n(out, subjects=sumlab.Subject(lambda x: np.sum(x), name="s"), resume=True, **kwargs)
    assert len({(r["n"], r["algorithm"]) for r in rows}) == len(rows), "no duplicated row"
    assert sorted({r["n"] for r in rows}) == [16, 64, 256, 1000, 1024, 4096]


def test_determinism_takes_the_launch_shapes_to_sweep(tmp_path):
    out = tmp_path / "det"
    sumlab.study.determinism(None, str(out), kernels=["gpu_two_pass"], backend="model", sizes=["4099"], runs=2,
                             dtypes=["float32"], dists=["uniform"], grids=["SM", 3], blocks=[64], vectors=[1],
                             mappings=["contiguous"])
    shapes = {r["shape"] for r in sumlab.study.read_table(str(out / "determinism_runs.csv"))}
    assert shapes == {"132x64 v1 contiguous shfl_down warp_of_warps second_kernel",
                      "3x64 v1 contiguous shfl_down warp_of_warps second_kernel"}


def test_a_refused_study_says_why(tmp_path):
    with pytest.raises(sumlab.SumlabError, match="--runs must be"):
        sumlab.study.determinism(np.sum, str(tmp_path / "d"), runs=1, sizes=["100"], backend="model")
    with pytest.raises(sumlab.SumlabError, match="path is empty"):
        sumlab.study.error_vs_n("", quick=True)
