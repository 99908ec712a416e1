#include "engine/proposer_factory.h"

#include <fmt/format.h>

#include <memory>
#include <sstream>

#include "engine/llm_proposer.h"
#include "llm/ensemble.h"
#include "llm/llm_client.h"

namespace ks {

Result<LlmEndpointSpec> ParseLlmEndpointSpec(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(
        fmt::format("--llm \"{}\": {}; expected URL,MODEL[,WEIGHT[,API_KEY_ENV]], e.g. "
                    "http://localhost:8000/v1,Qwen/Qwen2.5-Coder-32B-Instruct,2",
                    text, why));
  };
  if (parts.size() < 2 || parts.size() > 4) return bad("needs 2 to 4 comma-separated fields");
  LlmEndpointSpec spec;
  spec.url = parts[0];
  spec.model = parts[1];
  if (spec.url.empty() || spec.model.empty()) return bad("URL and MODEL must not be empty");
  if (parts.size() > 2 && !parts[2].empty()) {
    try {
      size_t used = 0;
      spec.weight = std::stod(parts[2], &used);
      if (used != parts[2].size()) return bad("WEIGHT is not a number");
    } catch (const std::exception&) {
      return bad("WEIGHT is not a number");
    }
    if (!(spec.weight > 0)) return bad("WEIGHT must be > 0");
  }
  if (parts.size() > 3) spec.api_key_env = parts[3];
  return spec;
}

namespace {

// Failed calls in a row (each already retried by the client) after which an endpoint counts as
// dead: the run stops with the endpoint's last error instead of spinning (llm/ensemble.h).
constexpr int kDeadAfterFailedCalls = 3;

}  // namespace

Result<std::shared_ptr<LlmClient>> MakeLlmClient(const ProposerSpec& spec) {
  std::vector<EnsembleMember> members;
  for (const LlmEndpointSpec& e : spec.llms) {
    OpenAiClientOptions co;
    co.base_url = e.url;
    co.model = e.model;
    co.api_key_env = e.api_key_env;
    co.max_in_flight = spec.max_in_flight;
    co.seed = spec.seed;
    co.context_tokens = spec.limits.context_tokens;
    co.request_timeout_s = spec.limits.llm_timeout_s;
    Result<std::unique_ptr<OpenAiClient>> client = OpenAiClient::Create(co);
    if (!client.ok()) return client.status();
    members.push_back({std::shared_ptr<LlmClient>(std::move(*client)), e.weight});
  }
  if (members.size() == 1) {
    return std::shared_ptr<LlmClient>(
        std::make_shared<DeadEndpointGuard>(members[0].client, kDeadAfterFailedCalls));
  }
  LlmEnsembleOptions eo;
  eo.seed = spec.seed;
  eo.max_consecutive_failures = kDeadAfterFailedCalls;
  Result<std::unique_ptr<LlmEnsemble>> ensemble = LlmEnsemble::Create(std::move(members), eo);
  if (!ensemble.ok()) return ensemble.status();
  return std::shared_ptr<LlmClient>(std::move(*ensemble));
}

Result<std::unique_ptr<Proposer>> MakeProposer(const ProposerSpec& spec, Store* store) {
  if (spec.kind == "tuner") return std::unique_ptr<Proposer>(new TunerProposer(spec.seed));
  LlmProposerOptions lo;
  lo.run_id = spec.run_id;
  lo.prompts_dir = spec.prompts_dir;
  lo.max_prompt_tokens = spec.max_prompt_tokens;
  lo.max_tokens = spec.limits.max_tokens;
  Result<std::unique_ptr<Proposer>> made = Status::InvalidArgument(
      "unknown proposer \"" + spec.kind + "\" (known: llm, tuner, command, files)");
  if (spec.kind == "llm") {
    if (spec.llms.empty()) {
      return Status::InvalidArgument(
          "--proposer llm needs --llm-url URL --model NAME or --llm URL,MODEL[,WEIGHT]");
    }
    Result<std::shared_ptr<LlmClient>> client =
        spec.client ? Result<std::shared_ptr<LlmClient>>(spec.client) : MakeLlmClient(spec);
    if (!client.ok()) return client.status();
    lo.model = spec.llms.size() == 1 ? spec.llms[0].model : "ensemble";
    Result<std::unique_ptr<LlmProposer>> p = LlmProposer::Create(*client, store, lo);
    if (!p.ok()) return p.status();
    made = std::unique_ptr<Proposer>(std::move(*p));
  } else if (spec.kind == "command") {
    if (spec.command.empty()) return Status::InvalidArgument("--proposer command needs --command");
    lo.model = "command";
    lo.kind = ProposerKind::kCommand;
    Result<std::unique_ptr<LlmProposer>> p = LlmProposer::Create(
        spec.client ? spec.client : MakeCommandClient(spec.command, spec.command_timeout_s), store,
        lo);
    if (!p.ok()) return p.status();
    made = std::unique_ptr<Proposer>(std::move(*p));
  } else if (spec.kind == "files") {
    if (spec.exchange_dir.empty()) {
      return Status::InvalidArgument("--proposer files needs --exchange-dir DIR");
    }
    lo.model = "files";
    made = MakeFilesProposer(store, lo, spec.exchange_dir);
  }
  if (!made.ok() || spec.tuner_ratio <= 0) return made;
  return MakeMixedProposer(std::move(*made), std::make_unique<TunerProposer>(spec.seed),
                           spec.tuner_ratio, spec.seed);
}

}  // namespace ks
