// Beyond module specdec framework checks: what speculative decoding adds to the numbered modules —
// KVCache::truncate (every layer, buffered or not, and appending after it), TransformerLM's
// hidden_states against its forward, the fused multi-position cached forward against the full
// forward and against forward_cached one token at a time, the scoring adapters (module 09's model,
// the hybrid and MoE models, SmolLM2 dense and packed) against their models' own forward — and the
// named fast path, speculative_generate_cached, and its baseline greedy_generate_cached, against
// the lesson's loop and module 11's greedy generate, token for token, with a model, prompt lookup
// or SmolLM2's early exit drafting; the early exit against its blocks by hand; prompt lookup's
// matches; mtp_loss against LibTorch's cross_entropy; mtp_propose against the base's and the
// head's own argmax; mtp_generate (self-speculation) against module 11's greedy generate.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "g2c/core/errors.h"
#include "g2c/linear_attention/hybrid.h"
#include "g2c/moe/model.h"
#include "g2c/pretrained/generation.h"
#include "g2c/pretrained/llama.h"
#include "g2c/pretrained/logits_model.h"
#include "g2c/sampling/generate.h"
#include "g2c/sampling/logits_model.h"
#include "g2c/specdec/cached.h"
#include "g2c/specdec/drafter.h"
#include "g2c/specdec/generate.h"
#include "g2c/specdec/mtp.h"
#include "g2c/transformer/fused.h"
#include "g2c/transformer/transformer_lm.h"
#include "g2c_test.h"
#include "smollm2.h"
#include "tiny_llama.h"
#include "torch_test.h"

using g2c::sampling::CachedScoringModel;
using g2c::sampling::TransformerLogitsModel;
using g2c::specdec::speculative_generate;
using g2c::specdec::speculative_generate_cached;
using g2c::testing::max_abs_diff;
using g2c::transformer::KVCache;
using g2c::transformer::TransformerLM;

namespace {

std::vector<std::int64_t> as_vector(const torch::Tensor& ids) {
  const auto flat = ids.to(torch::kCPU, torch::kLong).contiguous();
  return {flat.data_ptr<std::int64_t>(), flat.data_ptr<std::int64_t>() + flat.numel()};
}

/// A random TransformerLM. scale > 1 multiplies every weight: logits far apart, so that no argmax
/// is a near-tie that rounding between two computations of the same formula could flip (the
/// generation checks compare tokens); the numeric checks keep the initialisation (scale 1).
TransformerLM random_lm(std::uint64_t seed, std::int64_t vocab, std::int64_t dim,
                        std::int64_t layers, std::int64_t heads, std::int64_t window,
                        double scale = 3.0) {
  torch::manual_seed(seed);
  TransformerLM model(vocab, dim, layers, heads, window);
  model->eval();
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.mul_(scale);
  return model;
}

}  // namespace

TEST_CASE("kv_cache_truncate_keeps_a_prefix_and_appends_after_it", "[specdec]") {
  torch::manual_seed(0);
  const auto k = torch::randn({2, 3, 7, 4}), v = torch::randn({2, 3, 7, 4});
  for (const bool recording : {false, true}) {
    INFO((recording ? "a cache built with gradients (concatenating)" : "a buffered cache"));
    const auto kr = recording ? k.clone().requires_grad_() : k;
    const auto vr = recording ? v.clone().requires_grad_() : v;
    g2c::attention::LayerKVCache cache;
    cache.capacity = 16;
    cache.append(kr.narrow(2, 0, 5), vr.narrow(2, 0, 5));
    cache.truncate(3);
    CHECK(cache.length() == 3);
    CHECK(max_abs_diff(cache.k, k.narrow(2, 0, 3)) == 0.0);
    // The next append lands at position 3, over what was dropped.
    cache.append(kr.narrow(2, 5, 2), vr.narrow(2, 5, 2));
    CHECK(cache.length() == 5);
    CHECK(max_abs_diff(cache.k, torch::cat({k.narrow(2, 0, 3), k.narrow(2, 5, 2)}, 2)) == 0.0);
    CHECK(max_abs_diff(cache.v, torch::cat({v.narrow(2, 0, 3), v.narrow(2, 5, 2)}, 2)) == 0.0);
    cache.truncate(5);  // keeping everything changes nothing
    CHECK(cache.length() == 5);
    CHECK_THROWS_WITH(cache.truncate(6), Catch::Contains("holds 5 positions"));
    CHECK_THROWS_AS(cache.truncate(-1), g2c::ValueError);
    cache.truncate(0);
    CHECK(cache.length() == 0);
    cache.append(kr.narrow(2, 6, 1), vr.narrow(2, 6, 1));
    CHECK(max_abs_diff(cache.k, k.narrow(2, 6, 1)) == 0.0);
  }

  auto whole = KVCache::empty(3, 8);
  for (auto& layer : whole.layers) layer.append(k, v);
  whole.truncate(2);
  CHECK(whole.length() == 2);
  for (const auto& layer : whole.layers) CHECK(layer.length() == 2);
  CHECK_THROWS_WITH(whole.truncate(4), Catch::Contains("KVCache::truncate"));
  CHECK(whole.length() == 2);  // a refused truncate changes no layer
}

