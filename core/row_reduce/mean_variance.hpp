#pragma once
// What a moments row kernel returns per row: the mean and the population variance (divisor n).
#include "core/hd.hpp"

namespace sumlab::row_reduce {

template <class Acc> struct MeanVariance {
  Acc mean;
  Acc variance;
};

}  // namespace sumlab::row_reduce
