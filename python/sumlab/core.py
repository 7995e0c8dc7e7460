"""sumlab.sum, sumlab.value, sumlab.reference and the registries: one array in, the lab's results out.

Arrays: anything that speaks DLPack or the buffer protocol, 1-D, in float16, bfloat16, float32 or
float64, on the CPU or a CUDA device. A contiguous float32/float64 array is read in place (a CUDA
array by the GPU kernels; the CPU algorithms and the exact reference then read one host copy).
float16 and bfloat16 are widened to float32, which holds them exactly: the algorithms accumulate
in float32 (``Result.dtype``), and ``reference`` rounds the exact sum to the array's own dtype.
A multi-dimensional array is refused unless ``order`` says how to flatten it ('C': last index
fastest, 'F': first index fastest): never a silent reorder. A strided 1-D view is read in index
order.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

from . import _sumlab


class SumlabError(Exception):
    """Bad input or usage (the CLI's exit code 2)."""


class CheckFailed(SumlabError):
    """A check failed: a result broke its bound under strict=True, a verify mismatch (exit code 1)."""


@dataclass(frozen=True)
class LaunchShape:
    """A GPU reduction's launch shape; a field left None keeps the kernel's default.

    Fields a kernel does not read are reported in ``Result.ignored_shape_fields``.
    """
    grid: Optional[int] = None
    block: Optional[int] = None
    vector: Optional[int] = None
    mapping: Optional[str] = None       # grid_stride | contiguous
    warp_stage: Optional[str] = None    # shfl_down | xor_butterfly
    block_stage: Optional[str] = None   # smem_tree | warp_of_warps
    cross_block: Optional[str] = None   # second_kernel | atomic | last_block

    def __post_init__(self) -> None:
        for k in ("grid", "block", "vector"):
            v = getattr(self, k)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or not 0 < v < 2**31):
                raise SumlabError(f"LaunchShape.{k} must be a positive int below 2^31, not {v!r}")
        for k in ("mapping", "warp_stage", "block_stage", "cross_block"):
            v = getattr(self, k)
            if v is not None and not isinstance(v, str):
                raise SumlabError(f"LaunchShape.{k} must be a str, not {v!r}")

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


# The float fields, which JSON carries as a number or as "nan"/"inf"/"-inf" (null where absent);
# string fields (value_decimal "nan", say) stay strings.
_FLOAT_FIELDS = frozenset(("value", "reference", "abs_error", "rel_error", "ulps", "correct_bits", "bound",
                           "sum_abs", "condition"))


def _number(v: Any) -> Any:
    if isinstance(v, str) and v in ("nan", "inf", "-inf"):
        return float(v)
    return v


@dataclass(frozen=True)
class Result:
    """One algorithm's sum of the array, measured against the exact sum (the fields of
    ``sumlab sum --json``, plus ``input_dtype``).

    None marks a field that would not be a measurement (studies/sum_api.hpp, row_measures): every
    measurement (value, value_decimal, hex, abs_error, rel_error, ulps, ulps_from_rounded,
    correct_bits, bound, special) when ``has_value`` is False; ``bound`` when the verdict is
    special_input, exact_overflow or intermediate_overflow (every bound assumes finite inputs and
    no overflow); ``ulps`` when the exact sum is 0 and the error is not (ulp(0) is the smallest
    subnormal: the count would measure the format's range, not the error); ``ulps_from_rounded``
    when the value or the reference is NaN. A special result's errors are NaN."""
    algorithm: str
    backend: str                     # cpu, cuda or model
    shape: Optional[dict]            # the launch shape a GPU kernel ran ("text": the fields it reads)
    ignored_shape_fields: list       # shape fields given that this kernel does not read
    dtype: str                       # the accumulation/result dtype: float32 or float64
    input_dtype: str                 # the array's own dtype
    n: int
    has_value: bool                  # False: a library peer on the model backend (not modelled)
    value: Optional[float]
    value_decimal: Optional[str]     # shortest round-trip decimal ("nan", "inf" for specials)
    hex: Optional[str]               # the result's IEEE bits
    reference: float                 # the exact sum correctly rounded to dtype
    reference_hex: str
    reference_method: str            # "MPFR", or "gpu_exact's limbs on the device[, equal to MPFR's]"
    abs_error: Optional[float]       # |value - exact sum|
    rel_error: Optional[float]
    ulps: Optional[float]            # abs_error in ulps of the reference (None: the exact sum is 0)
    # Representable values from the reference to value: positive when value lies above the
    # correctly rounded sum, negative below (signed_ulp_distance(value, reference), as the
    # determinism study's ulps_from_rounded column); None for a NaN value or reference.
    ulps_from_rounded: Optional[int]
    correct_bits: Optional[float]    # p only when exact; an inexact result stays below p
    bound: Optional[float]           # the algorithm's bound for this input (inf: its condition fails)
    verdict: str                     # within, exceeds, no_bound, special_input, ...
    within_bound: Optional[bool]     # None where no bound applies
    sum_abs: float
    condition: float
    special: Optional[bool]
    diagnostics: str
    extra: dict = field(default_factory=dict, repr=False)


