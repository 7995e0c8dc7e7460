"""Your reduction as a study subject: any callable that maps an array to its sum (or, with
kind="scan", to its inclusive prefix sums: torch.cumsum, a Triton scan).

    >>> import torch, sumlab
    >>> subject = sumlab.Subject(lambda x, **kw: torch.sum(x),
    ...                          name="torch_sum", prepare=lambda a: torch.from_numpy(a).cuda(),
    ...                          configs=[{}])
    >>> rows = sumlab.study.determinism(subject, out="runs/torch-sum", runs=20, backend="model")

The lab calls ``fn(prepare(x), **config)`` for each of ``configs`` (keyword sets: your "launch
shapes"), ``runs`` times each, on each input; ``prepare`` turns the lab's NumPy array into your
framework's (once per input). A call that raises, returns something that is not one number of
the input's dtype, returns NaN for finite input, or takes longer than ``timeout`` seconds becomes
an error row with its message, and the study goes on. A scan (kind="scan") returns n values, each
of the input's dtype (any 1-D array: NumPy, PyTorch, CuPy, JAX; brought to the host), and goes to
``sumlab.study.scan``.
"""
from __future__ import annotations

import itertools
import threading
from typing import Any, Callable, Optional, Sequence

_ids = itertools.count()


def _label(config: dict) -> str:
    if not config:
        return ""
    return ",".join(f"{k}={v}" for k, v in sorted(config.items()))


def _scalar(value: Any) -> float:
    """The single number a reduction returned, as a float (0-d tensors and arrays included)."""
    size = getattr(value, "size", None)
    if callable(size):  # torch: size() is a method
        size = value.numel()
    if size is not None and size != 1:
        shape = tuple(getattr(value, "shape", ()))
        raise TypeError(f"returned an array of shape {shape}, not one number")
    try:
        return float(value.item() if hasattr(value, "item") else value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"returned {type(value).__name__}, not a number") from e


def _prefix(value: Any, n: int) -> Any:
    """A scan's n outputs as a float64 NumPy array (a device array is brought to the host)."""
    import numpy as np
    if hasattr(value, "detach"):  # torch
        value = value.detach().cpu().numpy()
    elif hasattr(value, "get") and type(value).__module__.startswith("cupy"):
        value = value.get()
    a = np.asarray(value)
    if a.ndim != 1 or a.shape[0] != n:
        raise TypeError(f"returned an array of shape {tuple(a.shape)}, not ({n},)")
    return np.ascontiguousarray(a, dtype=np.float64)


class Subject:
    """A reduction the lab measures like its own algorithms (never modelled).

    fn: called as fn(x, **config) with x = prepare(array). name: the label in tables and figures
    (default: fn's name). configs: a list of keyword dicts, the subject's configurations (default
    [{}]). declared: the determinism the subject promises ('not_deterministic', 'run_to_run' or
    'shape_invariant'; default: nothing promised). prepare: the lab's NumPy array -> your input
    (default: the array itself). timeout: seconds one call may take. kind: "sum" (fn returns one
    number) or "scan" (fn returns the n inclusive prefix sums).
    """

    def __init__(self, fn: Callable[..., Any], *, name: Optional[str] = None,
                 configs: Optional[Sequence[dict]] = None, declared: str = "not_deterministic",
                 prepare: Optional[Callable[[Any], Any]] = None, timeout: float = 120.0, kind: str = "sum"):
        if kind not in ("sum", "scan"):
            raise ValueError("kind must be 'sum' or 'scan'")
        self.kind = kind
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "subject")
        if self.name == "<lambda>":
            self.name = "subject"
        self.configs = [dict(c) for c in (configs or [{}])]
        self.labels = [_label(c) for c in self.configs]
        if len(set(self.labels)) != len(self.labels):
            raise ValueError("two configurations of one subject are the same")
        self.declared = declared
        self.prepare = prepare
        self.timeout = timeout
        self._cache_key: Optional[tuple] = None
        self._cache_value: Any = None

    def _prepared(self, view: Any) -> Any:
        # One preparation per input: keyed by the lab's buffer and a sample of its contents.
        key = (view.__array_interface__["data"][0], view.size, view.dtype.str,
               view[:64].tobytes(), view[-64:].tobytes())
        if key != self._cache_key:
            data = view.copy()  # the lab's view is valid during this call only
            self._cache_value = self.prepare(data) if self.prepare else data
            self._cache_key = key
        return self._cache_value

    def __call__(self, config: int, view: Any) -> Any:
        """The lab's entry point: one call of configuration `config` on the lab's array (a float, or
        for a scan the prefix sums as float64)."""
        x = self._prepared(view)
        kwargs = self.configs[config]
        box: dict = {}

        def call() -> None:
            try:
                result = self.fn(x, **kwargs)
                box["value"] = _prefix(result, view.size) if self.kind == "scan" else _scalar(result)
            except BaseException as e:  # reported as the subject's failure, never raised into the lab
                box["error"] = e

        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            raise TimeoutError(f"no result within {self.timeout:g} s")
        if "error" in box:
            e = box["error"]
            raise RuntimeError(f"{type(e).__name__}: {e}")
        return box["value"]

    def register(self, lab: Any, taken: set) -> str:
        """Registers with the lab under a name no other subject of the study has (returned)."""
        name = self.name if self.name not in taken else f"{self.name}_{next(_ids)}"
        register = lab.register_external_scan if self.kind == "scan" else lab.register_external
        register(name, self, self.labels, self.declared)
        taken.add(name)
        return name


def as_subjects(subjects: Any) -> list[Subject]:
    """A Subject, a callable or a list of either, as Subjects."""
    if subjects is None:
        return []
    if isinstance(subjects, Subject) or callable(subjects):
        subjects = [subjects]
    return [s if isinstance(s, Subject) else Subject(s) for s in subjects]


__all__ = ["Subject", "as_subjects"]
