#pragma once
// Refusing, before allocating, a request this machine's memory cannot hold: a clear
// ResourceError (exit 3) instead of a std::bad_alloc or a vector length error later.
#include <cstdint>
#include <string>

namespace sumlab {

// Throws ResourceError when `count` elements of `element_size` bytes each (include every copy
// alive at once in `element_size`) need more than 80% of this machine's physical memory, or
// when count * element_size does not even fit in 64 bits. `what` names the request
// ("n = 1048576 float32 elements").
void check_fits_in_memory(std::uint64_t count, std::uint64_t element_size, const std::string& what);

// The bytes a study may plan to hold at once: the same 80% of physical memory (0 when unknown).
std::uint64_t memory_budget();

// "1.5 GiB", "8.0 EiB": a byte count for messages.
std::string bytes_text(double bytes);

}  // namespace sumlab
