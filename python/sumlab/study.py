"""The lab's studies from Python: the same run folders as ``sumlab study`` (``sumlab report DIR``
renders them), on generated inputs or on your data (``data=``), with sumlab's subjects or yours
(``subjects=``: a ``sumlab.Subject``, a callable, or a list). Each returns the study's main table
as tidy records (a list of dicts, numbers as numbers).

``data=`` is read where it lies when it is a contiguous float32 or float64 host array (no copy of
it is made): it must not change until the study returns, and a study whose data changed meanwhile
raises SumlabError at its end rather than write a summary over rows of two inputs. Other arrays
(float16, bfloat16, strided) are converted into a copy of the lab's own.

The work runs in C++ with the GIL released (your subjects take it back for their calls). Studies
started from several threads of one process run one after another. Ctrl-C stops a study after the
cell in flight; the folder keeps every finished cell and ``resume=True`` continues it. A study
that cannot run raises SumlabError with the lab's one-line reason.
"""
from __future__ import annotations

import csv
import itertools
import os
import threading
from typing import Any, Optional, Sequence

from . import _sumlab
from .core import CheckFailed, SumlabError, _prepare
from .subjects import as_subjects

_ids = itertools.count()
# One study at a time in a process: the subjects a study registers are the lab's, process-wide.
_one_study = threading.Lock()
_TEXT = {"hex", "reference_hex", "model_hex", "value_hex", "shape", "verdict", "note", "algorithm", "kernel",
         "backend", "dtype", "dist", "study", "kind", "source", "declared", "measured", "agreement", "witness",
         "requested_condition", "method", "layout", "case", "input", "diagnostics", "figure", "expected",
         "strategy", "where", "distribution", "values"}


def _value(column: str, text: str) -> Any:
    if column in _TEXT or text == "":
        return text
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def read_table(path: str) -> list[dict]:
    """A run folder's CSV as records, numbers as numbers."""
    with open(path, newline="", encoding="utf-8") as f:
        return [{k: _value(k, v) for k, v in row.items()} for row in csv.DictReader(f)]


def _list(option: str, values: Optional[Sequence[Any]]) -> list[str]:
    if values is None:
        return []
    if isinstance(values, (str, int, float)):
        values = [values]
    return [option, ",".join(str(v) for v in values)]


def _run(args: list[str], data: Any = None, subjects: Any = None, kinds: Sequence[str] = ("sum",),
         order: Optional[str] = None) -> None:
    """Runs a sumlab command in this process with the study's data (an array of more than one
    dimension flattened in `order`) and subjects (of `kinds`) registered."""
    try:
        chosen = as_subjects(subjects, kinds, args[1])
    except ValueError as e:
        raise SumlabError(str(e)) from None
    with _one_study:
        registered_array = None
        names: list[str] = []
        taken: set = set()
        try:
            if data is not None:
                arr, tag, _ = _prepare(data, order)
                registered_array = f"py{os.getpid()}_{next(_ids)}"
                try:
                    _sumlab.register_array(registered_array, arr, tag)
                except (ValueError, TypeError) as e:
                    raise SumlabError(f"data: {e}") from None
                args += ["--input", "mem:" + registered_array]
            for s in chosen:
                try:
                    names.append(s.register(_sumlab, taken))
                except ValueError as e:
                    raise SumlabError(str(e)) from None
            if names:
                args += ["--external", ",".join(names)]
            code, message = _sumlab.run_cli(args)
        finally:
            for n in names:
                _sumlab.unregister_external(n)
            if registered_array:
                _sumlab.unregister_array(registered_array)
            for s in chosen:
                s.release()
    what = "sumlab " + " ".join(args[:2])
    if code == 130:
        raise KeyboardInterrupt("the study stopped after the cell in flight; resume=True continues it")
    if code == 1:
        raise CheckFailed(f"{what}: {message or 'a check failed'}")
    if code == 3:
        raise MemoryError(f"{what}: {message or 'not enough memory, disk or device'}")
    if code != 0:
        raise SumlabError(f"{what}: {message or f'failed with exit code {code}'}")


