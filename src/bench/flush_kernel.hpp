#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace memlab::bench {

/// Evicts L2 by reading `bytes` of `buffer` (at least twice the L2) with 16-byte loads: the
/// lines left behind are clean, so the next launch evicts them without a write-back. `sink`
/// (one int) is written only if the sum of every word is a value the zeroed buffer cannot
/// give, so the loads are never dead code. `sms`: the device's multiprocessors (4 blocks each),
/// known to the caller, so a cold sample makes no driver query.
void flush_l2_by_reading(void const* buffer, std::size_t bytes, int* sink, int sms, cudaStream_t stream);

}  // namespace memlab::bench
