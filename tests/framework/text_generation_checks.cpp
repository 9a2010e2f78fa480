// Module 11 framework tests for the text layer of g2c-generate and 10_sample: streamed text
// against the tokenizer's decode, the UTF-8 boundary rule against hand-made cases, the readable
// mask against the byte ranges it must cover, suppressed tokens under sampling, long cached
// generation against generate() and against a restart written out, and the artifact errors.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/sampling/text_generation.h"
#include "g2c/tokenizer/utf8.h"
#include "one_thread.h"
#include "torch_test.h"

using g2c::sampling::complete_utf8_prefix;
using g2c::sampling::generate;
using g2c::sampling::generate_cached;
using g2c::sampling::generate_long_cached;
using g2c::sampling::GenerateOptions;
using g2c::sampling::SuppressTokens;
using g2c::sampling::TextStream;
using g2c::tokenizer::BPETokenizer;
using g2c::tokenizer::TextTokenizer;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

// Two- three- and four-byte characters, so that merges and single bytes both cut characters.
constexpr const char* kText =
    "Thé quick brøwn fox — jumps over the lazy dög. ✓ Ünïcödé: 日本語のテキスト, emoji 🎭🎭 "
    "and Ελληνικά. Thé quick brøwn fox again, 日本語 again, 🎭 again.\n";

TextTokenizer tokenizer_at(std::size_t vocab_size) {
  auto bpe = std::make_shared<BPETokenizer>(BPETokenizer::with_course_special_tokens());
  std::string corpus;
  for (int i = 0; i < 20; ++i) corpus += kText;
  bpe->train_fast(corpus, 330);
  return TextTokenizer::from_bpe(bpe, vocab_size, "test BPE");
}

std::vector<std::int64_t> to_vector(const torch::Tensor& ids) {
  const auto flat = ids.to(torch::kCPU, torch::kLong).contiguous();
  return {flat.data_ptr<std::int64_t>(), flat.data_ptr<std::int64_t>() + flat.numel()};
}

TransformerLM make_model(std::uint64_t seed, std::int64_t max_seq_len, std::int64_t vocab = 12) {
  torch::manual_seed(seed);
  return TransformerLM(TransformerLMOptions(vocab, /*embedding_dim=*/16, /*num_layers=*/2,
                                            /*num_heads=*/4, max_seq_len));
}

at::Generator seeded(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

}  // namespace

TEST_CASE("complete_utf8_prefix_holds_back_only_a_cut_character", "[sampling]") {
  CHECK(complete_utf8_prefix("") == 0);
  CHECK(complete_utf8_prefix("abc") == 3);
  CHECK(complete_utf8_prefix("a\xC3") == 1);             // é cut after its lead byte
  CHECK(complete_utf8_prefix("a\xC3\xA9") == 3);         // é complete
  CHECK(complete_utf8_prefix("a\xE2\x9C") == 1);         // ✓ cut after two of three bytes
  CHECK(complete_utf8_prefix("a\xE2\x9C\x93") == 4);     // ✓ complete
  CHECK(complete_utf8_prefix("\xF0\x9F\x8E") == 0);      // 🎭 cut after three of four bytes
  CHECK(complete_utf8_prefix("\xF0\x9F\x8E\xAD") == 4);  // 🎭 complete
  CHECK(complete_utf8_prefix("a\x80\x80") == 3);         // stray continuations: nothing to wait for
}

TEST_CASE("utf8_stream_returns_whole_characters_and_holds_back_a_cut_one", "[sampling]") {
  g2c::tokenizer::Utf8Stream stream;
  CHECK(stream.push("a\xC3") == "a");                // é's lead byte held back
  CHECK(stream.push("\xA9\xE2\x9C") == "\xC3\xA9");  // é complete, ✓ cut
  CHECK(stream.push("\x93!") == "\xE2\x9C\x93!");
  CHECK(stream.push("\xF0\x9F") == "");
  CHECK(stream.finish() == g2c::tokenizer::kReplacementCharacter);  // 🎭 never completed
  CHECK(stream.finish().empty());
  CHECK(stream.push("\x80x") == std::string(g2c::tokenizer::kReplacementCharacter) + "x");
}

