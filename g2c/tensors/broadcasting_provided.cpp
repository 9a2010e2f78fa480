// Module 02 — implemented for you: TinyArray's construction, shape helpers, printing and
// to_nested(). The broadcasting itself is yours, in broadcasting.cpp.
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "g2c/core/errors.h"
#include "g2c/tensors/broadcasting.h"

namespace g2c::tensors {

namespace {

/// A double as Python's repr writes a float: "1.0", "0.5", "-2.25".
std::string python_float(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e16) {
    return fmt::format("{:.1f}", value);
  }
  return fmt::format("{}", value);
}

/// The values of `data` from `offset` laid out in `shape`'s dims from `dim` on, as nested lists.
nlohmann::json nest(const std::vector<double>& data, const Shape& shape, const Shape& strides,
                    std::size_t dim, std::int64_t offset) {
  if (dim == shape.size()) return data[static_cast<std::size_t>(offset)];
  auto out = nlohmann::json::array();
  for (std::int64_t i = 0; i < shape[dim]; ++i) {
    out.push_back(nest(data, shape, strides, dim + 1, offset + i * strides[dim]));
  }
  return out;
}

}  // namespace

std::string format_shape(const Shape& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (const auto size : shape) n *= size;
  return n;
}

Shape row_major_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

TinyArray::TinyArray(std::vector<double> data, Shape shape)
    : data_(std::move(data)), shape_(std::move(shape)) {
  for (const auto size : shape_) {
    if (size < 0) {
      throw ValueError(
          fmt::format("TinyArray: shape {} has a negative size", format_shape(shape_)));
    }
  }
  const std::int64_t expected = shape_numel(shape_);
  if (static_cast<std::int64_t>(data_.size()) != expected) {
    throw ValueError(
        fmt::format("TinyArray: data length {} does not match shape {} (expected {} "
                    "elements)",
                    data_.size(), format_shape(shape_), expected));
  }
}

nlohmann::json TinyArray::to_nested() const {
  return nest(data_, shape_, row_major_strides(shape_), 0, 0);
}

std::string TinyArray::repr() const {
  std::vector<std::string> values;
  values.reserve(data_.size());
  for (const double value : data_) values.push_back(python_float(value));
  return fmt::format("TinyArray(shape={}, data=[{}])", format_shape(shape_),
                     fmt::join(values, ", "));
}

std::ostream& operator<<(std::ostream& stream, const TinyArray& array) {
  return stream << array.repr();
}

}  // namespace g2c::tensors
