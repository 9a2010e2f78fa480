// Both values are compile definitions of this file alone (g2c/pretraining/CMakeLists.txt), so a new
// commit recompiles this small file and relinks the library, nothing else.
#include "g2c/pretraining/build_info.h"

#ifndef G2C_SOURCE_DIR
#error "G2C_SOURCE_DIR is set by g2c/pretraining/CMakeLists.txt"
#endif
#ifndef G2C_GIT_COMMIT
#error "G2C_GIT_COMMIT is set by g2c/pretraining/CMakeLists.txt"
#endif

namespace g2c::pretraining {

std::string_view source_dir() {
  return G2C_SOURCE_DIR;
}

std::string_view source_commit() {
  return G2C_GIT_COMMIT;
}

}  // namespace g2c::pretraining
