// Module 16 — your work: the key/value heads shared by groups of query heads.
#include "g2c/pretrained/grouped_query_attention.h"

#include "g2c/core/errors.h"

namespace g2c::pretrained {

torch::Tensor repeat_kv(const torch::Tensor& x, std::int64_t n_rep) {
  // TODO: Grouped-query attention keeps only G key/value heads, each shared by n_rep query heads.
  // Give every query head the key/value head of its group: repeat each of the G heads of x
  // (B, G, S, d) n_rep times in a row, [a, b] -> [a, a, b, b], giving (B, G·n_rep, S, d), so that
  // query head h reads key/value head h / n_rep. Return x unchanged when n_rep is 1.
  // Operations: unsqueeze, expand (a view, no copy), reshape.
  // Hints, one step at a time: scripts/hint.sh 16 repeat_kv
  throw g2c::todo("repeat_kv", "g2c/pretrained/grouped_query_attention.cpp", "16");
}

}  // namespace g2c::pretrained
