// The worker's kernel log: every kernel the device runs in this process, recorded by CUPTI's
// activity API from worker start, before any candidate is imported, and summed per kernel
// name and stream until the evaluator takes the summary. Recording never stops while a
// candidate can run, so a candidate cannot tell an accounted call from any other call.
//
// Memset and memcpy records are summed the same way, under names no kernel can have
// ("[memset]", "[memcpy DtoD]"): device work that is not a kernel still shows in a window.
//
// A second, independent channel counts kernel and graph launches at the API (CUPTI callbacks
// on the driver's and the runtime's launch calls): records fewer than launches means the
// records were switched off around some launches. Every start, pause and resume is counted, so the
// evaluator sees a pause it did not make.
//
// Compiled by kernel_log.py against the CUPTI headers of the libcupti that torch has loaded,
// with hidden visibility except the ks_klog_* functions; the CUPTI symbols resolve against
// that library (promoted to global scope before this one is loaded), so the process has one
// CUPTI.
#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
#else
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
#endif
using MemsetRecord = CUpti_ActivityMemset4;

namespace {

struct Group {
  uint64_t count = 0;
  uint64_t total_ns = 0;
};

constexpr size_t kBufferBytes = 8u << 20;

std::mutex mu;
std::map<std::pair<std::string, uint32_t>, Group> groups;               // (name, stream) -> sums
std::vector<std::pair<std::pair<std::string, uint32_t>, Group>> taken;  // the last take()
uint64_t records = 0;
uint64_t direct_records = 0;  // records of kernels not launched by a CUDA graph
uint64_t dropped = 0;
std::atomic<uint64_t> driver_launches{0};         // cuLaunchKernel & co. (not graph launches)
std::atomic<uint64_t> runtime_launches{0};        // cudaLaunchKernel & co.
std::atomic<uint64_t> driver_graph_launches{0};   // cuGraphLaunch
std::atomic<uint64_t> runtime_graph_launches{0};  // cudaGraphLaunch
std::atomic<uint64_t> controls{0};                // starts, pauses and resumes
CUpti_SubscriberHandle subscriber = nullptr;
struct Window {
  uint64_t launches = 0;        // the larger of the two launch counts at the take
  uint64_t graph_launches = 0;  // likewise for graph launches
  uint64_t direct_records = 0;  // at the take
};
Window taken_at;
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

const char* CopyName(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "[memcpy HtoD]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "[memcpy DtoH]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "[memcpy DtoD]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "[memcpy HtoH]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "[memcpy PtoP]";
    default:
      return "[memcpy]";
  }
}

void Add(const std::string& name, uint32_t stream, uint64_t start, uint64_t end) {
  Group& g = groups[{name, stream}];
  g.count += 1;
  g.total_ns += end > start ? end - start : 0;
}

constexpr CUpti_ActivityKind kRecorded[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                            CUPTI_ACTIVITY_KIND_MEMCPY,
                                            CUPTI_ACTIVITY_KIND_MEMSET};

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
    if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* c = reinterpret_cast<const MemcpyRecord*>(record);
      Add(CopyName(c->copyKind), c->streamId, c->start, c->end);
      continue;
    }
    if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const MemsetRecord*>(record);
      Add("[memset]", m->streamId, m->start, m->end);
      continue;
    }
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != CUPTI_ACTIVITY_KIND_KERNEL) {
      continue;
    }
    const auto* k = reinterpret_cast<const KernelRecord*>(record);
    Add(Name(k->name), k->streamId, k->start, k->end);
    if (k->graphId == 0) direct_records += 1;
    records += 1;
  }
  size_t lost = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &lost) == CUPTI_SUCCESS) {
    dropped += lost;
  }
  std::free(buffer);
}

constexpr CUpti_CallbackId kDriverGraphLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};
constexpr CUpti_CallbackId kRuntimeGraphLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
};

template <size_t N>
bool In(CUpti_CallbackId id, const CUpti_CallbackId (&ids)[N]) {
  return std::find(std::begin(ids), std::end(ids), id) != std::end(ids);
}

// Every launch is counted, launches into a stream capture included (they run nothing: the
// evaluator reads the windows of its own captures leniently).
void CUPTIAPI OnApi(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite != CUPTI_API_ENTER) return;
  const bool driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
  if (driver ? In(id, kDriverGraphLaunches) : In(id, kRuntimeGraphLaunches)) {
    (driver ? driver_graph_launches : runtime_graph_launches) += 1;
    return;
  }
  (driver ? driver_launches : runtime_launches) += 1;
}

constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};
constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
};

