#include "curate/minhash.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_set>

namespace ks {
namespace {

// SplitMix64 finalizer: a strong 64-bit mixer.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// FNV-1a over bytes, then mixed: stable across platforms and runs (std::hash is not).
uint64_t HashBytes(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return Mix(h);
}

}  // namespace

std::vector<uint64_t> ShingleHashes(const std::vector<std::string>& tokens, int shingle) {
  std::vector<uint64_t> out;
  if (tokens.empty()) return out;
  const size_t k = static_cast<size_t>(std::max(1, shingle));
  const size_t n = tokens.size() < k ? 1 : tokens.size() - k + 1;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string joined;
    for (size_t j = i; j < std::min(tokens.size(), i + k); ++j) {
      joined += tokens[j];
      joined += '\x1f';  // unit separator: never part of a Python token
    }
    out.push_back(HashBytes(joined));
  }
  return out;
}

double ExactJaccard(std::vector<uint64_t> a, std::vector<uint64_t> b) {
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  if (a.empty() && b.empty()) return 1.0;
  std::vector<uint64_t> common;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
  size_t uni = a.size() + b.size() - common.size();
  return static_cast<double>(common.size()) / static_cast<double>(uni);
}

Result<MinHasher> MinHasher::Create(const MinHashOptions& o) {
  if (o.shingle < 1 || o.num_hashes < 1 || o.bands < 1 || o.rows < 1) {
    return Status::InvalidArgument(
        fmt::format("minhash: shingle, num_hashes, bands and rows must be positive (got {}, {}, "
                    "{}, {})",
                    o.shingle, o.num_hashes, o.bands, o.rows));
  }
  if (o.bands * o.rows != o.num_hashes) {
    return Status::InvalidArgument(fmt::format(
        "minhash: bands * rows must equal num_hashes (got {} * {} != {})", o.bands, o.rows,
        o.num_hashes));
  }
  return MinHasher(o);
}

MinHasher::MinHasher(const MinHashOptions& options) : options_(options) {
  uint64_t state = options.seed;
  for (int i = 0; i < options.num_hashes; ++i) {
    state = Mix(state);
    mul_.push_back(state | 1);
    state = Mix(state);
    add_.push_back(state);
  }
}

MinHashSignature MinHasher::Signature(const std::vector<std::string>& tokens) const {
  return SignatureOfHashes(ShingleHashes(tokens, options_.shingle));
}

MinHashSignature MinHasher::SignatureOfHashes(const std::vector<uint64_t>& hashes) const {
  MinHashSignature sig(static_cast<size_t>(options_.num_hashes),
                       std::numeric_limits<uint64_t>::max());
  for (uint64_t h : hashes) {
    for (size_t i = 0; i < sig.size(); ++i) {
      uint64_t v = Mix(h * mul_[i] + add_[i]);
      if (v < sig[i]) sig[i] = v;
    }
  }
  return sig;
}

double MinHasher::Estimate(const MinHashSignature& a, const MinHashSignature& b) {
  if (a.empty() || a.size() != b.size()) return 0.0;
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i] ? 1 : 0;
  return static_cast<double>(same) / static_cast<double>(a.size());
}

std::vector<uint64_t> MinHasher::BandKeys(const MinHashSignature& signature) const {
  std::vector<uint64_t> keys;
  const size_t rows = static_cast<size_t>(options_.rows);
  for (int b = 0; b < options_.bands; ++b) {
    uint64_t h = Mix(static_cast<uint64_t>(b) + 1);
    for (size_t r = 0; r < rows; ++r) {
      size_t i = static_cast<size_t>(b) * rows + r;
      h = Mix(h ^ (i < signature.size() ? signature[i] : 0));
    }
    keys.push_back(h);
  }
  return keys;
}

void LshIndex::Insert(int64_t id, const MinHashSignature& signature) {
  order_.emplace(id, order_.size());
  for (uint64_t key : hasher_->BandKeys(signature)) buckets_[key].push_back(id);
}

std::vector<int64_t> LshIndex::Candidates(const MinHashSignature& signature) const {
  std::unordered_set<int64_t> seen;
  std::vector<int64_t> out;
  for (uint64_t key : hasher_->BandKeys(signature)) {
    auto it = buckets_.find(key);
    if (it == buckets_.end()) continue;
    for (int64_t id : it->second) {
      if (seen.insert(id).second) out.push_back(id);
    }
  }
  std::sort(out.begin(), out.end(),
            [this](int64_t a, int64_t b) { return order_.at(a) < order_.at(b); });
  return out;
}

}  // namespace ks
