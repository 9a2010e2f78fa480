// Module 02 — implemented for you: the Matrix type, its conversions, and the shape checks that
// matmul_loops and matmul_vectorized start with.
#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tensors/matmul.h"

namespace g2c::tensors {

Matrix::Matrix(std::size_t rows, std::size_t cols)
    : rows_(rows), cols_(cols), data_(rows * cols, 0.0) {}

Matrix::Matrix(std::size_t rows, std::size_t cols, std::vector<double> data)
    : rows_(rows), cols_(cols), data_(std::move(data)) {
  if (data_.size() != rows * cols) {
    throw ValueError(
        fmt::format("Matrix: {} values do not fill shape ({}, {}) (expected {} = {} x {})",
                    data_.size(), rows, cols, rows * cols, rows, cols));
  }
}

Matrix Matrix::from_nested(const Nested& rows) {
  const MatrixShape shape = nested_shape(rows, "the matrix");
  std::vector<double> data;
  data.reserve(shape.rows * shape.cols);
  for (const auto& row : rows) data.insert(data.end(), row.begin(), row.end());
  return Matrix(shape.rows, shape.cols, std::move(data));
}

Matrix Matrix::from_tensor(const torch::Tensor& tensor) {
  if (!tensor.defined() || tensor.dim() != 2) {
    throw ValueError(fmt::format("Matrix::from_tensor needs a 2-D tensor (rows, cols), got {} dims",
                                 tensor.defined() ? tensor.dim() : 0));
  }
  const auto values = tensor.detach().to(torch::kCPU, torch::kDouble).contiguous();
  const double* begin = values.data_ptr<double>();
  return Matrix(static_cast<std::size_t>(values.size(0)), static_cast<std::size_t>(values.size(1)),
                std::vector<double>(begin, begin + values.numel()));
}

Nested Matrix::to_nested() const {
  Nested rows(rows_);
  for (std::size_t i = 0; i < rows_; ++i) {
    rows[i].assign(data_.begin() + static_cast<std::ptrdiff_t>(i * cols_),
                   data_.begin() + static_cast<std::ptrdiff_t>((i + 1) * cols_));
  }
  return rows;
}

torch::Tensor Matrix::to_tensor() const {
  return torch::tensor(data_, torch::kDouble)
      .reshape({static_cast<std::int64_t>(rows_), static_cast<std::int64_t>(cols_)});
}

std::string format_matrix_shape(MatrixShape shape) {
  return fmt::format("({}, {})", shape.rows, shape.cols);
}

MatrixShape nested_shape(const Nested& rows, const char* name) {
  if (rows.empty()) return {0, 0};
  const std::size_t cols = rows.front().size();
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].size() != cols) {
      throw ValueError(
          fmt::format("{} is ragged: row 0 has {} values but row {} has {}; every row "
                      "of a matrix needs the same length",
                      name, cols, i, rows[i].size()));
    }
  }
  return {rows.size(), cols};
}

void check_matmul_shapes(MatrixShape a, MatrixShape b) {
  if (a.cols != b.rows) {
    throw ValueError(
        fmt::format("matmul: A is {} and B is {}; A's columns ({}) must equal B's "
                    "rows ({}): (m, k) @ (k, n) = (m, n)",
                    format_matrix_shape(a), format_matrix_shape(b), a.cols, b.rows));
  }
}

}  // namespace g2c::tensors