_DTYPE_NAMES: dict = {}


def _dtype_name(dtype: Any) -> str:
    """'float32' for numpy.float32, torch.float32, ...: str() of a dtype costs microseconds, so the
    names are kept (a sum of a small array is dominated by such costs)."""
    try:
        return _DTYPE_NAMES[dtype]
    except (KeyError, TypeError):
        name = str(dtype).split(".")[-1]
        try:
            _DTYPE_NAMES[dtype] = name
        except TypeError:  # an unhashable dtype object: not kept
            pass
        return name


def _prepare(x: Any, order: Optional[str]) -> tuple[Any, str, str]:
    """(an array the extension takes, its tag, its dtype name)."""
    ndim = getattr(x, "ndim", None)
    if ndim is None:  # a list, a tuple: through NumPy
        import numpy as np
        x = np.asarray(x)
        ndim = x.ndim
    if type(x).__module__.startswith("numpy"):
        x = _numpy_in(x)
    if ndim == 0:
        raise SumlabError("sumlab sums a sequence; got a scalar")
    if ndim > 1:
        if order not in ("C", "F"):
            raise SumlabError(f"a {ndim}-D array needs order='C' (last index fastest) or order='F' (first index "
                              "fastest): sumlab never flattens silently")
        x = _flatten(x, order)
    elif order not in (None, "C", "F"):
        raise SumlabError("order must be 'C' or 'F'")
    name = _dtype_name(getattr(x, "dtype", ""))
    if name == "bfloat16" and type(x).__module__.startswith("numpy"):  # ml_dtypes' bfloat16: its bits
        import numpy as np
        return x.view(np.uint16), "bfloat16", "bfloat16"
    return x, "", name


def _numpy_in(x: Any) -> Any:
    """A NumPy array as the extension reads it: a masked array refused (its masked values would be
    summed), another byte order converted to the machine's (the same values), a dtype that is not
    float16, bfloat16, float32 or float64 refused with the lab's message."""
    import numpy as np
    if isinstance(x, np.ma.MaskedArray):
        raise SumlabError("a masked array: sumlab sums every element; pass x.compressed() or x.filled(0)")
    dtype = x.dtype
    if _dtype_name(dtype) == "bfloat16":  # ml_dtypes' (kind "V"): read as its bits
        return x
    if dtype.kind == "f" and dtype.itemsize in (2, 4, 8) and not dtype.isnative:
        return x.astype(dtype.newbyteorder("="))
    if dtype.kind in "OSUVMmc" or (dtype.kind == "f" and dtype.itemsize not in (2, 4, 8)):
        raise SumlabError(f"sumlab sums float16, bfloat16, float32 and float64 arrays; got {dtype}")
    return x


def _flatten(x: Any, order: str) -> Any:
    module = type(x).__module__.split(".")[0]
    if module == "torch":
        if order == "F":
            x = x.permute(*reversed(range(x.ndim)))
        return x.reshape(-1).contiguous()
    if module == "cupy":
        import cupy
        return cupy.ravel(x, order=order)
    if module in ("jax", "jaxlib"):
        import jax.numpy as jnp
        return jnp.ravel(x, order=order)
    import numpy as np
    return np.ravel(np.asarray(x), order=order)


def _results(text: str, input_dtype: str) -> list[Result]:
    out = []
    names = set(Result.__dataclass_fields__)
    for row in json.loads(text):
        fields = {k: _number(v) if k in _FLOAT_FIELDS else v for k, v in row.items() if k in names}
        fields["input_dtype"] = input_dtype
        fields["extra"] = {k: v for k, v in row.items() if k not in names}
        out.append(Result(**fields))
    return out


def _options(fixed_scale: Any, pairwise_base: Any) -> None:
    """The CLI's ranges for --fixed-scale and --pairwise-base."""
    for name, v, lo, hi in (("fixed_scale", fixed_scale, -100000, 100000), ("pairwise_base", pairwise_base, 1, 2**40)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi):
            raise SumlabError(f"{name} must be an int from {lo} to {hi}, not {v!r}")


def _backend(backend: Optional[str], names: Sequence[str]) -> str:
    """The C++ side's backend name: "" for the default (cuda when a GPU is present, else model)."""
    if backend == "cpu":
        if any(n == "gpu" or n.startswith("gpu_") for n in names):
            raise SumlabError("backend='cpu' runs CPU algorithms only; GPU kernels run on 'cuda' or 'model'")
        return ""
    if backend not in (None, "cuda", "model"):
        raise SumlabError("backend must be 'cpu', 'cuda' or 'model'")
    return backend or ""


