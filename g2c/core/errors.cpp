#include "g2c/core/errors.h"

#include <fmt/format.h>

namespace g2c {

NotImplementedError todo(std::string_view function, std::string_view file,
                         std::string_view module) {
  return NotImplementedError(fmt::format(
      "NotImplementedError: {} is still a TODO. Write it in {} (module {}), rebuild and rerun "
      "`ctest -L {}`; or compile the reference with `cmake --preset student "
      "-DG2C_SOLUTIONS={}`.",
      function, file, module, module, module));
}

}  // namespace g2c
