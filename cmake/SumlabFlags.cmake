# Floating-point flags for every host target of the project (C++, and the C of the example plugin).
#
# The order and rounding of every floating-point operation is what sumlab studies, so the compiler
# must not change either: -ffp-contract=off forbids fusing a*b+c into an FMA (one rounding instead
# of two), and -ffast-math (or any of its parts: -fassociative-math, -funsafe-math-optimizations)
# is never used, because it lets the compiler reassociate the very sums we measure.
# On x86-64, float and double arithmetic is SSE2 (FLT_EVAL_METHOD == 0), so no x87 excess
# precision creeps in; long double appears only where an algorithm asks for it by name.
add_library(sumlab_flags INTERFACE)
target_compile_options(sumlab_flags INTERFACE
  $<$<COMPILE_LANGUAGE:C,CXX>:-ffp-contract=off -fno-fast-math
                            -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)
