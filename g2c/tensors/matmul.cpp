// Module 02 — your work: matrix multiplication on the textbook loops, on cache-friendly loops,
// and with LibTorch.
#include "g2c/tensors/matmul.h"
#include "g2c/core/errors.h"

namespace g2c::tensors {

Nested matmul_loops(const Nested& A, const Nested& B) {
  // TODO: The textbook product C = A @ B, one dot product per entry:
  //   C[i][j] = sum over p in [0, k) of A[i][p] * B[p][j],   A (m, k) @ B (k, n) = C (m, n).
  // First refuse what cannot be multiplied: nested_shape gives each matrix's (rows, cols) (and
  // refuses ragged rows), check_matmul_shapes refuses k_A != k_B, naming both shapes. Then build
  // C as m rows of n zeros and fill it with three nested loops in the order i, j, p: the output
  // row, the output column, and the inner index that is summed away.
  // Hints, one step at a time: scripts/hint.sh 02 matmul_loops
  throw g2c::todo("matmul_loops", "g2c/tensors/matmul.cpp", "02");
}

Matrix matmul_vectorized(const Matrix& A, const Matrix& B) {
  // TODO: The same C = A @ B on row-major buffers (element (i, j) at data()[i * cols + j]), with
  // the loops reordered to i, p, j: for each A[i][p], add A[i][p] times row p of B to row i of C.
  // The innermost loop then reads B and writes C one contiguous row at a time, its steps do not
  // depend on each other, and the compiler can run it several doubles per instruction (SIMD);
  // every C[i][j] is still summed over p in the same order, so the result equals matmul_loops'.
  // Refuse mismatched inner sizes first (check_matmul_shapes on A.shape() and B.shape()); start
  // from Matrix(m, n), which is zeros; walk the buffers through data() pointers.
  // Hints, one step at a time: scripts/hint.sh 02 matmul_vectorized
  throw g2c::todo("matmul_vectorized", "g2c/tensors/matmul.cpp", "02");
}

torch::Tensor matmul_torch(const torch::Tensor& A, const torch::Tensor& B) {
  // TODO: C = A @ B with LibTorch: (m, k) @ (k, n) = (m, n), computed on the device the inputs
  // live on (CPU, CUDA or MPS) and returned there. One call: torch::matmul.
  // Hints, one step at a time: scripts/hint.sh 02 matmul_torch
  throw g2c::todo("matmul_torch", "g2c/tensors/matmul.cpp", "02");
}

}  // namespace g2c::tensors
