"""Your reduction as a study subject: any callable that maps an array to its sum, or (by its kind)
to its prefix sums, per-row statistics or per-segment sums: torch.sum, torch.cumsum, softmax,
layer_norm, index_add_, a Triton or CUDA kernel.

    >>> import torch, sumlab
    >>> subject = sumlab.Subject(lambda x, **kw: torch.sum(x),
    ...                          name="torch_sum", prepare=lambda a: torch.from_numpy(a).cuda(),
    ...                          configs=[{}])
    >>> rows = sumlab.study.determinism(subject, out="runs/torch-sum", runs=20, backend="model")

The lab calls ``fn(prepare(x), **config)`` for each of ``configs`` (keyword sets: your "launch
shapes"), ``runs`` times each, on each input; ``prepare`` turns the lab's NumPy array into your
framework's, once per input (the lab names its inputs, so the subject keeps prepare's result and
nothing of the data; ``prepare`` gets a fresh copy of the lab's data each time; without it every
call gets its own copy, so a reduction that works in place cannot change what its next call sees;
with it, ``fn`` must leave its input as it found it, which the lab cannot check on a device). A
call that raises, returns something that is not of the declared kind (one number, or an array of
the kind's shape) with values of the input's dtype, returns NaN for finite input, or takes longer
than ``timeout`` seconds (``prepare`` included) becomes an error row with its message, and the
study goes on. Python cannot stop a call that overruns: it runs on in its thread, and until it
returns the subject's later calls fail at once rather than start beside it. The other kinds
(``Subject`` lists them) return arrays: NumPy, PyTorch, CuPy, JAX; brought to the host.

A sum subject made with ``device=True`` takes the lab's data where the lab holds it: on a CUDA
backend (``backend="cuda"``), a fresh copy on the device, as an array that any framework takes
through DLPack (``torch.from_dlpack``, ``cupy.from_dlpack``, ``jax.dlpack.from_dlpack``), with no
trip through the host; elsewhere a NumPy array as before. ``prepare=torch.from_dlpack`` serves
both (NumPy arrays speak DLPack too).
"""
from __future__ import annotations

import itertools
import threading
import time
from typing import Any, Callable, Optional, Sequence

_ids = itertools.count()


def _label(config: dict) -> str:
    if not config:
        return ""
    for k, v in config.items():
        if any(c in f"{k}{v}" for c in ",=[]"):
            raise ValueError(f"configuration {config!r}: keys and values must not contain ',', '=', '[' or ']' "
                             "(they make the configuration's label, name[key=value,...])")
    return ",".join(f"{k}={v}" for k, v in sorted(config.items()))


def _scalar(value: Any) -> float:
    """The single number a reduction returned, as a float (0-d tensors and arrays included)."""
    size = getattr(value, "size", None)
    if callable(size):  # torch: size() is a method
        size = value.numel()
    if size is not None and size != 1:
        shape = tuple(getattr(value, "shape", ()))
        raise TypeError(f"returned an array of shape {shape}, not one number")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"returned {type(value).__name__}, not a number")
    try:
        return float(value.item() if hasattr(value, "item") else value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"returned {type(value).__name__}, not a number") from e


KINDS = ("sum", "scan", "variance", "layer_norm", "softmax", "segment_sums")
DECLARED = ("not_deterministic", "run_to_run", "shape_invariant")


def _array(value: Any, n: int, shapes: Sequence[tuple]) -> Any:
    """An array-valued result as n float64 values in a 1-D NumPy array (a device array is brought
    to the host; a bfloat16 one is widened, exactly, to float32 first). shapes: the shapes it may have."""
    import numpy as np
    if hasattr(value, "detach"):  # torch
        import torch
        value = value.detach()
        if value.dtype in (torch.bfloat16, torch.float16):
            value = value.float()
        value = value.cpu().numpy()
    elif hasattr(value, "get") and type(value).__module__.startswith("cupy"):
        value = value.get()
    a = np.asarray(value)
    if tuple(a.shape) not in shapes:
        raise TypeError(f"returned an array of shape {tuple(a.shape)}, not {' or '.join(map(str, shapes))}")
    if a.dtype.kind != "f":
        raise TypeError(f"returned an array of {a.dtype}, not of floating point")
    return np.ascontiguousarray(a.reshape(n), dtype=np.float64)