def sum(x: Any, algorithm: Union[str, Sequence[str]] = "exact", *, backend: Optional[str] = None,
        shape: Optional[LaunchShape] = None, fixed_scale: Optional[int] = None, pairwise_base: int = 1,
        order: Optional[str] = None) -> Union[Result, list[Result]]:
    """Sum x with one algorithm (a Result) or several (a list): CPU algorithms ('serial',
    'pairwise', 'kahan', 'exact', ... or 'all') and GPU kernels ('gpu_two_pass', ... or 'gpu').

    backend: where GPU kernels run: 'cuda' (a GPU) or 'model' (the CPU executing their exact order;
    the same bits); default cuda when a GPU is present. 'cpu' allows only CPU algorithms.
    shape: the GPU kernels' launch shape (LaunchShape). fixed_scale: fixed_point's grid 2^-K.
    """
    names = [algorithm] if isinstance(algorithm, str) else list(algorithm)
    single = isinstance(algorithm, str) and algorithm not in ("all", "gpu")
    backend = _backend(backend, names)
    _options(fixed_scale, pairwise_base)
    arr, tag, input_dtype = _prepare(x, order)
    try:
        text = _sumlab.sum_json(arr, tag, names, backend, (shape or LaunchShape()).as_dict(), pairwise_base,
                                fixed_scale)
    except (ValueError, TypeError) as e:
        raise SumlabError(str(e)) from None
    results = _results(text, input_dtype)
    return results[0] if single else results


def value(x: Any, algorithm: str = "exact", *, backend: Optional[str] = None, shape: Optional[LaunchShape] = None,
          fixed_scale: Optional[int] = None, pairwise_base: int = 1, order: Optional[str] = None,
          out: Any = None) -> Any:
    """One algorithm's or kernel's sum of x and nothing else: the bits ``sum(x, algorithm).value``
    has, without the exact reference, the error measures or the bound. For summing with the lab (a
    CUDA array stays on the device: a GPU kernel reads it in place and only the result comes back)
    and for timing it. Arguments as for ``sum``; float16 and bfloat16 inputs give the float32 result
    of the algorithm's float32 accumulation.

    out: for 'gpu_exact' on a float32/float64 CUDA array, a CUDA array of one element of x's dtype
    (e.g. ``torch.empty((), dtype=x.dtype, device=x.device)``): the correctly rounded sum is written
    there on the device, asynchronously on the default stream, and ``out`` is returned. Nothing comes
    back to the host and nothing waits, so repeated sums cost the kernel's time (synchronise, or
    order later work on that stream, before reading it). Not for use from several threads at once."""
    if not isinstance(algorithm, str) or algorithm in ("all", "gpu"):
        raise SumlabError("value() takes one algorithm or kernel by name")
    backend = _backend(backend, [algorithm])
    _options(fixed_scale, pairwise_base)
    if out is not None:
        if algorithm != "gpu_exact" or backend == "model" or fixed_scale is not None or order is not None:
            raise SumlabError("out= is for value(x, 'gpu_exact') on a 1-D CUDA array (the sum stays on the device)")
        try:
            _sumlab.value_into(x, "", out, shape.as_dict() if shape else {})
        except (ValueError, TypeError) as e:
            raise SumlabError(str(e)) from None
        return out
    arr, tag, _ = _prepare(x, order)
    try:
        return _sumlab.value(arr, tag, algorithm, backend, shape.as_dict() if shape else {}, pairwise_base,
                             fixed_scale)
    except (ValueError, TypeError) as e:
        raise SumlabError(str(e)) from None


def reference(x: Any, *, order: Optional[str] = None) -> float:
    """The exact sum of x, correctly rounded (to nearest, ties to even) to x's own dtype: float16,
    bfloat16, float32 or float64. IEEE specials as IEEE addition gives them."""
    arr, tag, _ = _prepare(x, order)
    try:
        return _sumlab.reference(arr, tag)
    except (ValueError, TypeError) as e:
        raise SumlabError(str(e)) from None


def algorithms() -> list[dict]:
    """The CPU algorithms: name, summary, order, bound (formula and source), determinism."""
    return json.loads(_sumlab.algorithms_json())


def kernels() -> list[dict]:
    """The GPU kernels: name, summary, order, bound, determinism, modelled, shape_fields, and
    default_shape, the shape each takes when given none, per dtype it takes ({"float32": ...,
    "float64": ...}; on a GPU of 132 SMs: the grids follow the SM count)."""
    return json.loads(_sumlab.kernels_json())


def cuda_available() -> tuple[bool, str]:
    """(whether a CUDA device is usable here, and why not)."""
    return tuple(_sumlab.cuda_available())