CUptiResult Subscribe() {
  CUptiResult r = cuptiSubscribe(&subscriber, OnApi, nullptr);
  if (r != CUPTI_SUCCESS) return r;
  auto enable = [&](CUpti_CallbackDomain domain, const CUpti_CallbackId* ids, size_t n) {
    for (size_t i = 0; i < n && r == CUPTI_SUCCESS; ++i) {
      r = cuptiEnableCallback(1, subscriber, domain, ids[i]);
    }
  };
  enable(CUPTI_CB_DOMAIN_DRIVER_API, kDriverLaunches, std::size(kDriverLaunches));
  enable(CUPTI_CB_DOMAIN_DRIVER_API, kDriverGraphLaunches, std::size(kDriverGraphLaunches));
  enable(CUPTI_CB_DOMAIN_RUNTIME_API, kRuntimeLaunches, std::size(kRuntimeLaunches));
  enable(CUPTI_CB_DOMAIN_RUNTIME_API, kRuntimeGraphLaunches, std::size(kRuntimeGraphLaunches));
  return r;
}

}  // namespace

extern "C" {

// Registers the buffer callbacks, enables kernel, memcpy and memset records and subscribes to
// the launch calls. 0 or a CUptiResult.
__attribute__((visibility("default"))) int ks_klog_start() {
  controls += 1;
  CUptiResult r = cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  if (r != CUPTI_SUCCESS) return static_cast<int>(r);
  for (CUpti_ActivityKind kind : kRecorded) {
    r = cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS) return static_cast<int>(r);
  }
  if (subscriber != nullptr) {
    cuptiUnsubscribe(subscriber);  // after a finalize the handle is stale: best effort
    subscriber = nullptr;
  }
  return static_cast<int>(Subscribe());
}

// Detaches CUPTI (after delivering pending records) while the evaluator replays its own CUDA
// graphs for timing: CUPTI's per-kernel instrumentation adds 1-2 us to every kernel, and
// only finalizing CUPTI removes it (disabling the records does not). No candidate code runs
// while detached. 0 or a CUptiResult.
__attribute__((visibility("default"))) int ks_klog_pause() {
  controls += 1;
  CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS) return static_cast<int>(r);
  for (CUpti_ActivityKind kind : kRecorded) {
    r = cuptiActivityDisable(kind);
    if (r != CUPTI_SUCCESS) return static_cast<int>(r);
  }
  if (subscriber != nullptr) {
    cuptiUnsubscribe(subscriber);
    subscriber = nullptr;
  }
  return static_cast<int>(cuptiFinalize());
}

// Attaches again after ks_klog_pause.
__attribute__((visibility("default"))) int ks_klog_resume() { return ks_klog_start(); }

// Delivers every record of kernels that have completed (the caller synchronizes first),
// moves the sums into the taken summary and starts new sums. Returns the number of groups
// taken, or -CUptiResult when the flush fails.
__attribute__((visibility("default"))) int64_t ks_klog_take() {
  CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(mu);
  taken.assign(groups.begin(), groups.end());
  groups.clear();
  taken_at.launches = std::max(driver_launches.load(), runtime_launches.load());
  taken_at.graph_launches = std::max(driver_graph_launches.load(), runtime_graph_launches.load());
  taken_at.direct_records = direct_records;
  if (r != CUPTI_SUCCESS) return -static_cast<int64_t>(r);
  return static_cast<int64_t>(taken.size());
}

// Group i of the last take: its kernel name ("[memset]", "[memcpy ...]" for those) (nullptr past the end), stream, launches and
// total device nanoseconds.
__attribute__((visibility("default"))) const char* ks_klog_group(int64_t i, uint32_t* stream,
                                                                 uint64_t* count,
                                                                 uint64_t* total_ns) {
  std::lock_guard<std::mutex> lock(mu);
  if (i < 0 || static_cast<size_t>(i) >= taken.size()) return nullptr;
  const auto& entry = taken[static_cast<size_t>(i)];
  *stream = entry.first.second;
  *count = entry.second.count;
  *total_ns = entry.second.total_ns;
  return entry.first.first.c_str();
}

// At the last take, since the start: kernel launches and graph launches counted at the API
// (the larger of the driver's and the runtime's counts: a runtime launch may also reach the
// driver's) and records of kernels launched outside a graph.
__attribute__((visibility("default"))) void ks_klog_counts(uint64_t* launches,
                                                           uint64_t* graph_launches,
                                                           uint64_t* direct) {
  std::lock_guard<std::mutex> lock(mu);
  *launches = taken_at.launches;
  *graph_launches = taken_at.graph_launches;
  *direct = taken_at.direct_records;
}

// Starts, pauses and resumes since the process began.
__attribute__((visibility("default"))) uint64_t ks_klog_controls() { return controls.load(); }

// Kernel records received and records CUPTI dropped, since the start.
__attribute__((visibility("default"))) uint64_t ks_klog_records() {
  std::lock_guard<std::mutex> lock(mu);
  return records;
}

__attribute__((visibility("default"))) uint64_t ks_klog_dropped() {
  std::lock_guard<std::mutex> lock(mu);
  return dropped;
}

__attribute__((visibility("default"))) const char* ks_klog_error(int code) {
  const char* text = nullptr;
  if (cuptiGetResultString(static_cast<CUptiResult>(code), &text) != CUPTI_SUCCESS) {
    return "unknown CUPTI error";
  }
  return text;
}

}  // extern "C"
