// Module 13 framework tests: masked_cross_entropy against LibTorch's cross_entropy with
// ignore_index (values and gradients, float64) and against finite differences; pad_and_collate's
// shift, truncation and padding on random examples; the chat template with the course's BPE
// tokenizer (one id per marker, ids equal to encoding the rendered string, the mask on exactly the
// replies); the SFT trainer through module 10's loop against a loop written out here, bit for bit;
// a resumed SFT run equal to an uninterrupted one; bad input.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>
#include <unistd.h>

#include "g2c/core/errors.h"
#include "g2c/nn/optim.h"
#include "g2c/sft/chat.h"
#include "g2c/sft/course_encoder.h"
#include "g2c/sft/sft.h"
#include "g2c/tokenizer/bpe.h"
#include "g2c/tokenizer/text_tokenizer.h"
#include "g2c/training/clip.h"
#include "g2c/training/schedule.h"
#include "g2c/transformer/transformer_lm.h"
#include "one_thread.h"
#include "recipe_check.h"
#include "torch_test.h"

using Catch::Matchers::Contains;
using g2c::sft::ChatTemplate;
using g2c::sft::CourseEncoder;
using g2c::sft::masked_cross_entropy;
using g2c::sft::Message;
using g2c::sft::pad_and_collate;
using g2c::sft::SFTExample;
using g2c::sft::SFTTrainer;
using g2c::sft::SFTTrainerOptions;
using g2c::testing::max_abs_diff;
using g2c::testing::with_recipe;
using g2c::tokenizer::BPETokenizer;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;
using Ids = std::vector<std::int64_t>;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

at::Generator seeded(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

Ids to_ids(const torch::Tensor& t) {
  const auto flat = t.to(torch::kCPU, torch::kLong).contiguous();
  return {flat.data_ptr<std::int64_t>(), flat.data_ptr<std::int64_t>() + flat.numel()};
}

/// LibTorch's own masked loss: positions with mask 0 get the ignore index.
torch::Tensor ignore_index_loss(const torch::Tensor& logits, const torch::Tensor& targets,
                                const torch::Tensor& mask) {
  const auto vocab = logits.size(-1);
  const auto ignored = torch::where(mask != 0, targets, torch::full_like(targets, -100));
  return torch::nn::functional::cross_entropy(
      logits.reshape({-1, vocab}), ignored.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-100));
}

/// `count` random examples of 2..max_len ids in [1, vocab), each mask a prompt of zeros then ones.
std::vector<SFTExample> random_examples(int count, std::int64_t max_len, std::int64_t vocab,
                                        std::uint64_t seed) {
  auto generator = seeded(seed);
  std::vector<SFTExample> examples;
  for (int i = 0; i < count; ++i) {
    const auto length = torch::randint(2, max_len + 1, {1}, generator).item<std::int64_t>();
    const auto prompt = torch::randint(0, length, {1}, generator).item<std::int64_t>();
    SFTExample example;
    example.ids = to_ids(torch::randint(1, vocab, {length}, generator, torch::kLong));
    example.mask.assign(static_cast<std::size_t>(length), 1);
    std::fill_n(example.mask.begin(), prompt, 0);
    examples.push_back(example);
  }
  return examples;
}

TransformerLM tiny_model(std::uint64_t seed, std::int64_t vocab = 40) {
  torch::manual_seed(seed);
  return TransformerLM(TransformerLMOptions(vocab, /*embedding_dim=*/16, /*num_layers=*/2,
                                            /*num_heads=*/2, /*max_seq_len=*/24));
}

/// A course BPE tokenizer (the reserved special tokens at 256..263) trained on a little text.
BPETokenizer course_bpe() {
  auto bpe = BPETokenizer::with_course_special_tokens();
  std::string corpus;
  for (int i = 0; i < 30; ++i) corpus += "Who says: my lord, the king is come?\nKING RICHARD III\n";
  bpe.train_fast(corpus, 300);
  return bpe;
}

}  // namespace

