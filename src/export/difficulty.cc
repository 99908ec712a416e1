#include "export/difficulty.h"

#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "propose/python_lexer.h"

namespace ks {
namespace {

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `code` with comments and string literals replaced by spaces (newlines kept).
std::string CodeOnly(std::string_view code) {
  std::vector<PyRegion> regions = ClassifyPythonRegions(code);
  std::string out(code);
  for (size_t i = 0; i < out.size(); ++i) {
    if (regions[i] != PyRegion::kCode && out[i] != '\n') out[i] = ' ';
  }
  return out;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

size_t Indent(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && (line[n] == ' ' || line[n] == '\t')) ++n;
  return n;
}

bool Blank(std::string_view line) { return Indent(line) == line.size(); }

// The lines of `class Model` (its header included); all lines when there is none.
std::vector<std::string_view> ModelClass(const std::vector<std::string_view>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    if (l.rfind("class Model", 0) != 0 || l.size() < 12 || IsIdentChar(l[11])) continue;
    size_t end = i + 1;
    while (end < lines.size() && (Blank(lines[end]) || Indent(lines[end]) > 0)) ++end;
    return {lines.begin() + static_cast<long>(i), lines.begin() + static_cast<long>(end)};
  }
  return lines;
}

// The body of `def forward` inside `cls` (the signature lines excluded).
std::vector<std::string_view> ForwardBody(const std::vector<std::string_view>& cls) {
  for (size_t i = 0; i < cls.size(); ++i) {
    size_t ind = Indent(cls[i]);
    if (cls[i].substr(ind).rfind("def forward", 0) != 0) continue;
    size_t j = i;
    while (j < cls.size()) {  // the signature may span lines; it ends with ':'
      std::string_view l = cls[j];
      while (!l.empty() && std::isspace(static_cast<unsigned char>(l.back()))) l.remove_suffix(1);
      ++j;
      if (!l.empty() && l.back() == ':') break;
    }
    size_t end = j;
    while (end < cls.size() && (Blank(cls[end]) || Indent(cls[end]) > ind)) ++end;
    return {cls.begin() + static_cast<long>(j), cls.begin() + static_cast<long>(end)};
  }
  return {};
}

const std::set<std::string, std::less<>> kContainers = {
    "Module", "Sequential", "ModuleList", "ModuleDict", "Parameter", "ParameterList",
    "ParameterDict", "Identity", "Buffer"};
const std::set<std::string, std::less<>> kFactories = {
    "randn", "rand", "randint", "empty", "zeros", "ones", "tensor", "arange", "full",
    "linspace", "eye", "Size", "device", "no_grad", "manual_seed", "randn_like", "rand_like",
    "zeros_like", "ones_like", "empty_like", "full_like", "as_tensor", "from_numpy",
    "is_tensor", "get_default_dtype", "finfo", "iinfo"};
const std::set<std::string, std::less<>> kComputeMethods = {
    "relu", "sum", "mean", "max", "min", "softmax", "log_softmax", "exp", "log", "tanh",
    "sigmoid", "matmul", "mm", "bmm", "add", "mul", "sub", "div", "pow", "sqrt", "rsqrt",
    "clamp", "clip", "norm", "cumsum", "cumprod", "prod", "abs", "neg", "argmax", "argmin",
    "logsumexp", "var", "std", "amax", "amin", "masked_fill", "gelu", "silu", "square",
    "reciprocal", "sin", "cos", "erf", "baddbmm", "addmm", "einsum", "maximum", "minimum",
    "where", "topk", "sort", "floor", "ceil", "round", "sign", "exp2", "log2", "diff"};

const std::set<std::string, std::less<>> kHeavyLayers = {
    "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "Embedding", "EmbeddingBag"};
const std::set<std::string, std::less<>> kCompositeLayers = {
    "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
    "TransformerEncoderLayer", "TransformerDecoderLayer", "LSTM", "GRU", "RNN", "LSTMCell",
    "GRUCell", "RNNCell"};

// Calls in `text`: a dotted name (or `).name`) followed by '('.
void CountCalls(std::string_view text, ReferenceOps& out) {
  int& ops = out.ops;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    bool starts_name = (std::isalpha(static_cast<unsigned char>(c)) || c == '_') &&
                       (i == 0 || (!IsIdentChar(text[i - 1]) && text[i - 1] != '.'));
    bool method_on_expr = c == '.' && i > 0 && (text[i - 1] == ')' || text[i - 1] == ']');
    if (!starts_name && !method_on_expr) {
      ++i;
      continue;
    }
    size_t j = method_on_expr ? i + 1 : i;
    std::vector<std::string> parts;
    if (method_on_expr) parts.push_back("<expr>");
    while (true) {
      size_t k = j;
      while (k < text.size() && IsIdentChar(text[k])) ++k;
      if (k == j) break;
      parts.emplace_back(text.substr(j, k - j));
      j = k;
      if (j < text.size() && text[j] == '.') {
        ++j;
        continue;
      }
      break;
    }
    size_t k = j;
    while (k < text.size() && text[k] == ' ') ++k;
    i = j > i ? j : i + 1;
    if (parts.empty() || k >= text.size() || text[k] != '(') continue;
    const std::string& last = parts.back();
    std::string prefix;
    for (size_t p = 0; p + 1 < parts.size(); ++p) prefix += (p ? "." : "") + parts[p];
    bool capital = std::isupper(static_cast<unsigned char>(last[0])) != 0;
    if ((prefix == "nn" || prefix == "torch.nn") && capital) {
      if (!kContainers.count(last)) ++ops;
      if (kHeavyLayers.count(last)) ++out.heavy_layers;
      if (kCompositeLayers.count(last)) out.composite = true;
    } else if (prefix == "torch" || prefix == "F" || prefix == "torch.nn.functional" ||
               prefix == "nn.functional" || prefix == "torch.linalg" || prefix == "torch.fft") {
      if (!capital && !kFactories.count(last)) ++ops;
    } else if (parts.size() >= 2 && kComputeMethods.count(last)) {
      ++ops;
    }
  }
}

// Binary arithmetic operators (+ - * / @, augmented forms included; ** and // count once).
int CountArithmetic(std::string_view line) {
  int ops = 0;
  char prev = 0;  // the previous non-space character
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t') continue;
    bool binary = IsIdentChar(prev) || prev == ')' || prev == ']';
    if ((c == '+' || c == '-' || c == '*' || c == '/' || c == '@') && binary) {
      if ((c == '*' || c == '/') && i + 1 < line.size() && line[i + 1] == c) ++i;
      if (c == '-' && i + 1 < line.size() && line[i + 1] == '>') {
        ++i;
        prev = '>';
        continue;
      }
      ++ops;
    }
    prev = c;
  }
  return ops;
}

}  // namespace

