#include "exercises/09-transformer/toy_stream.h"

#include <fmt/format.h>

#include "g2c/core/errors.h"

namespace g2c::exercises::toy {

torch::Tensor toy_stream(std::int64_t repeats) {
  if (repeats <= 0) throw ValueError(fmt::format("toy_stream needs repeats > 0, got {}", repeats));
  const auto period = torch::tensor({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 3, 4, 5, 6, 7, 0}, torch::kLong);
  return period.repeat({repeats});  // (16 · repeats)
}

}  // namespace g2c::exercises::toy