TEST_CASE("hidden_states_are_the_forward_before_the_tied_head", "[specdec]") {
  auto model = random_lm(1, 30, 16, 2, 4, 12, /*scale=*/1.0);
  const auto ids = torch::randint(0, 30, {2, 9}, torch::kLong);
  const auto hidden = model->hidden_states(ids);  // (B, T, D)
  REQUIRE(hidden.sizes() == torch::IntArrayRef({2, 9, 16}));
  const auto logits = torch::matmul(hidden, model->token_embed->weight.t()) + model->head_bias;
  CHECK(max_abs_diff(logits, model->forward(ids)) < 1e-5);
  CHECK_THROWS_WITH(model->hidden_states(torch::zeros({1, 13}, torch::kLong)),
                    Catch::Contains("13"));
  const auto specdec_hidden = g2c::specdec::hidden_states(*model, ids);
  CHECK(!specdec_hidden.requires_grad());
  CHECK(max_abs_diff(specdec_hidden, hidden) == 0.0);
}

TEST_CASE("fused_forward_extend_equals_the_full_forward", "[specdec]") {
  auto model = random_lm(2, 40, 32, 3, 4, 24, /*scale=*/1.0);
  torch::NoGradGuard no_grad;
  const auto ids = torch::randint(0, 40, {2, 20}, torch::kLong);
  const auto full = model->forward(ids);  // (B, T, V)
  const double tolerance = 1e-5;          // float32 rounding: the same formula, other kernels

  // Blocks of several positions, one position, and a rollback in between.
  auto cache = model->empty_kv_cache();
  std::vector<torch::Tensor> pieces;
  pieces.push_back(g2c::transformer::fused_forward_extend(*model, ids.narrow(1, 0, 6), cache));
  pieces.push_back(g2c::transformer::fused_forward_extend(*model, ids.narrow(1, 6, 1), cache));
  const auto wrong = torch::randint(0, 40, {2, 5}, torch::kLong);
  g2c::transformer::fused_forward_extend(*model, wrong, cache);  // rejected draft tokens
  cache.truncate(7);
  pieces.push_back(g2c::transformer::fused_forward_extend(*model, ids.narrow(1, 7, 13), cache));
  CHECK(cache.length() == 20);
  CHECK(max_abs_diff(torch::cat(pieces, 1), full) < tolerance);

  // The same as the lesson's forward_cached, one token at a time.
  auto single = model->empty_kv_cache();
  std::vector<torch::Tensor> steps;
  for (std::int64_t t = 0; t < 20; ++t)
    steps.push_back(model->forward_cached(ids.narrow(1, t, 1), single));
  CHECK(max_abs_diff(torch::cat(steps, 1), full) < tolerance);

  CHECK_THROWS_WITH(g2c::transformer::fused_forward_extend(*model, ids.narrow(1, 0, 5), cache),
                    Catch::Contains("max_seq_len 24"));
  auto short_cache = KVCache::empty(2);
  CHECK_THROWS_WITH(g2c::transformer::fused_forward_extend(*model, ids, short_cache),
                    Catch::Contains("2 layers"));
}

