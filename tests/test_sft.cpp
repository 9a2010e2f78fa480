// Module 13 course tests: supervised fine-tuning, one for one with the Python edition's
// tests/test_sft.py. Tests tagged [clean] pass on the scaffold.
//
// Suggested order: ChatTemplate::render (chat_template_render_*), ChatTemplate::render_with_mask
// (render_with_mask_*), pad_and_collate (pad_and_collate_*), masked_cross_entropy
// (masked_cross_entropy_*) — four independent pieces; the mask tests use a made-up tokenizer with
// one id per character, so they need nothing from module 04 — then SFTTrainer::train_step
// (sft_trainer_*), which runs a tiny TransformerLM (V 128, D 8, L 1, H 2, max_seq_len 16) and so
// also needs modules 03–10 written (or `-DG2C_SOLUTIONS=03-10`).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "g2c/core/errors.h"
#include "g2c/nn/device.h"
#include "g2c/nn/optim.h"
#include "g2c/pretraining/loss.h"
#include "g2c/sft/sft.h"
#include "g2c/training/clip.h"
#include "g2c/training/schedule.h"
#include "g2c/transformer/transformer_lm.h"
#include "one_thread.h"
#include "recipe_check.h"
#include "torch_test.h"

using g2c::pretraining::lm_cross_entropy;
using g2c::sft::ChatTemplate;
using g2c::sft::masked_cross_entropy;
using g2c::sft::Message;
using g2c::sft::pad_and_collate;
using g2c::sft::SFTExample;
using g2c::sft::SFTTrainer;
using g2c::sft::SFTTrainerOptions;
using g2c::testing::with_recipe;
using g2c::training::cosine_with_warmup;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;
using Ids = std::vector<std::int64_t>;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

/// One id per character (its byte value), so the mask tests need no BPE: the boundaries come
/// from the template, not from the tokenizer.
class FakeTokenizer : public g2c::sft::TokenEncoder {
 public:
  Ids encode(std::string_view text) const override {
    Ids ids;
    for (const unsigned char c : text) ids.push_back(c);
    return ids;
  }
};

/// A tokenizer whose plain encoding would not fit a small model (ids from 10,000), and whose
/// capped encoding records the vocabulary size it was asked for.
class VocabCappedTokenizer : public g2c::sft::TokenEncoder {
 public:
  Ids encode(std::string_view text) const override {
    Ids ids;
    for (const unsigned char c : text) ids.push_back(c + 10'000);
    return ids;
  }
  Ids encode_with_vocab_size(std::string_view text, std::int64_t vocab_size) const override {
    caps_seen.push_back(vocab_size);
    Ids ids;
    for (const unsigned char c : text) ids.push_back(c % vocab_size);
    return ids;
  }
  mutable std::vector<std::int64_t> caps_seen;
};

std::size_t encoded_length(const FakeTokenizer& tok, const std::string& text) {
  return tok.encode(text).size();
}

std::string S(std::string_view view) {
  return std::string(view);
}

const std::vector<Message> kHiHello = {{"user", "Hi"}, {"assistant", "Hello"}};

Ids slice(const Ids& values, std::size_t begin, std::size_t end) {
  return Ids(values.begin() + static_cast<std::ptrdiff_t>(begin),
             values.begin() + static_cast<std::ptrdiff_t>(end));
}

Ids row(const torch::Tensor& t) {
  const auto values = t.to(torch::kLong).contiguous();
  return Ids(values.data_ptr<std::int64_t>(), values.data_ptr<std::int64_t>() + values.numel());
}

/// 1 layer, D 8, V 128 (the fake tokenizer's ASCII range), max_seq_len 16.
TransformerLM make_tiny_model() {
  return TransformerLM(TransformerLMOptions(/*vocab_size=*/128, /*embedding_dim=*/8,
                                            /*num_layers=*/1, /*num_heads=*/2,
                                            /*max_seq_len=*/16));
}

/// n examples of 8 random ids in [1, 128): 5 prompt tokens (mask 0), 3 reply tokens (mask 1).
std::vector<SFTExample> make_tiny_dataset(int n = 6) {
  std::vector<SFTExample> examples;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(0);
  for (int i = 0; i < n; ++i) {
    examples.push_back(
        {row(torch::randint(1, 128, {8}, generator, torch::kLong)), {0, 0, 0, 0, 0, 1, 1, 1}});
  }
  return examples;
}

/// The options of most trainer tests: max_seq_len 8, pad 0, batch 2.
SFTTrainerOptions tiny_options(std::int64_t max_steps, double max_lr) {
  return SFTTrainerOptions(/*max_seq_len=*/8, /*pad_id=*/0, /*batch_size=*/2, max_steps, max_lr);
}

}  // namespace

