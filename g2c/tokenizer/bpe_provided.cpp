// BPETokenizer: everything implemented for you (construction, special tokens, the initial split,
// the merge tables, the training loop, capped encodings). Your work is in bpe.cpp.
#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/tokenizer/bpe.h"
#include "g2c/tokenizer/internal.h"
#include "g2c/tokenizer/utf8.h"

namespace g2c::tokenizer {
namespace {

std::string pair_text(Pair pair) {
  return fmt::format("({}, {})", pair.left, pair.right);
}

}  // namespace

// --- Small types --------------------------------------------------------------------------------

std::ostream& operator<<(std::ostream& out, const Pair& pair) {
  return out << '(' << pair.left << ", " << pair.right << ')';
}

PairCounts::PairCounts(std::initializer_list<PairCount> entries) {
  for (const PairCount& entry : entries) add(entry.pair, entry.count);
}

void PairCounts::add(Pair pair, std::int64_t n) {
  const auto [it, inserted] = index_.try_emplace(pair, entries_.size());
  if (inserted) {
    entries_.push_back({pair, n});
  } else {
    entries_[it->second].count += n;
  }
}

std::int64_t PairCounts::count(Pair pair) const {
  const auto it = index_.find(pair);
  return it == index_.end() ? 0 : entries_[it->second].count;
}

std::ostream& operator<<(std::ostream& out, const PairCounts& counts) {
  out << '{';
  bool first = true;
  for (const PairCount& entry : counts) {
    out << (first ? "" : ", ") << entry.pair << ": " << entry.count;
    first = false;
  }
  return out << '}';
}

std::ostream& operator<<(std::ostream& out, const TrainStep& step) {
  out << "{[";
  for (std::size_t i = 0; i < step.ids.size(); ++i) out << (i ? ", " : "") << step.ids[i];
  return out << "], " << step.pair << ", " << step.count << '}';
}

const std::vector<std::string>& course_special_tokens() {
  static const std::vector<std::string> tokens = {
      "<|endoftext|>", "<|system|>",      "<|user|>", "<|assistant|>",
      "<|tool_call|>", "<|tool_result|>", "<|end|>",  "<|pad|>"};
  return tokens;
}

// --- Construction -------------------------------------------------------------------------------

BPETokenizer::BPETokenizer(std::vector<std::string> special_tokens)
    : special_tokens_(std::move(special_tokens)) {
  vocab_.reserve(256 + special_tokens_.size());
  for (int byte = 0; byte < 256; ++byte) vocab_.emplace_back(1, static_cast<char>(byte));
  for (const std::string& token : special_tokens_) {
    if (token.empty()) throw ValueError("special tokens must be non-empty strings; got \"\"");
    if (!is_valid_utf8(token)) {
      throw ValueError(fmt::format("special token {} is not valid UTF-8 text",
                                   python_repr(to_valid_utf8(token))));
    }
    const auto id = static_cast<TokenId>(vocab_.size());
    if (!special_to_id_.emplace(token, id).second) {
      throw ValueError(fmt::format("special tokens must be unique; \"{}\" is listed twice", token));
    }
    special_ids_.insert(id);
    vocab_.push_back(token);
  }
}

BPETokenizer BPETokenizer::with_course_special_tokens() {
  return BPETokenizer(course_special_tokens());
}

TokenId BPETokenizer::special_id(std::string_view token) const {
  const auto it = special_to_id_.find(std::string(token));
  if (it != special_to_id_.end()) return it->second;
  std::string known;
  for (const std::string& name : special_tokens_) known += (known.empty() ? "" : ", ") + name;
  throw ValueError(fmt::format("\"{}\" is not a special token of this tokenizer (it has: {})",
                               token, known.empty() ? "none" : known));
}

// --- Tables -------------------------------------------------------------------------------------

void BPETokenizer::add_merge(Pair pair, TokenId new_id) {
  if (new_id != vocab_.size()) {
    throw ValueError(fmt::format(
        "merge {} -> {}: new ids must be consecutive, and the next free id is {} (vocab_size())",
        pair_text(pair), new_id, vocab_.size()));
  }
  for (const TokenId parent : {pair.left, pair.right}) {
    if (parent >= vocab_.size()) {
      throw ValueError(fmt::format("merge {} -> {}: id {} is not in the vocabulary (size {})",
                                   pair_text(pair), new_id, parent, vocab_.size()));
    }
    if (is_special(parent)) {
      throw ValueError(fmt::format(
          "merge {} -> {}: id {} is the special token \"{}\"; special tokens never merge",
          pair_text(pair), new_id, parent, vocab_[parent]));
    }
  }
  const auto [it, inserted] = merges_.try_emplace(pair, new_id);
  if (!inserted) {
    throw ValueError(fmt::format("merge {} -> {}: that pair already merges into {}",
                                 pair_text(pair), new_id, it->second));
  }
  merge_order_.push_back({pair, new_id});
  vocab_.push_back(vocab_[pair.left] + vocab_[pair.right]);
}

const std::string& BPETokenizer::token_bytes(TokenId id) const {
  if (id >= vocab_.size()) {
    throw ValueError(
        fmt::format("token id {} is not in the vocabulary (ids run 0..{})", id, vocab_.size() - 1));
  }
  return vocab_[id];
}

std::string BPETokenizer::token_text(TokenId id) const {
  return to_valid_utf8(token_bytes(id));
}

std::optional<TokenId> BPETokenizer::merge_id(Pair pair) const {
  const auto it = merges_.find(pair);
  if (it == merges_.end()) return std::nullopt;
  return it->second;
}

// --- Encoding -----------------------------------------------------------------------------------

Ids BPETokenizer::encode_base(std::string_view text) const {
  Ids ids;
  ids.reserve(text.size());
  if (special_tokens_.empty()) {
    for (const char c : text) ids.push_back(static_cast<unsigned char>(c));
    return ids;
  }
  // Longest first, so that a token that is a prefix of another never shadows it.
  std::vector<std::pair<std::string_view, TokenId>> specials;
  bool starts[256] = {};
  for (const std::string& token : special_tokens_) {
    specials.emplace_back(token, special_to_id_.at(token));
    starts[static_cast<unsigned char>(token[0])] = true;
  }
  std::stable_sort(specials.begin(), specials.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    bool matched = false;
    if (starts[byte]) {
      const std::string_view rest = text.substr(pos);
      for (const auto& [token, id] : specials) {
        if (rest.starts_with(token)) {
          ids.push_back(id);
          pos += token.size();
          matched = true;
          break;
        }
      }
    }
    if (!matched) {
      ids.push_back(byte);
      ++pos;
    }
  }
  return ids;
}

Ids BPETokenizer::encode_fast(std::string_view text) const {
  return internal::encode_capped(*this, text, vocab_size());
}

std::size_t BPETokenizer::effective_vocab_size(std::optional<std::size_t> vocab_size) const {
  if (!vocab_size) return this->vocab_size();
  if (*vocab_size == 0) return base_vocab_size();
  if (*vocab_size < base_vocab_size() || *vocab_size > trained_vocab_size()) {
    throw ValueError(fmt::format(
        "vocab_size {} is outside what this tokenizer can encode with: {} (bytes and special "
        "tokens only) to {} (every merge); 0 means {} and none means {}",
        *vocab_size, base_vocab_size(), trained_vocab_size(), base_vocab_size(),
        this->vocab_size()));
  }
  return *vocab_size;
}

Ids BPETokenizer::encode_at_vocab(std::string_view text, std::size_t vocab_size) const {
  if (vocab_size < base_vocab_size()) {
    throw ValueError(fmt::format(
        "encode_at_vocab: vocab_size {} is below the special-token base vocabulary size {} (256 "
        "bytes + {} special tokens)",
        vocab_size, base_vocab_size(), special_tokens_.size()));
  }
  if (vocab_size > trained_vocab_size()) {
    throw ValueError(fmt::format(
        "encode_at_vocab: vocab_size {} is above the trained vocabulary size {}; train further or "
        "ask for at most {}",
        vocab_size, trained_vocab_size(), trained_vocab_size()));
  }
  return internal::encode_capped(*this, text, vocab_size);
}

Ids BPETokenizer::encode_with_vocab_size(std::string_view text,
                                         std::optional<std::size_t> vocab_size) const {
  return encode_at_vocab(text, effective_vocab_size(vocab_size));
}

// --- Training -----------------------------------------------------------------------------------

void BPETokenizer::check_train_arguments(std::size_t vocab_size, std::size_t progress_every) const {
  if (vocab_size < 256) {
    throw ValueError(
        fmt::format("vocab_size must be at least 256 (one id per byte); got {}", vocab_size));
  }
  if (vocab_size < base_vocab_size()) {
    throw ValueError(fmt::format(
        "vocab_size {} is below the special-token base vocabulary size {} (256 bytes + {} special "
        "tokens)",
        vocab_size, base_vocab_size(), special_tokens_.size()));
  }
  if (progress_every < 1) throw ValueError("progress_every must be at least 1; got 0");
}

void BPETokenizer::note_training_target(std::size_t vocab_size) {
  trained_target_ = std::max(trained_target_, vocab_size);
}

Ids BPETokenizer::initial_training_ids(std::string_view text, bool fast) const {
  if (merges_.empty()) return encode_base(text);
  return fast ? encode_fast(text) : encode(text);
}

void BPETokenizer::train(std::string_view text, std::size_t vocab_size,
                         const ProgressCallback& progress, std::size_t progress_every) {
  check_train_arguments(vocab_size, progress_every);
  note_training_target(vocab_size);
  if (this->vocab_size() >= vocab_size) {
    // Nothing to learn; the done report still says how long the text is.
    const std::size_t tokens = progress ? encode_fast(text).size() : 0;
    internal::TrainReporter(*this, vocab_size, progress, progress_every, tokens).finish(tokens);
    return;
  }
  Ids ids = initial_training_ids(text, /*fast=*/false);
  internal::TrainReporter reporter(*this, vocab_size, progress, progress_every, ids.size());
  while (this->vocab_size() < vocab_size) {
    const std::size_t before = this->vocab_size();
    std::optional<TrainStep> step = train_step(ids, static_cast<TokenId>(before));
    if (!step) break;
    if (this->vocab_size() != before + 1) {
      throw std::logic_error(fmt::format(
          "train_step merged {} but the vocabulary did not grow by one (it has {} entries, "
          "expected {}): record the merge with add_merge(pair, new_id)",
          pair_text(step->pair), this->vocab_size(), before + 1));
    }
    ids = std::move(step->ids);
    reporter.step(step->pair, step->count, ids.size());
  }
  reporter.finish(ids.size());
}

namespace internal {

TrainReporter::TrainReporter(const BPETokenizer& tokenizer, std::size_t target_vocab_size,
                             const ProgressCallback& callback, std::size_t every,
                             std::size_t tokens)
    : tokenizer_(tokenizer),
      target_(target_vocab_size),
      callback_(callback),
      every_(every),
      tokens_(tokens) {}

void TrainReporter::step(Pair pair, std::int64_t count, std::size_t tokens) {
  ++steps_;
  last_pair_ = pair;
  last_count_ = count;
  tokens_ = tokens;
  const bool reached = tokenizer_.vocab_size() >= target_;
  if (steps_ % every_ == 0 || reached) report(reached);
}

void TrainReporter::finish(std::size_t tokens) {
  tokens_ = tokens;
  if (!reported_done_) report(true);
}

void TrainReporter::report(bool done) {
  if (done) reported_done_ = true;
  if (!callback_) return;
  TrainProgress record;
  record.vocab_size = tokenizer_.vocab_size();
  record.target_vocab_size = target_;
  record.merges = tokenizer_.merges().size();
  record.target_merges = target_ - std::min(target_, tokenizer_.base_vocab_size());
  record.steps = steps_;
  record.tokens = tokens_;
  record.last_pair = last_pair_;
  record.last_merge_count = last_count_;
  if (last_pair_) {
    const auto id = static_cast<TokenId>(tokenizer_.vocab_size() - 1);
    record.last_token_id = id;
    record.last_token_bytes = tokenizer_.vocab()[id];
    record.last_token_text = to_valid_utf8(*record.last_token_bytes);
    record.last_token_repr = python_repr(*record.last_token_text);
  }
  record.elapsed_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  record.done = done;
  callback_(record);
}

}  // namespace internal
}  // namespace g2c::tokenizer
