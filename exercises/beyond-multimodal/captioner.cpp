#include "exercises/beyond-multimodal/captioner.h"

#include <chrono>

#include <fmt/format.h>

#include "exercises/common/tensor_json.h"
#include "g2c/core/errors.h"
#include "g2c/core/progress.h"
#include "g2c/multimodal/patches.h"
#include "g2c/nn/optim.h"
#include "g2c/sft/loss.h"
#include "g2c/training/schedule.h"

namespace g2c::exercises::multimodal {

namespace mm = g2c::multimodal;

nlohmann::json CaptionerRun::to_json() const {
  return {
      {"eval_steps", eval_steps}, {"train_loss", train_loss}, {"held_out_loss", held_out_loss},
      {"test", test.to_json()},   {"no_digit", no_digit},     {"confusion", matrix_json(confusion)},
      {"examples", examples},     {"parameters", parameters}, {"train_seconds", train_seconds}};
}

torch::Tensor permute_patches(const torch::Tensor& images, std::int64_t patch_size,
                              const torch::Tensor& order) {
  const auto B = images.size(0), H = images.size(1), W = images.size(2), p = patch_size;
  const auto patches = mm::patchify(images, p).index_select(1, order);  // (B, N, p²)
  // The inverse of patchify: (B, H/p, W/p, p, p) -> (B, H/p, p, W/p, p) -> (B, H, W).
  return patches.reshape({B, H / p, W / p, p, p}).permute({0, 1, 3, 2, 4}).reshape({B, H, W});
}

torch::Tensor generate_captions(mm::MultimodalLM& model, const torch::Tensor& images,
                                std::int64_t length) {
  torch::NoGradGuard no_grad;
  const auto B = images.size(0);
  const auto patches = model->patch_embed->num_patches(images.size(1), images.size(2));
  auto ids = torch::full({B, patches + 2}, mm::IMAGE_PATCH_ID, torch::kLong).to(images.device());
  ids.select(1, 0).fill_(mm::IMAGE_START_ID);
  ids.select(1, patches + 1).fill_(mm::IMAGE_END_ID);
  for (std::int64_t i = 0; i < length; ++i) {
    const auto next = model(ids, images).select(1, ids.size(1) - 1).argmax(-1);  // (B)
    ids = torch::cat({ids, next.unsqueeze(1)}, 1);
  }
  return ids.narrow(1, patches + 2, length).cpu();
}

std::int64_t first_digit(const torch::Tensor& caption) {
  const auto ids = caption.contiguous();
  for (std::int64_t i = 0; i < ids.size(0); ++i) {
    const auto digit = mm::digit_of(ids[i].item<std::int64_t>());
    if (digit >= 0) return digit;
  }
  return -1;
}

CaptionerRun train_captioner(const DigitSplit& split, const CaptionerConfig& config,
                             torch::Device device, bool quiet) {
  const auto p = config.patch_size;
  if (config.batch_size > split.train.size()) {
    throw g2c::ValueError(fmt::format("--batch-size {} is more than the {} training images",
                                      config.batch_size, split.train.size()));
  }
  const auto prepared = [&](const torch::Tensor& images) {
    return config.patch_order.defined() ? permute_patches(images, p, config.patch_order) : images;
  };
  const auto train_images = prepared(split.train.images), test_images = prepared(split.test.images);
  const auto held_out = mm::build_caption_batch(test_images, split.test.labels, p);
  const auto T = held_out.x.size(1);

  torch::manual_seed(config.seed);
  g2c::transformer::TransformerLM lm(
      g2c::transformer::TransformerLMOptions(mm::VOCAB_SIZE, config.embedding_dim,
                                             config.num_layers, config.num_heads, T)
          .hidden_dim(config.hidden_dim));
  mm::MultimodalLM model(lm, p);
  model->to(device);
  g2c::nn::AdamW optimizer(model->parameters(), config.lr, {0.9, 0.999}, 1e-8, config.weight_decay);

  CaptionerRun run;
  for (const auto& parameter : model->parameters()) run.parameters += parameter.numel();
  auto generator = at::make_generator<at::CPUGeneratorImpl>(config.seed + 1);
  auto order = torch::randperm(split.train.size(), generator);
  std::int64_t cursor = 0;
  double loss_sum = 0;
  std::int64_t loss_count = 0;
  g2c::Progress progress(fmt::format("captioner, patch {}", p), config.steps, !quiet);
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t step = 1; step <= config.steps; ++step) {
    if (cursor + config.batch_size > order.size(0)) {  // a new epoch, a new order
      order = torch::randperm(split.train.size(), generator);
      cursor = 0;
    }
    const auto rows = order.narrow(0, cursor, config.batch_size);
    cursor += config.batch_size;
    const auto batch = mm::build_caption_batch(train_images.index_select(0, rows),
                                               split.train.labels.index_select(0, rows), p);
    optimizer.lr = g2c::training::cosine_with_warmup(step - 1, config.warmup_steps, config.steps,
                                                     config.lr, config.lr * config.min_lr_ratio);
    model->train();
    const auto logits = model(batch.x.to(device), batch.images.to(device));
    const auto loss =
        g2c::sft::masked_cross_entropy(logits, batch.y.to(device), batch.loss_mask.to(device));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    loss_sum += loss.item<double>();
    ++loss_count;
    if (step % config.eval_every == 0 || step == config.steps) {
      torch::NoGradGuard no_grad;
      model->eval();
      const auto held =
          g2c::sft::masked_cross_entropy(model(held_out.x.to(device), held_out.images.to(device)),
                                         held_out.y.to(device), held_out.loss_mask.to(device));
      run.eval_steps.push_back(step);
      run.train_loss.push_back(loss_sum / static_cast<double>(loss_count));
      run.held_out_loss.push_back(held.item<double>());
      loss_sum = 0;
      loss_count = 0;
      progress.update(step, fmt::format("loss {:.3f} held-out {:.3f}", run.train_loss.back(),
                                        run.held_out_loss.back()));
    }
  }
  run.train_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.finish();

  model->eval();
  const auto captions = generate_captions(model, test_images.to(device));  // (N, 6)
  std::vector<std::int64_t> predicted;
  for (std::int64_t i = 0; i < captions.size(0); ++i) predicted.push_back(first_digit(captions[i]));
  const auto predicted_t = torch::tensor(predicted);
  const auto named = predicted_t >= 0;
  run.no_digit = (~named).sum().item<std::int64_t>();
  run.test = {(predicted_t == split.test.labels).sum().item<std::int64_t>(), split.test.size()};
  run.confusion = confusion_matrix(predicted_t.index({named}), split.test.labels.index({named}));
  for (std::int64_t i = 0; i < std::min<std::int64_t>(8, captions.size(0)); ++i) {
    const auto ids = captions[i].contiguous();
    run.examples.push_back(
        fmt::format("digit {}: {}", split.test.labels[i].item<std::int64_t>(),
                    mm::decode_ids({ids.data_ptr<std::int64_t>(),
                                    ids.data_ptr<std::int64_t>() + ids.numel()})));
  }
  return run;
}

}  // namespace g2c::exercises::multimodal