// --- ChatTemplate: the constants (provided) --------------------------------------------------

TEST_CASE("chat_template_constants_are_set", "[clean]") {
  CHECK(ChatTemplate::USER == "<|user|>");
  CHECK(ChatTemplate::ASSISTANT == "<|assistant|>");
  CHECK(ChatTemplate::END == "<|end|>");
}

TEST_CASE("chat_template_can_be_instantiated", "[clean]") {
  const ChatTemplate t;
  CHECK(t.USER == "<|user|>");
}

// --- ChatTemplate::render ----------------------------------------------------------------------

TEST_CASE("chat_template_render_single_pair") {
  INFO(
      "a user turn is <|user|>\\n + content + \\n; an assistant turn <|assistant|>\\n + content + "
      "<|end|>");
  CHECK(ChatTemplate().render(kHiHello) == "<|user|>\nHi\n<|assistant|>\nHello<|end|>");
}

TEST_CASE("chat_template_render_user_only_ends_with_newline") {
  INFO("a user turn ends with a newline: the next marker is tokenized as in training");
  CHECK(ChatTemplate().render({{"user", "Hi"}}) == "<|user|>\nHi\n");
}

TEST_CASE("chat_template_render_assistant_turn_no_trailing_newline") {
  const auto out = ChatTemplate().render(kHiHello);
  INFO("an assistant turn ends with <|end|>, the stop token, and nothing after it: got " << out);
  CHECK(out.ends_with("<|end|>"));
  CHECK_FALSE(out.ends_with("<|end|>\n"));
}

TEST_CASE("chat_template_render_multi_turn") {
  const auto out =
      ChatTemplate().render({{"user", "A"}, {"assistant", "B"}, {"user", "C"}, {"assistant", "D"}});
  INFO("turns are concatenated, nothing between them");
  CHECK(out ==
        "<|user|>\nA\n<|assistant|>\nB<|end|>"
        "<|user|>\nC\n<|assistant|>\nD<|end|>");
}

TEST_CASE("chat_template_render_empty_messages_raises") {
  INFO("no messages is a ValueError (call ChatTemplate::check_messages first)");
  CHECK_THROWS_AS(ChatTemplate().render({}), g2c::ValueError);
}

TEST_CASE("chat_template_render_unknown_role_raises") {
  INFO("a role other than user and assistant is a ValueError (ChatTemplate::check_messages)");
  CHECK_THROWS_AS(ChatTemplate().render({{"system", "..."}}), g2c::ValueError);
}

// --- ChatTemplate::render_with_mask -------------------------------------------------------------

TEST_CASE("render_with_mask_returns_sft_example") {
  const FakeTokenizer tok;
  const SFTExample ex = ChatTemplate().render_with_mask({{"user", "Hi"}, {"assistant", "Yo"}}, tok);
  CHECK_FALSE(ex.ids.empty());
}

TEST_CASE("render_with_mask_ids_and_mask_same_length") {
  const FakeTokenizer tok;
  const auto ex =
      ChatTemplate().render_with_mask({{"user", "Hello there"}, {"assistant", "Hi back"}}, tok);
  INFO("one mask entry per id");
  CHECK(ex.ids.size() == ex.mask.size());
}

TEST_CASE("render_with_mask_ids_match_render_string") {
  const ChatTemplate t;
  const FakeTokenizer tok;
  const auto ex = t.render_with_mask(kHiHello, tok);
  INFO(
      "the ids must be the tokens of render(messages): the mask describes the sequence the "
      "model sees");
  CHECK(ex.ids == tok.encode(t.render(kHiHello)));
}

