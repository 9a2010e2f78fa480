// Module 16 — your work: one Q4_1 block of the GGUF file, back to 32 floats.
#include "g2c/core/errors.h"
#include "g2c/pretrained/gguf.h"

namespace g2c::pretrained {

void dequantize_q4_1_block(const std::uint8_t* block, float* out) {
  // TODO: A Q4_1 block is 20 bytes: the scale d (float16, bytes 0-1), the minimum m (float16,
  // bytes 2-3), then 16 bytes each holding two 4-bit codes q in 0..15. Write out[j] = q_j · d + m:
  // byte i's low nibble is value i, its high nibble value i + 16. read_half(bytes) reads a float16.
  // Hints, one step at a time: scripts/hint.sh 16 dequantize_q4_1_block
  throw g2c::todo("dequantize_q4_1_block", "g2c/pretrained/dequantize.cpp", "16");
}

}  // namespace g2c::pretrained
