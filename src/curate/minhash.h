// MinHash signatures over token shingles and locality-sensitive hashing by banding: the
// near-duplicate stage of `kernelsmith curate` (docs/curate.md).
//
// A module's `tokens` (normalized by the extractor: identifiers ID, literals NUM/STR) become
// the set of its k-token shingles (default k = 5). MinHash with `num_hashes` independent hash
// functions estimates the Jaccard similarity of two such sets as the share of equal signature
// slots. Banding (`bands` x `rows` = num_hashes) makes two sets with Jaccard s share at least
// one band with probability 1 - (1 - s^rows)^bands, an S-curve whose midpoint is about
// (1/bands)^(1/rows); pairs found this way are then checked against the threshold with the
// signature estimate. Everything is deterministic: hash functions come from a fixed seed.
//
// Why hand-written C++ and not a library: Debian packages no C++ MinHash/LSH library (only Go
// ones and `mash`, a genome-distance tool), and `datasketch` is Python, while deduplication is
// a stage of the C++ orchestrator over every module's stored tokens (curate.db): using it
// would move that stage's state into a Python process. The code is small and is checked
// against exact Jaccard values and the banding S-curve (minhash_test.cc).
// Thread-safety: MinHasher is immutable after construction (safe to share); LshIndex is not
// thread-safe (one thread at a time).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace ks {

struct MinHashOptions {
  int shingle = 5;       // tokens per shingle; a stream shorter than this is one shingle
  int num_hashes = 128;  // signature length; must equal bands * rows
  int bands = 32;        // LSH bands
  int rows = 4;          // signature slots per band
  uint64_t seed = 0x6b65726e656c736dULL;  // fixes the hash functions
};

using MinHashSignature = std::vector<uint64_t>;

// 64-bit hashes of the shingles of `tokens` (each shingle: its tokens joined by a separator
// that cannot occur in a token). Empty `tokens` give no shingle.
std::vector<uint64_t> ShingleHashes(const std::vector<std::string>& tokens, int shingle);

// Exact Jaccard similarity of two shingle-hash sets (duplicates ignored); 1 for two empty sets.
double ExactJaccard(std::vector<uint64_t> a, std::vector<uint64_t> b);

class MinHasher {
 public:
  // InvalidArgument when bands * rows != num_hashes or a count is not positive.
  static Result<MinHasher> Create(const MinHashOptions& options);

  const MinHashOptions& options() const { return options_; }
  // The signature of a token stream (all slots UINT64_MAX when it has no shingle).
  MinHashSignature Signature(const std::vector<std::string>& tokens) const;
  MinHashSignature SignatureOfHashes(const std::vector<uint64_t>& shingle_hashes) const;
  // Share of equal slots: the Jaccard estimate.
  static double Estimate(const MinHashSignature& a, const MinHashSignature& b);
  // One key per band (a hash of the band's rows, tagged with the band index).
  std::vector<uint64_t> BandKeys(const MinHashSignature& signature) const;

 private:
  explicit MinHasher(const MinHashOptions& options);
  MinHashOptions options_;
  std::vector<uint64_t> mul_;  // per hash function: odd multiplier
  std::vector<uint64_t> add_;  // and offset of a mixing permutation
};

// Buckets of item ids by band key. Candidates(sig) are the ids that share at least one band
// with `sig`, in insertion order, each once.
class LshIndex {
 public:
  explicit LshIndex(const MinHasher* hasher) : hasher_(hasher) {}
  void Insert(int64_t id, const MinHashSignature& signature);
  std::vector<int64_t> Candidates(const MinHashSignature& signature) const;

 private:
  const MinHasher* hasher_;
  std::unordered_map<uint64_t, std::vector<int64_t>> buckets_;
  std::unordered_map<int64_t, size_t> order_;  // id -> insertion index
};

}  // namespace ks
