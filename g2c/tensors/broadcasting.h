// Module 02 — broadcasting from scratch: the rule that lets a (2, 3) array and a (3,) array be
// added, written out on a tiny N-d array with no LibTorch underneath.
//
// The rule (NumPy's and LibTorch's):
// clang-format off
//   1. align the two shapes on the right (their last dimensions face each other);
//   2. pad the shorter one on the LEFT with 1s;
//   3. in each dimension the sizes must be equal or one of them 1, else the shapes cannot broadcast;
//   4. the output takes the larger size: a size-1 dimension is stretched, re-read at every position.
//
//      (2, 1, 4) with (3, 4):     (2, 1, 4)
//                                 (1, 3, 4)   <- padded on the left
//                              -> (2, 3, 4)
// clang-format on
// Nothing is copied to stretch a dimension: an input's stretched (or padded) dimension simply gets
// stride 0 — moving along it does not move in that input's data.
//
// TinyArray stores its values flat, row-major (C order): the last index moves fastest, and
//   flat offset = sum over d of index[d] * stride[d],  stride[d] = product of shape[d+1:]
// so a (2, 3) array has strides (3, 1) and element [1][2] sits at 1 * 3 + 2 * 1 = 5.
//
// What is deliberately left out: views, in-place ops, negative strides, dtypes other than double.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace g2c::tensors {

/// A shape: one size per dimension, outermost first. () is a scalar (one value).
using Shape = std::vector<std::int64_t>;

/// A shape as Python writes a tuple: "()", "(3,)", "(2, 3)".
std::string format_shape(const Shape& shape);

/// The number of values a shape holds: the product of its sizes (1 for ()).
std::int64_t shape_numel(const Shape& shape);

/// Row-major strides: stride[d] = product of shape[d+1:], the last one 1.
/// Example: row_major_strides({2, 3, 4}) -> {12, 4, 1}; row_major_strides({}) -> {}.
Shape row_major_strides(const Shape& shape);

/// The shape of a op b under broadcasting; ValueError naming both shapes when some dimension has
/// two different sizes neither of which is 1.
/// Examples: ((4,), (3, 4)) -> (3, 4); ((1, 4), (3, 1)) -> (3, 4); ((), (3, 4)) -> (3, 4);
/// ((2, 1, 4), (3, 4)) -> (2, 3, 4); ((2, 3), (2, 4)) -> ValueError.
Shape broadcast_shapes(const Shape& a, const Shape& b);

/// A minimal N-d array of doubles: a flat row-major buffer and a shape. Element-wise + and *
/// broadcast their operands the NumPy way.
/// Example: TinyArray({1, 2, 3, 4, 5, 6}, {2, 3}) + TinyArray({10, 20, 30}, {3})
///          -> [[11, 22, 33], [14, 25, 36]], shape (2, 3).
class TinyArray {
 public:
  /// ValueError unless data.size() is the product of the sizes (and no size is negative).
  TinyArray(std::vector<double> data, Shape shape);

  const std::vector<double>& data() const { return data_; }
  const Shape& shape() const { return shape_; }
  /// The number of values: data().size().
  std::int64_t numel() const { return static_cast<std::int64_t>(data_.size()); }

  /// op(this value, other value) for every position of the broadcast output, whose shape is
  /// broadcast_shapes(shape(), other.shape()); ValueError when the shapes cannot broadcast.
  /// Example: (1, 3) [[10, 20, 30]] with (2, 1) [[1], [2]] and op = minus
  ///          -> [[9, 19, 29], [8, 18, 28]], shape (2, 3).
  TinyArray elementwise(const TinyArray& other,
                        const std::function<double(double, double)>& op) const;
  /// Element-wise sum with broadcasting: shape broadcast_shapes(shape(), other.shape()).
  TinyArray operator+(const TinyArray& other) const;
  /// Element-wise product with broadcasting: shape broadcast_shapes(shape(), other.shape()).
  TinyArray operator*(const TinyArray& other) const;

  /// Nested lists for reading and comparing: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] for a (2, 3)
  /// array, a bare number for a () one.
  nlohmann::json to_nested() const;
  /// "TinyArray(shape=(3,), data=[1.0, 2.0, 3.0])", like the Python edition's repr.
  std::string repr() const;

 private:
  std::vector<double> data_;  // (numel), row-major
  Shape shape_;
};

std::ostream& operator<<(std::ostream& stream, const TinyArray& array);

}  // namespace g2c::tensors