TEST_CASE("masked_cross_entropy_matches_libtorch_ignore_index", "[sft]") {
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    auto generator = seeded(seed);
    const auto batch = 1 + static_cast<std::int64_t>(seed % 3);
    const auto length = 3 + static_cast<std::int64_t>(seed % 5);
    const auto vocab = 5 + static_cast<std::int64_t>(seed % 7);
    const auto logits =
        (3.0 * torch::randn({batch, length, vocab}, generator, torch::kDouble)).requires_grad_();
    const auto targets = torch::randint(vocab, {batch, length}, generator, torch::kLong);
    auto mask = torch::randint(2, targets.sizes(), generator, torch::kLong);
    mask.view(-1)[0] = 1;  // at least one counted position: ignore_index gives NaN for none
    const auto ours = masked_cross_entropy(logits, targets, mask);
    const auto oracle = ignore_index_loss(logits, targets, mask);
    CHECK(std::abs(ours.item<double>() - oracle.item<double>()) < 1e-12);
    const auto grad_ours = torch::autograd::grad({ours}, {logits})[0];
    const auto grad_oracle = torch::autograd::grad({oracle}, {logits})[0];
    CHECK(max_abs_diff(grad_ours, grad_oracle) < 1e-12);
    // Positions that do not count get no gradient at all.
    const auto uncounted = (mask == 0).unsqueeze(-1).expand_as(grad_ours);
    CHECK(grad_ours.masked_select(uncounted).abs().max().item<double>() == 0.0);
  }
}

TEST_CASE("masked_cross_entropy_gradient_matches_finite_differences", "[sft]") {
  auto generator = seeded(4);
  auto logits = torch::randn({2, 3, 4}, generator, torch::kDouble);
  const auto targets = torch::randint(4, {2, 3}, generator, torch::kLong);
  const auto mask = torch::tensor({{1, 0, 1}, {0, 1, 1}}, torch::kDouble);  // a float mask
  const auto analytic = [&] {
    const auto leaf = logits.clone().requires_grad_();
    return torch::autograd::grad({masked_cross_entropy(leaf, targets, mask)}, {leaf})[0];
  }();
  const auto numeric = g2c::testing::numeric_gradient(
      [&] { return masked_cross_entropy(logits, targets, mask); }, logits);
  CHECK(max_abs_diff(analytic, numeric) < 1e-8);
}

TEST_CASE("masked_cross_entropy_of_an_empty_mask_is_zero_with_zero_gradient", "[sft]") {
  const auto logits = torch::randn({2, 3, 5}, torch::kDouble).requires_grad_();
  const auto loss = masked_cross_entropy(logits, torch::zeros({2, 3}, torch::kLong),
                                         torch::zeros({2, 3}, torch::kLong));
  CHECK(loss.item<double>() == 0.0);
  loss.backward();  // still part of the graph: a batch without replies does not stop training
  CHECK(logits.grad().abs().max().item<double>() == 0.0);
}

TEST_CASE("pad_and_collate_on_random_examples", "[sft]") {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const auto examples = random_examples(5, 14, 50, seed);
    const std::int64_t max_seq_len = 2 + static_cast<std::int64_t>(seed % 12);
    const auto [x, y, loss_mask] = pad_and_collate(examples, max_seq_len, /*pad_id=*/0);
    REQUIRE(x.sizes() == torch::IntArrayRef({5, max_seq_len - 1}));
    for (std::size_t b = 0; b < examples.size(); ++b) {
      // The padded, truncated row, built independently.
      Ids ids(static_cast<std::size_t>(max_seq_len), 0), mask(ids.size(), 0);
      for (std::size_t t = 0; t < ids.size() && t < examples[b].ids.size(); ++t) {
        ids[t] = examples[b].ids[t];
        mask[t] = examples[b].mask[t];
      }
      const auto i = static_cast<std::int64_t>(b);
      const auto row = [](const Ids& v) { return fmt::format("[{}]", fmt::join(v, " ")); };
      // One explained failure, not one per row: the first row that differs stops the check.
      INFO("seed " << seed << ", max_seq_len " << max_seq_len << ", row " << b << ": example ids "
                   << row(examples[b].ids) << ", mask " << row(examples[b].mask) << "; expected x "
                   << row(Ids(ids.begin(), ids.end() - 1)) << ", y "
                   << row(Ids(ids.begin() + 1, ids.end())) << ", loss_mask "
                   << row(Ids(mask.begin() + 1, mask.end())) << "; got x " << row(to_ids(x[i]))
                   << ", y " << row(to_ids(y[i])) << ", loss_mask " << row(to_ids(loss_mask[i]))
                   << ". Keep each example's first max_seq_len ids, pad with pad_id (mask 0), "
                      "then x = ids[:, :-1], y = ids[:, 1:], loss_mask = mask[:, 1:]");
      REQUIRE(to_ids(x[i]) == Ids(ids.begin(), ids.end() - 1));
      REQUIRE(to_ids(y[i]) == Ids(ids.begin() + 1, ids.end()));
      REQUIRE(to_ids(loss_mask[i]) == Ids(mask.begin() + 1, mask.end()));
    }
  }
}