TEST_CASE("render_with_mask_user_tokens_zero") {
  const ChatTemplate t;
  const FakeTokenizer tok;
  const auto ex = t.render_with_mask(kHiHello, tok);
  const auto user_len = encoded_length(tok, S(t.USER) + "\nHi\n");
  REQUIRE(ex.mask.size() >= user_len);
  INFO("every token of a user turn (marker, content, newline) has mask 0");
  CHECK(slice(ex.mask, 0, user_len) == Ids(user_len, 0));
}

TEST_CASE("render_with_mask_assistant_role_marker_zero") {
  const ChatTemplate t;
  const FakeTokenizer tok;
  const auto ex = t.render_with_mask(kHiHello, tok);
  const auto user_len = encoded_length(tok, S(t.USER) + "\nHi\n");
  const auto marker_len = encoded_length(tok, S(t.ASSISTANT) + "\n");
  REQUIRE(ex.mask.size() >= user_len + marker_len);
  INFO("the <|assistant|>\\n before a reply is prompt (mask 0): the model never writes it");
  CHECK(slice(ex.mask, user_len, user_len + marker_len) == Ids(marker_len, 0));
}

TEST_CASE("render_with_mask_assistant_content_one") {
  const ChatTemplate t;
  const FakeTokenizer tok;
  const auto ex = t.render_with_mask(kHiHello, tok);
  const auto response_len = encoded_length(tok, "Hello" + S(t.END));
  REQUIRE(ex.mask.size() >= response_len);
  INFO("every token of the reply, <|end|> included, has mask 1");
  CHECK(slice(ex.mask, ex.mask.size() - response_len, ex.mask.size()) == Ids(response_len, 1));
}

TEST_CASE("render_with_mask_end_token_position_is_masked_one") {
  const ChatTemplate t;
  const FakeTokenizer tok;
  const auto ex = t.render_with_mask({{"user", "X"}, {"assistant", "Y"}}, tok);
  const auto end_len = encoded_length(tok, S(t.END));
  REQUIRE(ex.mask.size() >= end_len);
  INFO("<|end|> is part of the reply (mask 1): without it the model never learns to stop");
  CHECK(slice(ex.mask, ex.mask.size() - end_len, ex.mask.size()) == Ids(end_len, 1));
}

TEST_CASE("render_with_mask_multi_turn_alternates") {
  const ChatTemplate t;
  const FakeTokenizer tok;
  const auto ex = t.render_with_mask(
      {{"user", "A"}, {"assistant", "B"}, {"user", "C"}, {"assistant", "D"}}, tok);
  const auto expected_ones =
      encoded_length(tok, "B" + S(t.END)) + encoded_length(tok, "D" + S(t.END));
  INFO("every assistant reply and its <|end|> is 1, everything else 0");
  CHECK(std::accumulate(ex.mask.begin(), ex.mask.end(), std::int64_t{0}) ==
        static_cast<std::int64_t>(expected_ones));
}

TEST_CASE("render_with_mask_can_cap_to_model_vocab_size") {
  const VocabCappedTokenizer tok;
  const auto ex = ChatTemplate().render_with_mask({{"user", "Hi"}, {"assistant", "Yo"}}, tok,
                                                  /*vocab_size=*/128);
  INFO(
      "with a vocab_size, every piece goes through encode_template_chunk(tokenizer, piece, "
      "vocab_size), which encodes at the model's vocabulary size");
  CHECK_FALSE(tok.caps_seen.empty());
  REQUIRE_FALSE(ex.ids.empty());
  CHECK(*std::max_element(ex.ids.begin(), ex.ids.end()) < 128);
  CHECK(ex.ids.size() == ex.mask.size());
}

// --- SFTExample (provided) --------------------------------------------------------------------

TEST_CASE("sft_example_is_named_tuple", "[clean]") {
  const SFTExample ex{{1, 2, 3}, {0, 1, 1}};
  CHECK(ex.ids == Ids{1, 2, 3});
  CHECK(ex.mask == Ids{0, 1, 1});
}

