// BLAKE2b (RFC 7693), the hash Python's hashlib.blake2b computes: unkeyed, no salt or
// personalization, a digest of 1 to 64 bytes. The retrieval module's hashing embedder buckets
// character n-grams with it, so that its vectors are bit for bit those of Python's
// int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big") % dim.
//
// The digest size is part of the hash, not a truncation: the 8-byte digest is not the first 8 bytes
// of the 64-byte one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace g2c::rag {

/// The BLAKE2b digest of `data`, `digest_size` bytes long (1..64; std::invalid_argument otherwise).
/// Example: blake2b("abc") starts 0xBA 0x80 0xA5 0x3F, blake2b("", 8) starts 0xE4 0xA6 0xA0 0x57.
std::vector<std::uint8_t> blake2b(std::string_view data, std::size_t digest_size = 64);

/// The 8-byte BLAKE2b digest of `data` read as a big-endian integer: Python's
/// int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big").
/// Example: blake2b_64_big_endian("") == 0xE4A6A0577479B2B4.
std::uint64_t blake2b_64_big_endian(std::string_view data);

}  // namespace g2c::rag
