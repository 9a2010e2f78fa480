#include "g2c/rag/blake2b.h"

#include <algorithm>
#include <array>
#include <bit>
#include <stdexcept>
#include <string>

namespace g2c::rag {

namespace {

constexpr std::size_t kBlockBytes = 128;
constexpr std::size_t kMaxDigestBytes = 64;
constexpr int kRounds = 12;

using State = std::array<std::uint64_t, 8>;
using Block = std::array<std::uint64_t, 16>;

// The initialization vector (RFC 7693, section 2.6): SHA-512's.
constexpr State kIV = {0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b,
                       0xa54ff53a5f1d36f1, 0x510e527fade682d1, 0x9b05688c2b3e6c1f,
                       0x1f83d9abfb41bd6b, 0x5be0cd19137e2179};

// The message word order of each round (section 2.7); rounds 10 and 11 reuse rows 0 and 1.
constexpr std::uint8_t kSigma[10][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
};

// The mixing function G (section 3.1) on the working vector's words a, b, c, d.
void mix(std::array<std::uint64_t, 16>& v, int a, int b, int c, int d, std::uint64_t x,
         std::uint64_t y) {
  v[a] = v[a] + v[b] + x;
  v[d] = std::rotr(v[d] ^ v[a], 32);
  v[c] = v[c] + v[d];
  v[b] = std::rotr(v[b] ^ v[c], 24);
  v[a] = v[a] + v[b] + y;
  v[d] = std::rotr(v[d] ^ v[a], 16);
  v[c] = v[c] + v[d];
  v[b] = std::rotr(v[b] ^ v[c], 63);
}

// The compression function F (section 3.2): folds one block into the state. `bytes_so_far` is the
// count of message bytes up to the end of this block (the offset counter t; inputs here never
// reach 2^64 bytes, so its high word is 0), `last` marks the final block.
void compress(State& h, const Block& m, std::uint64_t bytes_so_far, bool last) {
  std::array<std::uint64_t, 16> v{};
  for (int i = 0; i < 8; ++i) {
    v[i] = h[i];
    v[i + 8] = kIV[i];
  }
  v[12] ^= bytes_so_far;
  if (last) v[14] = ~v[14];
  for (int round = 0; round < kRounds; ++round) {
    const std::uint8_t* s = kSigma[round % 10];
    mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (int i = 0; i < 8; ++i) h[i] ^= v[i] ^ v[i + 8];
}

// The up to 128 bytes of `data` from `offset` as 16 little-endian words, zero-padded.
Block load_block(std::string_view data, std::size_t offset) {
  Block m{};
  const std::size_t end = std::min(data.size(), offset + kBlockBytes);
  for (std::size_t k = offset; k < end; ++k) {
    const std::size_t i = k - offset;
    m[i / 8] |= std::uint64_t{static_cast<unsigned char>(data[k])} << (8 * (i % 8));
  }
  return m;
}

// The final state of hashing `data` for a digest of `digest_size` bytes (section 3.3). The last
// block, padded with zeros, is always compressed with the final flag: a message of exactly 128
// bytes is one final block, and the empty message is one final block of zeros.
State hash_state(std::string_view data, std::size_t digest_size) {
  if (digest_size < 1 || digest_size > kMaxDigestBytes) {
    throw std::invalid_argument("blake2b: digest size " + std::to_string(digest_size) +
                                " is outside 1..64");
  }
  State h = kIV;
  h[0] ^= 0x01010000 ^ digest_size;  // parameter block: fanout 1, depth 1, no key
  const std::size_t blocks = data.empty() ? 1 : (data.size() + kBlockBytes - 1) / kBlockBytes;
  for (std::size_t i = 0; i + 1 < blocks; ++i) {
    compress(h, load_block(data, i * kBlockBytes), (i + 1) * kBlockBytes, false);
  }
  compress(h, load_block(data, (blocks - 1) * kBlockBytes), data.size(), true);
  return h;
}

// Byte k of the digest: the state's words written out little-endian.
std::uint8_t digest_byte(const State& h, std::size_t k) {
  return static_cast<std::uint8_t>(h[k / 8] >> (8 * (k % 8)));
}

}  // namespace

std::vector<std::uint8_t> blake2b(std::string_view data, std::size_t digest_size) {
  const State h = hash_state(data, digest_size);
  std::vector<std::uint8_t> digest(digest_size);
  for (std::size_t k = 0; k < digest_size; ++k) digest[k] = digest_byte(h, k);
  return digest;
}

std::uint64_t blake2b_64_big_endian(std::string_view data) {
  // The 8 digest bytes are h[0] little-endian; read big-endian, they are h[0] byte-swapped.
  const State h = hash_state(data, 8);
  std::uint64_t value = 0;
  for (std::size_t k = 0; k < 8; ++k) value = (value << 8) | digest_byte(h, k);
  return value;
}

}  // namespace g2c::rag
