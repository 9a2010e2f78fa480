#include "exercises/common/corpus.h"

#include <fmt/format.h>

#include "exercises/common/course_tokenizer.h"
#include "exercises/common/data.h"
#include "g2c/core/errors.h"

namespace g2c::exercises {

std::string Corpus::decode(const std::vector<std::int64_t>& ids) const {
  if (tokenizer) return tokenizer->decode(ids);
  std::string text;
  for (const auto id : ids) text += std::to_string(id) + " ";
  return text;
}

std::string Corpus::token_label(std::int64_t id) const {
  return tokenizer ? tokenizer->token_label(id) : std::to_string(id);
}

std::vector<std::int64_t> Corpus::val_prefix(std::int64_t count) const {
  if (count < 0 || count > val.numel()) {
    throw ValueError(
        fmt::format("asked for the first {} validation ids of {}", count, val.numel()));
  }
  const auto head = val.narrow(/*dim=*/0, /*start=*/0, count).contiguous();
  return {head.data_ptr<std::int64_t>(), head.data_ptr<std::int64_t>() + count};
}

std::string Corpus::description() const {
  return tokenizer_json.value("description", fmt::format("vocabulary {}", vocab_size));
}

Corpus split_corpus(const torch::Tensor& ids) {
  const std::int64_t n = ids.numel();
  const std::int64_t train_size = n * 9 / 10;
  Corpus corpus;
  corpus.train = ids.narrow(/*dim=*/0, /*start=*/0, train_size);
  corpus.val = ids.narrow(/*dim=*/0, /*start=*/train_size, n - train_size);
  return corpus;
}

Corpus tinyshakespeare_corpus(const std::string& level, std::size_t bpe_vocab, bool prefer_g2c) {
  const std::string text = load_tinyshakespeare();
  auto tokenizer = std::make_shared<const g2c::tokenizer::TextTokenizer>(
      course_tokenizer(level, text, bpe_vocab, prefer_g2c));
  Corpus corpus = split_corpus(torch::tensor(tokenizer->encode(text), torch::kLong));
  corpus.vocab_size = tokenizer->size();
  corpus.source = "tinyshakespeare";
  corpus.tokenizer_json = tokenizer_json(*tokenizer);
  corpus.tokenizer = std::move(tokenizer);
  return corpus;
}

Corpus random_corpus(std::int64_t vocab_size, std::int64_t tokens, std::uint64_t seed) {
  if (vocab_size < 1 || tokens < 4) {
    throw ValueError(
        fmt::format("a random corpus needs vocab_size >= 1 and tokens >= 4, got {} "
                    "and {}",
                    vocab_size, tokens));
  }
  auto train_generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto val_generator = at::make_generator<at::CPUGeneratorImpl>(seed + 1);
  Corpus corpus;
  corpus.train = torch::randint(vocab_size, {tokens}, train_generator, torch::kLong);
  corpus.val = torch::randint(vocab_size, {tokens / 4}, val_generator, torch::kLong);
  corpus.vocab_size = vocab_size;
  corpus.source = "random";
  corpus.tokenizer_json = {{"kind", "random"},
                           {"description", fmt::format("uniform random ids ({})", vocab_size)},
                           {"vocab_size", vocab_size}};
  return corpus;
}

}  // namespace g2c::exercises
