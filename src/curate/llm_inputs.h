// LLM repair of input deduction (docs/curate.md, stage "llm"): the prompt that asks an LLM for
// `get_inputs()` / `get_init_inputs()` of a module whose inputs could not be deduced, and the
// parsing of its reply. The answer is then verified by `inputs` like any other.
// Template: prompts/curate/inputs.md with the placeholders {{class_name}}, {{source}} and
// {{last_error}}.
// Thread-safety: functions only.
#pragma once

#include <string>

#include "core/status.h"
#include "llm/llm_client.h"

namespace ks {

struct CandidateInputs {
  std::string get_inputs;       // "def get_inputs():\n ..." plus the imports the reply made
  std::string get_init_inputs;  // "def get_init_inputs():\n ..."
};

// The built-in template's path (curate/inputs.md of the resources' prompts; FindResources).
Result<std::string> DefaultInputsTemplatePath();

// The chat request for one module. InvalidArgument names an unknown {{placeholder}}.
Result<ChatRequest> BuildInputsRequest(const std::string& template_text,
                                       const std::string& class_name, const std::string& source,
                                       const std::string& last_error);

// The two functions of a reply: the code of its ```python blocks (or the whole reply when it
// has none); each function runs from its `def` line to the next top-level statement. Top-level
// imports of the reply are prepended to get_inputs. Protocol names the missing function.
Result<CandidateInputs> ParseInputsReply(const std::string& reply);

}  // namespace ks
