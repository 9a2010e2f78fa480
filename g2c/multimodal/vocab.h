// Beyond module multimodal — a caption vocabulary of 19 ids, independent of module 04.
//
// What is under study is how an image enters the token stream, not how text is tokenized, so the
// captions ("This is a 7 .") use a fixed word-level vocabulary: five structural ids (padding, the
// image's boundaries, the patch placeholder, the end of a caption) and fourteen words.
//
//   id  0 <pad>   1 <img>   2 <image_patch>   3 </img>   4 <end>
//       5 This    6 is      7 a               8 .        9..18 the digits 0..9
//
// Provided code.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace g2c::multimodal {

inline constexpr std::array<std::string_view, 19> CAPTION_TOKENS = {
    "<pad>",  "<img>", "<image_patch>",
    "</img>", "<end>", "This",
    "is",     "a",     ".",
    "0",      "1",     "2",
    "3",      "4",     "5",
    "6",      "7",     "8",
    "9"};

inline constexpr std::int64_t PAD_ID = 0;
inline constexpr std::int64_t IMAGE_START_ID = 1;
inline constexpr std::int64_t IMAGE_PATCH_ID = 2;  // the placeholder a patch vector replaces
inline constexpr std::int64_t IMAGE_END_ID = 3;
inline constexpr std::int64_t END_ID = 4;
inline constexpr std::int64_t FIRST_DIGIT_ID = 9;  // the id of "0"; "d" is FIRST_DIGIT_ID + d
inline constexpr std::int64_t VOCAB_SIZE = static_cast<std::int64_t>(CAPTION_TOKENS.size());

/// The ids of "This is a <digit> . <end>" (six ids). ValueError for a digit outside 0..9.
std::vector<std::int64_t> caption_ids(std::int64_t digit);

/// The words of the ids joined by single spaces; an id outside the vocabulary as "<i?>".
/// Example: decode_ids(caption_ids(7)) == "This is a 7 . <end>".
std::string decode_ids(const std::vector<std::int64_t>& ids);

/// The digit an id stands for, or -1 when it is not a digit's id.
std::int64_t digit_of(std::int64_t id);

}  // namespace g2c::multimodal
