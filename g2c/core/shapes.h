// Shape descriptions for error messages: "(B=2, T=5, D=32)".
#pragma once

#include <initializer_list>
#include <string>

#include "g2c/core/torch.h"

namespace g2c {

/// describe_shape(x, {"B", "T", "D"}) -> "(B=2, T=5, D=32)". When the number of names does not
/// match x.dim() the sizes are shown without names: "(2, 5)".
std::string describe_shape(const torch::Tensor& x, std::initializer_list<const char*> names = {});

/// Throws ValueError unless x is defined, has `names.size()` dimensions and, where `expected` has
/// a size >= 0 at a position, exactly that size there. `what` names the argument in the message.
/// Example: check_shape(x, "x", {"B", "T", "D"}, {-1, -1, 64}).
void check_shape(const torch::Tensor& x, const char* what, std::initializer_list<const char*> names,
                 std::initializer_list<std::int64_t> expected);

}  // namespace g2c
