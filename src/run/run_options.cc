#include "run/run_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <variant>

#include "core/config_file.h"

namespace ks {
namespace {

using ConfigField = std::variant<std::string*, int*, double*, uint64_t*, std::vector<std::string>*>;

// The options by config key (flag name without dashes, '-' as '_').
std::vector<std::pair<std::string, ConfigField>> ConfigFields(RunOptions& o) {
  return {{"seed_kernel", &o.seed_kernel},
          {"backend", &o.backend},
          {"proposer", &o.proposer},
          {"rounds", &o.rounds},
          {"islands", &o.islands},
          {"parallel_proposals", &o.parallel_proposals},
          {"parallel_evals", &o.parallel_evals},
          {"gpus", &o.gpus},
          {"llm_url", &o.llm_url},
          {"model", &o.model},
          {"api_key_env", &o.api_key_env},
          {"llm", &o.llms},
          {"command", &o.command},
          {"command_timeout", &o.command_timeout_s},
          {"exchange_dir", &o.exchange_dir},
          {"prompts", &o.prompts_dir},
          {"migration_interval", &o.migration_interval},
          {"exploitation", &o.exploitation},
          {"exploration", &o.exploration},
          {"random", &o.random},
          {"tuner_ratio", &o.tuner_ratio},
          {"seed", &o.seed},
          {"trials", &o.trials},
          {"python", &o.python},
          {"queue", &o.queue},
          {"max_tokens", &o.llm_limits.max_tokens},
          {"context_tokens", &o.llm_limits.context_tokens},
          {"llm_timeout", &o.llm_limits.llm_timeout_s},
          {"price_in", &o.price_in},
          {"price_out", &o.price_out}};
}

}  // namespace

nlohmann::json ConfigOf(const RunOptions& options) {
  RunOptions o = options;
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, field] : ConfigFields(o)) {
    std::visit([&, k = key](auto* value) { j[k] = *value; }, field);
  }
  return j;
}

Status ApplyConfig(const nlohmann::json& config,
                   const std::function<bool(const std::string&)>& flag_given,
                   const std::string& source, RunOptions& o) {
  if (!config.is_object()) return Status::InvalidArgument(source + ": expected a JSON object");
  std::vector<std::pair<std::string, ConfigField>> fields = ConfigFields(o);
  std::vector<std::string> known;
  for (const auto& field : fields) known.push_back(field.first);
  if (Status s = CheckConfigKeys(config, known, source); !s.ok()) return s;
  for (const auto& [key, value] : config.items()) {
    auto field = std::find_if(fields.begin(), fields.end(),
                              [&, k = key](const auto& f) { return f.first == k; });
    if (field == fields.end()) continue;  // CheckConfigKeys named it
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (flag_given(flag)) continue;  // flags win
    try {
      std::visit([&](auto* target) { value.get_to(*target); }, field->second);
    } catch (const nlohmann::json::exception& e) {
      return Status::InvalidArgument(source + ": \"" + key + "\" has the wrong type: " + e.what());
    }
  }
  return Status::Ok();
}

Result<ProposerSpec> ProposerSpecOf(RunOptions& o) {
  if (o.proposer.empty()) {
    o.proposer = !o.llm_url.empty() || !o.llms.empty() ? "llm"
                 : !o.command.empty()                  ? "command"
                 : !o.exchange_dir.empty()             ? "files"
                                                       : "tuner";
  }
  ProposerSpec spec;
  spec.kind = o.proposer;
  if (!o.llm_url.empty() || !o.model.empty()) {
    if (o.llm_url.empty() || o.model.empty()) {
      return Status::InvalidArgument("--llm-url and --model go together (or use --llm URL,MODEL)");
    }
    spec.llms.push_back({o.llm_url, o.model, 1.0, o.api_key_env});
  }
  for (const std::string& text : o.llms) {
    Result<LlmEndpointSpec> e = ParseLlmEndpointSpec(text);
    if (!e.ok()) return e.status();
    spec.llms.push_back(*e);
  }
  if (o.proposer == "llm" && spec.llms.empty()) {
    return Status::InvalidArgument(
        "--proposer llm needs --llm-url URL --model NAME (or --llm URL,MODEL)");
  }
  if (o.proposer == "command" && o.command.empty()) {
    return Status::InvalidArgument("--proposer command needs --command 'CMD'");
  }
  if (o.proposer == "files" && o.exchange_dir.empty()) {
    return Status::InvalidArgument("--proposer files needs --exchange-dir DIR");
  }
  if (o.price_in < 0 || o.price_out < 0) {
    return Status::InvalidArgument(
        "--price-in and --price-out must be >= 0 (USD per million "
        "tokens)");
  }
  spec.max_in_flight = o.parallel_proposals;
  spec.command = o.command;
  spec.command_timeout_s = o.command_timeout_s;
  spec.exchange_dir = o.exchange_dir;
  spec.prompts_dir = o.prompts_dir;
  spec.tuner_ratio = o.proposer == "tuner" ? 0 : o.tuner_ratio;
  spec.seed = o.seed;
  spec.limits = o.llm_limits;
  return spec;
}

}  // namespace ks
