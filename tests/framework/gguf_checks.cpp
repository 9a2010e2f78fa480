// Framework tests of the GGUF reader (g2c/pretrained/gguf.h) on small files written here, byte by
// byte from the format's definition: every metadata type, tensor infos and alignment, a refusal for
// every truncation and corruption, and the dequantization of one block of each type against values
// computed by hand. scripts/check_gguf.py holds the reader to the `gguf` Python package on every
// tensor of the real SmolLM2 file.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "g2c/core/errors.h"
#include "g2c/pretrained/gguf.h"
#include "gguf_writer.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using g2c::pretrained::GGUFFile;
using g2c::pretrained::TensorType;
using g2c::testing::Bytes;
using g2c::testing::open_bytes;

namespace {

// One Q4_1 block: d = 0.5, m = -1, code j in the low nibble of byte j, 15 - j in the high one.
std::vector<std::uint8_t> q4_1_block() {
  Bytes block;
  block.put<std::uint16_t>(0x3800).put<std::uint16_t>(0xBC00);  // float16 0.5 and -1
  for (int j = 0; j < 16; ++j)
    block.put<std::uint8_t>(static_cast<std::uint8_t>(j | ((15 - j) << 4)));
  return block.data;
}

// A file with one metadata entry of every type, general.alignment 64 and two tensors: an F32
// vector of 4 and a (2, 32) Q4_1 matrix (two blocks).
std::vector<std::uint8_t> sample_file(std::uint32_t second_tensor_type = 3) {
  Bytes f;
  f.put<std::uint32_t>(0x46554747)
      .put<std::uint32_t>(3)
      .put<std::uint64_t>(2)
      .put<std::uint64_t>(16);
  f.key("u8", 0).put<std::uint8_t>(200);
  f.key("i8", 1).put<std::int8_t>(-100);
  f.key("u16", 2).put<std::uint16_t>(60000);
  f.key("i16", 3).put<std::int16_t>(-30000);
  f.key("u32", 4).put<std::uint32_t>(4000000000u);
  f.key("i32", 5).put<std::int32_t>(-2000000000);
  f.key("f32", 6).put<float>(1e-5f);
  f.key("bool", 7).put<std::uint8_t>(1);
  f.key("general.architecture", 8).string("llama");
  f.key("strings", 9)
      .put<std::uint32_t>(8)
      .put<std::uint64_t>(3)
      .string("a")
      .string("")
      .string("Ġt he");
  f.key("u64", 10).put<std::uint64_t>(1ull << 40);
  f.key("i64", 11).put<std::int64_t>(-(1ll << 40));
  f.key("f64", 12).put<double>(0.1);
  f.key("ints", 9)
      .put<std::uint32_t>(5)
      .put<std::uint64_t>(3)
      .put<std::int32_t>(3)
      .put<std::int32_t>(-1)
      .put<std::int32_t>(7);
  f.key("nested", 9).put<std::uint32_t>(9).put<std::uint64_t>(2);
  f.put<std::uint32_t>(4).put<std::uint64_t>(1).put<std::uint32_t>(7);
  f.put<std::uint32_t>(8).put<std::uint64_t>(1).string("x");
  f.key("general.alignment", 4).put<std::uint32_t>(64);
  // Tensor infos: name, dims (fastest first), type, offset from the data section.
  f.string("vector")
      .put<std::uint32_t>(1)
      .put<std::uint64_t>(4)
      .put<std::uint32_t>(0)
      .put<std::uint64_t>(0);
  f.string("matrix").put<std::uint32_t>(2).put<std::uint64_t>(32).put<std::uint64_t>(2);
  f.put<std::uint32_t>(second_tensor_type).put<std::uint64_t>(64);
  f.pad_to(64);
  for (float v : {1.5f, -2.0f, 0.0f, 3.25f}) f.put<float>(v);
  f.pad_to(64);
  for (int b = 0; b < 2; ++b) {
    const auto block = q4_1_block();
    f.data.insert(f.data.end(), block.begin(), block.end());
  }
  // Another type's blocks may be longer: the data must still fit in the file.
  if (second_tensor_type != 3) f.data.resize(f.data.size() + 64, 0);
  return f.data;
}

}  // namespace

TEST_CASE("gguf_reads_every_metadata_type_and_the_tensor_infos", "[pretrained]") {
  const GGUFFile file = open_bytes(sample_file(), "sample");
  CHECK(file.version() == 3);
  CHECK(file.alignment() == 64);
  CHECK(file.integer("u8") == 200);
  CHECK(file.integer("i8") == -100);
  CHECK(file.integer("u16") == 60000);
  CHECK(file.integer("i16") == -30000);
  CHECK(file.integer("u32") == 4000000000ll);
  CHECK(file.integer("i32") == -2000000000);
  CHECK(file.real("f32") == static_cast<double>(1e-5f));
  CHECK(file.boolean("bool"));
  CHECK(file.string("general.architecture") == "llama");
  CHECK(file.strings("strings") == std::vector<std::string>{"a", "", "Ġt he"});
  CHECK(file.integer("u64") == (1ll << 40));
  CHECK(file.integer("i64") == -(1ll << 40));
  CHECK(file.real("f64") == 0.1);
  CHECK(file.integers("ints") == std::vector<std::int64_t>{3, -1, 7});
  CHECK(file.value("nested").type == g2c::pretrained::GGUFType::kArray);
  CHECK_THROWS_WITH(file.string("u8"), Contains("'u8' is a uint8, not a string"));
  CHECK_THROWS_WITH(file.integer("missing"), Contains("no metadata key 'missing'"));

  REQUIRE(file.tensors().size() == 2);
  const auto& vector = file.tensor("vector");
  CHECK(vector.shape() == std::vector<std::int64_t>{4});
  CHECK(g2c::pretrained::dequantize(file, vector) == std::vector<float>{1.5f, -2.0f, 0.0f, 3.25f});
  const auto& matrix = file.tensor("matrix");
  CHECK(matrix.type == TensorType::kQ4_1);
  CHECK(matrix.shape() == std::vector<std::int64_t>{2, 32});  // the file's dims {32, 2} reversed
  CHECK(matrix.bytes == 40);
  CHECK_THROWS_WITH(file.tensor("output.weight"), Contains("no tensor 'output.weight'"));
}

