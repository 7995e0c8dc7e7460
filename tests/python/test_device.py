"""CUDA arrays (PyTorch, CuPy, JAX): the kernels read them where they are, with the same bits as the
host path and as the CPU model. Skipped, with the reason, where there is no CUDA device or no
framework."""
import collections
import os

import pytest

import sumlab

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX would take most of the device

ok, why = sumlab.cuda_available()
pytestmark = pytest.mark.skipif(not ok, reason=why)
torch = pytest.importorskip("torch") if ok else None

KERNELS = ["gpu_two_pass", "gpu_exact", "gpu_fixed_point", "gpu_kahan", "gpu_multi_add"]


def bits(results):
    return {r.algorithm: r.hex for r in results}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 33, 1_000_003])
def test_a_torch_cuda_tensor_gives_the_host_paths_and_the_models_bits(dtype, n):
    x = torch.randn(n, dtype=getattr(torch, dtype), device="cuda", generator=torch.Generator("cuda").manual_seed(n))
    host = x.cpu().numpy()
    results = sumlab.sum(x, KERNELS + ["exact", "pairwise"])
    # The exact sum of a CUDA array is taken on the device, and up to 2^24 elements checked against
    # MPFR's on a host copy.
    assert {r.reference_method for r in results} == {"gpu_exact's limbs on the device, equal to MPFR's"}
    on_device = bits(results)
    assert on_device == bits(sumlab.sum(host, KERNELS + ["exact", "pairwise"], backend="cuda"))
    assert on_device == bits(sumlab.sum(host, KERNELS + ["exact", "pairwise"], backend="model"))
    assert sumlab.sum(x, "gpu_exact").value == sumlab.reference(host)


def test_the_kernels_read_the_tensor_in_place():
    """No device copy: with less device memory free than the tensor takes, a sum of the tensor
    still runs, while the same data from the host (which must be uploaded) fails for memory."""
    n = 1 << 28  # 1 GiB of float32
    x = torch.rand(n, dtype=torch.float32, device="cuda") - 0.5
    host = x.cpu().numpy()
    expected = sumlab.reference(host)
    torch.cuda.synchronize()
    free, _ = torch.cuda.mem_get_info()
    hog = torch.empty(free - (256 << 20), dtype=torch.uint8, device="cuda")  # leaves 256 MiB free
    try:
        r = sumlab.sum(x, "gpu_exact")
        assert r.value == expected and r.reference == expected
        assert r.reference_method == "gpu_exact's limbs on the device"  # no host copy was needed
        with pytest.raises(MemoryError):  # the control: a copy of the input does not fit
            sumlab.sum(host, "gpu_exact", backend="cuda")
    finally:
        del hog
        torch.cuda.empty_cache()  # give the memory back to the device, not only to torch's cache


def test_cupy_and_jax_arrays_give_torchs_bits():
    x = torch.randn(100_003, dtype=torch.float32, device="cuda", generator=torch.Generator("cuda").manual_seed(7))
    want = bits(sumlab.sum(x, KERNELS))
    cupy = pytest.importorskip("cupy")
    assert bits(sumlab.sum(cupy.from_dlpack(x), KERNELS)) == want
    jax = pytest.importorskip("jax")
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        pytest.skip("JAX sees no GPU")
    j = jax.device_put(x.cpu().numpy(), gpus[0])
    assert bits(sumlab.sum(j, KERNELS)) == want


def test_device_arrays_the_kernels_cannot_read_are_refused_clearly():
    x = torch.randn(1000, device="cuda")
    with pytest.raises(sumlab.SumlabError, match="contiguous"):
        sumlab.sum(x[::2], "gpu_exact")
    with pytest.raises(sumlab.SumlabError, match="float32"):
        sumlab.sum(x.half(), "gpu_exact")
    # A 2-D tensor needs the order its elements are read in, as on the host.
    m = torch.randn(64, 64, device="cuda")
    assert sumlab.sum(m, "gpu_exact", order="C").value == sumlab.reference(m.cpu().numpy().ravel())


def test_frameworks_imported_after_sumlab_work():
    """sumlab first, then PyTorch and JAX, in a fresh process: the extension must not lend them
    any symbol (they aborted in free() when it did)."""
    import subprocess
    import sys
    code = ("import sumlab, torch, numpy; x = torch.ones(1000, device='cuda'); "
            "assert sumlab.sum(x, 'gpu_exact').value == 1000.0; "
            "import jax; print(jax.device_put(numpy.ones(3, numpy.float32)).sum())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_exact_into_a_device_scalar_has_the_same_bits_and_waits_for_nothing(dtype):
    """value(x, 'gpu_exact', out=o) leaves the correctly rounded sum in o on the device; sums back to
    back into one output each give the bits of the host path (the totals reset between them)."""
    t = getattr(torch, dtype)
    xs = [torch.randn(n, dtype=t, device="cuda", generator=torch.Generator("cuda").manual_seed(n)) * 1e3
          for n in (1, 1000, 1 << 20)]
    outs = torch.empty(3 * len(xs), dtype=t, device="cuda")
    for k in range(3):
        for i, x in enumerate(xs):
            o = outs[k * len(xs) + i]
            assert sumlab.value(x, "gpu_exact", out=o) is o
    torch.cuda.synchronize()
    want = [sumlab.reference(x.cpu().numpy()) for x in xs]
    assert [float(v) for v in outs.cpu()] == want * 3
    with pytest.raises(sumlab.SumlabError, match="dtype"):
        sumlab.value(xs[0], "gpu_exact", out=torch.empty((), dtype=torch.float16, device="cuda"))
    with pytest.raises(sumlab.SumlabError, match="one element"):
        sumlab.value(xs[0], "gpu_exact", out=torch.empty(2, dtype=t, device="cuda"))
    with pytest.raises(sumlab.SumlabError, match="CUDA array"):
        sumlab.value(xs[0], "gpu_exact", out=torch.empty((), dtype=t))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_device_subject_gets_a_copy_on_the_device_and_the_host_paths_bits(tmp_path, dtype):
    """Subject(device=True) on the cuda backend: prepare gets the lab's data as a CUDA array
    (DLPack) of its own, not through the host: the subject doubles it in place after summing, and
    the host-path subject called next still sums the lab's data, with the same bits."""
    seen = []

    def prepare(a):
        seen.append(a.__dlpack_device__())
        return torch.from_dlpack(a)

    def sum_then_double(t):
        s = torch.sum(t).item()
        t.mul_(2)
        return s

    on_device = sumlab.Subject(sum_then_double, name="on_device", prepare=prepare, device=True)
    via_host = sumlab.Subject(lambda t: torch.sum(t).item(), name="via_host",
                              prepare=lambda a: torch.from_numpy(a).cuda())
    rows = sumlab.study.error_vs_n(str(tmp_path / "e"), subjects=[on_device, via_host], backend="cuda",
                                   dtypes=[dtype], dists=["normal"], algorithms=["exact"], gpu_kernels=["gpu_exact"],
                                   seeds=2, log2_min=10, log2_max=20, log2_step=2)
    by = collections.defaultdict(dict)
    for r in rows:
        by[(r["seed"], r["n"])][r["algorithm"]] = r["hex"]
    assert len(by) >= 2 * 6
    for cell in by.values():
        assert cell["on_device"] == cell["via_host"], cell
    assert seen and all(where == (2, torch.cuda.current_device()) for where in seen)