TEST_CASE("scoring_adapters_score_every_position", "[specdec]") {
  torch::NoGradGuard no_grad;
  const auto ids = torch::randint(0, 24, {1, 10}, torch::kLong);

  auto lm = random_lm(3, 24, 16, 2, 2, 16, /*scale=*/1.0);
  TransformerLogitsModel course(*lm);
  CHECK(course.max_seq_len() == 16);
  CHECK(course.vocab_size() == 24);
  CHECK(max_abs_diff(course(ids), lm->forward(ids)) == 0.0);
  auto cache = course.empty_cache();
  const auto first = course.forward(ids.narrow(1, 0, 4), cache);
  const auto rest = course.forward(ids.narrow(1, 4, 6), cache);
  CHECK(max_abs_diff(torch::cat({first, rest}, 1), lm->forward(ids)) < 1e-4);

  torch::manual_seed(4);
  g2c::linear_attention::HybridTransformerLM hybrid(
      24, 16, std::vector<std::string>{"linear", "full"}, 2, 16);
  g2c::sampling::ForwardScoringModel<g2c::linear_attention::HybridTransformerLMImpl> hybrid_scorer(
      *hybrid);
  CHECK(hybrid_scorer.max_seq_len() == 16);
  CHECK(hybrid_scorer.vocab_size() == 24);
  CHECK(max_abs_diff(hybrid_scorer(ids), hybrid->forward(ids)) == 0.0);

  torch::manual_seed(5);
  g2c::moe::MoETransformerLM moe(24, 16, 2, 2, 16, /*num_experts=*/4, /*top_k=*/2);
  g2c::sampling::ForwardScoringModel<g2c::moe::MoETransformerLMImpl> moe_scorer(*moe);
  CHECK(moe_scorer(ids).sizes() == torch::IntArrayRef({1, 10, 24}));
  CHECK(max_abs_diff(moe_scorer(ids), moe->forward(ids)) == 0.0);

  torch::manual_seed(6);
  g2c::pretrained::LlamaModel llama(g2c::testing::tiny_llama_options());
  g2c::pretrained::LlamaScoringModel smol(*llama);
  CHECK(smol.max_seq_len() == 32);
  CHECK(smol.vocab_size() == 20);
  const auto llama_ids = torch::randint(0, 20, {1, 12}, torch::kLong);
  const auto llama_full = llama->forward(llama_ids);
  CHECK(max_abs_diff(smol(llama_ids), llama_full) == 0.0);
  auto llama_cache = smol.empty_cache();
  const auto head = smol.forward(llama_ids.narrow(1, 0, 5), llama_cache);
  smol.forward(torch::tensor({{1, 2, 3}}, torch::kLong), llama_cache);  // rejected, rolled back
  llama_cache.truncate(5);
  const auto tail = smol.forward(llama_ids.narrow(1, 5, 7), llama_cache);
  CHECK(max_abs_diff(torch::cat({head, tail}, 1), llama_full) < 1e-4);
}

TEST_CASE("speculative_generate_cached_equals_the_lesson_and_greedy_generate", "[specdec]") {
  auto target = random_lm(7, 32, 32, 2, 4, 48);
  auto weak = random_lm(8, 32, 16, 1, 2, 48);  // an unrelated drafter: frequent rejections
  auto same = random_lm(7, 32, 32, 2, 4, 48);  // the target itself: every draft accepted
  torch::manual_seed(9);
  for (const std::int64_t prompt_length : {1, 5}) {
    const auto prompt = torch::randint(0, 32, {prompt_length}, torch::kLong);
    const auto greedy = g2c::sampling::generate(target, prompt, 30,
                                                g2c::sampling::GenerateOptions().temperature(0.0));
    for (auto* drafter : {&weak, &same}) {
      for (const std::int64_t k : {1, 2, 3, 5}) {
        INFO("prompt " << prompt_length << ", k " << k << ", "
                       << (drafter == &same ? "the target drafting" : "an unrelated drafter"));
        const auto lesson = speculative_generate(target, *drafter, prompt, 30, k);
        const auto fast = speculative_generate_cached(target, *drafter, prompt, 30, k);
        CHECK(as_vector(fast.ids) == as_vector(greedy));
        if (k == 1) {
          TransformerLogitsModel scorer(*target);
          CHECK(as_vector(g2c::specdec::greedy_generate_cached(scorer, prompt, 30)) ==
                as_vector(greedy));
        }
        CHECK(as_vector(lesson.ids) == as_vector(greedy));
        CHECK(fast.stats.target_passes == lesson.stats.target_passes);
        CHECK(fast.stats.accepted == lesson.stats.accepted);
        CHECK(fast.stats.drafted == lesson.stats.drafted);
        CHECK(fast.stats.generated == 30);
        if (drafter == &same) CHECK(fast.stats.acceptance_rate() == 1.0);
      }
    }
    // Stopping at an EOS the greedy chain reaches: the third generated token.
    const auto eos = as_vector(greedy)[static_cast<std::size_t>(prompt_length) + 2];
    const auto lesson = speculative_generate(target, weak, prompt, 30, 3, eos);
    const auto fast = speculative_generate_cached(target, weak, prompt, 30, 3, eos);
    CHECK(as_vector(fast.ids) == as_vector(lesson.ids));
    CHECK(fast.stats.generated == lesson.stats.generated);
    CHECK(fast.ids[-1].item<std::int64_t>() == eos);
    TransformerLogitsModel scorer(*target);
    CHECK(as_vector(g2c::specdec::greedy_generate_cached(scorer, prompt, 30, eos)) ==
          as_vector(lesson.ids));
  }
}

