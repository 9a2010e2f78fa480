// Beyond module midtraining, implemented for you: the mixture's construction and checks, its
// accounting and its printed form.
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "g2c/core/errors.h"
#include "g2c/midtraining/mixture.h"

namespace g2c::midtraining {

TokenMixture::TokenMixture(Named<g2c::pretraining::TokenSource> named_sources,
                           const Named<double>& named_weights) {
  if (named_sources.empty()) {
    throw ValueError("TokenMixture: sources must be non-empty; give at least one name and stream");
  }
  std::set<std::string> source_names, weight_names;
  for (const auto& [name, source] : named_sources) {
    if (name.empty()) throw ValueError("TokenMixture: source names must be non-empty strings");
    if (!source_names.insert(name).second) {
      throw ValueError(fmt::format("TokenMixture: the source name \"{}\" appears twice", name));
    }
  }
  for (const auto& [name, weight] : named_weights) weight_names.insert(name);
  if (source_names != weight_names || named_weights.size() != weight_names.size()) {
    throw ValueError(
        "TokenMixture: sources and weights must have identical keys, one weight per source name");
  }
  std::vector<double> raw;
  for (const auto& [name, source] : named_sources) {
    for (const auto& [weight_name, weight] : named_weights) {
      if (weight_name == name) raw.push_back(weight);
    }
  }
  double total = 0.0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const auto& name = named_sources[i].first;
    if (!std::isfinite(raw[i])) {
      throw ValueError(
          fmt::format("TokenMixture: weights must be finite, got {} for \"{}\"", raw[i], name));
    }
    if (raw[i] < 0) {
      throw ValueError(fmt::format("TokenMixture: weights must be non-negative, got {} for \"{}\"",
                                   raw[i], name));
    }
    total += raw[i];
  }
  if (total <= 0) {
    throw ValueError("TokenMixture: at least one weight must be positive");
  }
  for (auto& [name, source] : named_sources) {
    names.push_back(name);
    sources.push_back(std::move(source));
  }
  weights = torch::tensor(raw, torch::kDouble) / total;
  example_counts.assign(names.size(), 0);
}

void TokenMixture::check_batch_dimensions(std::int64_t batch_size, std::int64_t context_length) {
  if (batch_size < 1) {
    throw ValueError(fmt::format("TokenMixture: batch_size must be >= 1, got {}", batch_size));
  }
  if (context_length < 1) {
    throw ValueError(
        fmt::format("TokenMixture: context_length must be >= 1, got {}", context_length));
  }
}

std::int64_t TokenMixture::size() const {
  std::int64_t total = 0;
  for (const auto& source : sources) total += source.size();
  return total;
}

std::vector<double> TokenMixture::observed_fractions() const {
  std::int64_t total = 0;
  for (const auto count : example_counts) total += count;
  std::vector<double> fractions;
  for (const auto count : example_counts) {
    fractions.push_back(total ? static_cast<double>(count) / static_cast<double>(total) : 0.0);
  }
  return fractions;
}

std::string TokenMixture::to_string() const {
  std::string parts;
  for (std::size_t i = 0; i < names.size(); ++i) {
    parts += fmt::format("{}{}={:.1f}%", i ? ", " : "", names[i],
                         100.0 * weights[static_cast<std::int64_t>(i)].item<double>());
  }
  return fmt::format("TokenMixture({})", parts);
}

std::ostream& operator<<(std::ostream& stream, const TokenMixture& mixture) {
  return stream << mixture.to_string();
}

}  // namespace g2c::midtraining
