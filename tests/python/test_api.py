"""The Python face of the lab: sumlab.sum, sumlab.reference and the registries, on every dtype and
every array producer, equal to the CLI bit for bit."""
import json
import subprocess
import threading
import time
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import sumlab


def exact(x) -> Fraction:
    return Fraction(0) if len(x) == 0 else sum((Fraction(float(v)) for v in x), Fraction(0))


class DLPackOnly:
    """A second array producer: speaks DLPack only (no buffer protocol, no __array__)."""

    def __init__(self, a):
        self._a = a
        self.ndim = a.ndim
        self.dtype = a.dtype
        self.shape = a.shape

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_the_seed_figures():
    x = np.full(10_000_000, 0.1, dtype=np.float32)
    assert sumlab.sum(x, "serial").value == 1087937.0
    assert sumlab.sum(x, "pairwise").value == 1000000.0
    assert sumlab.reference(x) == 1000000.0


def test_result_fields_are_the_clis():
    x = np.random.default_rng(1).standard_normal(1001).astype(np.float64)
    r = sumlab.sum(x, "kahan")
    assert r.algorithm == "kahan" and r.backend == "cpu" and r.dtype == "float64" and r.input_dtype == "float64"
    assert r.n == 1001 and r.has_value
    assert r.verdict == "within" and r.within_bound is True and r.abs_error <= r.bound
    assert float(Fraction(r.value) - exact(x)) == pytest.approx(0, abs=r.bound)
    assert r.reference == sumlab.reference(x)
    assert r.reference_method == "MPFR"  # a host array: MPFR on the host (a CUDA array's is the device's)
    assert int(r.hex, 16) == int(np.array(r.value, dtype=np.float64).view(np.uint64))


def test_every_algorithm_and_kernel_equals_the_cli(tmp_path, sumlab_binary):
    x = (np.random.default_rng(2).standard_normal(5003) * 1e3).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    cli = json.loads(subprocess.run([str(sumlab_binary), "sum", "--input", str(tmp_path / "x.npy"), "--json",
                                     "--algorithm", "all,gpu", "--backend", "model", "--block", "64"],
                                    check=True, capture_output=True, text=True).stdout)
    py = sumlab.sum(x, ["all", "gpu"], backend="model", shape=sumlab.LaunchShape(block=64))
    assert [r.algorithm for r in py] == [c["algorithm"] for c in cli]
    for p, c in zip(py, cli):
        assert p.hex == c["hex"], p.algorithm
        assert p.verdict == c["verdict"], p.algorithm
        # A row without a value (a library peer on the model backend) has no bound: None and null.
        assert (p.bound is None and c["bound"] is None) or p.bound == float(c["bound"]), p.algorithm


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64])
def test_reference_is_the_correctly_rounded_sum_in_the_arrays_dtype(dtype):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(3000) * rng.choice([1.0, 64.0, 1 / 64], 3000)).astype(dtype)
    want = np.array(float(exact(x.astype(np.float64))), dtype=np.float64).astype(dtype)  # exact -> double -> dtype
    # Rounding through double is exact here unless the exact sum needs more than 53 bits, which a
    # sum of 3000 float16/bfloat16 values cannot; for float32/float64 compare with the Fraction.
    ref = sumlab.reference(x)
    if dtype in (np.float32, np.float64):
        e = exact(x)
        cand = np.array(ref, dtype=dtype)
        up = np.nextafter(cand, np.array(np.inf, dtype=dtype))
        down = np.nextafter(cand, np.array(-np.inf, dtype=dtype))
        assert abs(Fraction(float(cand)) - e) <= abs(Fraction(float(up)) - e)
        assert abs(Fraction(float(cand)) - e) <= abs(Fraction(float(down)) - e)
    else:
        assert ref == float(want)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_narrow_dtypes_accumulate_in_float32_and_say_so(dtype):
    x = np.full(4096, 0.1, dtype=dtype)
    r = sumlab.sum(x, "exact")
    assert r.dtype == "float32" and r.input_dtype == np.dtype(dtype).name
    assert r.value == float(np.float32(exact(x.astype(np.float64))))  # exact, rounded once to float32


