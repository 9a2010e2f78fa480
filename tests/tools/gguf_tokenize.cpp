// The C++ half of scripts/check_pretrained_tokenizer.py: SmolLM2's tokenizer, read from its GGUF
// file with g2c/pretrained/tokenizer.h, answering requests given as JSON lines on stdin with one
// JSON line each on stdout, in order:
//
//   {"encode": "What is 13 + 28?"}              -> {"ids": [1780, 314, ...], "seconds": 0.0001}
//   {"decode": [1780, 314]}                     -> {"text": "What is"}
//   {"chat": [{"role": "user", "content": "Hi"}], "add_generation_prompt": true}
//                                               -> {"text": "<|im_start|>system\n...", "ids":
//                                               [...]}
//   {"pieces": "x  12"}                         -> {"pieces": ["x", "  ", "1", "2"]}
//   {"classes": [first, last]}                  -> {"classes": "LLN S-..."}  (one per code point:
//                                                  L letter, N number, S space, - none, D split
//                                                  as a digit only; surrogates are "-")
//
// A request it cannot answer gets {"error": "..."}; text that is not UTF-8 comes back with each bad
// byte replaced by U+FFFD.
//   gguf_tokenize FILE.gguf < requests.jsonl > answers.jsonl
#include <chrono>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "g2c/core/errors.h"
#include "g2c/pretrained/tokenizer.h"

namespace {

using g2c::pretrained::CharClass;
using nlohmann::json;

std::string utf8(char32_t c) {
  if (c < 0x80) return std::string(1, static_cast<char>(c));
  if (c < 0x800) return {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
  if (c < 0x10000)
    return {static_cast<char>(0xE0 | (c >> 12)), static_cast<char>(0x80 | ((c >> 6) & 0x3F)),
            static_cast<char>(0x80 | (c & 0x3F))};
  return {static_cast<char>(0xF0 | (c >> 18)), static_cast<char>(0x80 | ((c >> 12) & 0x3F)),
          static_cast<char>(0x80 | ((c >> 6) & 0x3F)), static_cast<char>(0x80 | (c & 0x3F))};
}

// The class letter of each code point in [first, last]; "D" marks a number the digit split isolates
// that the pattern gives no class (found by cutting ".<c>.": three pieces only if it is split).
std::string classes(char32_t first, char32_t last) {
  std::string letters;
  for (char32_t c = first; c <= last; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) {
      letters += '-';
      continue;
    }
    switch (g2c::pretrained::char_class(c)) {
      case CharClass::kLetter:
        letters += 'L';
        break;
      case CharClass::kNumber:
        letters += 'N';
        break;
      case CharClass::kSpace:
        letters += 'S';
        break;
      case CharClass::kNone: {
        const std::string probe = "." + utf8(c) + ".";
        letters +=
            g2c::pretrained::pre_tokenize(probe, g2c::pretrained::PreTokenizer::kSmolLM).size() == 3
                ? 'D'
                : '-';
      }
    }
  }
  return letters;
}

json answer(const g2c::pretrained::PretrainedTokenizer& tokenizer, const json& request) {
  if (request.contains("encode")) {
    const auto text = request["encode"].get<std::string>();
    const auto start = std::chrono::steady_clock::now();
    const auto ids = tokenizer.encode(text);
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    return {{"ids", ids}, {"seconds", seconds.count()}};
  }
  if (request.contains("decode"))
    return {{"text", tokenizer.decode(request["decode"].get<std::vector<std::int64_t>>())}};
  if (request.contains("chat")) {
    std::vector<g2c::pretrained::ChatMessage> messages;
    for (const auto& message : request["chat"])
      messages.push_back(
          {message.at("role").get<std::string>(), message.at("content").get<std::string>()});
    const auto text =
        tokenizer.format_chat(messages, request.value("add_generation_prompt", false));
    return {{"text", text}, {"ids", tokenizer.encode(text)}};
  }
  if (request.contains("pieces")) {
    json pieces = json::array();
    // The views point into `text`, which must outlive the loop (a temporary in the range
    // expression would not).
    const auto text = request["pieces"].get<std::string>();
    for (const auto piece :
         g2c::pretrained::pre_tokenize(text, g2c::pretrained::PreTokenizer::kSmolLM))
      pieces.push_back(std::string(piece));
    return {{"pieces", pieces}};
  }
  if (request.contains("classes"))
    return {{"classes", classes(request["classes"].at(0).get<char32_t>(),
                                request["classes"].at(1).get<char32_t>())}};
  return {{"error", "expected a request with one of encode, decode, chat, pieces, classes"}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gguf_tokenize FILE.gguf < requests.jsonl > answers.jsonl\n";
    return 2;
  }
  try {
    const auto file = g2c::pretrained::GGUFFile::open(argv[1]);
    const auto tokenizer = g2c::pretrained::PretrainedTokenizer::from_gguf(file);
    std::string line;
    while (std::getline(std::cin, line)) {
      json reply;
      try {
        reply = answer(tokenizer, json::parse(line));
      } catch (const std::exception& error) {  // a bad request: say so and go on
        reply = {{"error", error.what()}};
      }
      std::cout << reply.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
    }
  } catch (const g2c::ValueError& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 2;
  }
  return 0;
}
