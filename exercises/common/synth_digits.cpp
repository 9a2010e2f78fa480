#include "exercises/common/synth_digits.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "g2c/core/atomic_file.h"
#include "g2c/core/errors.h"
#include "g2c/core/sha256.h"
#include "g2c/pretraining/model_artifact.h"

namespace g2c::exercises {

namespace {

constexpr int kSynthSide = 28;
constexpr const char* kBuilder = "synth_digits28 v1";  // change it when the drawing changes

using Point = std::pair<double, double>;  // x right, y down, in a unit box
using Stroke = std::vector<Point>;        // a polyline
using Skeleton = std::vector<Stroke>;

Stroke ellipse(double cx, double cy, double rx, double ry, double from = 0, double to = 2 * M_PI) {
  Stroke stroke;
  for (int i = 0; i <= 20; ++i) {
    const double a = from + (to - from) * i / 20.0;
    stroke.emplace_back(cx + rx * std::sin(a), cy - ry * std::cos(a));
  }
  return stroke;
}

/// The hand-made skeletons, by class.
const std::vector<std::vector<Skeleton>>& skeletons() {
  static const std::vector<std::vector<Skeleton>> all = {
      {{ellipse(0.5, 0.5, 0.28, 0.4)}},
      {{{{0.5, 0.1}, {0.5, 0.9}}, {{0.33, 0.27}, {0.5, 0.1}}},
       {{{0.52, 0.1}, {0.48, 0.9}}, {{0.32, 0.9}, {0.66, 0.9}}, {{0.36, 0.24}, {0.52, 0.1}}}},
      {{{{0.26, 0.3},
         {0.34, 0.15},
         {0.52, 0.1},
         {0.7, 0.18},
         {0.72, 0.36},
         {0.5, 0.6},
         {0.26, 0.88},
         {0.78, 0.88}}}},
      {{{{0.26, 0.16},
         {0.58, 0.1},
         {0.72, 0.27},
         {0.5, 0.47},
         {0.73, 0.64},
         {0.66, 0.87},
         {0.26, 0.86}}}},
      {{{{0.64, 0.9}, {0.64, 0.1}, {0.2, 0.64}, {0.82, 0.64}}},
       {{{0.3, 0.1}, {0.24, 0.55}, {0.78, 0.55}}, {{0.66, 0.2}, {0.66, 0.9}}}},
      {{{{0.74, 0.1},
         {0.32, 0.1},
         {0.29, 0.45},
         {0.55, 0.4},
         {0.72, 0.55},
         {0.7, 0.78},
         {0.5, 0.9},
         {0.26, 0.84}}}},
      {{{{0.66, 0.1},
         {0.42, 0.3},
         {0.29, 0.6},
         {0.35, 0.84},
         {0.55, 0.9},
         {0.7, 0.75},
         {0.65, 0.55},
         {0.45, 0.5},
         {0.3, 0.62}}}},
      {{{{0.2, 0.1}, {0.8, 0.1}, {0.42, 0.9}}},
       {{{0.22, 0.12}, {0.8, 0.12}, {0.46, 0.9}}, {{0.38, 0.5}, {0.74, 0.5}}}},
      {{ellipse(0.5, 0.3, 0.2, 0.19), ellipse(0.5, 0.7, 0.25, 0.21)}},
      {{ellipse(0.5, 0.32, 0.21, 0.2), {{0.71, 0.32}, {0.62, 0.9}}},
       {ellipse(0.48, 0.3, 0.2, 0.18), {{0.68, 0.3}, {0.68, 0.9}}}},
  };
  return all;
}

/// One image: the skeleton's points jittered, transformed and mapped into the 20 × 20 box MNIST
/// centres its digits in; the strokes rendered by distance to their segments.
torch::Tensor render(const Skeleton& skeleton, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto between = [&](double lo, double hi) { return lo + (hi - lo) * unit(rng); };
  const double angle = between(-15, 15) * M_PI / 180, scale = between(0.8, 1.05);
  const double shear = between(-0.2, 0.2), dx = between(-3, 3), dy = between(-3, 3);
  const double half_width = between(0.8, 1.6);
  std::normal_distribution<double> jitter(0.0, 0.02);
  std::vector<float> segments;  // x0, y0, x1, y1 in pixels
  for (const auto& stroke : skeleton) {
    std::vector<Point> pixels;
    for (const auto& [x, y] : stroke) {
      const double u = (x + jitter(rng) - 0.5) * scale, v = (y + jitter(rng) - 0.5) * scale;
      const double su = u + shear * v;  // shear, then rotate, about the centre
      const double ru = std::cos(angle) * su - std::sin(angle) * v;
      const double rv = std::sin(angle) * su + std::cos(angle) * v;
      pixels.emplace_back(13.5 + 20 * ru + dx, 13.5 + 20 * rv + dy);
    }
    for (std::size_t i = 0; i + 1 < pixels.size(); ++i) {
      segments.insert(
          segments.end(),
          {static_cast<float>(pixels[i].first), static_cast<float>(pixels[i].second),
           static_cast<float>(pixels[i + 1].first), static_cast<float>(pixels[i + 1].second)});
    }
  }
  const auto s = torch::tensor(segments).reshape({-1, 4});  // (S, 4)
  const auto coords = torch::arange(kSynthSide, torch::kFloat32);
  const auto py = coords.view({kSynthSide, 1, 1}).expand({kSynthSide, kSynthSide, 1});
  const auto px = coords.view({1, kSynthSide, 1}).expand({kSynthSide, kSynthSide, 1});
  const auto ax = s.select(1, 0), ay = s.select(1, 1);
  const auto ex = s.select(1, 2) - ax, ey = s.select(1, 3) - ay;  // (S)
  const auto length2 = (ex * ex + ey * ey).clamp_min(1e-6);
  const auto t = (((px - ax) * ex + (py - ay) * ey) / length2).clamp(0, 1);  // (28, 28, S)
  const auto distance = ((px - ax - t * ex).pow(2) + (py - ay - t * ey).pow(2)).sqrt();
  auto image = (half_width + 0.5 - std::get<0>(distance.min(-1))).clamp(0, 1);  // (28, 28)
  // A light blur of random strength, then pixel noise.
  const auto kernel = torch::tensor({1.0f, 2.0f, 1.0f});
  const auto blur2d = (kernel.view({3, 1}) * kernel.view({1, 3}) / 16.0).view({1, 1, 3, 3});
  const auto blurred = torch::conv2d(image.view({1, 1, kSynthSide, kSynthSide}), blur2d, {}, 1, 1)
                           .view({kSynthSide, kSynthSide});
  const double mix = between(0.0, 0.7);
  image = (1 - mix) * image + mix * blurred;
  std::normal_distribution<float> noise(0.0f, 0.04f);
  std::vector<float> grain(kSynthSide * kSynthSide);
  for (auto& g : grain) g = noise(rng);
  return (image + torch::tensor(grain).view({kSynthSide, kSynthSide})).clamp(0, 1);
}

std::string to_csv(const Digits& digits) {
  const auto bytes = (digits.images * 255).round().to(torch::kUInt8).reshape({digits.size(), -1});
  std::string text;
  for (std::int64_t i = 0; i < digits.size(); ++i) {
    const auto row = bytes[i].contiguous();
    const auto* p = row.data_ptr<std::uint8_t>();
    for (int j = 0; j < kSynthSide * kSynthSide; ++j) text += fmt::format("{},", p[j]);
    text += fmt::format("{}\n", digits.labels[i].item<std::int64_t>());
  }
  return text;
}

}  // namespace

Digits synth_digits28(std::int64_t per_class, std::uint64_t seed) {
  if (per_class <= 0)
    throw g2c::ValueError(fmt::format("per_class must be > 0, got {}", per_class));
  std::mt19937_64 rng(seed);
  std::vector<torch::Tensor> images;
  std::vector<std::int64_t> labels;
  for (std::int64_t digit = 0; digit < 10; ++digit) {
    const auto& shapes = skeletons()[static_cast<std::size_t>(digit)];
    for (std::int64_t i = 0; i < per_class; ++i) {
      images.push_back(render(shapes[static_cast<std::size_t>(i) % shapes.size()], rng));
      labels.push_back(digit);
    }
  }
  // Quantised as stored, so that a set read back equals the one built.
  return {(torch::stack(images) * 255).round() / 255, torch::tensor(labels)};
}

Digits stored_synth_digits28(std::int64_t per_class, std::uint64_t seed) {
  const auto folder = g2c::pretraining::models_root().parent_path() / "datasets" /
                      fmt::format("synth28-{}-{}", per_class, seed);
  const auto csv = folder / "digits.csv", manifest_path = folder / "manifest.json";
  const nlohmann::json wanted = {{"builder", kBuilder}, {"seed", seed}, {"per_class", per_class}};
  if (std::filesystem::exists(csv) && std::filesystem::exists(manifest_path)) {
    try {
      const auto manifest = nlohmann::json::parse(g2c::read_file(manifest_path));
      if (manifest.value("builder", "") == kBuilder && manifest.value("seed", 0ULL) == seed &&
          manifest.value("per_class", 0LL) == per_class &&
          manifest.value("sha256", "") == g2c::sha256_file_hex(csv)) {
        return read_digit_csv(csv, kSynthSide, 255);
      }
    } catch (const std::exception&) {
      // a damaged manifest or file: build the set again below
    }
  }
  auto digits = synth_digits28(per_class, seed);
  const auto text = to_csv(digits);
  g2c::write_file_atomic(csv, text);
  auto manifest = wanted;
  manifest["count"] = digits.size();
  manifest["counts_per_class"] = per_class;
  manifest["sha256"] = g2c::sha256_hex(text);
  manifest["description"] =
      "SynthDigits-28: generated 28 x 28 digits (stroke skeletons, random affine, stroke width, "
      "blur, noise); not MNIST. One line a digit: 784 pixels 0..255 row by row, then the label.";
  g2c::write_json_atomic(manifest_path, manifest);
  return digits;
}

}  // namespace g2c::exercises