TEST_CASE("sft_example_iterable_unpack", "[clean]") {
  const SFTExample ex{{1, 2}, {0, 1}};
  const auto& [ids, mask] = ex;
  CHECK(ids == Ids{1, 2});
  CHECK(mask == Ids{0, 1});
}

// --- pad_and_collate ---------------------------------------------------------------------------

TEST_CASE("pad_and_collate_returns_three_tensors") {
  const auto [x, y, mask] = pad_and_collate({{{1, 2, 3, 4}, {0, 0, 1, 1}}}, 4, 0);
  CHECK(x.defined());
  CHECK(y.defined());
  CHECK(mask.defined());
}

TEST_CASE("pad_and_collate_shapes") {
  const auto [x, y, mask] =
      pad_and_collate({{{1, 2, 3, 4, 5}, {0, 0, 1, 1, 1}}, {{6, 7, 8}, {0, 1, 1}}}, 5, 0);
  INFO("all three are (B, max_seq_len - 1): the shift by one shortens the time axis by one");
  CHECK(x.sizes() == torch::IntArrayRef({2, 4}));
  CHECK(y.sizes() == torch::IntArrayRef({2, 4}));
  CHECK(mask.sizes() == torch::IntArrayRef({2, 4}));
}

TEST_CASE("pad_and_collate_dtypes") {
  const auto [x, y, mask] = pad_and_collate({{{1, 2, 3, 4}, {0, 0, 1, 1}}}, 4, 0);
  CHECK(x.scalar_type() == torch::kLong);
  CHECK(y.scalar_type() == torch::kLong);
  // The mask may be int64 or float: the loss casts it.
  CHECK((mask.scalar_type() == torch::kLong || mask.scalar_type() == torch::kFloat));
}

TEST_CASE("pad_and_collate_shifts_for_lm") {
  const auto [x, y, mask] = pad_and_collate({{{10, 11, 12, 13, 14}, {0, 0, 1, 1, 1}}}, 5, 0);
  INFO("x = ids[:-1], y = ids[1:]: y[b, t] is the token after x[b, t]");
  CHECK(row(x[0]) == Ids{10, 11, 12, 13});
  CHECK(row(y[0]) == Ids{11, 12, 13, 14});
}

TEST_CASE("pad_and_collate_loss_mask_aligned_with_y") {
  const auto [x, y, mask] = pad_and_collate({{{10, 11, 12, 13, 14}, {0, 0, 1, 1, 1}}}, 5, 0);
  INFO(
      "loss_mask is the mask shifted by one like y (mask[:, 1:]): it says whether each TARGET "
      "is a reply token; mask[:, :-1] would train the model to predict the prompt");
  CHECK(row(mask[0]) == Ids{0, 1, 1, 1});
}

TEST_CASE("pad_and_collate_pads_short_examples") {
  const auto [x, y, mask] = pad_and_collate({{{10, 11, 12}, {0, 1, 1}}}, 5, 99);
  INFO("pad ids with pad_id and masks with 0 up to max_seq_len, then shift");
  CHECK(row(x[0]) == Ids{10, 11, 12, 99});
  CHECK(row(y[0]) == Ids{11, 12, 99, 99});
  CHECK(row(mask[0]) == Ids{1, 1, 0, 0});
}

TEST_CASE("pad_and_collate_pad_positions_have_loss_mask_zero") {
  const auto [x, y, mask] = pad_and_collate({{{1, 2, 3}, {0, 1, 1}}}, 6, 0);
  INFO("a padded target must never count: pad the mask with 0");
  CHECK(row(mask[0].narrow(0, 2, 3)) == Ids{0, 0, 0});
}

TEST_CASE("pad_and_collate_truncates_long_examples") {
  Ids ids(20);
  std::iota(ids.begin(), ids.end(), 0);
  Ids mask(20, 1);
  std::fill_n(mask.begin(), 5, 0);
  const auto [x, y, loss_mask] = pad_and_collate({{ids, mask}}, 6, 0);
  INFO("keep the first max_seq_len ids and mask entries, drop the tail");
  CHECK(row(x[0]) == Ids{0, 1, 2, 3, 4});
  CHECK(row(y[0]) == Ids{1, 2, 3, 4, 5});
  CHECK(row(loss_mask[0]) == Ids{0, 0, 0, 0, 1});
}