TEST_CASE("speculative_generate_cached_refuses_what_the_caches_cannot_hold", "[specdec]") {
  auto target = random_lm(10, 16, 16, 1, 2, 12);
  auto drafter = random_lm(11, 16, 16, 1, 2, 12);
  const auto prompt = torch::arange(0, 8, torch::kLong);
  CHECK_THROWS_WITH(speculative_generate_cached(target, drafter, prompt, 5, 2),
                    Catch::Contains("window of 12"));
  CHECK(speculative_generate_cached(target, drafter, prompt, 4, 2).ids.numel() == 12);
  auto other = random_lm(12, 20, 16, 1, 2, 12);
  CHECK_THROWS_WITH(speculative_generate_cached(target, other, prompt, 2, 2),
                    Catch::Contains("vocabulary has 20 tokens but the target's has 16"));
}

TEST_CASE("speculative_generate_cached_drives_smollm2s_cache", "[specdec]") {
  torch::manual_seed(13);
  g2c::pretrained::LlamaModel big(g2c::testing::tiny_llama_options());
  torch::manual_seed(14);
  g2c::pretrained::LlamaModel small(g2c::testing::tiny_llama_options().num_layers(1));
  g2c::pretrained::LlamaScoringModel target(*big), drafter(*small);
  const auto prompt = torch::tensor({3, 9, 4}, torch::kLong);
  const auto lesson = speculative_generate(target, drafter, prompt, 20, 4);
  const auto fast = speculative_generate_cached(target, drafter, prompt, 20, 4);
  CHECK(as_vector(fast.ids) == as_vector(lesson.ids));
  CHECK(fast.stats.target_passes == lesson.stats.target_passes);
}

TEST_CASE("early_exit_is_the_first_blocks_then_the_final_norm_and_the_head", "[specdec]") {
  torch::manual_seed(15);
  g2c::pretrained::LlamaModel llama(g2c::testing::tiny_llama_options().num_layers(3));
  const auto ids = torch::randint(0, 20, {1, 10}, torch::kLong);
  torch::NoGradGuard no_grad;
  // All blocks: the model itself.
  g2c::pretrained::LlamaEarlyExitModel whole(*llama, 3);
  CHECK(max_abs_diff(whole(ids), llama->forward(ids)) == 0.0);
  // One block, by hand: embedding, block 0, final norm, tied head.
  g2c::pretrained::LlamaEarlyExitModel one(*llama, 1);
  const auto by_hand = llama->head(llama->final_norm(
      llama->block_list[0]->forward(llama->token_embedding.index_select(0, ids[0]).unsqueeze(0))));
  CHECK(max_abs_diff(one(ids), by_hand) < 1e-5);
  // Its cache has one layer and continues the same rows, rolled back like the model's.
  auto cache = one.empty_cache();
  CHECK(cache.size() == 1);
  const auto head = one.forward(ids.narrow(1, 0, 4), cache);
  one.forward(torch::tensor({{1, 2}}, torch::kLong), cache);  // rejected, rolled back
  cache.truncate(4);
  const auto tail = one.forward(ids.narrow(1, 4, 6), cache);
  CHECK(max_abs_diff(torch::cat({head, tail}, 1), by_hand) < 1e-4);
  CHECK(one.vocab_size() == 20);
  CHECK(one.max_seq_len() == 32);
  CHECK_THROWS_AS(g2c::pretrained::LlamaEarlyExitModel(*llama, 0), g2c::ValueError);
  CHECK_THROWS_WITH(g2c::pretrained::LlamaEarlyExitModel(*llama, 4),
                    Catch::Contains("num_blocks must be 1..3"));
  auto model_cache = llama->empty_kv_cache(8);
  CHECK_THROWS_WITH(one.forward(ids, model_cache), Catch::Contains("has 3 layers for 1 blocks"));
}

