#include "curate/llm_inputs.h"

#include <regex>
#include <sstream>
#include <vector>

#include "core/resources.h"

namespace ks {
namespace {

// Code inside ``` fences (any language tag), joined; the whole text when there is none.
std::string CodeOf(const std::string& reply) {
  std::istringstream in(reply);
  std::string code;
  bool inside = false, any = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      inside = !inside;
      any = true;
      continue;
    }
    if (inside) code += line + "\n";
  }
  return any ? code : reply;
}

bool IsTopLevelStatement(const std::string& line) {
  return !line.empty() && line[0] != ' ' && line[0] != '\t' && line[0] != '#' &&
         line[0] != ')' && line[0] != ']' && line[0] != '}';
}

// The function `name` (its def line up to the next top-level statement), or "".
std::string FunctionOf(const std::vector<std::string>& lines, const std::string& name) {
  const std::regex def("^def\\s+" + name + "\\s*\\(");
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!std::regex_search(lines[i], def)) continue;
    out = lines[i] + "\n";
    for (size_t j = i + 1; j < lines.size() && !IsTopLevelStatement(lines[j]); ++j) {
      out += lines[j] + "\n";
    }
    while (out.size() > 1 && out[out.size() - 2] == '\n') out.pop_back();  // trailing blanks
  }
  return out;  // the last definition wins, as in Python
}

}  // namespace

Result<std::string> DefaultInputsTemplatePath() {
  Result<Resources> resources = FindResources();
  if (!resources.ok()) return resources.status();
  return resources->prompts_dir + "/curate/inputs.md";
}

Result<ChatRequest> BuildInputsRequest(const std::string& template_text,
                                       const std::string& class_name, const std::string& source,
                                       const std::string& last_error) {
  const std::regex placeholder("\\{\\{([a-z_]+)\\}\\}");
  std::string text;
  size_t pos = 0;
  for (std::sregex_iterator it(template_text.begin(), template_text.end(), placeholder), end;
       it != end; ++it) {
    const std::smatch& m = *it;
    text += template_text.substr(pos, static_cast<size_t>(m.position()) - pos);
    std::string key = m[1].str();
    if (key == "class_name") {
      text += class_name;
    } else if (key == "source") {
      text += source;
    } else if (key == "last_error") {
      text += last_error.empty() ? "(no error message)" : last_error;
    } else {
      return Status::InvalidArgument("curate prompt template: unknown placeholder {{" + key +
                                     "}} (known: class_name, source, last_error)");
    }
    pos = static_cast<size_t>(m.position() + m.length());
  }
  text += template_text.substr(pos);
  ChatRequest request;
  request.messages = {{"user", text}};
  request.temperature = 0.2;
  request.max_tokens = 2048;
  return request;
}

Result<CandidateInputs> ParseInputsReply(const std::string& reply) {
  std::vector<std::string> lines;
  std::istringstream in(CodeOf(reply));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  CandidateInputs c;
  c.get_inputs = FunctionOf(lines, "get_inputs");
  c.get_init_inputs = FunctionOf(lines, "get_init_inputs");
  if (c.get_inputs.empty() || c.get_init_inputs.empty()) {
    return Status::Protocol(std::string("the LLM reply defines no top-level ") +
                            (c.get_inputs.empty() ? "get_inputs()" : "get_init_inputs()") +
                            " function");
  }
  std::string imports;
  const std::regex import_re("^(import|from)\\s+[A-Za-z_][A-Za-z0-9_.]*");
  for (const std::string& line : lines) {
    if (std::regex_search(line, import_re)) imports += line + "\n";
  }
  c.get_inputs = imports + c.get_inputs;
  return c;
}

}  // namespace ks