TEST_CASE("pad_and_collate_batch_pads_to_common_length") {
  const auto [x, y, mask] =
      pad_and_collate({{{1, 2, 3}, {0, 1, 1}}, {{4, 5, 6, 7, 8}, {0, 0, 1, 1, 1}}}, 5, 0);
  CHECK(x.sizes() == torch::IntArrayRef({2, 4}));
  CHECK(row(x[1]) == Ids{4, 5, 6, 7});  // already max_seq_len long: not padded
}

// --- masked_cross_entropy ----------------------------------------------------------------------

TEST_CASE("masked_cross_entropy_returns_scalar") {
  const auto logits = torch::randn({2, 4, 7});
  const auto targets = torch::randint(0, 7, {2, 4}, torch::kLong);
  const auto loss = masked_cross_entropy(logits, targets, torch::ones({2, 4}, torch::kLong));
  CHECK(loss.dim() == 0);
}

TEST_CASE("masked_cross_entropy_full_mask_matches_lm_loss") {
  torch::manual_seed(42);
  const auto logits = torch::randn({2, 5, 8});
  const auto targets = torch::randint(0, 8, {2, 5}, torch::kLong);
  const double sft_loss =
      masked_cross_entropy(logits, targets, torch::ones({2, 5}, torch::kLong)).item<double>();
  const double lm_loss = lm_cross_entropy(logits, targets).item<double>();
  INFO("with every position counted the masked loss is module 09b's lm_cross_entropy");
  CHECK(sft_loss == Approx(lm_loss).epsilon(1e-5));
}

TEST_CASE("masked_cross_entropy_zero_mask_returns_zero") {
  const auto logits = torch::randn({2, 4, 7});
  const auto targets = torch::randint(0, 7, {2, 4}, torch::kLong);
  const auto loss = masked_cross_entropy(logits, targets, torch::zeros({2, 4}, torch::kLong));
  INFO("no counted position gives 0, not 0/0 = NaN: divide by the count clamped to at least 1");
  CHECK(loss.item<double>() == 0.0);
  CHECK_FALSE(std::isnan(loss.item<double>()));
}

