#include "llm/prompt_builder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <set>

#include "core/file.h"
#include "core/resources.h"

namespace ks {
namespace {

namespace fs = std::filesystem;
using Values = std::map<std::string, std::string, std::less<>>;

const std::set<std::string, std::less<>>& KnownPlaceholders() {
  static const std::set<std::string, std::less<>> names = {
      "reference_code", "current_program", "current_metrics", "feedback", "history",
      "top_programs",   "output_format",   "hardware",        "backend"};
  return names;
}

// A placeholder at `pos` (which starts with "{{"): its name and the length of `{{name}}`.
std::optional<std::pair<std::string_view, size_t>> PlaceholderAt(std::string_view text,
                                                                 size_t pos) {
  size_t i = pos + 2;
  if (i >= text.size() || !std::isalpha(static_cast<unsigned char>(text[i]))) return std::nullopt;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
    ++i;
  }
  if (text.substr(i, 2) != "}}") return std::nullopt;
  return std::make_pair(text.substr(pos + 2, i - pos - 2), i + 2 - pos);
}

// OK when every placeholder in `text` is known, else InvalidArgument naming `path` and line.
Status CheckPlaceholders(const std::string& path, std::string_view text) {
  for (size_t pos = text.find("{{"); pos != std::string_view::npos;
       pos = text.find("{{", pos + 1)) {
    auto p = PlaceholderAt(text, pos);
    if (!p || KnownPlaceholders().count(p->first) > 0) continue;
    int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + pos, '\n'));
    std::string known;
    for (const std::string& k : KnownPlaceholders()) known += (known.empty() ? "" : ", ") + k;
    return Status::InvalidArgument(
        fmt::format("unknown placeholder {{{{{}}}}} in prompt template {} (line {}); known: {}",
                    p->first, path, line, known));
  }
  return Status::Ok();
}

// `text` with every placeholder replaced by its value (one pass; values are not rescanned).
std::string Render(std::string_view text, const Values& values) {
  std::string out;
  out.reserve(text.size());
  size_t from = 0;
  for (size_t pos = text.find("{{"); pos != std::string_view::npos; pos = text.find("{{", pos)) {
    auto p = PlaceholderAt(text, pos);
    auto it = p ? values.find(p->first) : values.end();
    if (it == values.end()) {
      ++pos;
      continue;
    }
    out.append(text.substr(from, pos - from));
    out += it->second;
    pos += p->second;
    from = pos;
  }
  out.append(text.substr(from));
  return out;
}

std::string TrimEnd(std::string_view s) {
  size_t n = s.size();
  while (n > 0 && std::isspace(static_cast<unsigned char>(s[n - 1]))) --n;
  return std::string(s.substr(0, n));
}

std::string OrNone(std::string_view s, std::string_view none) {
  std::string t = TrimEnd(s);
  return t.empty() ? std::string(none) : t;
}

std::string RenderHistory(const std::vector<HistoryEntry>& history, size_t first) {
  if (history.empty()) return "(none yet)";
  std::string out;
  if (first > 0) {
    out += fmt::format("({} earlier attempts omitted to fit the prompt)\n", first);
  }
  for (size_t i = first; i < history.size(); ++i) {
    out += fmt::format("Attempt {}: {}\n  Result: {}\n", i + 1,
                       OrNone(history[i].summary, "(no summary)"),
                       OrNone(history[i].metrics, "(not evaluated)"));
  }
  return TrimEnd(out);
}

std::string RenderTopPrograms(const std::vector<TopProgram>& top, size_t kept) {
  if (top.empty()) return "(none yet)";
  std::string out;
  for (size_t i = 0; i < kept; ++i) {
    out += fmt::format("## Program {} ({})\n\n```python\n{}\n```\n\n", i + 1,
                       OrNone(top[i].metrics, "no metrics"), TrimEnd(top[i].code));
  }
  if (kept < top.size()) {
    out += fmt::format("({} more programs omitted to fit the prompt)\n", top.size() - kept);
  }
  return TrimEnd(out);
}

// The template BACKEND/FILE (or common/FILE), from the user's directory first.
Result<std::string> FindTemplate(const PromptBuilderOptions& o, const std::string& rel) {
  std::vector<std::string> dirs;
  if (!o.template_dir.empty()) dirs.push_back(o.template_dir);
  dirs.push_back(o.builtin_dir);
  for (const std::string& dir : dirs) {
    fs::path p = fs::path(dir) / rel;
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return Status::NotFound(
      fmt::format("prompt template {} not found in {}; pass a template directory that has it", rel,
                  fmt::join(dirs, " or ")));
}

}  // namespace

std::vector<ChatMessage> Prompt::Messages() const { return {{"system", system}, {"user", user}}; }

