#include "curate/dedup.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace ks {

Result<DedupResult> Deduplicate(std::vector<DedupItem> items, double threshold,
                                const MinHashOptions& options) {
  if (!(threshold > 0 && threshold <= 1)) {
    return Status::InvalidArgument(fmt::format(
        "--near-dup-threshold must be in (0, 1], got {} (1 keeps only identical token sets)",
        threshold));
  }
  Result<MinHasher> hasher = MinHasher::Create(options);
  if (!hasher.ok()) return hasher.status();
  std::sort(items.begin(), items.end(),
            [](const DedupItem& a, const DedupItem& b) { return a.id < b.id; });

  DedupResult result;
  std::unordered_map<std::string, int64_t> first_of_hash;
  std::vector<const DedupItem*> reps;
  for (const DedupItem& item : items) {
    auto [it, inserted] = first_of_hash.emplace(item.ast_hash, item.id);
    if (!inserted && !item.ast_hash.empty()) {
      DedupVerdict v;
      v.exact = true;
      v.duplicate_of = v.merged_into = it->second;
      result.merged[item.id] = v;
      ++result.exact;
    } else {
      reps.push_back(&item);
    }
  }

  LshIndex index(&*hasher);
  std::unordered_map<int64_t, MinHashSignature> signature_of;
  for (const DedupItem* item : reps) {
    if (item->tokens.empty()) continue;  // nothing to compare: kept
    MinHashSignature sig = hasher->Signature(item->tokens);
    int64_t best = 0;
    double best_j = -1;
    for (int64_t cand : index.Candidates(sig)) {
      double j = MinHasher::Estimate(sig, signature_of.at(cand));
      if (j >= threshold && (j > best_j || (j == best_j && cand < best))) {
        best = cand;
        best_j = j;
      }
    }
    if (best != 0) {
      DedupVerdict v;
      v.duplicate_of = v.merged_into = best;
      v.jaccard = best_j;
      result.merged[item->id] = v;
      ++result.near;
      continue;
    }
    index.Insert(item->id, sig);
    signature_of.emplace(item->id, std::move(sig));
  }
  // Exact duplicates of a module that was itself merged follow it to its representative.
  for (auto& [id, v] : result.merged) {
    if (!v.exact) continue;
    auto up = result.merged.find(v.duplicate_of);
    if (up != result.merged.end()) {
      v.merged_into = up->second.merged_into;
      v.jaccard = up->second.jaccard;
    }
  }
  return result;
}

std::string DescribeVerdict(const DedupVerdict& v) {
  if (!v.exact) return fmt::format("near-duplicate of {} (Jaccard {:.2f})", v.merged_into, v.jaccard);
  if (v.merged_into == v.duplicate_of) return fmt::format("exact duplicate of {}", v.merged_into);
  return fmt::format("exact duplicate of {}, itself a near-duplicate of {} (Jaccard {:.2f})",
                     v.duplicate_of, v.merged_into, v.jaccard);
}

}  // namespace ks
