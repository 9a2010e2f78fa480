// Module 15 — matchers (provided part): the shared check.
#include "g2c/eval/match.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::eval {

void check_references(const std::vector<std::string>& references, const char* who) {
  if (references.empty()) {
    throw ValueError(fmt::format(
        "{}: references must be non-empty; an empty list is a bug in the task, not a \"no\" "
        "(give at least one accepted answer)",
        who));
  }
}

}  // namespace g2c::eval
