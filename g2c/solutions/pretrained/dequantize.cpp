// Module 16 — reference solution for g2c/pretrained/dequantize.cpp.
#include "g2c/pretrained/gguf.h"

namespace g2c::pretrained {

void dequantize_q4_1_block(const std::uint8_t* block, float* out) {
  const float d = read_half(block);      // the step between codes
  const float m = read_half(block + 2);  // the value of code 0: the block's minimum
  const std::uint8_t* q = block + 4;     // 16 bytes, two codes each
  for (int i = 0; i < 16; ++i) {
    out[i] = static_cast<float>(q[i] & 0x0f) * d + m;     // low nibble: value i
    out[i + 16] = static_cast<float>(q[i] >> 4) * d + m;  // high nibble: value i + 16
  }
}

}  // namespace g2c::pretrained
