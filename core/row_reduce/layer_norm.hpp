#pragma once
// The normalised output every moments kernel writes: y = (x - mean) * rstd, rstd = 1/sqrt(var +
// eps), eps = layer_norm_eps (1e-5, torch.nn.LayerNorm's default), i.e. LayerNorm without the
// affine part. A negative variance below -eps (the textbook formula's failure) makes rstd, hence
// the whole output row, NaN: the study counts those rows.
// Empty rows (cols = 0): mean and variance NaN (0/0, as torch.mean of an empty tensor) and no
// output.
#include "core/hd.hpp"
#include "core/row_reduce/row_kernel.hpp"
#include "core/row_reduce/row_math.hpp"

namespace sumlab::row_reduce {

template <class Acc> SUMLAB_HD inline Acc layer_norm_rstd(Acc variance) {
  return Acc(1) / acc_sqrt(variance + static_cast<Acc>(layer_norm_eps));
}

template <class Acc> SUMLAB_HD inline Acc layer_norm_apply(Acc x, Acc mean, Acc rstd) {
  return (x - mean) * rstd;
}

}  // namespace sumlab::row_reduce