def _offsets(offsets: Any) -> list[str]:
    """A layout's offsets as --offsets: a sequence of ints or a 1-D integer array of any framework
    (a torch tensor's elements would print as "tensor(3)"; a device array is brought to the host)."""
    if offsets is None:
        return []
    import numpy as np
    module = type(offsets).__module__.split(".")[0]
    if module == "torch":
        offsets = offsets.detach().cpu()
    elif module == "cupy":
        offsets = offsets.get()
    a = np.asarray(offsets)
    if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
        raise SumlabError(f"offsets: a 1-D sequence of integers (the segments' boundaries 0 .. n); got {a.dtype} of "
                          f"shape {a.shape}")
    return ["--offsets", ",".join(map(str, a.tolist()))]


def _common(out: str, quick: bool, force: bool, resume: bool, strict: bool, backend: Optional[str]) -> list[str]:
    if out is None or not os.fspath(out):
        raise SumlabError("out: the run folder's path is empty")
    args = ["--out", os.fspath(out)]
    if quick:
        args.append("--quick")
    if force:
        args.append("--force")
    if resume:
        args.append("--resume")
    if strict:
        args.append("--strict")
    if backend:
        args += ["--backend", backend]
    return args


def error_vs_n(out: str, *, data: Any = None, subjects: Any = None, quick: bool = False,
               dtypes: Optional[Sequence[str]] = None, dists: Optional[Sequence[str]] = None,
               seeds: Optional[int] = None, log2_min: Optional[int] = None, log2_max: Optional[int] = None,
               log2_step: Optional[int] = None, algorithms: Optional[Sequence[str]] = None,
               gpu_kernels: Optional[Sequence[str]] = None, backend: Optional[str] = None,
               cells: Optional[int] = None, force: bool = False, resume: bool = False,
               strict: bool = False) -> list[dict]:
    """Error against the exact sum as n grows (``sumlab study error-vs-n``). With data=: over its
    prefixes (seed 1) and seeded subsamples (seeds 2..). backend: 'cuda', 'model' or 'cpu' (CPU
    algorithms only); algorithms=['none']: the GPU kernels alone (on cuda the data then stays on
    the device). cells: at most this many cells side by side (default: the host's cores; never with
    subjects); the rows do not depend on it. Returns error_vs_n.csv's rows."""
    args = ["study", "error-vs-n"] + _common(out, quick, force, resume, strict, backend)
    args += _list("--dtypes", dtypes) + _list("--dists", dists) + _list("--algorithms", algorithms)
    args += _list("--gpu-kernels", gpu_kernels)
    for option, v in (("--seeds", seeds), ("--log2-min", log2_min), ("--log2-max", log2_max),
                      ("--log2-step", log2_step), ("--cells", cells)):
        if v is not None:
            args += [option, str(v)]
    _run(args, data, subjects)
    return read_table(os.path.join(out, "error_vs_n.csv"))


def error_vs_cond(out: str, *, data: Any = None, subjects: Any = None, quick: bool = False,
                  dtypes: Optional[Sequence[str]] = None, n: Optional[int] = None, decades_step: Optional[int] = None,
                  seeds: Optional[int] = None, algorithms: Optional[Sequence[str]] = None,
                  gpu_kernels: Optional[Sequence[str]] = None, backend: Optional[str] = None,
                  cells: Optional[int] = None, force: bool = False, resume: bool = False,
                  strict: bool = False) -> list[dict]:
    """Relative error against the condition number (``sumlab study error-vs-cond``): Ogita-Rump-Oishi
    inputs, or with data= the data's own condition numbers. cells: as error_vs_n's. Returns
    error_vs_cond.csv's rows."""
    args = ["study", "error-vs-cond"] + _common(out, quick, force, resume, strict, backend)
    args += _list("--dtypes", dtypes) + _list("--algorithms", algorithms) + _list("--gpu-kernels", gpu_kernels)
    for option, v in (("--n", n), ("--decades-step", decades_step), ("--seeds", seeds), ("--cells", cells)):
        if v is not None:
            args += [option, str(v)]
    _run(args, data, subjects)
    return read_table(os.path.join(out, "error_vs_cond.csv"))


