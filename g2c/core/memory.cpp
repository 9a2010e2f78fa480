#include "g2c/core/memory.h"

#include <cstdlib>  // defines __GLIBC__ when the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace g2c {

bool reuse_freed_memory() {
#if defined(__GLIBC__)
  // Blocks up to 32 MiB (the largest threshold glibc accepts) from the heap; never hand the
  // heap's free top back to the kernel; grow it 64 MiB at a time. Setting the threshold also turns
  // off glibc's dynamic one.
  constexpr int kMmapThreshold = 32 << 20;
  constexpr int kTrimThreshold = 0x7fffffff;
  constexpr int kTopPad = 64 << 20;
  const bool threshold = mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1;
  const bool trim = mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1;
  const bool pad = mallopt(M_TOP_PAD, kTopPad) == 1;
  return threshold && trim && pad;
#else
  return false;
#endif
}

}  // namespace g2c
