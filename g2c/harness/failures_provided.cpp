// Beyond module harness — the provided half of failures.h.
#include "g2c/harness/failures.h"

namespace g2c::harness {

std::string lower_ascii(std::string_view text) {
  std::string lower(text);
  for (auto& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

}  // namespace g2c::harness