TEST_CASE("smollm2s_head_of_a_few_rows_is_the_tied_product", "[specdec]") {
  // A verification pass's 2 to 8 rows take another order of the product (E @ hᵀ): the same
  // logits as h @ Eᵀ to float32 rounding, for every row count and leading shape.
  torch::manual_seed(19);
  g2c::pretrained::LlamaModel llama(g2c::testing::tiny_llama_options());
  torch::NoGradGuard no_grad;
  const auto embedding = llama->token_embedding.to(torch::kDouble);
  for (const std::int64_t rows : {1, 2, 3, 8, 9, 12}) {
    INFO(rows << " rows");
    const auto h = torch::randn({1, rows, 16});
    const auto logits = llama->head(h);
    CHECK(logits.sizes() == torch::IntArrayRef({1, rows, 20}));
    CHECK(max_abs_diff(logits.to(torch::kDouble), h.to(torch::kDouble).matmul(embedding.t())) <
          1e-5);
  }
  CHECK(llama->head(torch::randn({2, 3, 16})).sizes() == torch::IntArrayRef({2, 3, 20}));
}

TEST_CASE("prompt_lookup_copies_what_followed_the_latest_match", "[specdec]") {
  g2c::specdec::PromptLookupDrafter lookup(2);
  using Ids = std::vector<std::int64_t>;
  CHECK(lookup.propose({5, 6, 7, 5, 6}, 2) == Ids{7, 5});
  // Two earlier matches of [1, 2]: the latest wins; the copy stops where the context does.
  CHECK(lookup.propose({1, 2, 3, 1, 2, 4, 1, 2}, 5) == Ids{4, 1, 2});
  CHECK(lookup.propose({1, 2, 3, 1, 2, 4, 1, 2}, 1) == Ids{4});
  // No match of the last two ids: the last one alone.
  CHECK(lookup.propose({7, 8, 9, 8}, 2) == Ids{9, 8});
  CHECK(g2c::specdec::PromptLookupDrafter(3, 2).propose({7, 8, 9, 8}, 2).empty());
  CHECK(lookup.propose({1, 2, 3}, 4).empty());
  CHECK(lookup.propose({4}, 4).empty());
  CHECK(lookup.propose({5, 6, 5, 6}, 0).empty());
  CHECK_THROWS_WITH(g2c::specdec::PromptLookupDrafter(2, 0), Catch::Contains("1 <= min_ngram"));
  CHECK_THROWS_AS(g2c::specdec::PromptLookupDrafter(1, 2), g2c::ValueError);
}

namespace {

/// A drafter that proposes the same ids whatever the context, and counts its rollbacks.
class FixedDrafter : public g2c::specdec::Drafter {
 public:
  explicit FixedDrafter(std::vector<std::int64_t> proposal) : proposal_(std::move(proposal)) {}
  std::vector<std::int64_t> propose(const std::vector<std::int64_t>&, std::int64_t) override {
    return proposal_;
  }
  void rollback(std::int64_t) override { ++rollbacks; }
  std::int64_t rollbacks = 0;

 private:
  std::vector<std::int64_t> proposal_;
};

}  // namespace

