# CUDA detection. AUTO builds gpu/ wherever nvcc exists, even on a machine with no GPU, so that CI
# compiles every kernel; the binary then reports "no GPU" at run time and the model backend serves.
set(SUMLAB_HAVE_CUDA OFF)
if(NOT SUMLAB_CUDA STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # sm_90 machine code (H100/H200) plus compute_90 PTX for anything newer.
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(SUMLAB_HAVE_CUDA ON)
  elseif(SUMLAB_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SUMLAB_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
message(STATUS "sumlab: CUDA ${SUMLAB_HAVE_CUDA}")

# CUB's reproducible reduction (cuda::execution::determinism::gpu_to_gpu, an RFA: Demmel, Ahrens and
# Nguyen's binned sums), the peer gpu_cub_gpu_to_gpu. CUDA 13.0 ships CCCL 3.0.1, which lacks it;
# PyPI's nvidia-cuda-cccl carries newer headers (scripts/cccl.sh installs them into build/venv).
# SUMLAB_CCCL_INCLUDE_DIR (cache or environment) names such a folder; without one the peer is not
# built, and on a GPU it has no value and says why (gpu::kernel_not_built).
set(SUMLAB_CCCL_INCLUDE_DIR "$ENV{SUMLAB_CCCL_INCLUDE_DIR}" CACHE PATH
    "CCCL headers with cub's gpu_to_gpu determinism (CCCL >= 3.1), for the peer gpu_cub_gpu_to_gpu")
if(SUMLAB_HAVE_CUDA AND NOT SUMLAB_CCCL_INCLUDE_DIR)
  file(GLOB _sumlab_cccl "${PROJECT_SOURCE_DIR}/build/venv/lib/python3*/site-packages/nvidia/cu13/include/cccl")
  if(_sumlab_cccl)
    list(GET _sumlab_cccl 0 _sumlab_cccl)
    set(SUMLAB_CCCL_INCLUDE_DIR "${_sumlab_cccl}" CACHE PATH "" FORCE)
  endif()
endif()
set(SUMLAB_HAVE_CUB_GPU_TO_GPU OFF)
if(SUMLAB_HAVE_CUDA AND EXISTS "${SUMLAB_CCCL_INCLUDE_DIR}/cub/device/dispatch/dispatch_reduce_deterministic.cuh")
  set(SUMLAB_HAVE_CUB_GPU_TO_GPU ON)
endif()
message(STATUS "sumlab: cub gpu_to_gpu peer ${SUMLAB_HAVE_CUB_GPU_TO_GPU} (${SUMLAB_CCCL_INCLUDE_DIR})")