def _on_cuda(view: Any) -> bool:
    """Whether the lab's array of this call lies on a CUDA device (DLPack's device type 2)."""
    where = getattr(view, "__dlpack_device__", None)
    return where is not None and where()[0] == 2


def _result_shapes(kind: str, view: Any, offsets: Any) -> tuple[int, list[tuple]]:
    """How many values a result of `kind` on the lab's data has, and the shapes it may come in."""
    if kind == "scan":
        return view.size, [(view.size,)]
    if kind == "variance":
        return view.shape[0], [(view.shape[0],)]
    if kind == "segment_sums":
        return len(offsets) - 1, [(len(offsets) - 1,)]
    return view.size, [tuple(view.shape), (view.size,)]  # layer_norm, softmax: one value per element


def bfloat16_round(x: Any) -> Any:
    """x rounded to the nearest bfloat16 (ties to even; beyond bfloat16's largest finite value, to
    infinity; NaN stays NaN) and returned as float32, which holds every bfloat16 value exactly: data
    whose sums a bfloat16 reduction (``torch.sum(t.bfloat16())``) adds without rounding its inputs,
    so that the lab's exact reference is the exact sum of what that reduction adds. Rounded once:
    float64 (and integer) values go to float32 rounded to odd first, which has more than two bits
    beyond bfloat16's 8 (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved
    algorithms using rounding to odd", 2008), so the second rounding gives the first's answer.
    Integers beyond 2^53 and long doubles that float64 does not hold are rounded from their exact
    value (``_bfloat16_of_ratio``), not from float64's rounding of it."""
    import numpy as np
    a = np.asarray(x)
    if a.dtype in (np.float16, np.float32):
        f = np.ascontiguousarray(a, dtype=np.float32)
    else:
        d = np.ascontiguousarray(a, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            f = d.astype(np.float32)
            inexact = np.isfinite(d) & (f.astype(np.float64) != d)
            away = inexact & (np.abs(f.astype(np.float64)) > np.abs(d))  # rounded away from zero (or to Inf)
        b = f.view(np.uint32) - away.astype(np.uint32)  # toward zero: one step down in magnitude
        f = (b | inexact.astype(np.uint32)).view(np.float32)  # an inexact result gets an odd last bit
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32)
    out = np.where(np.isnan(f), f, out).astype(np.float32)
    if a.dtype.kind in "iu" and a.size:
        beyond = (a > 2 ** 53) | (a < -(2 ** 53))  # float64 holds every integer up to 2^53
    elif a.dtype.kind == "f" and a.dtype.itemsize > 8 and a.size:
        with np.errstate(invalid="ignore"):
            beyond = np.isfinite(a) & (a != a.astype(np.float64).astype(a.dtype))
    else:
        beyond = None
    if beyond is not None and beyond.any():
        flat, src = out.reshape(-1), np.ascontiguousarray(a).reshape(-1)
        for i in np.flatnonzero(beyond.reshape(-1)):
            v = src[i]
            num, den = (int(v), 1) if a.dtype.kind in "iu" else v.as_integer_ratio()
            flat[i] = _bfloat16_of_ratio(num, den)
    return out


def _bfloat16_of_ratio(num: int, den: int) -> float:
    """num/den (den > 0, num != 0) rounded to the nearest bfloat16, ties to even, in integers: 8
    significant bits, the quantum no finer than bfloat16's smallest subnormal 2^-133, infinity past
    its largest finite value (2 - 2^-7) 2^127."""
    import math
    sign, num = (-1.0 if num < 0 else 1.0), abs(num)
    e = num.bit_length() - den.bit_length()  # 2^e <= num/den < 2^(e+1), after the correction
    if (num << max(-e, 0)) < (den << max(e, 0)):
        e -= 1
    q = max(e - 7, -133)  # the quantum's exponent
    scaled_num, scaled_den = (num, den << q) if q >= 0 else (num << -q, den)
    m, r = divmod(scaled_num, scaled_den)
    if 2 * r > scaled_den or (2 * r == scaled_den and m & 1):
        m += 1
    if m * 2.0 ** (q - 127) > 2 - 2 ** -7:  # past bfloat16's largest finite value
        return sign * math.inf
    return sign * math.ldexp(m, q)


