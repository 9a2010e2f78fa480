// Beyond module midtraining — your work: one batch of the mixture.
#include "g2c/midtraining/mixture.h"
#include "g2c/core/errors.h"

namespace g2c::midtraining {

g2c::pretraining::LMBatch TokenMixture::get_lm_batch(std::int64_t batch_size,
                                                     std::int64_t context_length,
                                                     std::optional<at::Generator> generator) {
  // TODO: B rows, each wholly from one source (check_batch_dimensions(B, T) first).
  //   choices = B source indices drawn with replacement by `weights`, with `generator`   (B)
  //   rows per source: c_e = how many choices are e                                      (E)
  //   for each source e with c_e > 0, in source order: sources[e].get_lm_batch(c_e, T, generator)
  //   x, y = the sources' batches concatenated, then their rows permuted by one random
  //          permutation of B drawn with `generator` (the same permutation for x and y)   (B, T)
  //   example_counts[e] += c_e
  // Return {x, y}. Never join the streams and window the join: a row would straddle two sources.
  // Operations: torch::multinomial, torch::bincount, torch::cat, torch::randperm, index_select.
  // Hints, one step at a time: scripts/hint.sh midtraining TokenMixture::get_lm_batch
  throw g2c::todo("TokenMixture::get_lm_batch", "g2c/midtraining/mixture.cpp", "midtraining");
}

}  // namespace g2c::midtraining
