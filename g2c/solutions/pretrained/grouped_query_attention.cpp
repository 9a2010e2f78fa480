// Module 16 — reference solution for g2c/pretrained/grouped_query_attention.cpp.
#include "g2c/pretrained/grouped_query_attention.h"

namespace g2c::pretrained {

torch::Tensor repeat_kv(const torch::Tensor& x, std::int64_t n_rep) {
  if (n_rep == 1) return x;
  const auto b = x.size(0), g = x.size(1), s = x.size(2), d = x.size(3);
  // A new axis after the head axis, expanded without copying, then folded into the heads: head g
  // is followed by its own n_rep - 1 copies before head g + 1 starts.
  return x.unsqueeze(2).expand({b, g, n_rep, s, d}).reshape({b, g * n_rep, s, d});
}

}  // namespace g2c::pretrained
