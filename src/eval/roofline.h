// Roofline: how far a kernel is from what the device can do (docs/roofline.md).
//
// The worker measures the facts: the reference forward's work (FLOPs per arithmetic class,
// minimum bytes), the device's measured peaks (copy bandwidth, matmul FLOP/s per class, the
// time of one minimal launch), and the work torch's own ops do in the candidate's forward.
// Everything derived from them (floor time, bound, % of peak, lazy optimization) is computed
// here, so a stored result parses to the same figures.
// Thread-safety: values and pure functions.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/status.h"

namespace ks {

// Custom kernels covering less than this share of the work (by FLOPs; by bytes for a problem
// without FLOPs) while torch ops do the rest: lazy optimization.
inline constexpr double kLazyCustomShare = 0.2;

struct RooflineWork {
  std::map<std::string, double> flops;  // class ("fp32", "tf32", "bf16", "fp16") -> FLOPs
  double bytes = 0;                     // inputs, parameters read once; outputs written once
  double total_flops() const;
};

struct DatasheetPeaks {
  std::string name;  // e.g. "H100 SXM"
  double bw_bytes_per_s = 0;
  std::map<std::string, double> flops_per_s;
};

struct DevicePeaks {
  std::string device;
  double bw_bytes_per_s = 0;                  // measured: a large copy
  std::map<std::string, double> flops_per_s;  // measured: a large matmul per class
  double launch_us = 0;                       // measured: one minimal op back to back
  double measure_s = 0;
  bool cached = false;
  std::optional<DatasheetPeaks> datasheet;  // for comparison only, never the floor
};

// One timed side (reference or candidate) against the floor.
struct RooflinePoint {
  double us = 0;
  double pct_of_floor = 0;  // floor_us / us * 100: 100 means at the floor
  double bw_pct = 0;        // minimum bytes / us as % of the measured bandwidth
  double flops_pct = 0;     // FLOPs / us as % of the measured peak (time-weighted over classes)
};

// The work torch ops did next to the candidate's custom kernels, and the custom share.
struct LazyCheck {
  double torch_flops = 0;
  double torch_bytes = 0;
  std::optional<double> custom_flops_share;   // 1 - torch FLOPs / the problem's FLOPs
  std::optional<double> custom_bytes_share;   // 1 - torch bytes / minimum bytes
  std::optional<double> custom_device_share;  // device time in custom kernels (CUDA only)
  bool lazy = false;
  nlohmann::json ops = nlohmann::json::object();  // torch ops counted: name -> calls
};

struct Roofline {
  std::optional<RooflineWork> work;
  std::optional<DevicePeaks> peaks;
  std::optional<LazyCheck> lazy;
  std::string error;  // what the worker could not measure, if anything
  // Derived (work and peaks both present):
  double memory_us = 0;       // bytes / bandwidth
  double compute_us = 0;      // sum over classes of FLOPs / peak FLOP/s of that class
  double floor_us = 0;        // max(memory_us, compute_us)
  std::string bound;          // "memory", "compute" or "launch-latency" (floor under launch_us)
  std::string compute_class;  // the class with the largest share of compute_us ("" if none)
  std::optional<RooflinePoint> ref;
  std::optional<RooflinePoint> cand;

  bool has_floor() const { return work && peaks && floor_us > 0; }
};

// Parses the `roofline` object (the worker's, or a stored one) and derives the figures for the
// given times. A non-object is nullopt; a malformed part is a Protocol error naming it.
Result<std::optional<Roofline>> ParseRoofline(const nlohmann::json& j, std::optional<double> ref_us,
                                              std::optional<double> cand_us);
// The measured parts and the derived figures.
nlohmann::json RooflineToJson(const Roofline& r);

// "Roofline: candidate 401.21 us; floor 92.00 us (compute, tf32); at 23% of the floor, 23%
// of peak tf32 FLOP/s, 5% of peak bandwidth. Reference at ..." and, when flagged, the lazy
// optimization line. Empty when there is no floor.
std::string RooflineFeedback(const Roofline& r);
// "1.2 TB/s", "405 TFLOP/s", ...
std::string FormatRate(double per_s, const char* unit);

}  // namespace ks
