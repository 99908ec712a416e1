// The report's roofline plot of one problem: achieved FLOP/s against arithmetic intensity
// (FLOPs per minimum byte), log-log, under the device's measured roof, with the reference, the
// seed and the best kernel as points; and the one-line summary beside it.
// Thread-safety: functions only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "eval/roofline.h"

namespace ks {

struct RooflineMark {
  std::string label;  // "reference", "seed", "best"
  double us = 0;      // measured time per call
};

// An inline <svg>: the roof min(peak FLOP/s, intensity x bandwidth) of `r`'s measured peaks
// (the peak of its dominant class) and one point per mark at the problem's intensity. A
// problem without FLOPs (pure data movement) gets bars of achieved bandwidth against the
// measured bandwidth instead. "no roofline" when `r` has no floor.
std::string SvgRoofline(const Roofline& r, const std::vector<RooflineMark>& marks,
                        const std::string& title);

// "floor 92.00 us (compute, tf32); reference 9%, seed 12%, best 23% of the floor".
std::string RooflineSummary(const Roofline& r, const std::vector<RooflineMark>& marks);

}  // namespace ks
