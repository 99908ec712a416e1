// Difficulty of a problem, for balancing exported datasets (docs/export.md): the KernelBench
// level when the problem's path shows it (a `levelN` directory), else an estimate of that
// level from the reference module's operators.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace ks {

struct Difficulty {
  int level = 0;          // 1, 2, 3, ...; 0 when neither the path nor the source tells
  std::string category;   // "level<N>", or "unknown" when level is 0
  std::string source;     // "path", "heuristic" or "none"
  int op_count = 0;       // operators counted in the reference (0 when the path told)
};

// N of the last path component `levelN` (N >= 1), e.g. 2 for
// "KernelBench/level2/19_Gemm.py" or "bench/problems/level2/19_Gemm/run.db"; 0 when none.
int LevelFromPath(std::string_view path);

// What a reference module computes, counted on the code of `class Model` (comments and
// strings ignored):
// - ops: layer constructions `nn.Linear(...)` (containers and nn.Parameter excluded), calls of
//   `torch.*`, `F.*` and `torch.nn.functional.*` (tensor factories excluded), compute methods
//   called on tensors (`x.relu()`, `x.sum(...)`), and the arithmetic operators (+ - * / @ **)
//   of `forward`;
// - heavy_layers: layers with weights that multiply (Linear, Conv*, Embedding, ...);
// - composite: a whole block as one layer (MultiheadAttention, Transformer*, LSTM, GRU, RNN);
// - layer_stack: a loop, nn.Sequential or nn.ModuleList.
struct ReferenceOps {
  int ops = 0;
  int heavy_layers = 0;
  bool composite = false;
  bool layer_stack = false;
};
ReferenceOps AnalyzeReference(std::string_view reference_code);

// The estimate of the KernelBench level: 3 (an architecture: a layer stack, a composite layer,
// two or more heavy layers, or more than 8 ops), 1 (a single operator: at most 1 op), else 2
// (a short fusion chain). 0 for an empty source.
int EstimateLevel(std::string_view reference_code);

// The level from `problem_path` when it shows one, else the estimate from `reference_code`
// (empty when unknown).
Difficulty ClassifyDifficulty(std::string_view problem_path, std::string_view reference_code);

}  // namespace ks
