// SHA-256 (FIPS 180-4) of bytes or of a file, as lowercase hex: what result files record to say
// exactly which data a run read (a corpus file, a source file taken from an installed package).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace g2c {

/// Example: sha256_hex("abc") ==
/// "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".
std::string sha256_hex(std::string_view bytes);

/// The SHA-256 of a file's bytes. ValueError when it cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace g2c
