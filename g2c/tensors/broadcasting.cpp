// Module 02 — your work: the broadcasting rule, and TinyArray's element-wise ops built on it.
#include <algorithm>
#include <functional>

#include "g2c/core/errors.h"
#include "g2c/tensors/broadcasting.h"

namespace g2c::tensors {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  // TODO: The output shape of a op b. Align the shapes on the RIGHT (last dims face each other)
  // and treat the missing leading dims of the shorter one as 1. Per aligned dim the sizes must be
  // equal or one of them 1, and the output takes the larger; any other pair cannot broadcast:
  // throw g2c::ValueError naming both shapes (format_shape). The output has max(rank a, rank b)
  // dims. (4,) with (3, 4) -> (3, 4); (1, 4) with (3, 1) -> (3, 4); () with (3, 4) -> (3, 4).
  // Hints, one step at a time: scripts/hint.sh 02 broadcast_shapes
  throw g2c::todo("broadcast_shapes", "g2c/tensors/broadcasting.cpp", "02");
}

TinyArray TinyArray::elementwise(const TinyArray& other,
                                 const std::function<double(double, double)>& op) const {
  // TODO: out[index] = op(this value at index, other value at index) for every multi-index of the
  // output shape broadcast_shapes(shape(), other.shape()). Finding an input's value is stride
  // arithmetic: give each input strides aligned on the right to the output's dims, with stride 0
  // wherever the input has size 1 or no dim at all (stretching = re-reading the same value) and
  // its row-major stride (row_major_strides) elsewhere; its flat offset is then
  // sum over d of index[d] * stride[d]. Walk the output's values in row-major order, counting the
  // multi-index like an odometer (the last dim moves fastest). Return TinyArray(values, shape).
  // Hints, one step at a time: scripts/hint.sh 02 TinyArray::elementwise
  throw g2c::todo("TinyArray::elementwise", "g2c/tensors/broadcasting.cpp", "02");
}

TinyArray TinyArray::operator+(const TinyArray& other) const {
  // TODO: The broadcast sum: elementwise with an op that adds its two values (std::plus<double>
  // or a lambda).
  // Hints, one step at a time: scripts/hint.sh 02 TinyArray::operator+
  throw g2c::todo("TinyArray::operator+", "g2c/tensors/broadcasting.cpp", "02");
}

TinyArray TinyArray::operator*(const TinyArray& other) const {
  // TODO: The broadcast product: elementwise with an op that multiplies its two values.
  // Hints, one step at a time: scripts/hint.sh 02 TinyArray::operator*
  throw g2c::todo("TinyArray::operator*", "g2c/tensors/broadcasting.cpp", "02");
}

}  // namespace g2c::tensors
