// Framework checks for the Beyond module multimodal: patchify against LibTorch's own unfold, the
// splice's gradients against finite differences in float64, and the provided batch builder and
// checks on bad input.
#include <cstdint>
#include <tuple>

#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "g2c/core/errors.h"
#include "g2c/multimodal/model.h"
#include "g2c/multimodal/patches.h"
#include "g2c/multimodal/vocab.h"
#include "g2c/transformer/transformer_lm.h"
#include "g2c_test.h"
#include "one_thread.h"
#include "torch_test.h"

using g2c::multimodal::build_caption_batch;
using g2c::multimodal::IMAGE_PATCH_ID;
using g2c::multimodal::MultimodalLM;
using g2c::multimodal::PatchEmbedding;
using g2c::multimodal::patchify;
using g2c::multimodal::VOCAB_SIZE;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

}  // namespace

TEST_CASE("patchify_matches_torch_unfold") {
  // unfold(1, p, p).unfold(2, p, p) cuts (B, H, W) into (B, H/p, W/p, p, p): the same patches,
  // counted by a different route.
  torch::manual_seed(11);
  const auto shape = GENERATE(std::make_tuple(2, 28, 28, 7), std::make_tuple(3, 8, 8, 2),
                              std::make_tuple(1, 8, 8, 4), std::make_tuple(2, 6, 10, 2),
                              std::make_tuple(1, 5, 5, 5), std::make_tuple(1, 3, 6, 1));
  const auto [B, H, W, p] = shape;
  const auto images = torch::randn({B, H, W}, torch::kDouble);
  const auto expected =
      images.unfold(1, p, p).unfold(2, p, p).reshape({B, (H / p) * (W / p), p * p});
  INFO("B " << B << ", " << H << " × " << W << ", p " << p);
  CHECK(torch::equal(patchify(images, p), expected));
}

TEST_CASE("multimodal_forward_float64_gradients_match_finite_differences") {
  torch::manual_seed(12);
  TransformerLM lm(TransformerLMOptions(VOCAB_SIZE, 4, 1, 2, 16).hidden_dim(8));
  MultimodalLM mm(lm, 2);
  mm->to(torch::kDouble);
  const auto batch =
      build_caption_batch(torch::rand({2, 4, 4}, torch::kDouble), torch::tensor({1, 8}), 2);
  const auto images = batch.images.to(torch::kDouble).set_requires_grad(true);
  const auto weights = torch::randn({2, batch.x.size(1), VOCAB_SIZE}, torch::kDouble);
  auto objective = [&] { return (torch::log_softmax(mm(batch.x, images), -1) * weights).sum(); };
  // Every parameter (the token table through the text rows and the head, the projection through
  // the placeholders) and the pixels themselves.
  auto tensors = mm->parameters();
  tensors.push_back(images);
  g2c::testing::check_gradients(objective, tensors, 1e-7);
}

TEST_CASE("build_caption_batch_pads_scales_and_refuses_bad_input") {
  const auto images = torch::full({2, 4, 4}, 255, torch::kUInt8);
  const auto labels = torch::tensor({3, 9});
  const auto padded = build_caption_batch(images, labels, 2, /*pad_to=*/20);
  CHECK(padded.x.sizes() == torch::IntArrayRef({2, 19}));
  CHECK(torch::equal(padded.images, torch::ones({2, 4, 4})));  // 255 / 255, once
  CHECK(padded.loss_mask.sum().item<std::int64_t>() == 12);    // padding never counts
  // 12 ids a row (<img>, 4 patches, </img>, 6 caption ids): y[10] is the last of them.
  CHECK(g2c::multimodal::decode_ids({padded.y[0][10].item<std::int64_t>()}) == "<end>");
  CHECK((padded.y.narrow(1, 11, 8) == g2c::multimodal::PAD_ID).all().item<bool>());
  // Float pixels are taken as they are: the batch builder is the one place uint8 gets scaled.
  const auto floats = torch::rand({2, 4, 4});
  CHECK(torch::equal(build_caption_batch(floats, labels, 2).images, floats));

  CHECK_THROWS_MATCHES(build_caption_batch(images, labels, 2, 10), g2c::ValueError,
                       MessageContains("pad_to"));
  CHECK_THROWS_MATCHES(build_caption_batch(images, labels, 3), g2c::ValueError,
                       MessageContains("does not divide"));
  CHECK_THROWS_AS(build_caption_batch(images, torch::tensor({3, 10}), 2), g2c::ValueError);
  CHECK_THROWS_AS(build_caption_batch(images, torch::tensor({3}), 2), g2c::ValueError);
  CHECK_THROWS_AS(build_caption_batch(images.unsqueeze(1), labels, 2), g2c::ValueError);
  CHECK_THROWS_AS(build_caption_batch(images, torch::tensor({0.5, 1.0}), 2), g2c::ValueError);
}

TEST_CASE("multimodal_construction_and_inputs_are_checked") {
  CHECK_THROWS_AS(PatchEmbedding(0, 4), g2c::ValueError);
  CHECK_THROWS_AS(PatchEmbedding(2, 0), g2c::ValueError);
  using g2c::multimodal::check_patchable;  // what patchify starts with
  CHECK_THROWS_MATCHES(check_patchable(torch::zeros({1, 4, 4}, torch::kUInt8), 2), g2c::ValueError,
                       MessageContains("floating-point"));
  CHECK_THROWS_AS(check_patchable(torch::zeros({4, 4}), 2), g2c::ValueError);
  CHECK_THROWS_AS(check_patchable(torch::zeros({1, 4, 4}), 0), g2c::ValueError);
  CHECK_NOTHROW(check_patchable(torch::zeros({1, 4, 6}), 2));

  TransformerLM small(TransformerLMOptions(2, 4, 0, 2, 8));  // no id 2 in a vocabulary of 2
  CHECK_THROWS_MATCHES(MultimodalLM(small, 2), g2c::ValueError, MessageContains("patch_token_id"));

  TransformerLM lm(TransformerLMOptions(VOCAB_SIZE, 4, 0, 2, 8));
  MultimodalLM mm(lm, 2);
  // Parameters: the language model's, then the projection's.
  const auto params = mm->parameters();
  REQUIRE(params.size() == lm->parameters().size() + 2);
  CHECK(params[params.size() - 2].is_same(mm->patch_embed->proj->W));
  const auto ids = torch::full({1, 6}, IMAGE_PATCH_ID, torch::kLong);
  CHECK_THROWS_AS(mm->check_input(ids, torch::zeros({1, 4, 4}, torch::kUInt8)), g2c::ValueError);
  CHECK_THROWS_MATCHES(mm->check_input(ids, torch::zeros({2, 4, 4})), g2c::ValueError,
                       MessageContains("rows"));
  CHECK_THROWS_AS(mm->check_input(torch::zeros({1, 9}, torch::kLong), torch::zeros({1, 4, 4})),
                  g2c::ValueError);
  CHECK_THROWS_AS(
      mm->check_input(torch::full({1, 4}, VOCAB_SIZE, torch::kLong), torch::zeros({1, 4, 4})),
      g2c::ValueError);
  CHECK_THROWS_AS(mm->check_input(ids, torch::zeros({1, 4})), g2c::ValueError);
}