TEST_CASE("streamed_text_concatenates_to_the_decoded_ids", "[sampling]") {
  // Vocab 264 splits every multi-byte character into bytes; 330 merges some of them.
  for (const std::size_t vocab : {264, 330}) {
    const auto tokenizer = tokenizer_at(vocab);
    const auto ids = tokenizer.encode(kText);
    TextStream stream(tokenizer);
    std::string streamed;
    std::size_t held_back = 0;
    for (const auto id : ids) {
      const auto piece = stream.push(id);
      INFO("vocab " << vocab << ": every piece is valid UTF-8 on its own");
      CHECK(g2c::tokenizer::is_valid_utf8(piece));
      if (piece.empty()) ++held_back;
      streamed += piece;
    }
    streamed += stream.finish();
    INFO("vocab " << vocab << ": " << ids.size() << " tokens, " << held_back << " held back");
    CHECK(held_back > 0);
    CHECK(streamed == tokenizer.decode(ids));
    CHECK(streamed == kText);
  }
  INFO("a character cut off at the end prints as U+FFFD, like decode");
  const auto tokenizer = tokenizer_at(264);
  TextStream stream(tokenizer);
  CHECK(stream.push(0xE2).empty());
  CHECK(stream.finish() == g2c::tokenizer::kReplacementCharacter);
}

TEST_CASE("terminal_text_shows_control_characters_instead_of_obeying_them", "[sampling]") {
  using g2c::sampling::for_terminal;
  CHECK(for_terminal("a\x07"
                     "b") == "a\u2407b");                 // BEL -> ␇
  CHECK(for_terminal("\x1b[31mred") == "\u241b[31mred");  // ESC -> ␛: no colour change
  CHECK(for_terminal("x\x7fy") == "x\u2421y");            // DEL -> ␡
  INFO("newline, tab and multi-byte characters pass unchanged");
  CHECK(for_terminal("line\n\tcafé ☕") == "line\n\tcafé ☕");
  std::string all_controls;
  for (int c = 0; c < 0x20; ++c) all_controls += static_cast<char>(c);
  const auto shown = for_terminal(all_controls);
  INFO("no byte below 0x20 but newline and tab survives");
  for (const char c : shown) {
    const auto byte = static_cast<unsigned char>(c);
    CHECK((byte >= 0x20 || c == '\n' || c == '\t'));
  }
  CHECK(g2c::tokenizer::to_valid_utf8(shown) == shown);  // still valid UTF-8
}

TEST_CASE("unreadable_ids_are_specials_controls_and_pieces_of_characters", "[sampling]") {
  const auto tokenizer = tokenizer_at(264);
  const auto ids = g2c::sampling::unreadable_token_ids(tokenizer);
  std::set<std::int64_t> expected;
  for (std::int64_t byte = 0x00; byte < 0x20; ++byte) {
    if (byte != '\n' && byte != '\t') expected.insert(byte);
  }
  expected.insert(0x7F);
  for (std::int64_t byte = 0x80; byte <= 0xFF; ++byte) expected.insert(byte);
  for (std::int64_t special = 256; special < 264; ++special) expected.insert(special);
  CHECK(std::set<std::int64_t>(ids.begin(), ids.end()) == expected);
  CHECK(ids.size() == expected.size());  // 30 + 1 + 128 + 8

  // Merged tokens: readable when their bytes are whole characters.
  const auto merged = tokenizer_at(330);
  const auto merged_ids = g2c::sampling::unreadable_token_ids(merged);
  const std::set<std::int64_t> unreadable(merged_ids.begin(), merged_ids.end());
  for (std::int64_t id = 264; id < merged.size(); ++id) {
    const auto bytes = merged.bpe()->token_bytes(static_cast<g2c::tokenizer::TokenId>(id));
    INFO("token " << id << " "
                  << g2c::tokenizer::python_repr(g2c::tokenizer::to_valid_utf8(bytes)));
    CHECK(unreadable.count(id) == (g2c::tokenizer::is_valid_utf8(bytes) ? 0u : 1u));
  }
}

TEST_CASE("suppressed_tokens_are_never_drawn_and_the_bias_comes_back", "[sampling]") {
  auto model = make_model(7, /*max_seq_len=*/64, /*vocab=*/12);
  const auto before = model->head_bias.detach().clone();
  const std::vector<std::int64_t> suppressed = {0, 2, 3, 5, 7, 8, 11};
  std::vector<std::int64_t> drawn;
  {
    const SuppressTokens mask(*model, suppressed);
    // Hot sampling and greedy, with every warper: none of them may bring a masked id back.
    for (const auto& options : {GenerateOptions().temperature(3.0),
                                GenerateOptions().temperature(1.5).top_p(0.99).top_k(11),
                                GenerateOptions().temperature(0.0),
                                GenerateOptions().temperature(1.0).repetition_penalty(5.0)}) {
      auto seeded_options = options;
      seeded_options.generator(seeded(3));
      const auto ids =
          to_vector(generate_cached(model, torch::tensor({1}, torch::kLong), 60, seeded_options));
      drawn.insert(drawn.end(), ids.begin() + 1, ids.end());
    }
  }
  for (const auto id : drawn) {
    INFO("drawn id " << id);
    CHECK(std::find(suppressed.begin(), suppressed.end(), id) == suppressed.end());
  }
  INFO("the unmasked ids all appear, so the mask did not block more than asked");
  CHECK(std::set<std::int64_t>(drawn.begin(), drawn.end()) ==
        std::set<std::int64_t>{1, 4, 6, 9, 10});
  INFO("after the mask, the model's output bias is what it was");
  CHECK(torch::equal(model->head_bias, before));
}