def determinism(subjects: Any = None, out: str = "runs/determinism", *, data: Any = None, runs: Optional[int] = None,
                kernels: Optional[Sequence[str]] = None, quick: bool = False, sizes: Optional[Sequence[Any]] = None,
                dtypes: Optional[Sequence[str]] = None, dists: Optional[Sequence[str]] = None,
                backend: Optional[str] = None, force: bool = False, resume: bool = False,
                save_golden: Optional[str] = None, grids: Optional[Sequence[Any]] = None,
                blocks: Optional[Sequence[int]] = None, vectors: Optional[Sequence[int]] = None,
                mappings: Optional[Sequence[str]] = None) -> list[dict]:
    """Which sums give the same bits run to run and across configurations
    (``sumlab study determinism``). subjects: your reductions, each configuration a "shape", run
    `runs` times (fewer, at least 2, once a shape has taken the CLI's --max-shape-seconds; the
    classes table's runs_per_shape_min says how many ran); kernels: sumlab's ('all', 'gpu', 'cpu', 'none' or names; default 'none' when
    subjects are given), over the launch shapes that grids ('SM', '4SM' or integers), blocks,
    vectors and mappings span (the CLI's defaults when not given). Returns
    determinism_classes.csv's rows (one per subject and kernel)."""
    args = ["study", "determinism"] + _common(out, quick, force, resume, False, backend)
    if kernels is None and subjects is not None:
        kernels = ["none"]
    args += _list("--kernels", kernels) + _list("--sizes", sizes) + _list("--dtypes", dtypes)
    args += _list("--dists", dists) + _list("--grids", grids) + _list("--blocks", blocks)
    args += _list("--vectors", vectors) + _list("--mappings", mappings)
    if runs is not None:
        args += ["--runs", str(runs)]
    if save_golden:
        args += ["--save-golden", os.fspath(save_golden)]
    _run(args, data, subjects)
    return read_table(os.path.join(out, "determinism_classes.csv"))


def scan(out: str = "runs/scan", *, data: Any = None, subjects: Any = None, quick: bool = False,
         sizes: Optional[Sequence[Any]] = None,
         dtypes: Optional[Sequence[str]] = None, dists: Optional[Sequence[str]] = None,
         ops: Optional[Sequence[str]] = None, algorithms: Optional[Sequence[str]] = None,
         runs: Optional[int] = None, backend: Optional[str] = None, force: bool = False,
         resume: bool = False) -> list[dict]:
    """Prefix sums against the exact ones (``sumlab study scan``): the lab's CPU and GPU scans and
    your scans (subjects: ``sumlab.Subject(fn, kind="scan")``, measured on the + operator, each
    configuration run max(runs, 2) times). With data=: over its prefixes at the sizes below its
    length and the whole of it (at most 2^28 values), in its own dtype, in place of dists. Returns
    scan_error.csv's rows; scan_determinism.csv in the folder has every subject's measured class."""
    args = ["study", "scan"] + _common(out, quick, force, resume, False, backend)
    args += _list("--sizes", sizes) + _list("--dtypes", dtypes) + _list("--dists", dists) + _list("--ops", ops)
    args += _list("--algorithms", algorithms)
    if runs is not None:
        args += ["--runs", str(runs)]
    _run(args, data, subjects, ("scan",))
    return read_table(os.path.join(out, "scan_error.csv"))


