#include "eval/roofline.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/json_fields.h"

namespace ks {
namespace {

// A {name: number} map; Protocol error naming `what` for any other value.
Result<std::map<std::string, double>> RateMap(const nlohmann::json& j, const std::string& what) {
  std::map<std::string, double> out;
  if (j.is_null()) return out;
  if (!j.is_object()) return Status::Protocol("roofline field '" + what + "' is not an object");
  for (const auto& [k, v] : j.items()) {
    if (!v.is_number() || v.get<double>() < 0) {
      return Status::Protocol("roofline field '" + what + "." + k + "' is not a number >= 0");
    }
    out[k] = v.get<double>();
  }
  return out;
}

Result<RooflineWork> ParseWork(const nlohmann::json& j) {
  if (!j.is_object()) return Status::Protocol("roofline field 'work' is not an object");
  RooflineWork w;
  Result<std::map<std::string, double>> flops =
      RateMap(j.value("flops", nlohmann::json()), "work.flops");
  if (!flops.ok()) return flops.status();
  w.flops = *flops;
  std::optional<double> bytes = JsonNumber(j, "bytes");
  if (!bytes || *bytes < 0) return Status::Protocol("roofline field 'work.bytes' is missing");
  w.bytes = *bytes;
  return w;
}

Result<DevicePeaks> ParsePeaks(const nlohmann::json& j) {
  if (!j.is_object()) return Status::Protocol("roofline field 'peaks' is not an object");
  DevicePeaks p;
  std::optional<double> bw = JsonNumber(j, "bw_bytes_per_s");
  if (!bw || *bw <= 0) return Status::Protocol("roofline field 'peaks.bw_bytes_per_s' is missing");
  p.bw_bytes_per_s = *bw;
  Result<std::map<std::string, double>> flops =
      RateMap(j.value("flops_per_s", nlohmann::json()), "peaks.flops_per_s");
  if (!flops.ok()) return flops.status();
  p.flops_per_s = *flops;
  p.launch_us = JsonNumber(j, "launch_us").value_or(0);
  p.measure_s = JsonNumber(j, "measure_s").value_or(0);
  p.cached = j.value("cached", false);
  if (auto d = j.find("device"); d != j.end() && d->is_string()) p.device = d->get<std::string>();
  if (auto d = j.find("datasheet"); d != j.end() && d->is_object()) {
    DatasheetPeaks ds;
    ds.name = d->value("name", std::string());
    ds.bw_bytes_per_s = JsonNumber(*d, "bw_bytes_per_s").value_or(0);
    Result<std::map<std::string, double>> dflops =
        RateMap(d->value("flops_per_s", nlohmann::json()), "peaks.datasheet.flops_per_s");
    if (!dflops.ok()) return dflops.status();
    ds.flops_per_s = *dflops;
    p.datasheet = ds;
  }
  return p;
}

LazyCheck ParseLazy(const nlohmann::json& j, const std::optional<RooflineWork>& work,
                    std::optional<double> device_share) {
  LazyCheck l;
  l.torch_flops = JsonNumber(j, "flops").value_or(0);
  l.torch_bytes = JsonNumber(j, "bytes").value_or(0);
  if (auto ops = j.find("ops"); ops != j.end() && ops->is_object()) l.ops = *ops;
  l.custom_device_share = device_share;
  if (work && work->total_flops() > 0) {
    l.custom_flops_share = std::max(0.0, 1.0 - l.torch_flops / work->total_flops());
  }
  if (work && work->bytes > 0) {
    l.custom_bytes_share = std::max(0.0, 1.0 - l.torch_bytes / work->bytes);
  }
  std::optional<double> share = l.custom_flops_share ? l.custom_flops_share : l.custom_bytes_share;
  l.lazy = (l.torch_flops > 0 || l.torch_bytes > 0) && share && *share < kLazyCustomShare;
  return l;
}

// Floor, bound and the class that dominates compute time.
void Derive(Roofline* r) {
  if (!r->work || !r->peaks) return;
  const RooflineWork& w = *r->work;
  const DevicePeaks& p = *r->peaks;
  r->memory_us = w.bytes / p.bw_bytes_per_s * 1e6;
  double best = 0;
  for (const auto& [cls, flops] : w.flops) {
    auto peak = p.flops_per_s.find(cls);
    // A class the device was not measured for (tf32 on a CPU) is counted at the fp32 rate.
    if (peak == p.flops_per_s.end() || peak->second <= 0) peak = p.flops_per_s.find("fp32");
    if (peak == p.flops_per_s.end() || peak->second <= 0) continue;
    double us = flops / peak->second * 1e6;
    r->compute_us += us;
    if (us > best) best = us, r->compute_class = cls;
  }
  r->floor_us = std::max(r->memory_us, r->compute_us);
  if (r->floor_us < p.launch_us) {
    r->bound = "launch-latency";
  } else {
    r->bound = r->compute_us > r->memory_us ? "compute" : "memory";
  }
}

std::optional<RooflinePoint> Point(const Roofline& r, std::optional<double> us) {
  if (!us || *us <= 0 || !r.has_floor()) return std::nullopt;
  RooflinePoint p;
  p.us = *us;
  p.pct_of_floor = 100 * r.floor_us / *us;
  p.bw_pct = 100 * r.memory_us / *us;
  p.flops_pct = 100 * r.compute_us / *us;
  return p;
}

nlohmann::json MapJson(const std::map<std::string, double>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

nlohmann::json PointJson(const std::optional<RooflinePoint>& p) {
  if (!p) return nullptr;
  return {{"us", p->us},
          {"pct_of_floor", p->pct_of_floor},
          {"bw_pct", p->bw_pct},
          {"flops_pct", p->flops_pct}};
}

nlohmann::json OptionalJson(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string Pct(double v) {
  return v >= 10 || v == 0 ? fmt::format("{:.0f}%", v) : fmt::format("{:.2g}%", v);
}

std::string TopOps(const nlohmann::json& ops) {
  std::vector<std::pair<std::string, int>> items;
  for (const auto& [k, v] : ops.items()) items.emplace_back(k, v.is_number() ? v.get<int>() : 0);
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (size_t i = 0; i < items.size() && i < 4; ++i) {
    out += fmt::format("{}{} x{}", i ? ", " : "", items[i].first, items[i].second);
  }
  return out;
}

}  // namespace

double RooflineWork::total_flops() const {
  double t = 0;
  for (const auto& [cls, f] : flops) t += f;
  return t;
}

Result<std::optional<Roofline>> ParseRoofline(const nlohmann::json& j, std::optional<double> ref_us,
                                              std::optional<double> cand_us) {
  if (!j.is_object()) return std::optional<Roofline>();
  Roofline r;
  if (auto w = j.find("work"); w != j.end() && !w->is_null()) {
    Result<RooflineWork> work = ParseWork(*w);
    if (!work.ok()) return work.status();
    r.work = *work;
  }
  if (auto p = j.find("peaks"); p != j.end() && !p->is_null()) {
    Result<DevicePeaks> peaks = ParsePeaks(*p);
    if (!peaks.ok()) return peaks.status();
    r.peaks = *peaks;
  }
  if (auto e = j.find("error"); e != j.end() && e->is_string()) r.error = e->get<std::string>();
  // A stored result keeps the lazy check under "lazy"; the worker's is "candidate_torch".
  const nlohmann::json* torch_work = nullptr;
  for (const char* key : {"candidate_torch", "lazy"}) {
    if (auto t = j.find(key); t != j.end() && t->is_object()) torch_work = &*t;
  }
  std::optional<double> share = JsonNumber(j, "custom_device_share");
  if (torch_work != nullptr) {
    const nlohmann::json& t = *torch_work;
    nlohmann::json raw = {{"flops", t.value("torch_flops", t.value("flops", 0.0))},
                          {"bytes", t.value("torch_bytes", t.value("bytes", 0.0))},
                          {"ops", t.value("ops", nlohmann::json::object())}};
    if (!share) share = JsonNumber(t, "custom_device_share");
    r.lazy = ParseLazy(raw, r.work, share);
  }
  Derive(&r);
  r.ref = Point(r, ref_us);
  r.cand = Point(r, cand_us);
  return std::optional<Roofline>(std::move(r));
}

nlohmann::json RooflineToJson(const Roofline& r) {
  nlohmann::json j;
  j["work"] = nullptr;
  if (r.work) j["work"] = {{"flops", MapJson(r.work->flops)}, {"bytes", r.work->bytes}};
  j["peaks"] = nullptr;
  if (r.peaks) {
    const DevicePeaks& p = *r.peaks;
    j["peaks"] = {{"device", p.device},
                  {"bw_bytes_per_s", p.bw_bytes_per_s},
                  {"flops_per_s", MapJson(p.flops_per_s)},
                  {"launch_us", p.launch_us},
                  {"measure_s", p.measure_s},
                  {"cached", p.cached},
                  {"datasheet", nullptr}};
    if (p.datasheet) {
      j["peaks"]["datasheet"] = {{"name", p.datasheet->name},
                                 {"bw_bytes_per_s", p.datasheet->bw_bytes_per_s},
                                 {"flops_per_s", MapJson(p.datasheet->flops_per_s)}};
    }
  }
  j["lazy"] = nullptr;
  if (r.lazy) {
    const LazyCheck& l = *r.lazy;
    j["lazy"] = {{"torch_flops", l.torch_flops},
                 {"torch_bytes", l.torch_bytes},
                 {"custom_flops_share", OptionalJson(l.custom_flops_share)},
                 {"custom_bytes_share", OptionalJson(l.custom_bytes_share)},
                 {"custom_device_share", OptionalJson(l.custom_device_share)},
                 {"lazy", l.lazy},
                 {"ops", l.ops}};
  }
  j["error"] = r.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.error);
  if (r.has_floor()) {
    j["memory_us"] = r.memory_us;
    j["compute_us"] = r.compute_us;
    j["floor_us"] = r.floor_us;
    j["bound"] = r.bound;
    j["compute_class"] = r.compute_class;
  }
  j["ref"] = PointJson(r.ref);
  j["cand"] = PointJson(r.cand);
  return j;
}

std::string FormatRate(double per_s, const char* unit) {
  static constexpr std::pair<double, const char*> kScales[] = {
      {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [scale, prefix] : kScales) {
    if (per_s >= scale) return fmt::format("{:.3g} {}{}", per_s / scale, prefix, unit);
  }
  return fmt::format("{:.3g} {}", per_s, unit);
}

std::string RooflineFeedback(const Roofline& r) {
  std::string out;
  if (r.has_floor()) {
    const DevicePeaks& p = *r.peaks;
    std::string bound = r.bound;
    if (r.bound == "compute") bound += ", " + r.compute_class;
    std::string flops_peak =
        r.compute_class.empty() ? "FLOP/s" : "peak " + r.compute_class + " FLOP/s";
    if (r.cand) {
      out += fmt::format(
          "Roofline: candidate {:.2f} us; floor {:.2f} us ({}); at {} of the floor, {} of {}, "
          "{} of peak memory bandwidth.\n",
          r.cand->us, r.floor_us, bound, Pct(r.cand->pct_of_floor), Pct(r.cand->flops_pct),
          flops_peak, Pct(r.cand->bw_pct));
    } else {
      out += fmt::format("Roofline: floor {:.2f} us ({}).\n", r.floor_us, bound);
    }
    if (r.ref) {
      out += fmt::format("Roofline: the reference ({:.2f} us) is at {} of the floor.\n", r.ref->us,
                         Pct(r.ref->pct_of_floor));
    }
    std::string peaks = fmt::format("{} bandwidth", FormatRate(p.bw_bytes_per_s, "B/s"));
    if (!r.compute_class.empty()) {
      auto it = p.flops_per_s.find(r.compute_class);
      if (it != p.flops_per_s.end()) {
        peaks += fmt::format(", {} {}", r.compute_class, FormatRate(it->second, "FLOP/s"));
      }
    }
    out += fmt::format("Roofline: work {} FLOPs, {} moved at least; measured peaks of {}: {}.\n",
                       FormatRate(r.work->total_flops(), ""), FormatRate(r.work->bytes, "B"),
                       p.device.empty() ? "the device" : p.device, peaks);
    if (r.bound == "launch-latency") {
      out += fmt::format(
          "Roofline: the floor is below the {:.2f} us one minimal launch takes here: the time "
          "is launch overhead; do the work in fewer kernels.\n",
          p.launch_us);
    }
  }
  if (r.lazy && r.lazy->lazy) {
    const LazyCheck& l = *r.lazy;
    bool by_flops = l.custom_flops_share.has_value();
    double custom = by_flops ? *l.custom_flops_share : *l.custom_bytes_share;
    out += fmt::format(
        "Lazy optimization (information, not a reject): the custom kernels cover {} of the "
        "problem's {}; torch ops ({}) do the rest.",
        Pct(100 * custom), by_flops ? "FLOPs" : "minimum bytes", TopOps(l.ops));
    if (l.custom_device_share) {
      out += fmt::format(" {} of the device time is in the custom kernels.",
                         Pct(100 * *l.custom_device_share));
    } else {
      out += " The device-time share is not measured on this backend.";
    }
    out += "\n";
  }
  return out;
}

}  // namespace ks