TEST_CASE("chat_template_with_the_course_tokenizer", "[sft]") {
  const auto bpe = course_bpe();
  const CourseEncoder encoder(bpe);
  const ChatTemplate chat;
  const std::vector<Message> messages = {{"user", "Who says: my lord, the king is come?"},
                                         {"assistant", "KING RICHARD III"},
                                         {"user", "And then?"},
                                         {"assistant", "my lord"}};
  // Each marker is one reserved id.
  CHECK(encoder.encode(chat.USER) == Ids{bpe.special_id("<|user|>")});
  CHECK(encoder.encode(chat.ASSISTANT) == Ids{bpe.special_id("<|assistant|>")});
  CHECK(encoder.encode(chat.END) == Ids{bpe.special_id("<|end|>")});
  for (const std::optional<std::int64_t> cap : {std::optional<std::int64_t>{}, {264}, {280}}) {
    const auto example = chat.render_with_mask(messages, encoder, cap);
    const auto text = chat.render(messages);
    const auto expected = cap ? encoder.encode_with_vocab_size(text, *cap) : encoder.encode(text);
    CHECK(example.ids == expected);  // the markers are barriers: piecewise = whole
    if (cap) CHECK(*std::max_element(example.ids.begin(), example.ids.end()) < *cap);
    // The masked ids decode to exactly the replies and their end markers.
    std::vector<g2c::tokenizer::TokenId> reply;
    for (std::size_t t = 0; t < example.ids.size(); ++t) {
      if (example.mask[t] == 1)
        reply.push_back(static_cast<g2c::tokenizer::TokenId>(example.ids[t]));
    }
    CHECK(bpe.decode(reply) == "KING RICHARD III<|end|>my lord<|end|>");
  }
  CHECK(chat.generation_prompt({{"user", "Hi"}}) == "<|user|>\nHi\n<|assistant|>\n");
}

