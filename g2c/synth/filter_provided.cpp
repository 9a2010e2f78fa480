// Module 16B, provided: the pair's JSON form, the shape gates and the words they compare.
#include <cctype>

#include <fmt/format.h>

#include "g2c/core/strip.h"
#include "g2c/synth/filter.h"

namespace g2c::synth {

namespace {

std::string lowered(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

void to_json(nlohmann::json& json, const InstructionPair& pair) {
  json = {{"user", pair.user}, {"assistant", pair.assistant}};
}

void from_json(const nlohmann::json& json, InstructionPair& pair) {
  pair.user = json.at("user").get<std::string>();
  pair.assistant = json.at("assistant").get<std::string>();
}

std::vector<std::string> casefolded_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!word.empty()) words.push_back(std::exchange(word, std::string()));
    } else {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

std::vector<std::string> validate_pair(const nlohmann::json& pair, std::size_t max_chars) {
  if (!pair.is_object()) return {"not an object"};
  std::vector<std::string> reasons;
  for (const auto* key : {"user", "assistant"}) {
    if (!pair.contains(key) || !pair[key].is_string() ||
        strip(pair[key].get<std::string>()).empty()) {
      reasons.push_back(fmt::format("missing or empty \"{}\"", key));
    }
  }
  if (!reasons.empty()) return reasons;

  const auto user = strip(pair["user"].get<std::string>());
  const auto assistant = strip(pair["assistant"].get<std::string>());
  const std::pair<const char*, const std::string*> sides[] = {{"user", &user},
                                                              {"assistant", &assistant}};
  for (const auto& [key, text] : sides) {
    if (text->size() > max_chars) {
      reasons.push_back(fmt::format("\"{}\" longer than {} characters", key, max_chars));
    }
  }
  if (lowered(user) == lowered(assistant))
    reasons.push_back("the assistant echoes the instruction");
  for (const auto& [key, text] : sides) {
    const auto words = casefolded_words(*text);
    for (std::size_t i = 0; i + 2 < words.size(); ++i) {
      if (words[i] == words[i + 1] && words[i] == words[i + 2]) {
        reasons.push_back(fmt::format("\"{}\" stutters \"{}\"", key, words[i]));
        break;
      }
    }
  }
  return reasons;
}

std::vector<std::string> validate_pair(const InstructionPair& pair, std::size_t max_chars) {
  return validate_pair(nlohmann::json(pair), max_chars);
}

}  // namespace g2c::synth
