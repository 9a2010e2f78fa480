// Beyond module midtraining — a weighted mixture of token streams, for continued pretraining.
//
// Midtraining keeps the next-token objective and changes the data: a base model goes on training on
// a new domain (code), gains there, and forgets its old one (Shakespeare) unless some of it is
// replayed. TokenMixture makes that distribution explicit: each row of a batch picks its source by
// the weights, then one window from that source alone.
//   choices = B draws of a source index, with replacement, by the weights     (B)
//   per source e with c_e rows: its own get_lm_batch(c_e, T)                  (c_e, T) each
//   concatenate, shuffle the rows; example_counts[e] += c_e
// A window never crosses from one source into another: concatenating the streams first would train
// on a made-up transition from the end of a Python file into the middle of a play. The mixture is
// exact in expectation, not in every small batch; example_counts records what was realised.
//
// It is a TokenStream, so module 10's Trainer trains on it: trainer.train(mixture, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "g2c/core/torch.h"
#include "g2c/pretraining/data.h"

namespace g2c::midtraining {

/// Named things in a fixed order (the order the caller gave them): sources, weights, losses.
template <typename Value>
using Named = std::vector<std::pair<std::string, Value>>;

class TokenMixture : public g2c::pretraining::TokenStream {
 public:
  /// `sources`: each name with a 1-D token tensor or a TokenStream (held by reference: it must
  /// outlive the mixture). `weights`: a weight for every source's name, in any order; they need not
  /// sum to 1 and are normalised. ValueError: "sources must be non-empty", names that differ from
  /// the weights' ("sources and weights must have identical keys"), an empty or repeated name,
  /// a weight that is not finite or is negative, "at least one weight must be positive".
  TokenMixture(Named<g2c::pretraining::TokenSource> sources, const Named<double>& weights);

  /// x, y (B, T), y the next token of x, every row from one source (above). ValueError naming
  /// batch_size or context_length when it is below 1.
  g2c::pretraining::LMBatch get_lm_batch(std::int64_t batch_size, std::int64_t context_length,
                                         std::optional<at::Generator> generator) override;

  /// ValueError unless batch_size >= 1 and context_length >= 1 (naming the one that is not).
  static void check_batch_dimensions(std::int64_t batch_size, std::int64_t context_length);

  /// Tokens across the sources (sampling may visit them more than once).
  std::int64_t size() const override;
  /// Each source's share of the rows drawn so far, in source order; all 0 before the first batch.
  std::vector<double> observed_fractions() const;
  /// "TokenMixture(python=80.0%, general=20.0%)".
  std::string to_string() const;

  std::vector<std::string> names;                      // in the order the sources were given
  std::vector<g2c::pretraining::TokenSource> sources;  // the same order
  torch::Tensor weights;                               // (E) float64, summing to 1
  std::vector<std::int64_t> example_counts;            // rows drawn from each source so far
};

std::ostream& operator<<(std::ostream& stream, const TokenMixture& mixture);

}  // namespace g2c::midtraining
