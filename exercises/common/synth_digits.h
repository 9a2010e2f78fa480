// SynthDigits-28: generated handwriting at MNIST's size, for the lesson's 28 × 28 shapes and patch
// sizes (4, 7, 14). Each digit is drawn from a hand-made stroke skeleton of its class (two for 1,
// 4, 7 and 9), its control points jittered, then placed with a random rotation (±15°), scale,
// shear and shift (±3 px), rendered with a random stroke width, blurred and given pixel noise —
// all from one seed. Not MNIST, and not handwriting: a stand-in with the lesson's shapes.
#pragma once

#include <cstdint>
#include <filesystem>

#include "exercises/common/digits.h"

namespace g2c::exercises {

/// `per_class` images of every digit, (10 · per_class, 28, 28) in [0, 1] (quantised to 1/255, as
/// they are stored), labels in class order. The same seed gives the same images.
Digits synth_digits28(std::int64_t per_class, std::uint64_t seed);

/// SynthDigits-28 as the course keeps it: artifacts/datasets/synth28-<per_class>-<seed>/ holding
/// digits.csv (784 pixels 0..255 and the label a line) and manifest.json (builder, seed, counts,
/// sha256 of the CSV); read back when the manifest and the file's sha256 match, built and written
/// (atomically) otherwise.
Digits stored_synth_digits28(std::int64_t per_class, std::uint64_t seed);

}  // namespace g2c::exercises
