// Beyond module multimodal course tests: one for one with the Python edition's
// tests/test_multimodal.py, plus the additions listed in tests/course_tests.txt. Tests tagged
// [clean] pass on the scaffold: the caption vocabulary and build_caption_batch are provided.
//
// Suggested order: patchify (patchify_*: the round trip is the anchor — patchify is pure indexing,
// and if the inverse rebuilds the image exactly the fiddliest arithmetic is right before any model
// exists), then PatchEmbedding::forward (patch_embedding_*), both in g2c/multimodal/patches.cpp;
// then MultimodalLM::forward (splice_*, g2c/multimodal/model.cpp), which also needs modules 05 and
// 09 (08 for the one-block model; yours, or `-DG2C_SOLUTIONS=05-09,multimodal`).
// splice_preserves_text_positions pins the seam where the real bugs live.
#include <cstdint>
#include <utility>
#include <vector>

#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "g2c/core/errors.h"
#include "g2c/multimodal/model.h"
#include "g2c/multimodal/patches.h"
#include "g2c/multimodal/vocab.h"
#include "g2c/transformer/transformer_lm.h"
#include "one_thread.h"
#include "torch_test.h"

using g2c::multimodal::build_caption_batch;
using g2c::multimodal::caption_ids;
using g2c::multimodal::decode_ids;
using g2c::multimodal::IMAGE_END_ID;
using g2c::multimodal::IMAGE_PATCH_ID;
using g2c::multimodal::IMAGE_START_ID;
using g2c::multimodal::MultimodalLM;
using g2c::multimodal::PatchEmbedding;
using g2c::multimodal::patchify;
using g2c::multimodal::VOCAB_SIZE;
using g2c::testing::max_abs_diff;
using g2c::testing::py_allclose;
using g2c::transformer::TransformerLM;
using g2c::transformer::TransformerLMOptions;