def segmented(out: str = "runs/segmented", *, data: Any = None, subjects: Any = None, quick: bool = False,
              dtypes: Optional[Sequence[str]] = None, distributions: Optional[Sequence[str]] = None,
              segments: Optional[Sequence[int]] = None, mean_sizes: Optional[Sequence[float]] = None,
              strategies: Optional[Sequence[str]] = None, offsets: Any = None,
              runs: Optional[int] = None, backend: Optional[str] = None, force: bool = False,
              resume: bool = False) -> list[dict]:
    """Segmented sums (``sumlab study segmented``) against the exact per-segment sums: the lab's
    strategies and your segment sums (subjects: ``sumlab.Subject(fn, kind="segment_sums")``, given
    (values, offsets); each configuration called max(runs, 2) times), per segment-size distribution,
    or on one hand-made layout (offsets: the segments' boundaries 0 .. n, a sequence or a 1-D integer
    array of NumPy, PyTorch, CuPy or JAX). With data= (which needs
    offsets): your values on that layout, in their own dtype. Returns segmented_errors.csv's rows;
    segmented_determinism.csv in the folder has every subject's measured class."""
    args = ["study", "segmented"] + _common(out, quick, force, resume, False, backend)
    args += _list("--dtypes", dtypes) + _list("--distributions", distributions) + _list("--segments", segments)
    args += _list("--mean-sizes", mean_sizes) + _list("--strategies", strategies) + _offsets(offsets)
    if runs is not None:
        args += ["--runs", str(runs)]
    _run(args, data, subjects, ("segment_sums",))
    return read_table(os.path.join(out, "segmented_errors.csv"))


def variance(out: str = "runs/variance", *, data: Any = None, subjects: Any = None, quick: bool = False,
             dtypes: Optional[Sequence[str]] = None, rows: Optional[int] = None, cols: Optional[int] = None,
             softmax_rows: Optional[int] = None, offsets: Optional[Sequence[float]] = None,
             scales: Optional[Sequence[float]] = None, runs: Optional[int] = None, backend: Optional[str] = None,
             force: bool = False, resume: bool = False) -> list[dict]:
    """Row kernels (``sumlab study variance``): variance (textbook, two-pass, Welford/Chan) and the
    normalised rows against the exact ones, softmax, argmax; and your row reductions (subjects:
    ``sumlab.Subject(fn, kind=...)`` of kind "variance", "layer_norm" or "softmax", each
    configuration called ``runs`` times (default 2) for its distinct outputs) beside them, on
    float32, bfloat16 or float64 rows. With data= (a 2-D array's rows, or a 1-D array in rows of
    cols values): your rows in every table, in place of the generated ones (offset, scale and case
    read "data"), in their own dtype (bfloat16 for a bfloat16 array), or in dtypes= that hold them
    exactly: float32 for bfloat16 or float16 rows (float16 has no row kernels), bfloat16 for
    float32 rows of bfloat16 values. Returns row_variance.csv's rows; row_softmax.csv holds the
    softmax subjects."""
    args = ["study", "variance"] + _common(out, quick, force, resume, False, backend)
    order = None
    if data is not None:
        ndim = getattr(data, "ndim", None)
        if ndim is None:
            import numpy as np
            data = np.asarray(data)
            ndim = data.ndim
        if ndim >= 2:
            if cols is not None and cols != data.shape[-1]:
                raise SumlabError(f"variance: cols={cols} but the data's rows hold {data.shape[-1]} values")
            cols = data.shape[-1]
            order = "C"
        elif cols is None:
            raise SumlabError("variance: a 1-D data= needs cols=, the length of a row")
    args += _list("--dtypes", dtypes) + _list("--offsets", offsets) + _list("--scales", scales)
    for option, v in (("--rows", rows), ("--cols", cols), ("--softmax-rows", softmax_rows), ("--runs", runs)):
        if v is not None:
            args += [option, str(v)]
    _run(args, data, subjects, ("variance", "layer_norm", "softmax"), order)
    return read_table(os.path.join(out, "row_variance.csv"))


__all__ = ["determinism", "error_vs_cond", "error_vs_n", "read_table", "scan", "segmented", "variance"]
