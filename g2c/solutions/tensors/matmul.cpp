// Module 02 — reference solution for g2c/tensors/matmul.cpp.
#include "g2c/tensors/matmul.h"
#include "g2c/core/errors.h"

namespace g2c::tensors {

Nested matmul_loops(const Nested& A, const Nested& B) {
  const MatrixShape a = nested_shape(A, "A");
  const MatrixShape b = nested_shape(B, "B");
  check_matmul_shapes(a, b);
  // (m, k) @ (k, n) = (m, n)
  Nested C(a.rows, std::vector<double>(b.cols, 0.0));
  for (std::size_t i = 0; i < a.rows; ++i) {
    for (std::size_t j = 0; j < b.cols; ++j) {
      double sum = 0.0;
      for (std::size_t p = 0; p < a.cols; ++p) sum += A[i][p] * B[p][j];
      C[i][j] = sum;
    }
  }
  return C;
}

Matrix matmul_vectorized(const Matrix& A, const Matrix& B) {
  check_matmul_shapes(A.shape(), B.shape());
  const std::size_t m = A.rows(), k = A.cols(), n = B.cols();
  Matrix C(m, n);  // (m, n) zeros
  const double* a = A.data();
  const double* b = B.data();
  double* c = C.data();
  for (std::size_t i = 0; i < m; ++i) {
    double* c_row = c + i * n;  // row i of C: (n)
    for (std::size_t p = 0; p < k; ++p) {
      const double a_ip = a[i * k + p];
      const double* b_row = b + p * n;  // row p of B: (n)
      for (std::size_t j = 0; j < n; ++j) c_row[j] += a_ip * b_row[j];
    }
  }
  return C;
}

torch::Tensor matmul_torch(const torch::Tensor& A, const torch::Tensor& B) {
  return torch::matmul(A, B);  // (m, k) @ (k, n) = (m, n), on A's and B's device
}

}  // namespace g2c::tensors
