// Module 09's TransformerLM continued from its KV cache, for the decoding loops.
#include "g2c/sampling/logits_model.h"

#include "g2c/transformer/fused.h"

namespace g2c::sampling {

torch::Tensor TransformerLogitsModel::forward(const torch::Tensor& ids,
                                              g2c::transformer::KVCache& cache) {
  return g2c::transformer::fused_forward_extend(*model_, ids, cache);  // (1, T_new, V)
}

}  // namespace g2c::sampling