int LevelFromPath(std::string_view path) {
  int level = 0;
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part.size() > 5 && part.substr(0, 5) == "level" && part.size() <= 8) {
      bool digits = true;
      for (char c : part.substr(5)) digits = digits && std::isdigit(static_cast<unsigned char>(c));
      if (digits) {
        int n = std::stoi(std::string(part.substr(5)));
        if (n >= 1) level = n;
      }
    }
    start = end + 1;
  }
  return level;
}

ReferenceOps AnalyzeReference(std::string_view reference_code) {
  std::string code = CodeOnly(reference_code);
  std::vector<std::string_view> cls = ModelClass(Lines(code));
  ReferenceOps r;
  for (std::string_view l : cls) {
    CountCalls(l, r);
    std::string_view t = l.substr(Indent(l));
    if (t.rfind("for ", 0) == 0 || t.rfind("while ", 0) == 0 ||
        l.find("nn.Sequential(") != std::string_view::npos ||
        l.find("nn.ModuleList(") != std::string_view::npos) {
      r.layer_stack = true;
    }
  }
  for (std::string_view l : ForwardBody(cls)) r.ops += CountArithmetic(l);
  return r;
}

int EstimateLevel(std::string_view reference_code) {
  if (reference_code.find_first_not_of(" \t\r\n") == std::string_view::npos) return 0;
  ReferenceOps r = AnalyzeReference(reference_code);
  if (r.layer_stack || r.composite || r.heavy_layers >= 2 || r.ops > 8) return 3;
  return r.ops <= 1 ? 1 : 2;
}

Difficulty ClassifyDifficulty(std::string_view problem_path, std::string_view reference_code) {
  Difficulty d;
  d.level = LevelFromPath(problem_path);
  if (d.level > 0) {
    d.source = "path";
  } else {
    d.level = EstimateLevel(reference_code);
    d.source = d.level > 0 ? "heuristic" : "none";
    if (d.level > 0) d.op_count = AnalyzeReference(reference_code).ops;
  }
  d.category = d.level > 0 ? "level" + std::to_string(d.level) : "unknown";
  return d;
}

}  // namespace ks
