// The C heap, tuned for programs that allocate the same large tensors over and over.
//
// LibTorch takes every CPU tensor from malloc. glibc serves a block larger than its mmap threshold
// (128 KiB, raised on the fly up to 32 MiB) with a fresh mmap and gives it back to the kernel when
// it is freed, and it trims the top of the heap whenever more than the trim threshold is free. A
// training step allocates and frees the same few dozen tensors of a few megabytes each (logits,
// their softmax, the gradients), so without tuning every step pays page faults for pages the
// kernel must zero again: measured on 07_strip_mask (300 steps, one thread), 9.7 s of system time
// in 26 s, against 0.1 s once freed memory is kept for reuse. The price is that the process keeps
// its peak heap until it exits, which is what a training program wants anyway.
#pragma once

namespace g2c {

/// Keeps freed memory in the process for the next allocation of the same size: blocks up to 32 MiB
/// come from the heap instead of mmap, and the heap is not trimmed. Call it once, early in main (it
/// affects later allocations only). Does nothing where the C library is not glibc. Returns true
/// when the setting was applied.
bool reuse_freed_memory();

/// Hands memory freed back to the kernel now (glibc's malloc_trim), so that what is resident
/// afterwards measures what is still held. Does nothing where the C library is not glibc.
void release_freed_memory();

/// This process's resident memory now (VmRSS), in MiB; 0 where /proc/self/status is not there.
double resident_mib();
/// The most it has been resident at once since its program started (VmHWM; getrusage's ru_maxrss
/// where /proc is not there, which also counts the parent it was forked from), in MiB.
double peak_resident_mib();
/// Starts peak_resident_mib() over from what is resident now (Linux's /proc/self/clear_refs), so
/// the peak of one piece of work can be read after it. Returns false where that is not possible
/// (the peak then stays the program's).
bool reset_peak_resident();

}  // namespace g2c
