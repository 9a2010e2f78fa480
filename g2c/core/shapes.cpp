#include "g2c/core/shapes.h"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"

namespace g2c {

std::string describe_shape(const torch::Tensor& x, std::initializer_list<const char*> names) {
  if (!x.defined()) return "(undefined tensor)";
  const bool named = names.size() == static_cast<std::size_t>(x.dim());
  std::vector<std::string> parts;
  auto name = names.begin();
  for (std::int64_t i = 0; i < x.dim(); ++i) {
    parts.push_back(named ? fmt::format("{}={}", *name++, x.size(i)) : std::to_string(x.size(i)));
  }
  return fmt::format("({})", fmt::join(parts, ", "));
}

void check_shape(const torch::Tensor& x, const char* what, std::initializer_list<const char*> names,
                 std::initializer_list<std::int64_t> expected) {
  std::vector<std::string> wanted;
  auto size = expected.begin();
  for (const char* name : names) {
    const std::int64_t s = size != expected.end() ? *size++ : -1;
    wanted.push_back(s >= 0 ? fmt::format("{}={}", name, s) : name);
  }
  const std::string wanted_text = fmt::format("({})", fmt::join(wanted, ", "));
  if (!x.defined()) {
    throw ValueError(
        fmt::format("{} must be a tensor of shape {}, got an undefined tensor", what, wanted_text));
  }
  bool ok = x.dim() == static_cast<std::int64_t>(names.size());
  size = expected.begin();
  for (std::int64_t i = 0; ok && size != expected.end(); ++i, ++size) {
    if (*size >= 0 && x.size(i) != *size) ok = false;
  }
  if (!ok) {
    throw ValueError(
        fmt::format("{} must have shape {}, got {}", what, wanted_text, describe_shape(x, names)));
  }
}

}  // namespace g2c
