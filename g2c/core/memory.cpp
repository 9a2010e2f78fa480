#include "g2c/core/memory.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>  // defines __GLIBC__ when the C library is glibc
#include <fstream>
#include <string>

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

void release_freed_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

namespace {

// The value of `field` ("VmRSS:") in /proc/self/status, in MiB; negative when it is not there.
double status_mib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(field.size())) / 1024.0;  // kB
  }
  return -1.0;
}

}  // namespace

double resident_mib() {
  return std::max(status_mib("VmRSS:"), 0.0);
}

double peak_resident_mib() {
  if (const double peak = status_mib("VmHWM:"); peak >= 0) return peak;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

bool reset_peak_resident() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  if (!clear_refs) return false;
  clear_refs << "5";  // 5: reset the peak resident set size to the current one
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}

}  // namespace g2c
