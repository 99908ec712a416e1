// The worker's kernel log: every kernel the device runs in this process, recorded by CUPTI's
// activity API from worker start, before any candidate is imported, and summed per kernel
// name and stream until the evaluator takes the summary. Recording never stops while a
// candidate can run, so a candidate cannot tell an accounted call from any other call.
//
// Compiled by kernel_log.py against the CUPTI headers of the libcupti that torch has loaded;
// the CUPTI symbols resolve against that library (promoted to global scope before this one
// is loaded), so the process has one CUPTI.
#include <cupti.h>
#include <cxxabi.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
#else
using KernelRecord = CUpti_ActivityKernel9;
#endif

namespace {

struct Group {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t first_start = UINT64_MAX;  // device timestamp of the group's first kernel
};

constexpr size_t kBufferBytes = 8u << 20;

std::mutex mu;
std::map<std::pair<std::string, uint32_t>, Group> groups;  // (name, stream) -> sums
std::vector<std::pair<std::pair<std::string, uint32_t>, Group>> taken;  // the last take()
uint64_t records = 0;
uint64_t dropped = 0;
std::map<const char*, std::string> demangled;  // CUPTI's name pointers are stable

// The kernel's name as profilers show it: C++ names demangled ("void at::native::...").
const std::string& Name(const char* raw) {
  auto it = demangled.find(raw);
  if (it != demangled.end()) return it->second;
  std::string name = raw != nullptr ? raw : "?";
  if (name.rfind("_Z", 0) == 0) {
    int status = 0;
    char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    if (status == 0 && text != nullptr) name = text;
    std::free(text);
  }
  return demangled.emplace(raw, std::move(name)).first->second;
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t,
                              size_t valid) {
  std::lock_guard<std::mutex> lock(mu);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != CUPTI_ACTIVITY_KIND_KERNEL) {
      continue;
    }
    const auto* k = reinterpret_cast<const KernelRecord*>(record);
    Group& g = groups[{Name(k->name), k->streamId}];
    g.count += 1;
    g.total_ns += k->end > k->start ? k->end - k->start : 0;
    if (k->start < g.first_start) g.first_start = k->start;
    records += 1;
  }
  size_t lost = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &lost) == CUPTI_SUCCESS) {
    dropped += lost;
  }
  std::free(buffer);
}

}  // namespace

extern "C" {

// Registers the buffer callbacks and enables kernel records. 0 or a CUptiResult.
int ks_klog_start() {
  CUptiResult r = cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  if (r != CUPTI_SUCCESS) return static_cast<int>(r);
  return static_cast<int>(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
}

// Detaches CUPTI (after delivering pending records) while the evaluator replays its own CUDA
// graphs for timing: CUPTI's per-kernel instrumentation adds 1-2 us to every kernel, and
// only finalizing CUPTI removes it (disabling the records does not). No candidate code runs
// while detached. 0 or a CUptiResult.
int ks_klog_pause() {
  CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS) return static_cast<int>(r);
  r = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) return static_cast<int>(r);
  return static_cast<int>(cuptiFinalize());
}

// Attaches again after ks_klog_pause.
int ks_klog_resume() { return ks_klog_start(); }

// Delivers every record of kernels that have completed (the caller synchronizes first),
// moves the sums into the taken summary and starts new sums. Returns the number of groups
// taken, or -CUptiResult when the flush fails.
int64_t ks_klog_take() {
  CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(mu);
  taken.assign(groups.begin(), groups.end());
  groups.clear();
  if (r != CUPTI_SUCCESS) return -static_cast<int64_t>(r);
  return static_cast<int64_t>(taken.size());
}

// Group i of the last take: its kernel name (nullptr past the end), stream, launches, total
// device nanoseconds and first start.
const char* ks_klog_group(int64_t i, uint32_t* stream, uint64_t* count, uint64_t* total_ns,
                          uint64_t* first_start) {
  std::lock_guard<std::mutex> lock(mu);
  if (i < 0 || static_cast<size_t>(i) >= taken.size()) return nullptr;
  const auto& entry = taken[static_cast<size_t>(i)];
  *stream = entry.first.second;
  *count = entry.second.count;
  *total_ns = entry.second.total_ns;
  *first_start = entry.second.first_start;
  return entry.first.first.c_str();
}

// Kernel records received and records CUPTI dropped, since the start.
uint64_t ks_klog_records() {
  std::lock_guard<std::mutex> lock(mu);
  return records;
}

uint64_t ks_klog_dropped() {
  std::lock_guard<std::mutex> lock(mu);
  return dropped;
}

const char* ks_klog_error(int code) {
  const char* text = nullptr;
  if (cuptiGetResultString(static_cast<CUptiResult>(code), &text) != CUPTI_SUCCESS) {
    return "unknown CUPTI error";
  }
  return text;
}

}  // extern "C"
