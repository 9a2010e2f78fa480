// tokenizer.json: the g2c.bpe format shared with the Python edition; merges imported from
// external lists.
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/tokenizer/bpe.h"

namespace g2c::tokenizer {
namespace {

constexpr std::string_view kFormat = "g2c.bpe";
constexpr int kVersion = 2;

std::string describe_json(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// A JSON integer that fits a token id, else a ValueError naming the merge.
TokenId merge_field(const nlohmann::json& value, std::size_t index, std::string_view where) {
  if (!value.is_number_integer() || value.is_boolean()) {
    throw ValueError(fmt::format("{}: merge #{} must be [a, b, new_id] with integer ids; found {}",
                                 where, index, describe_json(value)));
  }
  const auto number = value.get<std::int64_t>();
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() > std::numeric_limits<TokenId>::max()) {
    throw ValueError(fmt::format("{}: merge #{} has the id {}, which is not a valid token id",
                                 where, index, value.get<std::uint64_t>()));
  }
  if (number < 0 || number >= std::numeric_limits<TokenId>::max()) {
    throw ValueError(fmt::format("{}: merge #{} has the id {}, which is not a valid token id",
                                 where, index, number));
  }
  return static_cast<TokenId>(number);
}

// Checks every field of a parsed tokenizer.json and builds the tokenizer it describes.
BPETokenizer tokenizer_from_payload(const nlohmann::json& payload, std::string_view where) {
  if (!payload.is_object()) {
    throw ValueError(
        fmt::format("{} must hold a JSON object, found {}", where, describe_json(payload)));
  }
  const auto format = payload.find("format");
  if (format == payload.end() || !format->is_string() || format->get<std::string>() != kFormat) {
    throw ValueError(
        fmt::format("{} is not a g2c BPE tokenizer: \"format\" is {}, expected \"{}\"", where,
                    format == payload.end() ? "missing" : describe_json(*format), kFormat));
  }
  const auto version = payload.find("version");
  if (version == payload.end() || !version->is_number_integer() ||
      (version->get<std::int64_t>() != 1 && version->get<std::int64_t>() != 2)) {
    throw ValueError(fmt::format(
        "{}: unsupported g2c BPE tokenizer version {} (this edition reads versions 1 and 2)", where,
        version == payload.end() ? "(missing)" : describe_json(*version)));
  }

  std::vector<std::string> special_tokens;
  const auto specials = payload.find("special_tokens");
  if (specials != payload.end() && !specials->is_null()) {
    if (!specials->is_array()) {
      throw ValueError(fmt::format("{}: \"special_tokens\" must be a list of strings, found {}",
                                   where, describe_json(*specials)));
    }
    for (const auto& token : *specials) {
      if (!token.is_string()) {
        throw ValueError(fmt::format("{}: \"special_tokens\" must be a list of strings, found {}",
                                     where, describe_json(token)));
      }
      special_tokens.push_back(token.get<std::string>());
    }
  }
  BPETokenizer tokenizer = [&] {
    try {
      return BPETokenizer(std::move(special_tokens));
    } catch (const ValueError& error) {
      throw ValueError(fmt::format("{}: {}", where, error.what()));
    }
  }();

  const auto merges = payload.find("merges");
  if (merges == payload.end() || !merges->is_array()) {
    throw ValueError(fmt::format("{}: \"merges\" must be a list of [a, b, new_id], found {}", where,
                                 merges == payload.end() ? "nothing" : describe_json(*merges)));
  }
  for (std::size_t index = 0; index < merges->size(); ++index) {
    const nlohmann::json& merge = (*merges)[index];
    if (!merge.is_array() || merge.size() != 3) {
      throw ValueError(fmt::format("{}: merge #{} must be [a, b, new_id], found {}", where, index,
                                   describe_json(merge)));
    }
    const TokenId left = merge_field(merge[0], index, where);
    const TokenId right = merge_field(merge[1], index, where);
    const TokenId id = merge_field(merge[2], index, where);
    const std::size_t expected = tokenizer.vocab_size();
    if (id != expected) {
      throw ValueError(fmt::format(
          "{}: merge #{} {} gives id {}, but merge ids must run consecutively from the base "
          "vocabulary size {}; expected {}",
          where, index, describe_json(merge), id, tokenizer.base_vocab_size(), expected));
    }
    for (const TokenId parent : {left, right}) {
      if (parent >= id) {
        throw ValueError(
            fmt::format("{}: merge #{} {} uses the unknown id {} (parents must already exist, i.e. "
                        "be below {})",
                        where, index, describe_json(merge), parent, id));
      }
    }
    try {
      tokenizer.add_merge({left, right}, id);
    } catch (const ValueError& error) {
      throw ValueError(fmt::format("{}: merge #{}: {}", where, index, error.what()));
    }
  }
  return tokenizer;
}

}  // namespace

nlohmann::ordered_json BPETokenizer::to_json() const {
  nlohmann::ordered_json merges = nlohmann::ordered_json::array();
  for (const Merge& merge : merge_order_) {
    merges.push_back({merge.pair.left, merge.pair.right, merge.id});
  }
  nlohmann::ordered_json payload;
  payload["format"] = kFormat;
  payload["version"] = kVersion;
  payload["special_tokens"] = special_tokens_;
  payload["merges"] = std::move(merges);
  return payload;
}

BPETokenizer BPETokenizer::from_json(const nlohmann::json& payload) {
  return tokenizer_from_payload(payload, "tokenizer payload");
}

BPETokenizer BPETokenizer::from_json_text(std::string_view text, std::string_view where) {
  nlohmann::json payload;
  try {
    payload = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw ValueError(fmt::format("{} is not valid JSON ({})", where, error.what()));
  }
  return tokenizer_from_payload(payload, where);
}
void BPETokenizer::save(const std::filesystem::path& path) const {
  // ensure_ascii, as Python's json.dumps does: the files are byte-identical across editions.
  write_file_atomic(path, to_json().dump(2, ' ', /*ensure_ascii=*/true) + "\n");
}

BPETokenizer BPETokenizer::load(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path)) {
    throw ValueError(fmt::format("tokenizer file not found: {}", path.string()));
  }
  return from_json_text(read_file(path), path.string());
}

}  // namespace g2c::tokenizer