Result<PromptBuilder> PromptBuilder::Create(PromptBuilderOptions options) {
  if (options.max_prompt_tokens <= 0) {
    return Status::InvalidArgument("max_prompt_tokens must be > 0");
  }
  if (options.builtin_dir.empty()) {
    Result<Resources> resources = FindResources();
    if (!resources.ok()) return resources.status();
    options.builtin_dir = resources->prompts_dir;
  }
  PromptBuilder builder(options);
  for (const std::string& backend : options.backends) {
    BackendTemplates t;
    const std::pair<Template*, std::string> files[] = {
        {&t.system, backend + "/system.md"},
        {&t.user, backend + "/user.md"},
        {&t.translate, backend + "/translate.md"},
        {&t.format_edit, "common/output_format_edit.md"},
        {&t.format_translate, "common/output_format_translate.md"}};
    for (const auto& [tmpl, rel] : files) {
      Result<std::string> path = FindTemplate(options, rel);
      if (!path.ok()) return path.status();
      Result<std::string> text = ReadFile(*path);
      if (!text.ok()) return text.status();
      Status s = CheckPlaceholders(*path, *text);
      if (!s.ok()) return s;
      tmpl->path = *path;
      tmpl->text = std::move(*text);
    }
    builder.backends_[backend] = std::move(t);
  }
  return builder;
}

Result<Prompt> PromptBuilder::Build(const PromptInput& in) const {
  auto it = backends_.find(in.backend);
  if (it == backends_.end()) {
    std::string loaded;
    for (const auto& [name, t] : backends_) loaded += (loaded.empty() ? "" : ", ") + name;
    return Status::InvalidArgument(fmt::format(
        "no prompt templates loaded for backend '{}' (loaded: {})", in.backend, loaded));
  }
  const BackendTemplates& t = it->second;
  const bool translation = TrimEnd(in.current_program).empty();
  const Template& user = translation ? t.translate : t.user;
  Values values = {{"reference_code", TrimEnd(in.reference_code)},
                   {"current_program", TrimEnd(in.current_program)},
                   {"current_metrics", OrNone(in.current_metrics, "(not evaluated yet)")},
                   {"hardware", OrNone(in.hardware, "the target device")},
                   {"backend", in.backend}};
  values["output_format"] =
      TrimEnd(Render(translation ? t.format_translate.text : t.format_edit.text, values));

  size_t history_first = 0;                  // history entries before this are dropped
  size_t top_kept = in.top_programs.size();  // top programs from this index are dropped
  std::string feedback = in.feedback;
  Prompt prompt;
  prompt.translation = translation;
  auto render = [&] {
    values["history"] = RenderHistory(in.history, history_first);
    values["top_programs"] = RenderTopPrograms(in.top_programs, top_kept);
    values["feedback"] = OrNone(feedback, "(none)");
    prompt.system = Render(t.system.text, values);
    prompt.user = Render(user.text, values);
    prompt.estimated_tokens = EstimateTokens(prompt.system) + EstimateTokens(prompt.user);
    return prompt.estimated_tokens <= options_.max_prompt_tokens;
  };
  const int64_t cap = options_.max_prompt_tokens;
  bool fits = render();
  while (!fits && history_first < in.history.size()) {
    ++history_first;
    fits = render();
  }
  while (!fits && top_kept > 0) {
    --top_kept;
    fits = render();
  }
  // The feedback keeps its head and tail (status line; end of a log), losing the middle.
  for (int round = 0; !fits && round < 8 && !feedback.empty(); ++round) {
    const size_t over = static_cast<size_t>(prompt.estimated_tokens - cap) * 4 + 64;
    if (over >= feedback.size()) {
      feedback.clear();
    } else {
      size_t keep = feedback.size() - over;
      size_t head = keep / 3;
      size_t cut = feedback.size() - keep;
      feedback = feedback.substr(0, head) +
                 fmt::format("\n[... {} characters of feedback trimmed ...]\n", cut) +
                 feedback.substr(head + cut);
    }
    fits = render();
  }
  if (!fits) {
    return Status::InvalidArgument(fmt::format(
        "the prompt needs ~{} tokens even without history, top programs and feedback "
        "(reference ~{}, current program ~{} tokens), over the cap of {}; raise the prompt "
        "token cap",
        prompt.estimated_tokens, EstimateTokens(in.reference_code),
        EstimateTokens(in.current_program), cap));
  }
  if (history_first > 0) {
    prompt.trimmed.push_back(
        fmt::format("dropped {} of {} history entries", history_first, in.history.size()));
  }
  if (top_kept < in.top_programs.size()) {
    prompt.trimmed.push_back(fmt::format("dropped {} of {} top programs",
                                         in.top_programs.size() - top_kept,
                                         in.top_programs.size()));
  }
  if (feedback != in.feedback) {
    prompt.trimmed.push_back(
        fmt::format("cut feedback from {} to {} characters", in.feedback.size(), feedback.size()));
  }
  return prompt;
}

}  // namespace ks
