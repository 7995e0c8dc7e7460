#include "studies/memory_check.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "studies/checked_math.hpp"
#include "studies/commands.hpp"

namespace sumlab {

std::string bytes_text(double bytes) {
  static constexpr const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} bytes", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

namespace {

// Physical memory in bytes (0 when unknown).
double physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

}  // namespace

// 80%: the rest is the process itself, the reference's scratch and the system.
std::uint64_t memory_budget() { return static_cast<std::uint64_t>(0.8 * physical_memory()); }

void check_fits_in_memory(std::uint64_t count, std::uint64_t element_size, const std::string& what) {
  const auto bytes = checked_mul(count, element_size);
  if (!bytes)
    throw ResourceError(fmt::format("{} needs more than 16 EiB ({} x {} bytes does not fit in 64 bits)", what,
                                    count, element_size));
  const double total = physical_memory();
  if (total == 0) return;  // unknown: let the allocation decide
  if (*bytes > memory_budget())
    throw ResourceError(fmt::format("{} needs {} but this machine has {} of memory", what,
                                    bytes_text(static_cast<double>(*bytes)), bytes_text(total)));
}

}  // namespace sumlab
