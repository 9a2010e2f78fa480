// Reading a number out of a model's reply, as Part II's arithmetic exercises score it.
#pragma once

#include <cstdint>
#include <string>

namespace g2c::exercises {

/// The last number written in `reply` ("13 + 28 = 41." -> "41"), commas between digit groups
/// removed ("2,420,736" -> "2420736"); "" when there is none.
std::string last_number(const std::string& reply);

/// Whether the last number of `reply` is `answer` (module 15's numeric_match on that number).
bool last_number_is(const std::string& reply, std::int64_t answer);

}  // namespace g2c::exercises
