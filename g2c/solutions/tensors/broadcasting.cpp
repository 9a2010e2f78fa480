// Module 02 — reference solution for g2c/tensors/broadcasting.cpp.
#include <algorithm>
#include <functional>

#include "g2c/core/errors.h"
#include "g2c/tensors/broadcasting.h"

namespace g2c::tensors {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  // Output dim d faces dim d - (rank - a.size()) of a: right-aligned, size 1 where a has none.
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t size_a = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    const std::int64_t size_b = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    if (size_a != size_b && size_a != 1 && size_b != 1) {
      throw g2c::ValueError("shapes " + format_shape(a) + " and " + format_shape(b) +
                            " cannot broadcast: aligned on the right, dim " + std::to_string(d) +
                            " has sizes " + std::to_string(size_a) + " and " +
                            std::to_string(size_b) + " (they must be equal, or one of them 1)");
    }
    out[d] = size_a == 1 ? size_b : size_a;
  }
  return out;
}

TinyArray TinyArray::elementwise(const TinyArray& other,
                                 const std::function<double(double, double)>& op) const {
  const Shape out_shape = broadcast_shapes(shape_, other.shape_);
  const std::size_t rank = out_shape.size();
  // An input's strides on the output's dims: 0 where it is stretched (size 1) or padded (absent).
  const auto aligned_strides = [rank](const Shape& shape) {
    const Shape own = row_major_strides(shape);
    Shape strides(rank, 0);
    const std::size_t pad = rank - shape.size();
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] != 1) strides[pad + d] = own[d];
    }
    return strides;
  };
  const Shape a_strides = aligned_strides(shape_);
  const Shape b_strides = aligned_strides(other.shape_);
  std::vector<double> out(static_cast<std::size_t>(shape_numel(out_shape)));
  Shape index(rank, 0);  // the output's multi-index, counted like an odometer
  for (std::size_t flat = 0; flat < out.size(); ++flat) {
    std::int64_t a = 0, b = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      a += index[d] * a_strides[d];
      b += index[d] * b_strides[d];
    }
    out[flat] = op(data_[static_cast<std::size_t>(a)], other.data_[static_cast<std::size_t>(b)]);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
  return TinyArray(std::move(out), out_shape);
}

TinyArray TinyArray::operator+(const TinyArray& other) const {
  return elementwise(other, std::plus<double>());
}

TinyArray TinyArray::operator*(const TinyArray& other) const {
  return elementwise(other, std::multiplies<double>());
}

}  // namespace g2c::tensors