def test_a_second_producer_through_dlpack():
    x = np.random.default_rng(4).standard_normal(777)
    assert sumlab.sum(DLPackOnly(x), "exact").hex == sumlab.sum(x, "exact").hex


def test_strided_views_are_read_in_index_order_and_read_only_arrays_are_fine():
    base = np.arange(1, 2001, dtype=np.float64)
    view = base[::3]
    serial = 0.0
    for v in view:  # Python floats are doubles: the same left-to-right chain
        serial += float(v)
    assert sumlab.sum(view, "serial").value == serial
    assert sumlab.reference(view) == float(exact(view))
    base.setflags(write=False)
    assert sumlab.sum(base, "exact").value == 2001000.0


def test_multidimensional_arrays_need_an_order():
    m = np.arange(12, dtype=np.float32).reshape(3, 4) ** 3
    with pytest.raises(sumlab.SumlabError, match="order='C'"):
        sumlab.sum(m, "serial")
    assert sumlab.sum(m, "serial", order="C").value == sumlab.sum(np.ravel(m, "C"), "serial").value
    assert sumlab.sum(m, "serial", order="F").value == sumlab.sum(np.ravel(m, "F"), "serial").value
    assert sumlab.sum(np.asfortranarray(m), "serial", order="C").value == sumlab.sum(np.ravel(m, "C"), "serial").value


def test_empty_and_bad_input():
    assert sumlab.sum(np.zeros(0, dtype=np.float32), "exact").value == 0.0
    with pytest.raises(sumlab.SumlabError, match="float16, bfloat16, float32 and float64"):
        sumlab.sum(np.arange(10, dtype=np.int32), "exact")
    with pytest.raises(sumlab.SumlabError, match="unknown algorithm"):
        sumlab.sum(np.ones(3), "nope")
    with pytest.raises(sumlab.SumlabError, match="backend"):
        sumlab.sum(np.ones(3), "gpu_two_pass", backend="cpu")
    with pytest.raises(sumlab.SumlabError, match="scalar"):
        sumlab.sum(np.float64(1.0), "exact")
    for bad in (np.ones(3, np.longdouble), np.array([1.0], dtype=object)):
        with pytest.raises(sumlab.SumlabError, match="float16, bfloat16, float32 and float64"):
            sumlab.sum(bad, "exact")
    with pytest.raises(sumlab.SumlabError, match="masked array"):
        sumlab.value(np.ma.array([1.0, 2.0, 1e6], mask=[0, 0, 1]), "serial")
    with pytest.raises(sumlab.SumlabError, match="takes float32 input only"):
        sumlab.sum(np.ones(3), ["gpu_double_acc"], backend="model")
    for bad in (dict(grid="2"), dict(block=2 ** 40), dict(vector=True), dict(mapping=1)):
        with pytest.raises(sumlab.SumlabError, match="LaunchShape"):
            sumlab.LaunchShape(**bad)
    with pytest.raises(sumlab.SumlabError, match="fixed_scale must be an int"):
        sumlab.sum(np.ones(3), "fixed_point", fixed_scale=2 ** 31)
    with pytest.raises(sumlab.SumlabError, match="pairwise_base must be an int"):
        sumlab.sum(np.ones(3), "pairwise", pairwise_base=-1)


def test_another_byte_order_is_read_as_its_values():
    x = np.array([0.1, 1e300, -2.5, 3.0], dtype=">f8")
    native = x.astype("=f8")
    assert sumlab.reference(x) == sumlab.reference(native)
    assert sumlab.sum(x, "serial").hex == sumlab.sum(native, "serial").hex


def test_a_shape_field_a_kernel_does_not_read_is_reported():
    r = sumlab.sum(np.ones(1000, dtype=np.float32), "gpu_sequential", backend="model",
                   shape=sumlab.LaunchShape(grid=7, block=64))
    assert r.ignored_shape_fields == ["grid"] and r.shape["text"] == "block 64"