def bfloat16_to_float32(a: Any) -> Any:
    """The lab's bfloat16 data (NumPy uint16 bit patterns) as the float32 values they are (exact).
    With PyTorch: ``torch.from_numpy(a.view(numpy.int16)).view(torch.bfloat16)``."""
    import numpy as np
    return (np.asarray(a, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


class Subject:
    """A reduction the lab measures like its own algorithms (never modelled).

    fn: called as fn(x, **config) with x = prepare(data). name: the label in tables and figures
    (default: fn's name). configs: a list of keyword dicts, the subject's configurations (default
    [{}]). declared: the determinism the subject promises ('not_deterministic', 'run_to_run' or
    'shape_invariant'; default: nothing promised). prepare: the lab's data -> your input (default:
    the data itself). timeout: seconds one call may take. device: a sum subject takes data the lab
    holds on a CUDA device as a CUDA array (DLPack), copied there, not through the host. kind:
    what fn returns, and so which study measures it:

    - "sum": one number (the determinism, error-vs-n and error-vs-cond studies);
    - "scan": the n inclusive prefix sums (``sumlab.study.scan``);
    - "variance": each row's population variance, shape (rows,) (``sumlab.study.variance``);
    - "layer_norm": each row normalised, (x - mean) / sqrt(var + 1e-5), shape (rows, cols);
    - "softmax": each row's probabilities, shape (rows, cols);
    - "segment_sums": one sum per segment (``sumlab.study.segmented``); the data is then the
      pair (values, offsets), offsets an int64 array of segments + 1 boundaries from 0 to n.

    Row subjects get a 2-D (rows, cols) array; bfloat16 rows arrive as their uint16 bit patterns
    (NumPy has no bfloat16: ``bfloat16_to_float32`` widens them).
    """

    def __init__(self, fn: Callable[..., Any], *, name: Optional[str] = None,
                 configs: Optional[Sequence[dict]] = None, declared: str = "not_deterministic",
                 prepare: Optional[Callable[[Any], Any]] = None, timeout: float = 120.0, kind: str = "sum",
                 device: bool = False):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}")
        if device and kind != "sum":
            raise ValueError("device=True is for sum subjects: the array kinds take host arrays")
        if declared not in DECLARED:
            raise ValueError(f"declared must be one of {', '.join(DECLARED)}")
        if not timeout > 0:
            raise ValueError("timeout must be a positive number of seconds")
        self.kind = kind
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "subject")
        if self.name == "<lambda>":
            self.name = "subject"
        if not self.name.strip() or any(c in self.name for c in ",[]\n"):
            raise ValueError(f"subject name {self.name!r}: not empty, and no ',', '[', ']' or line break "
                             "(the name heads its rows, name[configuration])")
        self.configs = [dict(c) for c in (configs or [{}])]
        self.labels = [_label(c) for c in self.configs]
        if len(set(self.labels)) != len(self.labels):
            raise ValueError("two configurations of one subject are the same")
        self.declared = declared
        self.prepare = prepare
        self.timeout = timeout
        self.device = bool(device)
        self._prepared: Optional[tuple] = None  # (the lab's id of the input it was made from, prepare's result)
        self._overrunning: Optional[threading.Thread] = None
        # The last call's time: fn and the reading of its result (which waits for a device's work),
        # not the lab's copy, prepare or this thread; the study's ms column. None after a failure.
        self.last_call_ms: Optional[float] = None

    def _input(self, view: Any, offsets: Any, input_id: int) -> tuple[Any, Any]:
        """(fn's input, None), or (None, the copy prepare gets) where prepare must run first (under
        the timeout). The lab's arrays are valid during this call only, so they are copied here, in
        the lab's thread. prepare runs once per input: the lab names each input by an id that no
        other input of the process gets (0 when it cannot say), so its result is kept while the
        calls name the same id, with no copy of the data kept or compared to know it again."""
        if self.prepare is not None and input_id and self._prepared is not None and self._prepared[0] == input_id:
            return self._prepared[1], None
        self._prepared = None
        if offsets is not None:
            copy = (view.copy(), offsets.copy())
        elif _on_cuda(view):  # the lab's device memory (device=True): a copy made on the device
            from . import _sumlab
            copy = _sumlab.device_copy(view)
        else:
            copy = view.copy()
        return (copy, None) if self.prepare is None else (None, copy)

    def __call__(self, config: int, view: Any, offsets: Any = None, *, input_id: int = 0) -> Any:
        """The lab's entry point: one call of configuration `config` on the lab's array (a float, or
        for the array kinds the values as a 1-D float64 array); input_id: which input it is (0:
        unknown, prepared afresh)."""
        if self._overrunning is not None:
            if self._overrunning.is_alive():
                raise TimeoutError(f"an earlier call is still running past the {self.timeout:g} s timeout "
                                   "(not called again until it returns)")
            self._overrunning = None
        self.last_call_ms = None
        x, to_prepare = self._input(view, offsets, input_id)
        shapes = None if self.kind == "sum" else _result_shapes(self.kind, view, offsets)
        kwargs = self.configs[config]
        box: dict = {}

        def call() -> None:
            try:
                arg = x
                if to_prepare is not None:
                    arg = box["prepared"] = self.prepare(to_prepare)
                t0 = time.perf_counter()
                result = self.fn(arg, **kwargs)
                box["value"] = _scalar(result) if self.kind == "sum" else _array(result, *shapes)
                box["ms"] = (time.perf_counter() - t0) * 1e3
            except BaseException as e:  # reported as the subject's failure, never raised into the lab
                box["error"] = e

        start = time.perf_counter()
        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            self._overrunning = worker
            raise TimeoutError(f"no result within {self.timeout:g} s")
        elapsed = time.perf_counter() - start
        if "prepared" in box and input_id:  # kept by this thread only: a stray worker never fills it
            self._prepared = (input_id, box["prepared"])
        if "error" in box:
            e = box["error"]
            raise RuntimeError(f"{type(e).__name__}: {e}")
        if elapsed > self.timeout:  # a call holding the GIL could not be waited out
            raise TimeoutError(f"took {elapsed:.3g} s, past the {self.timeout:g} s timeout")
        self.last_call_ms = box["ms"]
        return box["value"]

    def release(self) -> None:
        """Drops the prepared input kept for the next call (host or device memory)."""
        self._prepared = None

    def register(self, lab: Any, taken: set) -> str:
        """Registers with the lab under a name no other subject of the study has (returned); taken
        holds the names of the study's subjects so far. The lab refuses (ValueError) a name of one
        of its own algorithms, kernels or peers."""
        name = self.name if self.name not in taken else f"{self.name}_{next(_ids)}"
        if self.kind == "sum":
            lab.register_external(name, self, self.labels, self.declared, device=self.device)
        else:
            lab.register_external_array(name, self, self.labels, self.declared, self.kind)
        taken.add(name)
        return name


def as_subjects(subjects: Any, kinds: Sequence[str] = ("sum",), study: str = "this") -> list[Subject]:
    """A Subject, a callable or a list of either, as Subjects of one of `kinds` (a plain callable is
    of the first); ValueError for a Subject of another kind."""
    if subjects is None:
        return []
    if isinstance(subjects, Subject) or callable(subjects):
        subjects = [subjects]
    out = []
    for s in subjects:
        if not isinstance(s, Subject):
            s = Subject(s, kind=kinds[0])
        if s.kind not in kinds:
            raise ValueError(f"subject '{s.name}' is of kind '{s.kind}'; the {study} study takes "
                             f"sumlab.Subject(fn, kind=...) with kind {' or '.join(repr(k) for k in kinds)}")
        out.append(s)
    return out


__all__ = ["KINDS", "Subject", "as_subjects", "bfloat16_round", "bfloat16_to_float32"]