TEST_CASE("speculative_generate_cached_with_any_drafter_is_greedy_decoding", "[specdec]") {
  auto target = random_lm(16, 24, 32, 2, 4, 64);
  TransformerLogitsModel scorer(*target);
  torch::manual_seed(17);
  const auto phrase = torch::randint(0, 24, {6}, torch::kLong);
  const auto prompt = torch::cat({phrase, phrase, phrase.narrow(0, 0, 3)});  // lookups match
  const auto greedy = as_vector(g2c::sampling::generate(
      target, prompt, 40, g2c::sampling::GenerateOptions().temperature(0.0)));
  for (const std::int64_t k : {1, 3, 6}) {
    INFO("k " << k);
    g2c::specdec::PromptLookupDrafter lookup;
    const auto fast = speculative_generate_cached(scorer, lookup, prompt, 40, k);
    CHECK(as_vector(fast.ids) == greedy);
    CHECK(fast.stats.generated == 40);
    CHECK(fast.stats.drafted <= k * fast.stats.target_passes);
    CHECK(fast.stats.accepted > 0);  // the prompt's own repeat, at least
  }
  // A drafter proposing more than k is cut to k; one with no proposal makes plain greedy steps.
  FixedDrafter long_guess({1, 2, 3, 4, 5, 6, 7, 8});
  const auto cut = speculative_generate_cached(scorer, long_guess, prompt, 40, 2);
  CHECK(as_vector(cut.ids) == greedy);
  CHECK(cut.stats.drafted <= 2 * cut.stats.target_passes);
  CHECK(long_guess.rollbacks == cut.stats.target_passes + 1);  // rollback(0) first
  FixedDrafter no_guess({});
  const auto plain = speculative_generate_cached(scorer, no_guess, prompt, 40, 4);
  CHECK(as_vector(plain.ids) == greedy);
  CHECK(plain.stats.target_passes == 40);
  CHECK(plain.stats.drafted == 0);
  // EOS at the third generated token, on SmolLM2's architecture with its own early exit drafting.
  torch::manual_seed(18);
  g2c::pretrained::LlamaModel llama(g2c::testing::tiny_llama_options());
  {
    torch::NoGradGuard no_grad;  // logits far apart: no near-tie for rounding to flip
    for (auto& p : llama->parameters()) p.mul_(3.0);
  }
  g2c::pretrained::LlamaScoringModel llama_target(*llama);
  g2c::pretrained::LlamaEarlyExitModel early(*llama, 1);
  const auto llama_prompt = torch::tensor({3, 9, 4, 3, 9}, torch::kLong);
  const auto llama_greedy =
      as_vector(g2c::specdec::greedy_generate_cached(llama_target, llama_prompt, 20));
  const auto eos = llama_greedy[7];
  const auto until_eos =
      as_vector(g2c::specdec::greedy_generate_cached(llama_target, llama_prompt, 20, eos));
  g2c::specdec::PromptLookupDrafter lookup;
  CHECK(
      as_vector(speculative_generate_cached(llama_target, lookup, llama_prompt, 20, 4, eos).ids) ==
      until_eos);
  CHECK(as_vector(speculative_generate_cached(llama_target, early, llama_prompt, 20, 3).ids) ==
        llama_greedy);
  CHECK(as_vector(speculative_generate_cached(llama_target, early, llama_prompt, 20, 3, eos).ids) ==
        until_eos);
}

TEST_CASE("smollm2_packed_scores_every_position_through_its_cache", "[specdec]") {
  G2C_SKIP_WITHOUT_SMOLLM2();
  auto smol = g2c::pretrained::load_pretrained_model("SmolLM2-135M-Instruct",
                                                     g2c::pretrained::LoadOptions().packed(true));
  g2c::pretrained::LlamaScoringModel scorer(*smol.model);
  const auto ids =
      torch::tensor(smol.tokenizer.encode("The quick brown fox jumps over the lazy dog"),
                    torch::kLong)
          .unsqueeze(0);
  torch::NoGradGuard no_grad;
  const auto full = scorer(ids);  // (1, T, V)
  REQUIRE(full.size(1) == ids.size(1));
  auto cache = scorer.empty_cache();
  const auto head = scorer.forward(ids.narrow(1, 0, 4), cache);
  scorer.forward(ids.narrow(1, 0, 3), cache);  // three rejected positions
  cache.truncate(4);
  const auto tail = scorer.forward(ids.narrow(1, 4, ids.size(1) - 4), cache);
  CHECK(max_abs_diff(torch::cat({head, tail}, 1), full) < 1e-3);
  // The model drafting for itself: every draft accepted, the greedy chain unchanged.
  const auto prompt = ids.squeeze(0);
  const auto fast = speculative_generate_cached(scorer, scorer, prompt, 8, 4);
  const auto lesson = speculative_generate(scorer, scorer, prompt, 8, 4);
  CHECK(as_vector(fast.ids) == as_vector(lesson.ids));
  CHECK(fast.stats.acceptance_rate() == 1.0);
}

