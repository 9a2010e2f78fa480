#include "exercises/09-transformer/train_on_stream.h"

#include "exercises/common/batches.h"

namespace g2c::exercises::toy {

void add_train_options(g2c::CommandLine& app, TrainSettings& settings) {
  app.add_option("--optimizer", settings.optimizer, "sgd (the lesson) or adamw")
      .one_of({"sgd", "adamw"});
  app.add_option("--lr", settings.lr, "Learning rate");
  app.add_option("--weight-decay", settings.weight_decay, "Decoupled weight decay").non_negative();
  app.add_option("--log-every", settings.log_every, "Record the loss every N steps").positive();
}

g2c::exercises::TrainResult train_on_stream(g2c::nn::Module& model, const torch::Tensor& stream,
                                            const TrainSettings& settings, const std::string& label,
                                            bool show_progress) {
  const auto optimizer = g2c::nn::make_optimizer(settings.optimizer, model.parameters(),
                                                 settings.lr, settings.weight_decay);
  g2c::exercises::WindowSampler batches(stream, settings.context_length, settings.batch_size,
                                        g2c::exercises::TargetRule::kNextToken,
                                        settings.batch_seed);
  return g2c::exercises::train_language_model(
      model, *optimizer, batches, /*validation=*/{},
      g2c::exercises::TrainLanguageModelOptions()
          .steps(settings.steps)
          .log_every(settings.log_every)
          .label(label)
          .show_progress(show_progress)
          .files_to_check({"g2c/transformer/layer_norm.cpp", "g2c/transformer/ffn.cpp",
                           "g2c/transformer/block.cpp", "g2c/transformer/transformer_lm.cpp",
                           settings.optimizer == "sgd" ? "g2c/nn/sgd.cpp" : "g2c/nn/adamw.cpp"}));
}

nlohmann::json settings_json(const TrainSettings& settings) {
  return {{"steps", settings.steps},
          {"batch_size", settings.batch_size},
          {"context_length", settings.context_length},
          {"optimizer", settings.optimizer},
          {"lr", settings.lr},
          {"weight_decay", settings.weight_decay},
          {"log_every", settings.log_every},
          {"batch_seed", settings.batch_seed}};
}

nlohmann::json curve_json(const g2c::exercises::TrainResult& result) {
  return {{"steps", result.steps},
          {"loss", result.train_loss},
          {"final_loss", result.final_train_loss},
          {"seconds", result.wall_seconds}};
}

}  // namespace g2c::exercises::toy
