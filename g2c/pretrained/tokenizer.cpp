#include "g2c/pretrained/tokenizer.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <queue>
#include <utility>

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::pretrained {

namespace {

// Pieces longer than this are merged every time: they are rare, and caching them would let one
// long text fill the memory.
constexpr std::size_t kMaxCachedPieceBytes = 64;
constexpr std::size_t kMaxCachedPieces = std::size_t{1} << 18;

// GPT-2's byte alphabet: the printable bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') are their own code
// point, the 68 others get U+0100, U+0101, ... in byte order.
std::array<char32_t, 256> byte_code_points() {
  std::array<char32_t, 256> table{};
  char32_t next = 0x100;
  for (int byte = 0; byte < 256; ++byte) {
    const bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
                           (byte >= 0xAE && byte <= 0xFF);
    table[byte] = printable ? static_cast<char32_t>(byte) : next++;
  }
  return table;
}

const std::array<char32_t, 256>& byte_alphabet() {
  static const std::array<char32_t, 256> table = byte_code_points();
  return table;
}

// The byte a code point of the alphabet stands for, nullopt for a code point outside it.
std::optional<std::uint8_t> alphabet_byte(char32_t code_point) {
  static const auto inverse = [] {
    std::array<int, 0x144> table;
    table.fill(-1);
    for (int byte = 0; byte < 256; ++byte) table[byte_alphabet()[byte]] = byte;
    return table;
  }();
  if (code_point >= inverse.size() || inverse[code_point] < 0) return std::nullopt;
  return static_cast<std::uint8_t>(inverse[code_point]);
}

// The bytes a normal token stands for: each of its characters mapped back through the alphabet.
// Example: "Ġthe" -> " the". nullopt when a character is not in the alphabet.
std::optional<std::string> token_bytes(std::string_view token) {
  std::string bytes;
  for (std::size_t pos = 0; pos < token.size();) {
    const Utf8Char c = utf8_char_at(token, pos);
    const auto byte = c.valid ? alphabet_byte(c.code_point) : std::nullopt;
    if (!byte) return std::nullopt;
    bytes += static_cast<char>(*byte);
    pos += c.length;
  }
  return bytes;
}

std::uint64_t pair_key(std::int64_t left, std::int64_t right) {
  return (static_cast<std::uint64_t>(left) << 32) | static_cast<std::uint64_t>(right);
}

PreTokenizer pre_tokenizer_named(const std::string& name) {
  if (name == "smollm") return PreTokenizer::kSmolLM;
  if (name == "gpt2") return PreTokenizer::kGPT2;
  throw ValueError(fmt::format(
      "pre-tokenizer (tokenizer.ggml.pre): expected 'smollm' or 'gpt2', the two this tokenizer "
      "implements, found '{}'",
      name));
}

}  // namespace

// The merged ids of pieces already seen, so that the words of a text are merged once each.
struct PretrainedTokenizer::PieceCache {
  std::mutex mutex;
  StringMap<std::vector<std::int64_t>> ids;
};

std::string byte_token_text(std::uint8_t byte) {
  const char32_t c = byte_alphabet()[byte];  // below U+0800: one or two UTF-8 bytes
  if (c < 0x80) return std::string(1, static_cast<char>(c));
  return {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
}

PretrainedTokenizer::PretrainedTokenizer(TokenizerTables tables)
    : tokens_(std::move(tables.tokens)),
      bos_id_(tables.bos_id),
      eos_id_(tables.eos_id),
      chat_template_(std::move(tables.chat_template)),
      cache_(std::make_shared<PieceCache>()) {
  if (tables.model != "gpt2")
    throw ValueError(fmt::format(
        "tokenizer model (tokenizer.ggml.model): expected 'gpt2' (byte-level BPE), found '{}'",
        tables.model));
  pre_ = pre_tokenizer_named(tables.pre);
  if (tokens_.empty() || tokens_.size() > std::numeric_limits<std::int32_t>::max())
    throw ValueError(
        fmt::format("expected between 1 and 2^31 - 1 tokens, found {}", tokens_.size()));
  if (tables.token_types.size() != tokens_.size())
    throw ValueError(fmt::format("tokenizer.ggml.token_type has {} entries for {} tokens",
                                 tables.token_types.size(), tokens_.size()));
  for (std::size_t id = 0; id < tokens_.size(); ++id) {
    const std::string& token = tokens_[id];
    const auto [at, inserted] = ids_.emplace(token, static_cast<std::int64_t>(id));
    if (!inserted)
      throw ValueError(fmt::format("tokens {} and {} are both '{}'", at->second, id, token));
    const auto type = static_cast<TokenType>(tables.token_types[id]);
    special_.push_back(type == TokenType::kControl || type == TokenType::kUserDefined);
    if (type != TokenType::kNormal) {
      bytes_.push_back(token);  // control and other tokens decode to their text as written
      continue;
    }
    auto bytes = token_bytes(token);
    if (!bytes || bytes->empty())
      throw ValueError(fmt::format(
          "token {} '{}' is a normal token but not a string of GPT-2's byte alphabet", id, token));
    bytes_.push_back(std::move(*bytes));
  }
  for (int byte = 0; byte < 256; ++byte) {
    const auto it = ids_.find(byte_token_text(static_cast<std::uint8_t>(byte)));
    byte_ids_[byte] =
        (it != ids_.end() && !special_[it->second]) ? static_cast<std::int32_t>(it->second) : -1;
  }
  add_merges(tables.merges);
  for (const auto& [name, id] : {std::pair{"bos", bos_id_}, std::pair{"eos", eos_id_}})
    if (id < 0 || id >= vocab_size())
      throw ValueError(
          fmt::format("tokenizer.ggml.{}_token_id: expected an id in [0, {}), found {}", name,
                      vocab_size(), id));
  for (std::int64_t id = 0; id < vocab_size(); ++id) {
    if (!special_[id] || tokens_[id].empty()) continue;
    specials_.push_back(id);
    special_first_byte_[static_cast<unsigned char>(tokens_[id][0])] = true;
  }
  std::stable_sort(specials_.begin(), specials_.end(), [&](std::int64_t a, std::int64_t b) {
    return tokens_[a].size() > tokens_[b].size();
  });
}

void PretrainedTokenizer::add_merges(const std::vector<std::string>& merges) {
  const auto id_of_part = [&](std::size_t rank, std::string_view part, const char* role) {
    const auto it = ids_.find(part);
    if (it == ids_.end())
      throw ValueError(fmt::format("merge {} '{}' {} '{}', which is not a token", rank,
                                   merges[rank], role, part));
    return it->second;
  };
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string_view merge = merges[rank];
    const std::size_t space = merge.find(' ');
    if (space == 0 || space == std::string_view::npos || space + 1 == merge.size() ||
        merge.find(' ', space + 1) != std::string_view::npos)
      throw ValueError(fmt::format(
          "merge {} '{}': expected two tokens separated by one space (\"Ġ t\")", rank, merge));
    const std::int64_t left = id_of_part(rank, merge.substr(0, space), "names");
    const std::int64_t right = id_of_part(rank, merge.substr(space + 1), "names");
    const std::string joined =
        std::string(merge.substr(0, space)) + std::string(merge.substr(space + 1));
    const std::int64_t merged = id_of_part(rank, joined, "makes");
    // A pair listed twice keeps its first, lowest rank, as Hugging Face's table does.
    merges_.emplace(pair_key(left, right),
                    Merge{static_cast<std::int32_t>(rank), static_cast<std::int32_t>(merged)});
  }
}

PretrainedTokenizer PretrainedTokenizer::from_gguf(const GGUFFile& file) {
  TokenizerTables tables;
  tables.model = file.string("tokenizer.ggml.model");
  tables.pre = file.string("tokenizer.ggml.pre");
  tables.tokens = file.strings("tokenizer.ggml.tokens");
  tables.token_types = file.integers("tokenizer.ggml.token_type");
  tables.merges = file.strings("tokenizer.ggml.merges");
  tables.bos_id = file.integer("tokenizer.ggml.bos_token_id");
  tables.eos_id = file.integer("tokenizer.ggml.eos_token_id");
  if (file.has("tokenizer.chat_template"))
    tables.chat_template = file.string("tokenizer.chat_template");
  try {
    return PretrainedTokenizer(std::move(tables));
  } catch (const ValueError& error) {
    throw ValueError(fmt::format("{}: {}", file.path().string(), error.what()));
  }
}

std::vector<std::int64_t> PretrainedTokenizer::encode(std::string_view text) const {
  std::vector<std::int64_t> ids;
  std::size_t start = 0;  // the text from here to pos has no special token in it
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (!special_first_byte_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    const std::string_view rest = text.substr(pos);
    const auto special = std::find_if(specials_.begin(), specials_.end(), [&](std::int64_t id) {
      return rest.starts_with(tokens_[id]);
    });
    if (special == specials_.end()) {
      ++pos;
      continue;
    }
    encode_ordinary(text.substr(start, pos - start), ids);
    ids.push_back(*special);
    pos += tokens_[*special].size();
    start = pos;
  }
  encode_ordinary(text.substr(start), ids);
  return ids;
}

void PretrainedTokenizer::encode_ordinary(std::string_view text,
                                          std::vector<std::int64_t>& ids) const {
  for (const std::string_view piece : pre_tokenize(text, pre_)) {
    {
      const std::lock_guard lock(cache_->mutex);
      const auto cached = cache_->ids.find(piece);
      if (cached != cache_->ids.end()) {
        ids.insert(ids.end(), cached->second.begin(), cached->second.end());
        continue;
      }
    }
    std::vector<std::int64_t> merged = merge_piece(piece);
    ids.insert(ids.end(), merged.begin(), merged.end());
    if (piece.size() > kMaxCachedPieceBytes) continue;
    const std::lock_guard lock(cache_->mutex);
    if (cache_->ids.size() < kMaxCachedPieces) cache_->ids.emplace(piece, std::move(merged));
  }
}

// BPE on one piece: its bytes' tokens, then the merge of lowest rank wherever it occurs, left to
// right, until no adjacent pair has a merge. The tokens are a linked list (merging two is O(1)) and
// the candidate pairs a queue ordered by (rank, position); a queued pair that a merge beside it
// has changed is skipped when it comes out. Example, with merges "a b" (rank 0) and "b c" (1):
// "abc" -> [a, b, c] -> [ab, c]; with "b c" at rank 0 it is [a, bc].
std::vector<std::int64_t> PretrainedTokenizer::merge_piece(std::string_view piece) const {
  struct Symbol {
    std::int32_t id;  // -1 once merged into the symbol on its left
    std::int32_t prev;
    std::int32_t next;  // -1 at the ends
  };
  std::vector<Symbol> symbols;
  for (const char c : piece) {
    const std::int32_t id = byte_ids_[static_cast<unsigned char>(c)];
    if (id < 0) continue;  // a byte the vocabulary has no token for: dropped, as Hugging Face does
    const auto at = static_cast<std::int32_t>(symbols.size());
    symbols.push_back({id, at - 1, at + 1});
  }
  if (symbols.empty()) return {};
  symbols.back().next = -1;

  using Candidate = std::pair<std::int32_t, std::int32_t>;  // (rank, position of the left symbol)
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto merge_at = [&](std::int32_t pos) -> const Merge* {
    if (pos < 0 || symbols[pos].next < 0) return nullptr;
    const auto it = merges_.find(pair_key(symbols[pos].id, symbols[symbols[pos].next].id));
    return it == merges_.end() ? nullptr : &it->second;
  };
  const auto consider = [&](std::int32_t pos) {
    if (const Merge* merge = merge_at(pos)) queue.push({merge->rank, pos});
  };
  for (std::int32_t pos = 0; pos + 1 < static_cast<std::int32_t>(symbols.size()); ++pos)
    consider(pos);

  while (!queue.empty()) {
    const auto [rank, pos] = queue.top();
    queue.pop();
    if (symbols[pos].id < 0) continue;  // merged away since it was queued
    const Merge* merge = merge_at(pos);
    if (merge == nullptr || merge->rank != rank) continue;  // its pair has changed
    Symbol& left = symbols[pos];
    Symbol& right = symbols[left.next];
    left.id = merge->id;
    right.id = -1;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = pos;
    consider(left.prev);
    consider(pos);
  }
  std::vector<std::int64_t> ids;
  for (std::int32_t pos = 0; pos >= 0; pos = symbols[pos].next) ids.push_back(symbols[pos].id);
  return ids;
}

std::string PretrainedTokenizer::decode(const std::vector<std::int64_t>& ids) const {
  std::string text;
  for (const std::int64_t id : ids) {
    check_id(id);
    text += bytes_[id];
  }
  return text;
}

std::string PretrainedTokenizer::format_chat(const std::vector<ChatMessage>& messages,
                                             bool add_generation_prompt) const {
  return ChatMLTemplate::parse(chat_template_).format(messages, add_generation_prompt);
}

void PretrainedTokenizer::check_id(std::int64_t id) const {
  if (id < 0 || id >= vocab_size())
    throw ValueError(fmt::format("token id {}: expected an id in [0, {}) (the vocabulary's size)",
                                 id, vocab_size()));
}

const std::string& PretrainedTokenizer::token_text(std::int64_t id) const {
  check_id(id);
  return tokens_[id];
}

std::int64_t PretrainedTokenizer::id_of(std::string_view token) const {
  const auto it = ids_.find(token);
  if (it == ids_.end())
    throw ValueError(
        fmt::format("no token '{}' in the vocabulary of {} tokens", token, vocab_size()));
  return it->second;
}

bool PretrainedTokenizer::is_special(std::int64_t id) const {
  check_id(id);
  return special_[id];
}

}  // namespace g2c::pretrained