namespace g2c::tokenizer {

void BPETokenizer::import_merges(const std::vector<std::pair<std::string, std::string>>& merges) {
  // The bytes of every token a merge may use: the 256 bytes, the learned merges, then each merge
  // of the list as it resolves (special tokens are never parts of a merge).
  std::unordered_map<std::string, TokenId> id_of;
  for (TokenId id = 0; id < vocab_.size(); ++id) {
    if (!is_special(id)) id_of.emplace(vocab_[id], id);
  }
  // Resolve on a copy, so that a list refused halfway leaves this tokenizer as it was.
  BPETokenizer result = *this;
  std::vector<std::size_t> waiting(merges.size());
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const auto& [left, right] = merges[i];
    if (left.empty() || right.empty()) {
      throw ValueError(
          fmt::format("import_merges: merge #{} has an empty part; each part is the "
                      "bytes of an existing token",
                      i));
    }
    waiting[i] = i;
  }
  // Each pass adds, in list order, every waiting merge whose parts now exist; a pass that adds
  // nothing leaves only merges that can never resolve.
  while (!waiting.empty()) {
    std::vector<std::size_t> still_waiting;
    for (const std::size_t i : waiting) {
      const auto& [left, right] = merges[i];
      const auto a = id_of.find(left), b = id_of.find(right);
      if (a == id_of.end() || b == id_of.end()) {
        still_waiting.push_back(i);
        continue;
      }
      const auto id = static_cast<TokenId>(result.vocab_size());
      try {
        result.add_merge({a->second, b->second}, id);
      } catch (const ValueError& error) {
        throw ValueError(fmt::format("import_merges: merge #{} (\"{}\", \"{}\"): {}", i, left,
                                     right, error.what()));
      }
      id_of.emplace(left + right, id);
    }
    if (still_waiting.size() == waiting.size()) {
      const auto& [left, right] = merges[waiting.front()];
      throw ValueError(
          fmt::format("import_merges: merge #{} (\"{}\", \"{}\") uses a token that is neither a "
                      "byte, nor a merge "
                      "this tokenizer has, nor one the list creates ({} merges cannot be resolved)",
                      waiting.front(), left, right, waiting.size()));
    }
    waiting = std::move(still_waiting);
  }
  *this = std::move(result);
}

}  // namespace g2c::tokenizer