TEST_CASE("gguf_refuses_every_truncation_with_a_value_error", "[pretrained]") {
  // Cut after every byte: each prefix is refused with a message, never read past its end.
  const auto bytes = sample_file();
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const std::vector<std::uint8_t> prefix(bytes.begin(), bytes.begin() + size);
    INFO("the file cut to " << size << " of " << bytes.size() << " bytes");
    CHECK_THROWS_AS(open_bytes(prefix, "truncated"), g2c::ValueError);
  }
}

TEST_CASE("gguf_refuses_a_corrupt_file_naming_what_is_wrong", "[pretrained]") {
  auto bytes = sample_file();
  auto wrong_magic = bytes;
  wrong_magic[0] = 'X';
  CHECK_THROWS_WITH(open_bytes(wrong_magic, "magic"), Contains("not a GGUF file"));
  auto version_2 = bytes;
  version_2[4] = 2;
  CHECK_THROWS_WITH(open_bytes(version_2, "version"), Contains("GGUF version 2"));
  CHECK_THROWS_WITH(open_bytes(sample_file(77), "type"),
                    Contains("tensor 'matrix' has ggml type 77"));
  auto huge_count = bytes;
  huge_count[8] = 0xff;  // tensor count 255 + 2
  CHECK_THROWS_AS(open_bytes(huge_count, "count"), g2c::ValueError);
  // A dimension of 2^63: the tensor's size must not overflow into something that fits.
  const std::string vector_name = "vector";
  auto huge_dim = bytes;
  const auto named =
      std::search(huge_dim.begin(), huge_dim.end(), vector_name.begin(), vector_name.end());
  REQUIRE(named != huge_dim.end());
  *(named + 6 + 4 + 7) = 0x80;  // after the name: the u32 dimension count, then the u64's top byte
  CHECK_THROWS_WITH(open_bytes(huge_dim, "dim"), Contains("a tensor dimension"));
  auto bad_bool = bytes;
  const std::string bool_key = "bool";
  const auto at = std::search(bad_bool.begin(), bad_bool.end(), bool_key.begin(), bool_key.end());
  REQUIRE(at != bad_bool.end());
  *(at + 4 + 4) = 2;  // after the key: the u32 type, then the value byte
  CHECK_THROWS_WITH(open_bytes(bad_bool, "bool"), Contains("a bool of value 2"));
  CHECK_THROWS_WITH(GGUFFile::open(fs::temp_directory_path() / "g2c_gguf_absent.gguf"),
                    Contains("cannot open GGUF file"));
}

TEST_CASE("dequantize_refuses_a_type_it_does_not_implement", "[pretrained]") {
  // Q5_0's blocks are 22 bytes of 32 values: the file is readable, its data is not dequantized.
  const GGUFFile file = open_bytes(sample_file(6), "q5_0");
  CHECK_THROWS_WITH(g2c::pretrained::dequantize(file, file.tensor("matrix")),
                    Contains("tensor 'matrix' is Q5_0"));
}

TEST_CASE("half_to_float_matches_the_compiler_on_all_65536_halves", "[pretrained]") {
  int mismatches = 0;
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    const auto half = static_cast<std::uint16_t>(bits);
    const float ours = g2c::pretrained::half_to_float(half);
    const float oracle = static_cast<float>(std::bit_cast<_Float16>(half));
    const bool same = std::isnan(oracle) ? std::isnan(ours)
                                         : std::bit_cast<std::uint32_t>(ours) ==
                                               std::bit_cast<std::uint32_t>(oracle);
    if (!same && ++mismatches <= 5)
      UNSCOPED_INFO("half 0x" << std::hex << bits << std::dec << ": " << ours << " vs " << oracle);
  }
  CHECK(mismatches == 0);
}

TEST_CASE("q4_1_block_is_code_times_d_plus_m_low_nibbles_first", "[pretrained]") {
  const auto block = q4_1_block();
  float out[32];
  g2c::pretrained::dequantize_q4_1_block(block.data(), out);
  for (int j = 0; j < 16; ++j) {
    INFO("value " << j << " and " << j + 16);
    CHECK(out[j] == static_cast<float>(j) * 0.5f - 1.0f);
    CHECK(out[j + 16] == static_cast<float>(15 - j) * 0.5f - 1.0f);
  }
}
