// A Llama small enough to build in a test: two blocks, four query heads sharing two key/value
// heads, a 20-token vocabulary and 32 positions — every piece of SmolLM2's architecture, in
// milliseconds.
#pragma once

#include "g2c/pretrained/llama.h"

namespace g2c::testing {

inline g2c::pretrained::LlamaOptions tiny_llama_options() {
  return g2c::pretrained::LlamaOptions()
      .vocab_size(20)
      .embedding_dim(16)
      .num_layers(2)
      .num_heads(4)
      .num_kv_heads(2)
      .hidden_dim(24)
      .max_seq_len(32)
      .rope_base(500.0);
}

}  // namespace g2c::testing