def test_registries():
    algs = {a["name"]: a for a in sumlab.algorithms()}
    assert "exact" in algs and algs["neumaier"]["bound_source"].startswith("Ogita, Rump, Oishi")
    ks = {k["name"]: k for k in sumlab.kernels()}
    assert ks["gpu_exact"]["determinism"] == "shape_invariant" and "grid" in ks["gpu_exact"]["shape_fields"]
    # A default per dtype: gpu_exact on float64 takes one block an SM, on float32 two.
    assert ks["gpu_exact"]["default_shape"]["float64"].startswith("132x256")
    assert ks["gpu_exact"]["default_shape"]["float32"].startswith("264x256")
    assert list(ks["gpu_double_acc"]["default_shape"]) == ["float32"]
    assert sumlab.__version__


def test_the_gil_is_released_during_long_work():
    x = np.random.default_rng(5).standard_normal(1 << 24)
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    start = time.perf_counter()
    sumlab.sum(x, "all")
    end = time.perf_counter()
    stop.set()
    t.join()
    during = [s for s in ticks if start < s < end]
    assert len(during) > 10, "another thread could not run while the lab worked"


def test_the_extension_exports_only_its_entry_point():
    """Every other symbol stays inside the extension (python/src/exports.map), so frameworks loaded
    after it never bind to the lab's copies of library templates."""
    import shutil
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm (binutils) on this machine")
    out = subprocess.run([nm, "-D", "--defined-only", sumlab._sumlab.__file__], capture_output=True, text=True,
                         check=True).stdout
    assert [line.split()[-1] for line in out.splitlines()] == ["PyInit__sumlab"]


def test_type_stubs_name_every_function_of_the_extension():
    import pathlib
    stub = pathlib.Path(sumlab._sumlab.__file__).with_name("_sumlab.pyi")
    assert stub.exists(), "the wheel ships _sumlab.pyi beside the extension"
    text = stub.read_text()
    for name in dir(sumlab._sumlab):
        if callable(getattr(sumlab._sumlab, name)) and not name.startswith("_"):
            assert f"def {name}(" in text, name


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_value_has_the_bits_of_sum_for_every_algorithm_and_modelled_kernel(dtype):
    x = np.random.default_rng(3).normal(size=4099).astype(dtype)
    x[::7] *= -1e3  # cancellation: the orders differ in their last bits
    names = [a["name"] for a in sumlab.algorithms()]
    names += [k["name"] for k in sumlab.kernels() if k["modelled"] and not (dtype == np.float64 and k["name"] == "gpu_double_acc")]
    distinct = set()
    for name in names:
        backend = "model" if name.startswith("gpu_") else None
        v = sumlab.value(x, name, backend=backend)
        r = sumlab.sum(x, name, backend=backend)
        assert np.array(v, dtype=dtype).tobytes() == np.array(r.value, dtype=dtype).tobytes(), name
        distinct.add(np.array(v, dtype=dtype).tobytes())
    assert len(distinct) > 3  # the test compares different answers, not one


def test_value_takes_the_options_of_sum():
    x = np.random.default_rng(4).random(1000).astype(np.float32)
    shape = sumlab.LaunchShape(grid=3, block=64)
    assert sumlab.value(x, "gpu_two_pass", backend="model", shape=shape) == \
        sumlab.sum(x, "gpu_two_pass", backend="model", shape=shape).value
    assert sumlab.value(x, "fixed_point", fixed_scale=20) == sumlab.sum(x, "fixed_point", fixed_scale=20).value
    assert sumlab.value(x, "pairwise", pairwise_base=8) == sumlab.sum(x, "pairwise", pairwise_base=8).value
    h = x[:100].astype(np.float16)
    assert sumlab.value(h, "serial") == sumlab.sum(h, "serial").value


@pytest.mark.parametrize("bad, message", [
    (dict(algorithm="all"), "one algorithm"),
    (dict(algorithm=["serial", "kahan"]), "one algorithm"),
    (dict(algorithm="nonsense"), "unknown algorithm 'nonsense'"),
    (dict(algorithm="gpu_cub", backend="model"), "gpu_cub has no value on the model backend"),
    (dict(algorithm="gpu_two_pass", backend="cpu"), "backend='cpu' runs CPU algorithms only"),
    (dict(algorithm="kahan", fixed_scale=3), "fixed_scale applies to fixed_point"),
])
def test_value_refuses_clearly(bad, message):
    x = np.ones(10, dtype=np.float64)
    with pytest.raises(sumlab.SumlabError, match=message):
        sumlab.value(x, **bad)