TEST_CASE("masked_cross_entropy_normalizes_by_mask_count") {
  torch::manual_seed(0);
  const auto logits = torch::randn({1, 4, 5});
  const auto targets = torch::randint(0, 5, {1, 4}, torch::kLong);
  const double full_loss =
      masked_cross_entropy(logits, targets, torch::ones({1, 4}, torch::kLong)).item<double>();
  const double half_loss =
      masked_cross_entropy(logits, targets, torch::tensor({{1, 1, 0, 0}}, torch::kLong))
          .item<double>();
  const auto per_position = torch::nn::functional::cross_entropy(
      logits.reshape({-1, 5}), targets.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  const double expected_half =
      (per_position[0].item<double>() + per_position[1].item<double>()) / 2.0;
  INFO("divide by the number of counted positions (mask.sum()), not by B·T");
  CHECK(half_loss == Approx(expected_half).epsilon(1e-5));
  CHECK(half_loss != Approx(full_loss / 2.0).epsilon(1e-3));
}

TEST_CASE("masked_cross_entropy_ignores_masked_logits") {
  torch::manual_seed(7);
  auto logits = torch::randn({1, 4, 5});
  const auto targets = torch::randint(0, 5, {1, 4}, torch::kLong);
  const auto mask = torch::tensor({{0, 0, 1, 1}}, torch::kLong);
  const double before = masked_cross_entropy(logits, targets, mask).item<double>();
  logits[0][0].fill_(1000.0);
  logits[0][1].fill_(-1000.0);
  const double after = masked_cross_entropy(logits, targets, mask).item<double>();
  INFO("positions with mask 0 must not change the loss");
  CHECK(after == Approx(before).epsilon(1e-5));
}

TEST_CASE("masked_cross_entropy_accepts_float_mask") {
  torch::manual_seed(11);
  const auto logits = torch::randn({1, 4, 5});
  const auto targets = torch::randint(0, 5, {1, 4}, torch::kLong);
  const auto mask_int = torch::tensor({{0, 1, 1, 1}}, torch::kLong);
  const double a = masked_cross_entropy(logits, targets, mask_int).item<double>();
  const double b = masked_cross_entropy(logits, targets, mask_int.to(torch::kFloat)).item<double>();
  INFO(
      "an int64 mask and the same mask as float give the same loss (cast it to the logits' "
      "dtype)");
  CHECK(a == Approx(b).epsilon(1e-5));
}

// --- SFTTrainer: construction and lr (provided) -----------------------------------------------

TEST_CASE("sft_trainer_construction_defaults", "[clean]") {
  auto model = make_tiny_model();
  SFTTrainer trainer(model, make_tiny_dataset(), tiny_options(10, 3e-4));
  CHECK(trainer.max_steps() == 10);
  CHECK(trainer.batch_size() == 2);
  CHECK(trainer.step() == 0);
  CHECK(dynamic_cast<g2c::nn::AdamW*>(trainer.trainer.optimizer.get()) != nullptr);
  CHECK(trainer.device() == g2c::nn::resolve_device("auto"));
}

TEST_CASE("sft_trainer_explicit_cpu_device_moves_model_params", "[clean]") {
  auto model = make_tiny_model();
  SFTTrainer trainer(
      model, make_tiny_dataset(),
      with_recipe(tiny_options(10, 3e-4), [&](auto& recipe) { recipe.device("cpu"); }));
  CHECK(trainer.device() == torch::Device(torch::kCPU));
  for (const auto& p : model->parameters()) CHECK(p.device().is_cpu());
}

TEST_CASE("sft_trainer_empty_examples_raises", "[clean]") {
  auto model = make_tiny_model();
  CHECK_THROWS_AS(SFTTrainer(model, {}, tiny_options(10, 3e-4)), g2c::ValueError);
}

TEST_CASE("sft_trainer_bad_batch_size_raises", "[clean]") {
  auto model = make_tiny_model();
  CHECK_THROWS_AS(SFTTrainer(model, make_tiny_dataset(),
                             SFTTrainerOptions(/*max_seq_len=*/8, /*pad_id=*/0, /*batch_size=*/0,
                                               /*max_steps=*/10, /*max_lr=*/3e-4)),
                  g2c::ValueError);
}

TEST_CASE("sft_trainer_max_seq_len_too_small_raises", "[clean]") {
  auto model = make_tiny_model();
  CHECK_THROWS_AS(SFTTrainer(model, make_tiny_dataset(),
                             SFTTrainerOptions(/*max_seq_len=*/1, /*pad_id=*/0, /*batch_size=*/2,
                                               /*max_steps=*/10, /*max_lr=*/3e-4)),
                  g2c::ValueError);
}

TEST_CASE("sft_trainer_lr_uses_cosine_schedule") {
  auto model = make_tiny_model();
  SFTTrainer trainer(
      model, make_tiny_dataset(),
      with_recipe(tiny_options(100, 1e-3), [&](auto& recipe) { recipe.warmup_steps(10); }));
  INFO("SFTTrainer::lr is module 10's schedule: it needs your cosine_with_warmup (module 03b)");
  CHECK(trainer.lr(0) == py_approx(cosine_with_warmup(0, 10, 100, 1e-3, 0.0)));
  CHECK(trainer.lr(50) == py_approx(cosine_with_warmup(50, 10, 100, 1e-3, 0.0)));
}

// --- SFTTrainer::train_step --------------------------------------------------------------------

TEST_CASE("sft_trainer_train_step_returns_metrics") {
  torch::manual_seed(0);
  auto model = make_tiny_model();
  SFTTrainer trainer(
      model, make_tiny_dataset(),
      with_recipe(tiny_options(10, 3e-4), [&](auto& recipe) { recipe.grad_clip(1.0); }));
  const auto metrics = trainer.train_step();
  CHECK(std::isfinite(metrics.loss));
  CHECK(metrics.lr == py_approx(trainer.lr(0)));
  CHECK(metrics.grad_norm > 0.0);
  INFO("train_step ends with trainer.step += 1");
  CHECK(trainer.step() == 1);
}

TEST_CASE("sft_trainer_loss_decreases") {
  torch::manual_seed(0);
  auto model = make_tiny_model();
  SFTTrainer trainer(model, make_tiny_dataset(4),
                     with_recipe(tiny_options(30, 1e-2),
                                 [&](auto& recipe) { recipe.warmup_steps(2).grad_clip(1.0); }));
  const auto history = trainer.train();
  REQUIRE(history.train_loss.size() >= 2);
  const double initial = history.train_loss.front(), final = history.train_loss.back();
  INFO("30 SFT steps should lower the loss by at least 5%: initial " << initial << ", final "
                                                                     << final
                                                                     << ". If not, the smaller "
                                                                        "tests say which piece "
                                                                        "is wrong");
  CHECK(final < initial * 0.95);
}

TEST_CASE("sft_trainer_evaluate_returns_float") {
  torch::manual_seed(0);
  auto model = make_tiny_model();
  const auto examples = make_tiny_dataset();
  SFTTrainer trainer(model, examples, with_recipe(tiny_options(10, 3e-4), [&](auto& recipe) {
                       recipe.eval_iters(3);
                     }));
  const double val_loss = trainer.evaluate(examples);
  CHECK(std::isfinite(val_loss));
  CHECK(val_loss > 0.0);
}

TEST_CASE("sft_trainer_evaluate_empty_raises", "[clean]") {
  auto model = make_tiny_model();
  SFTTrainer trainer(model, make_tiny_dataset(), tiny_options(10, 3e-4));
  CHECK_THROWS_AS(trainer.evaluate({}), g2c::ValueError);
}

// --- Additions of this edition ------------------------------------------------------------------

TEST_CASE("sft_trainer_steps_follow_the_recipe") {
  // Two steps of the student's train_step against the recipe written out here, from the same
  // weights on the same batches: the same parameters after each step. With warmup the second
  // step's rate differs from the first, so a counter moved before the lr is read shows; the
  // second step's gradients are fresh only if the first step's were zeroed.
  const auto examples = make_tiny_dataset();
  const auto options = with_recipe(tiny_options(10, 1e-2), [&](auto& recipe) {
    recipe.warmup_steps(3).grad_clip(0.05).device("cpu");
  });
  torch::manual_seed(3);
  auto model = make_tiny_model();
  torch::manual_seed(3);
  auto twin = make_tiny_model();
  auto generator = at::make_generator<at::CPUGeneratorImpl>(5);
  auto twin_generator = at::make_generator<at::CPUGeneratorImpl>(5);
  SFTTrainer trainer(model, examples,
                     with_recipe(options, [&](auto& recipe) { recipe.generator(generator); }));
  SFTTrainer recipe(twin, examples,
                    with_recipe(options, [&](auto& recipe) { recipe.generator(twin_generator); }));
  for (int step = 0; step < 2; ++step) {
    const auto metrics = trainer.train_step();
    // The recipe: batch, this step's lr, zero_grad, loss, backward, clip, update, count.
    const auto [x, y, loss_mask] = recipe.sample_batch(recipe.examples);
    const double lr = recipe.lr(step);
    recipe.trainer.optimizer->lr = lr;
    recipe.trainer.optimizer->zero_grad();
    const auto loss = masked_cross_entropy(twin->forward(x), y, loss_mask);
    loss.backward();
    const double norm = g2c::training::clip_grad_norm_(twin->parameters(), 0.05);
    recipe.trainer.optimizer->step();
    recipe.trainer.step += 1;
    // Each check with its own advice (Catch's INFO would otherwise pile up on the later ones).
    {
      INFO("step " << step << ": loss " << metrics.loss << " vs " << loss.item<double>()
                   << ": the masked loss of this step's batch, before the update");
      CHECK(metrics.loss == Approx(loss.item<double>()).epsilon(1e-6));
    }
    g2c::testing::check_step_follows_recipe(step, metrics.lr, lr, metrics.grad_norm, norm,
                                            model->parameters(), twin->parameters());
  }
  CHECK(trainer.step() == 2);
}