TEST_CASE("mtp_loss_is_the_cross_entropy_two_ahead", "[specdec]") {
  torch::manual_seed(15);
  const auto logits = torch::randn({3, 9, 11}, torch::kDouble);
  const auto ids = torch::randint(0, 11, {3, 10}, torch::kLong);
  const auto expected = torch::nn::functional::cross_entropy(
      logits.narrow(1, 0, 8).reshape({-1, 11}), ids.narrow(1, 2, 8).reshape(-1));
  CHECK(std::abs(g2c::specdec::mtp_loss(logits, ids).item<double>() - expected.item<double>()) <
        1e-12);
  CHECK_THROWS_WITH(g2c::specdec::mtp_loss(logits, ids.narrow(1, 0, 9)),
                    Catch::Contains("(B, T - 1, V)"));
  CHECK_THROWS_WITH(g2c::specdec::mtp_loss(logits.narrow(1, 0, 1), ids.narrow(1, 0, 2)),
                    Catch::Contains("T >= 3"));
}

TEST_CASE("mtp_propose_reads_one_trunk_pass", "[specdec]") {
  auto base = random_lm(16, 24, 16, 2, 2, 10);
  torch::manual_seed(17);
  g2c::specdec::MTPHead head(base);
  const auto ctx = torch::randint(0, 24, {14}, torch::kLong);  // longer than the window: cropped
  const auto [next1, next2] = g2c::specdec::mtp_propose(*base, *head, ctx);
  torch::NoGradGuard no_grad;
  const auto window = ctx.narrow(0, 4, 10).unsqueeze(0);
  CHECK(next1 == base->forward(window)[0][-1].argmax().item<std::int64_t>());
  const auto hidden = base->hidden_states(window).narrow(1, 9, 1);
  CHECK(next2 == head->forward(hidden, torch::tensor({{next1}}, torch::kLong))[0][0]
                     .argmax()
                     .item<std::int64_t>());
  CHECK_THROWS_WITH(head->forward(hidden, torch::zeros({1, 2}, torch::kLong)),
                    Catch::Contains("next_ids must be (B, T')"));
}

TEST_CASE("mtp_generate_is_greedy_decoding_one_or_two_tokens_a_pass", "[specdec]") {
  auto base = random_lm(18, 24, 16, 2, 2, 40);
  torch::manual_seed(19);
  g2c::specdec::MTPHead head(base);
  for (const std::int64_t prompt_length : {1, 6}) {
    const auto prompt = torch::randint(0, 24, {prompt_length}, torch::kLong);
    const auto greedy = g2c::sampling::generate(base, prompt, 25,
                                                g2c::sampling::GenerateOptions().temperature(0.0));
    const auto run = g2c::specdec::mtp_generate(*base, *head, prompt, 25);
    INFO("prompt of " << prompt_length << ": " << run.stats);
    CHECK(as_vector(run.ids) == as_vector(greedy));
    CHECK(run.stats.generated == 25);
    // The first pass emits the base's token; every later one checks one draft and emits the
    // accepted draft and the base's token after it (the last pass possibly cut by the budget).
    CHECK(run.stats.drafted == run.stats.target_passes - 1);
    CHECK(run.stats.generated <= run.stats.target_passes + run.stats.accepted);
    CHECK(run.stats.generated >= run.stats.target_passes + run.stats.accepted - 1);

    const auto eos = as_vector(greedy)[static_cast<std::size_t>(prompt_length) + 4];
    const auto stopped = g2c::specdec::mtp_generate(*base, *head, prompt, 25, eos);
    const auto expected = g2c::sampling::generate(
        base, prompt, 25, g2c::sampling::GenerateOptions().temperature(0.0).eos_id(eos));
    CHECK(as_vector(stopped.ids) == as_vector(expected));
  }
  CHECK(g2c::specdec::mtp_generate(*base, *head, torch::tensor({3}, torch::kLong), 0).ids.numel() ==
        1);
  CHECK_THROWS_AS(g2c::specdec::mtp_generate(*base, *head, torch::tensor({3}, torch::kLong), -1),
                  g2c::ValueError);
}

TEST_CASE("spec_stats_add_up_over_runs", "[specdec]") {
  g2c::specdec::SpecStats total, one, two;
  one.record(4, 3, 4);
  two.record(2, 0, 1);
  two.record(2, 2, 3);
  total += one;
  total += two;
  CHECK(total.target_passes == 3);
  CHECK(total.drafted == 8);
  CHECK(total.accepted == 5);
  CHECK(total.generated == 8);
  CHECK(total.tokens_per_pass() == Approx(8.0 / 3.0));
}