@pytest.mark.parametrize("algorithm, message", [("gpu_exact", "x must be a float32 or float64 CUDA array"),
                                                ("kahan", "out= is for value")])
def test_value_into_a_device_scalar_needs_gpu_exact_on_a_cuda_array(algorithm, message):
    x = np.ones(10, dtype=np.float32)
    with pytest.raises(sumlab.SumlabError, match=message):
        sumlab.value(x, algorithm, out=np.zeros(1, dtype=np.float32))


def test_the_cpp_timer_times_the_same_work():
    from sumlab import _sumlab
    x = np.random.default_rng(5).random(10_000)
    for what in ("sum", "value"):
        seconds = _sumlab.time_in_cpp(x, "", what, ["exact"], "", {}, 3)
        assert len(seconds) == 3 and all(0 < s < 10 for s in seconds)
    with pytest.raises(ValueError, match="'sum' or 'value'"):
        _sumlab.time_in_cpp(x, "", "other", ["exact"], "", {}, 1)


# Every field of a Result is a measurement or a theorem, or None (studies/sum_api.hpp, row_measures).

def test_ulps_from_rounded_is_negative_below_the_reference():
    # 1 + 2^-24 + 2^-60: serial gives 1, one float32 below the correctly rounded 1 + 2^-23.
    r = sumlab.sum(np.float32([1, 2**-24, 2**-60]), "serial")
    assert r.hex == "0x3f800000" and r.reference_hex == "0x3f800001"
    assert r.ulps_from_rounded == -1  # the determinism study's sign: value above the reference is positive
    for a in sumlab.sum(np.random.default_rng(7).random(1000).astype(np.float32), "all"):
        assert (a.ulps_from_rounded > 0) == (a.value > a.reference), a.algorithm
        assert (a.ulps_from_rounded < 0) == (a.value < a.reference), a.algorithm


def test_nan_result_has_no_ulps_from_rounded_and_a_str_decimal():
    r = sumlab.sum(np.float32([1, np.nan, 2]), "serial")
    assert r.ulps_from_rounded is None  # not 0, which would read as exact
    assert r.value_decimal == "nan" and isinstance(r.value_decimal, str)
    assert r.verdict == "special_input" and r.bound is None


def test_row_without_value_has_no_measurements():
    r = sumlab.sum(np.arange(100, dtype=np.float32), "gpu_cub", backend="model")
    assert not r.has_value and r.verdict == "no_bound"
    for k in ("value", "value_decimal", "hex", "abs_error", "rel_error", "ulps", "ulps_from_rounded",
              "correct_bits", "bound", "special", "within_bound"):
        assert getattr(r, k) is None, k


def test_no_bound_for_overflow():
    assert sumlab.sum(np.float32([3e38, 3e38]), "serial").verdict == "exact_overflow"
    assert sumlab.sum(np.float32([3e38, 3e38]), "serial").bound is None
    r = sumlab.sum(np.float32([3e38, 3e38, -3e38]), "serial")
    assert r.verdict == "intermediate_overflow" and r.bound is None


def test_correct_bits_are_p_only_when_exact():
    r = sumlab.sum(np.float32([1, 2**-24, 2**-60]), "serial")
    assert 23.99 < r.correct_bits < 24  # 1 ulp from the reference: not p
    assert sumlab.sum(np.float32([1, 2**-24, 2**-60]), "exact").correct_bits < 24  # correctly rounded, inexact
    assert sumlab.sum(np.float32([1, 2]), "serial").correct_bits == 24  # exact


def test_ulps_of_an_exact_zero_sum_are_none():
    x = np.float32([1, 1e8, -1e8, -1])
    r = sumlab.sum(x, "serial")
    assert r.value == -1 and r.abs_error == 1 and r.ulps is None
    assert sumlab.sum(x, "exact").ulps == 0