namespace {

[[maybe_unused]] const bool kOneThread = g2c::testing::use_one_intra_op_thread();

constexpr std::int64_t D = 16;

MultimodalLM tiny_mm(std::int64_t num_layers = 0) {
  TransformerLM lm(TransformerLMOptions(VOCAB_SIZE, D, num_layers, /*num_heads=*/2,
                                        /*max_seq_len=*/64));
  return MultimodalLM(lm, /*patch_size=*/7);
}

std::vector<double> values(const torch::Tensor& t) {
  const auto flat = t.to(torch::kDouble).contiguous().flatten();
  return {flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel()};
}

/// ids whose placeholders are `mask`, rows of logits selected: Python's logits[mask].
torch::Tensor rows_where(const torch::Tensor& logits, const torch::Tensor& mask) {
  return logits.index({mask});
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Provided plumbing: green from the start.
// ---------------------------------------------------------------------------------------------

TEST_CASE("caption_vocab_roundtrip", "[clean]") {
  const auto ids = caption_ids(7);
  CHECK(ids.size() == 6);
  CHECK(decode_ids(ids) == "This is a 7 . <end>");
  CHECK_THROWS_AS(caption_ids(10), g2c::ValueError);
}

TEST_CASE("build_caption_batch_shapes_and_mask", "[clean]") {
  const auto images = torch::randint(0, 256, {3, 28, 28}, torch::kUInt8);
  const auto labels = torch::tensor({0, 7, 9}, torch::kLong);
  const auto batch = build_caption_batch(images, labels, 7);
  const std::int64_t T = 2 + 16 + 6;  // image boundaries + patches + caption
  CHECK(batch.x.sizes() == torch::IntArrayRef({3, T - 1}));
  CHECK(batch.y.sizes() == torch::IntArrayRef({3, T - 1}));
  CHECK(batch.loss_mask.sizes() == torch::IntArrayRef({3, T - 1}));
  // the loss fires exactly on the six caption targets of each row
  CHECK((batch.loss_mask.sum(-1) == 6).all().item<bool>());
  // The boundaries stay ordinary tokens; only the patch slots are overwritten.
  CHECK(((batch.x == IMAGE_START_ID).sum(-1) == 1).all().item<bool>());
  CHECK(((batch.x == IMAGE_PATCH_ID).sum(-1) == 16).all().item<bool>());
  CHECK(((batch.x == IMAGE_END_ID).sum(-1) == 1).all().item<bool>());
  CHECK((batch.loss_mask.index({batch.y == IMAGE_PATCH_ID}) == 0).all().item<bool>());
  CHECK((batch.loss_mask.index({batch.y == IMAGE_END_ID}) == 0).all().item<bool>());
  // pixels scaled exactly once
  CHECK(batch.images.scalar_type() == torch::kFloat32);
  CHECK(batch.images.max().item<double>() <= 1.0);
}

// ---------------------------------------------------------------------------------------------
// patchify
// ---------------------------------------------------------------------------------------------

TEST_CASE("patchify_shape", "[todo]") {
  const auto patches = patchify(torch::randn({2, 28, 28}), 7);
  CHECK(patches.sizes() == torch::IntArrayRef({2, 16, 49}));
}

TEST_CASE("patchify_rejects_indivisible", "[todo]") {
  CHECK_THROWS_AS(patchify(torch::randn({1, 28, 28}), 5), g2c::ValueError);
}

TEST_CASE("patchify_values_tiny_grid", "[todo]") {
  // A 4 × 4 image in 2 × 2 patches: row-major order, checkable by hand.
  const auto image = torch::arange(16.0).reshape({1, 4, 4});
  const auto patches = patchify(image, 2);
  REQUIRE(patches.sizes() == torch::IntArrayRef({1, 4, 4}));
  CHECK(values(patches[0][0]) == std::vector<double>{0, 1, 4, 5});  // top left
  CHECK(values(patches[0][1]) == std::vector<double>{2, 3, 6, 7});  // top right
  CHECK(values(patches[0][2]) == std::vector<double>{8, 9, 12, 13});
  CHECK(values(patches[0][3]) == std::vector<double>{10, 11, 14, 15});
}

TEST_CASE("patchify_roundtrip", "[todo]") {
  // patchify loses nothing: the inverse permute rebuilds the images exactly.
  torch::manual_seed(0);
  const auto images = torch::randn({3, 28, 28});
  const std::int64_t p = 7, g = 28 / p;
  const auto patches = patchify(images, p);
  const auto rebuilt =
      patches.reshape({3, g, g, p, p}).permute({0, 1, 3, 2, 4}).reshape({3, 28, 28});
  CHECK(torch::equal(rebuilt, images));
}

TEST_CASE("patchify_handles_rectangular_images", "[todo]") {
  // Every Python image is square, so a grid width taken from H instead of W passes them all.
  // A 4 × 6 image of 0..23 in 2 × 2 patches is a 2 × 3 grid.
  const auto image = torch::arange(24.0).reshape({1, 4, 6});
  const auto patches = patchify(image, 2);
  INFO("the grid is (H / p) rows by (W / p) columns: take each from its own side");
  REQUIRE(patches.sizes() == torch::IntArrayRef({1, 6, 4}));
  CHECK(values(patches[0][0]) == std::vector<double>{0, 1, 6, 7});
  CHECK(values(patches[0][2]) == std::vector<double>{4, 5, 10, 11});  // top right
  CHECK(values(patches[0][3]) == std::vector<double>{12, 13, 18, 19});
  CHECK(values(patches[0][5]) == std::vector<double>{16, 17, 22, 23});
  CHECK_THROWS_AS(patchify(torch::randn({1, 4, 6}), 4), g2c::ValueError);  // 4 tiles H, not W
}

// ---------------------------------------------------------------------------------------------
// PatchEmbedding
// ---------------------------------------------------------------------------------------------

TEST_CASE("patch_embedding_shape", "[todo]") {
  torch::manual_seed(1);
  PatchEmbedding pe(/*patch_size=*/7, /*embedding_dim=*/D);
  const auto out = pe(torch::randn({2, 28, 28}));
  CHECK(out.sizes() == torch::IntArrayRef({2, 16, D}));
  CHECK(pe->num_patches(28, 28) == 16);
}

TEST_CASE("patch_embedding_gradient_reaches_projection", "[todo]") {
  torch::manual_seed(2);
  PatchEmbedding pe(7, D);
  pe(torch::randn({1, 28, 28})).sum().backward();
  const auto grad = pe->proj->W.grad();
  REQUIRE(grad.defined());
  CHECK(grad.abs().sum().item<double>() > 0);
}

TEST_CASE("patch_embedding_is_patchify_then_project", "[todo]") {
  // The shape and gradient tests pass a forward that scales the pixels again, or adds anything
  // else on the way. The embedding is the projection of the patches, nothing more.
  torch::manual_seed(3);
  PatchEmbedding pe(2, 5);
  const auto images = torch::rand({2, 4, 6});
  // The patches by hand: patch (r, c) of image b holds pixels [2r, 2r+1] × [2c, 2c+1].
  auto expected = torch::empty({2, 6, 5});
  for (int b = 0; b < 2; ++b) {
    for (int r = 0; r < 2; ++r) {
      for (int c = 0; c < 3; ++c) {
        const auto patch = images[b].narrow(0, 2 * r, 2).narrow(1, 2 * c, 2).reshape({1, 4});
        expected[b][r * 3 + c] = (torch::matmul(patch, pe->proj->W) + pe->proj->b)[0];
      }
    }
  }
  INFO("forward = proj(patchify(images, patch_size)): the pixels arrive scaled already");
  CHECK(py_allclose(pe(images), expected, 1e-6));
}

// ---------------------------------------------------------------------------------------------
// The splice
// ---------------------------------------------------------------------------------------------

TEST_CASE("splice_forward_shape", "[todo]") {
  torch::manual_seed(3);
  auto mm = tiny_mm(1);
  const auto batch = build_caption_batch(torch::rand({2, 28, 28}), torch::tensor({3, 5}), 7);
  const auto logits = mm(batch.x, batch.images);
  CHECK(logits.sizes() == torch::IntArrayRef({2, batch.x.size(1), VOCAB_SIZE}));
}

TEST_CASE("splice_preserves_text_positions", "[todo]") {
  // With zero blocks nothing mixes positions: changing the IMAGE must not change the logits at
  // TEXT positions, and must change them at the placeholders.
  torch::manual_seed(4);
  auto mm = tiny_mm(0);
  const auto labels = torch::tensor({3, 5});
  const auto first = build_caption_batch(torch::rand({2, 28, 28}), labels, 7);
  const auto second = build_caption_batch(torch::rand({2, 28, 28}), labels, 7);
  const auto logits1 = mm(first.x, first.images);
  const auto logits2 = mm(first.x, second.images);
  const auto placeholder = first.x == IMAGE_PATCH_ID;
  CHECK(py_allclose(rows_where(logits1, ~placeholder), rows_where(logits2, ~placeholder), 1e-5));
  CHECK_FALSE(
      py_allclose(rows_where(logits1, placeholder), rows_where(logits2, placeholder), 1e-3));
}

TEST_CASE("splice_count_mismatch_raises", "[todo]") {
  torch::manual_seed(5);
  auto mm = tiny_mm();
  // A batch built for patch 7 on 28 × 28 (16 placeholders), but 14 × 14 images give 4 patches.
  const auto batch = build_caption_batch(torch::rand({2, 28, 28}), torch::tensor({1, 2}), 7);
  CHECK_THROWS_AS(mm(batch.x, torch::rand({2, 14, 14})), g2c::ValueError);
}

TEST_CASE("splice_per_row_mismatch_raises_when_batch_total_matches", "[todo]") {
  // One row cannot borrow another row's placeholders.
  torch::manual_seed(6);
  auto mm = tiny_mm();
  const auto batch = build_caption_batch(torch::rand({2, 28, 28}), torch::tensor({1, 2}), 7);
  // The batch-wide count stays 32 while the rows go from [16, 16] to [15, 17]. A check of the
  // total alone misses it.
  auto x = batch.x.clone();
  x[0][1] = IMAGE_START_ID;
  x[1][x.size(1) - 1] = IMAGE_PATCH_ID;
  REQUIRE(values((x == IMAGE_PATCH_ID).sum(1)) == std::vector<double>{15, 17});
  CHECK_THROWS_AS(mm(x, batch.images), g2c::ValueError);
}

TEST_CASE("splice_two_images_one_sequence", "[todo]") {
  torch::manual_seed(7);
  auto mm = tiny_mm(1);
  // A row built by hand: two bounded images, then a caption.
  std::vector<std::int64_t> span = {IMAGE_START_ID};
  span.insert(span.end(), 16, IMAGE_PATCH_ID);
  span.push_back(IMAGE_END_ID);
  std::vector<std::int64_t> ids = span;
  ids.insert(ids.end(), span.begin(), span.end());
  for (const auto id : caption_ids(4)) ids.push_back(id);
  const auto x = torch::tensor(ids, torch::kLong).unsqueeze(0);
  const auto logits = mm(x, torch::rand({1, 2, 28, 28}));
  CHECK(logits.sizes() ==
        torch::IntArrayRef({1, static_cast<std::int64_t>(ids.size()), VOCAB_SIZE}));
}

TEST_CASE("splice_gradient_reaches_patch_projection", "[todo]") {
  torch::manual_seed(8);
  auto mm = tiny_mm(1);
  const auto batch = build_caption_batch(torch::rand({2, 28, 28}), torch::tensor({3, 5}), 7);
  mm(batch.x, batch.images).sum().backward();
  const auto grad = mm->patch_embed->proj->W.grad();
  REQUIRE(grad.defined());
  CHECK(grad.abs().sum().item<double>() > 0);
}

TEST_CASE("splice_places_each_image_at_its_own_placeholders", "[todo]") {
  // The two-image test checks a shape, so images spliced in the wrong order (or one row's patches
  // in another row) pass it. With zero blocks a placeholder's logits depend on its own patch only:
  // changing image n of row b must move exactly that image's run of placeholders.
  torch::manual_seed(9);
  auto mm = tiny_mm(0);
  std::vector<std::int64_t> span = {IMAGE_START_ID};
  span.insert(span.end(), 16, IMAGE_PATCH_ID);
  span.push_back(IMAGE_END_ID);
  std::vector<std::int64_t> row = span;             // <img> at 0, placeholders 1..16, </img> at 17
  row.insert(row.end(), span.begin(), span.end());  // <img> at 18, placeholders 19..34
  for (const auto id : caption_ids(2)) row.push_back(id);
  const auto x = torch::tensor(row, torch::kLong).unsqueeze(0).repeat({2, 1});  // (2, 42)
  const auto images = torch::rand({2, 2, 28, 28});
  const auto baseline = mm(x, images);
  INFO(
      "patches of image n of row b go, in order, to the placeholders of image n of row b: "
      "flatten (B, N) in that order, and fill the placeholders row by row");
  for (const auto& [b, n] : {std::pair{1, 0}, std::pair{0, 1}}) {
    auto changed = images.clone();
    changed[b][n] = torch::rand({28, 28});
    const auto moved = (mm(x, changed) - baseline).abs().sum(-1) > 1e-6;  // (2, T)
    auto expected = torch::zeros_like(moved);
    expected[b].narrow(0, 1 + 18 * n, 16).fill_(true);
    INFO("image " << n << " of row " << b << " changed");
    CHECK(torch::equal(moved, expected));
  }
}

TEST_CASE("splice_matches_the_language_model_before_the_first_image", "[todo]") {
  // Before the first placeholder a causal model cannot see the image: there the multimodal model
  // must compute exactly what the wrapped model computes on the same ids. The Python tests pin
  // shapes and the placeholders only, so a splice that skips the positions, the final norm or the
  // head's bias passes them all.
  torch::manual_seed(10);
  auto mm = tiny_mm(1);
  {
    torch::NoGradGuard no_grad;
    mm->lm->head_bias.normal_();  // zeros at initialisation would hide a missing bias
  }
  std::vector<std::int64_t> row = caption_ids(6);  // text first ...
  row.push_back(IMAGE_START_ID);
  row.insert(row.end(), 16, IMAGE_PATCH_ID);  // ... then the image
  row.push_back(IMAGE_END_ID);
  const auto x = torch::tensor(row, torch::kLong).unsqueeze(0);
  const auto ours = mm(x, torch::rand({1, 28, 28}));
  torch::NoGradGuard no_grad;
  const auto reference = mm->lm(x);  // module 09's forward, placeholders as ordinary tokens
  INFO(
      "after the splice, run the model's own pipeline: + pos_embed(T), every block, ln_final, "
      "the tied head + head_bias");
  CHECK(max_abs_diff(ours.narrow(1, 0, 7), reference.narrow(1, 0, 7)) < 1e-5);
}