TEST_CASE("sft_trainer_through_module_10s_loop_matches_a_written_out_loop", "[sft]") {
  const auto examples = random_examples(9, 14, 40, 11);
  const auto options = with_recipe(
      SFTTrainerOptions(/*max_seq_len=*/12, /*pad_id=*/0, /*batch_size=*/3,
                        /*max_steps=*/7, /*max_lr=*/3e-3),
      [&](auto& recipe) {
        recipe.warmup_steps(2).min_lr(1e-4).weight_decay(0.1).grad_clip(0.5).log_every(1).device(
            "cpu");
      });
  auto model = tiny_model(1);
  SFTTrainer trainer(model, examples,
                     with_recipe(options, [&](auto& recipe) { recipe.generator(seeded(8)); }));
  const auto history = trainer.train();

  // The same run written out: the same draws, collation, loss, schedule, clipping and AdamW.
  auto twin = tiny_model(1);
  auto generator = seeded(8);
  g2c::nn::AdamW optimizer(twin->parameters(), g2c::nn::AdamWOptions(3e-3).weight_decay(0.1));
  std::vector<double> losses;
  for (std::int64_t step = 0; step < 7; ++step) {
    const auto picks = torch::randint(9, {3}, generator, torch::kLong);
    std::vector<SFTExample> chosen;
    for (const auto index : to_ids(picks))
      chosen.push_back(examples[static_cast<std::size_t>(index)]);
    const auto [x, y, loss_mask] = pad_and_collate(chosen, 12, 0);
    optimizer.lr = g2c::training::cosine_with_warmup(step, 2, 7, 3e-3, 1e-4);
    optimizer.zero_grad();
    const auto loss = masked_cross_entropy(twin->forward(x), y, loss_mask);
    loss.backward();
    g2c::training::clip_grad_norm_(twin->parameters(), 0.5);
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  CHECK(history.train_loss == losses);
  const auto params = model->parameters(), twin_params = twin->parameters();
  for (std::size_t i = 0; i < params.size(); ++i) CHECK(torch::equal(params[i], twin_params[i]));
}

TEST_CASE("a_resumed_sft_run_equals_an_uninterrupted_one", "[sft]") {
  const auto examples = random_examples(8, 14, 40, 3);
  const auto options = with_recipe(
      SFTTrainerOptions(12, 0, 2, /*max_steps=*/6, 2e-3),
      [&](auto& recipe) { recipe.warmup_steps(1).grad_clip(1.0).log_every(1).device("cpu"); });
  const auto folder =
      std::filesystem::temp_directory_path() / ("g2c-sft-checks-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const auto path = folder / "sft.ckpt";

  auto straight = tiny_model(2);
  SFTTrainer uninterrupted(
      straight, examples, with_recipe(options, [&](auto& recipe) { recipe.generator(seeded(5)); }));
  const auto full = uninterrupted.train();

  auto first_model = tiny_model(2);
  SFTTrainer first(first_model, examples, with_recipe(options, [&](auto& recipe) {
                     recipe.max_steps(6).generator(seeded(5));
                   }));
  g2c::pretraining::TrainingHistory history;
  // Stop after three steps by throwing from the log callback; the loop checkpoints on the way out.
  struct Stop {};
  try {
    first.trainer.run_loop([&] { return first.train_step(); }, nullptr, history,
                           g2c::pretraining::RunOptions().checkpoint_path(path).on_log(
                               [](const g2c::pretraining::LogEvent& event) {
                                 if (event.step == 2) throw Stop{};
                               }));
  } catch (const Stop&) {
  }
  REQUIRE(first.step() == 3);

  auto second_model = tiny_model(99);  // other weights: the checkpoint must restore them
  SFTTrainer second(second_model, examples,
                    with_recipe(options, [&](auto& recipe) { recipe.generator(seeded(1234)); }));
  const auto checkpoint = second.trainer.load_checkpoint(path);
  REQUIRE(second.step() == 3);
  auto resumed = checkpoint.history;
  second.trainer.run_loop([&] { return second.train_step(); }, nullptr, resumed);
  CHECK(resumed.train_loss == full.train_loss);
  const auto a = straight->parameters(), b = second_model->parameters();
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(torch::equal(a[i], b[i]));
  std::filesystem::remove_all(folder);
}

TEST_CASE("sft_bad_input_messages", "[sft]") {
  CHECK_THROWS_WITH(ChatTemplate().render({{"user", "a"}, {"System", "b"}}),
                    Contains("unknown role 'System' in message 1"));
  CHECK_THROWS_WITH(ChatTemplate().render({}), Contains("at least one message"));
  CHECK_THROWS_WITH(pad_and_collate({{{1, 2, 3}, {0, 1}}}, 4, 0),
                    Contains("3 ids but 2 mask entries"));
  CHECK_THROWS_WITH(pad_and_collate({{{1, 2}, {0, 2}}}, 4, 0), Contains("mask value 2"));
  CHECK_THROWS_WITH(pad_and_collate({}, 4, 0), Contains("at least one example"));
  CHECK_THROWS_WITH(pad_and_collate({{{1, 2}, {0, 1}}}, 1, 0), Contains("at least 2"));
  const auto logits = torch::randn({2, 3, 5});
  CHECK_THROWS_WITH(
      masked_cross_entropy(logits, torch::zeros({2, 3}, torch::kLong), torch::ones({2, 4})),
      Contains("shaped like the targets"));
  CHECK_THROWS_WITH(masked_cross_entropy(logits, torch::zeros({2, 3}), torch::ones({2, 3})),
                    Contains("integer targets"));
  const auto bpe = course_bpe();
  const CourseEncoder encoder(bpe);
  CHECK_THROWS_AS(encoder.encode_with_vocab_size("x", 0), g2c::ValueError);
  auto model = tiny_model(0);
  CHECK_THROWS_WITH(SFTTrainer(model, {}, SFTTrainerOptions(8, 0, 2, 10, 1e-3)),
                    Contains("at least one training example"));
  CHECK_THROWS_WITH(SFTTrainer(model, random_examples(2, 6, 40, 0),
                               with_recipe(SFTTrainerOptions(8, 0, 2, 10, 1e-3),
                                           [&](auto& recipe) { recipe.optimizer("adam"); })),
                    Contains("'sgd', 'adamw' or 'muon'"));
}

// chat_replies is chat_reply for many conversations at once: in float64 (no near-ties), every
// reply, stop, dropped message and cut prompt equals the one-by-one reply, with prompts of equal
// length sharing batches smaller than their group and the end marker written by some rows
// mid-batch and not by others.
TEST_CASE("chat_replies_equal_chat_reply_one_by_one", "[sft]") {
  const auto tokenizer = g2c::tokenizer::TextTokenizer::from_bpe(
      std::make_shared<const BPETokenizer>(course_bpe()), std::nullopt, "test");
  torch::manual_seed(3);
  TransformerLM model(TransformerLMOptions(tokenizer.size(), /*embedding_dim=*/16,
                                           /*num_layers=*/2, /*num_heads=*/2, /*max_seq_len=*/48));
  model->to(torch::kDouble);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.normal_(0.0, 0.5);
  }
  using Conversation = std::vector<g2c::sft::Message>;
  std::vector<Conversation> conversations;
  for (const char* line : {"my lord", "the king", "is come", "my lord, the king", "Who says",
                           "the king is come", "my lord?", "KING", "Who says: my lord"}) {
    conversations.push_back({{"user", line}});
  }
  const std::string long_line(200, 'a');  // alone longer than the context: its start is cut
  conversations.push_back({{"user", long_line}});
  conversations.push_back({{"user", "my lord, the king is come, the king is come, my lord"},
                           {"assistant", "KING RICHARD III, the king is come"},
                           {"user", "Who says: my lord?"}});  // the oldest turns are dropped
  const auto options = g2c::sft::ChatReplyOptions().max_new_tokens(8);

  // The end marker's bias: about half of the prompts end at once (judged on their last message,
  // near enough), the rest write something.
  const auto end_id = g2c::sft::end_token_id(tokenizer);
  {
    torch::NoGradGuard no_grad;
    std::vector<double> gaps;
    for (const auto& conversation : conversations) {
      auto ids =
          tokenizer.encode(g2c::sft::ChatTemplate().generation_prompt({conversation.back()}));
      if (ids.size() > 40) ids.erase(ids.begin(), ids.end() - 40);
      const auto logits = model->forward(torch::tensor(ids, torch::kLong).view({1, -1}))[0][-1];
      auto others = logits.clone();
      others[end_id] = -1e9;
      gaps.push_back(others.max().item<double>() - logits[end_id].item<double>());
    }
    std::sort(gaps.begin(), gaps.end());
    model->named_parameters()["head.bias"][end_id] += gaps[gaps.size() / 2];
  }

  const auto batched = g2c::sft::chat_replies(*model, tokenizer, conversations, options,
                                              /*batch_size=*/2);
  REQUIRE(batched.size() == conversations.size());
  std::size_t stopped = 0, wrote = 0;
  for (std::size_t i = 0; i < conversations.size(); ++i) {
    const auto alone = g2c::sft::chat_reply(*model, tokenizer, conversations[i], options);
    INFO("conversation " << i);
    CHECK(batched[i].ids == alone.ids);
    CHECK(batched[i].text == alone.text);
    CHECK(batched[i].stopped == alone.stopped);
    CHECK(batched[i].dropped_messages == alone.dropped_messages);
    CHECK(batched[i].prompt_cut == alone.prompt_cut);
    stopped += alone.stopped;
    wrote += !alone.ids.empty();
  }
  CHECK(stopped > 0);
  CHECK(stopped < conversations.size());
  CHECK(wrote > 0);
  CHECK(batched[conversations.size() - 2].prompt_cut);
  CHECK(batched.back().dropped_messages >= 1);

  CHECK_THROWS_WITH(g2c::sft::chat_replies(*model, tokenizer, conversations,
                                           g2c::sft::ChatReplyOptions().max_new_tokens(8).sampling(
                                               g2c::sampling::GenerateOptions().temperature(0.8))),
                    Contains("greedily"));
  CHECK_THROWS_AS(g2c::sft::chat_replies(*model, tokenizer, conversations, options, 0),
                  g2c::ValueError);
}