TEST_CASE("long_cached_generation_equals_generate_until_the_cache_restarts", "[sampling]") {
  constexpr std::int64_t kMaxSeqLen = 16;
  auto model = make_model(11, kMaxSeqLen);
  const auto prompt = torch::tensor({3, 1, 4, 1}, torch::kLong);
  const auto greedy = GenerateOptions().temperature(0.0);

  // Within the context: exactly generate()'s tokens, sampled ones included.
  auto first = GenerateOptions().temperature(1.0).generator(seeded(5));
  auto second = GenerateOptions().temperature(1.0).generator(seeded(5));
  std::vector<std::int64_t> seen;
  const auto short_run =
      generate_long_cached(*model, prompt, 12, first, [&](std::int64_t id) { seen.push_back(id); });
  CHECK(short_run.cache_restarts == 0);
  CHECK(short_run.new_tokens == 12);
  CHECK(torch::equal(short_run.ids, generate(model, prompt, 12, second)));
  INFO("on_token saw each new id once, in order");
  const auto short_ids = to_vector(short_run.ids);
  CHECK(seen == std::vector<std::int64_t>(short_ids.begin() + 4, short_ids.end()));

  // Past the context: 40 new tokens; after 12 the cache restarts from the last 8 tokens, which
  // greedy decoding from those 8 tokens written out must reproduce.
  const auto long_run = generate_long_cached(*model, prompt, 40, greedy);
  const auto ids = to_vector(long_run.ids);
  REQUIRE(ids.size() == 44);
  CHECK(long_run.new_tokens == 40);
  CHECK(long_run.cache_restarts == 4);  // segments of 12, 8, 8, 8, 4 tokens
  const auto uncached = to_vector(generate(model, prompt, 12, greedy));
  CHECK(std::vector<std::int64_t>(ids.begin(), ids.begin() + 16) == uncached);
  const auto window =
      torch::tensor(std::vector<std::int64_t>(ids.begin() + 8, ids.begin() + 16), torch::kLong);
  const auto restarted = to_vector(generate_cached(model, window, 8, greedy));
  CHECK(std::vector<std::int64_t>(ids.begin() + 8, ids.begin() + 24) == restarted);

  INFO("a prompt longer than the context starts from its last max_seq_len / 2 tokens");
  const auto long_prompt = torch::arange(20, torch::kLong) % 12;
  const auto from_long = to_vector(generate_long_cached(*model, long_prompt, 5, greedy).ids);
  const auto expected = to_vector(generate_cached(model, long_prompt.narrow(0, 12, 8), 5, greedy));
  CHECK(std::vector<std::int64_t>(from_long.begin() + 12, from_long.end()) == expected);
}

TEST_CASE("long_cached_generation_stops_right_after_eos", "[sampling]") {
  auto model = make_model(5, /*max_seq_len=*/8);
  const auto prompt = torch::tensor({1, 2, 3}, torch::kLong);
  const auto greedy = GenerateOptions().temperature(0.0);
  const auto free_run = to_vector(generate_long_cached(*model, prompt, 30, greedy).ids);
  const auto eos = free_run[10];  // a token after the first restart
  auto with_eos = greedy;
  with_eos.eos_id(eos);
  const auto stopped = generate_long_cached(*model, prompt, 30, with_eos);
  const auto first = std::find(free_run.begin() + 3, free_run.end(), eos);
  CHECK(to_vector(stopped.ids) == std::vector<std::int64_t>(free_run.begin(), first + 1));
  CHECK(stopped.new_tokens == (first - free_run.begin()) - 2);
}

TEST_CASE("a_model_trained_on_characters_names_no_tokenizer_to_generate_with", "[sampling]") {
  const auto root = std::filesystem::temp_directory_path() /
                    ("g2c_text_generation_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  g2c::pretraining::ModelArtifactInfo info;
  info.name = "CharacterModel";
  info.tokenizer_artifact = "";  // what 10_pretrain records without the BPE artifact
  auto model = make_model(0, 8);
  const auto folder = g2c::pretraining::save_model_artifact(info, model, root / "CharacterModel");
  CHECK_THROWS_WITH(g2c::sampling::load_text_model(folder.string()),
                    Catch::Contains("names no tokenizer artifact"));
  info.tokenizer_artifact = "NoSuchTokenizer";
  g2c::pretraining::save_model_artifact(info, model, folder);
  CHECK_THROWS_AS(g2c::sampling::load_text_model(folder.string()), g2c::ValueError);
  std::filesystem::remove_all(root);
}
