// Facts about this build that CMake knows when it configures it, for the manifests of model
// artifacts: the source folder and its git commit. The library runs no `git` itself.
#pragma once

#include <string_view>

namespace g2c::pretraining {

/// The source folder this build was configured from (artifacts/ lives under it by default).
/// Example: "/home/me/g2c".
std::string_view source_dir();

/// `git rev-parse HEAD` of that folder when CMake last configured the build ("unknown" outside a
/// git checkout). CMake configures again when HEAD moves, so it is the commit being built; local
/// changes on top of it are not recorded. Example: "3267257e…" (40 hex digits).
std::string_view source_commit();

}  // namespace g2c::pretraining
