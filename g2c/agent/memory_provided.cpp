// Module 19 — the provided half of memory.h.
#include <fmt/format.h>

#include "g2c/agent/memory.h"
#include "g2c/core/errors.h"

namespace g2c::agent {

Scratchpad::Scratchpad(std::optional<std::int64_t> max_chars) : max_chars_(max_chars) {
  if (max_chars && *max_chars <= 0) {
    throw ValueError(fmt::format("Scratchpad: max_chars must be > 0 or unset, got {}", *max_chars));
  }
}

std::ostream& operator<<(std::ostream& stream, const Scratchpad& scratchpad) {
  return stream << "Scratchpad(steps=" << scratchpad.size() << ")";
}

}  // namespace g2c::agent
