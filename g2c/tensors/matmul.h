// Module 02 — matrix multiplication three ways: the same C = A @ B, three times faster each rung.
//
// Shapes: A (m, k) @ B (k, n) = C (m, n). The inner sizes k must agree and are summed away; the
// outer sizes m and n survive. Every entry is one dot product:
//   C[i][j] = sum over p in [0, k) of A[i][p] * B[p][j]          (m * n * k multiply-adds)
//
// The three rungs (the Python edition's matmul_loops, matmul_numpy and matmul_torch):
//   matmul_loops       nested std::vector rows, the textbook i-j-k loops. The innermost loop walks
//                      down a column of B: each step jumps to another row (another heap block), so
//                      almost every read of B misses the cache, and the running sum is one long
//                      chain of dependent additions the compiler may not reorder.
//   matmul_vectorized  the Python edition's NumPy rung. One flat row-major buffer per matrix and
//                      the loops in i-k-j order: for each A[i][p], add A[i][p] * (row p of B) to
//                      (row i of C). The innermost loop now reads B and writes C contiguously, its
//                      iterations are independent, and the compiler turns it into SIMD instructions
//                      (several doubles per instruction). Same arithmetic, same result (each
//                      C[i][j] is still summed over p in order), many times faster at 512 and
//                      above.
//   matmul_torch       torch::matmul: a tuned BLAS (cache blocking, packed panels, hand-written
//                      kernels, every core) on the CPU, cuBLAS on CUDA, Metal on MPS — on whatever
//                      device the inputs live on.
// exercises/02-tensors/matmul_ladder.cpp times all of them against this machine's measured peak.
//
// What is deliberately left out: blocking/tiling for the caches, threads in the hand-written
// loops, and float32 in them (double, like NumPy's default, keeps the comparison with the textbook
// loops exact).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "g2c/core/torch.h"

namespace g2c::tensors {

/// A matrix as nested rows, the Python edition's list of lists: M[i][j] is row i, column j.
using Nested = std::vector<std::vector<double>>;

/// The (rows, cols) of a matrix, as error messages print it: "(2, 3)".
struct MatrixShape {
  std::size_t rows = 0;
  std::size_t cols = 0;
};

/// A dense row-major matrix of doubles: element (i, j) lives at data()[i * cols() + j], so each row
/// is contiguous and row i + 1 follows row i. Example: Matrix(2, 3, {1, 2, 3, 4, 5, 6}) is
/// [[1, 2, 3], [4, 5, 6]], and (1, 0) is 4.
class Matrix {
 public:
  /// rows x cols zeros.
  Matrix(std::size_t rows, std::size_t cols);
  /// rows x cols from a row-major buffer; ValueError unless data.size() == rows * cols.
  Matrix(std::size_t rows, std::size_t cols, std::vector<double> data);
  /// From nested rows; ValueError when the rows differ in length.
  static Matrix from_nested(const Nested& rows);
  /// From a 2-D tensor on any device and of any floating dtype (copied to CPU doubles);
  /// ValueError unless it is 2-D.
  static Matrix from_tensor(const torch::Tensor& tensor);

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  MatrixShape shape() const { return {rows_, cols_}; }
  double* data() { return data_.data(); }
  const double* data() const { return data_.data(); }
  double& operator()(std::size_t i, std::size_t j) { return data_[i * cols_ + j]; }
  double operator()(std::size_t i, std::size_t j) const { return data_[i * cols_ + j]; }

  Nested to_nested() const;
  /// A (rows, cols) float64 CPU tensor holding a copy.
  torch::Tensor to_tensor() const;

 private:
  std::size_t rows_;
  std::size_t cols_;
  std::vector<double> data_;  // (rows * cols), row-major
};

/// "(2, 3)".
std::string format_matrix_shape(MatrixShape shape);

/// The (rows, cols) of nested rows; ValueError naming `name` when the rows differ in length.
/// An empty matrix is (0, 0). Example: nested_shape({{1, 2, 3}, {4, 5, 6}}, "A") -> (2, 3).
MatrixShape nested_shape(const Nested& rows, const char* name);

/// ValueError unless A's columns equal B's rows, naming both shapes:
/// "matmul: A is (2, 3) and B is (4, 2); A's columns (3) must equal B's rows (4)".
void check_matmul_shapes(MatrixShape a, MatrixShape b);

/// C = A @ B with the textbook i-j-k loops on nested rows: A (m, k), B (k, n) -> C (m, n).
/// ValueError when the rows of A or B differ in length or the inner sizes differ.
/// Example: [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] -> [[19, 22], [43, 50]].
Nested matmul_loops(const Nested& A, const Nested& B);

/// C = A @ B on row-major buffers, loops in the cache-friendly i-k-j order whose inner loop the
/// compiler vectorises: A (m, k), B (k, n) -> C (m, n). ValueError when the inner sizes differ.
/// Example: the same [[19, 22], [43, 50]] as matmul_loops.
Matrix matmul_vectorized(const Matrix& A, const Matrix& B);

/// C = A @ B with LibTorch, on the inputs' device (CPU, CUDA or MPS) and in their dtype.
/// A (m, k), B (k, n) -> C (m, n). Example: tensors of the example above -> [[19, 22], [43, 50]].
torch::Tensor matmul_torch(const torch::Tensor& A, const torch::Tensor& B);

}  // namespace g2c::tensors
