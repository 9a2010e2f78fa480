#include <string>

#include "g2c/core/errors.h"
#include "g2c/nn/sequential.h"

namespace g2c::nn {

SequentialImpl::SequentialImpl(std::vector<std::shared_ptr<Module>> initial) {
  for (auto& layer : initial) push_back(std::move(layer));
}

void SequentialImpl::push_back(std::shared_ptr<Module> layer) {
  if (!layer) throw ValueError("Sequential::push_back got an empty layer pointer");
  register_module(std::to_string(layers.size()), layer);
  layers.push_back(std::move(layer));
}

}  // namespace g2c::nn
