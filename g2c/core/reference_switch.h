// The reference switch a TODO's message suggests: G2C_SOLUTIONS with one more module added.
#pragma once

#include <string>
#include <string_view>

namespace g2c {

/// The G2C_SOLUTIONS value that adds `module` to the `configured` selector, the "none" spellings
/// dropped and the rest kept in order, so that switching on one module's reference keeps what a
/// build already had. Examples: ("none", "07") -> "07"; ("03-06", "07") -> "03-06,07";
/// ("03,05 attention/multi_head", "07") -> "03,05,attention/multi_head,07".
std::string solutions_with(std::string_view configured, std::string_view module);

}  // namespace g2c
