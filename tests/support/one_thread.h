// One intra-op thread for suites of tiny models.
#pragma once

#include <torch/torch.h>

namespace g2c::testing {

/// Sets LibTorch to one intra-op thread and returns true. Each step of a tiny model is hundreds of
/// small ops, where a second thread only adds wake-ups (and ctest -j2 already runs two test
/// programs side by side). Use at namespace scope, before any test runs:
///   [[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();
inline bool use_one_intra_op_thread() {
  torch::set_num_threads(1);
  return true;
}

}  // namespace g2c::testing
