#include "wire/comm_id.hpp"

namespace rangecomm::detail {

namespace {
// splitmix64's finaliser: every input bit affects every output bit.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

CommId derive_id(const CommId& parent, std::uint64_t digest, std::uint64_t k) {
  // The creation (digest, k) is mixed once; each half of the result mixes it with both halves
  // of the parent's identity (different rotations and constants, so the halves differ).
  std::uint64_t c = mix(digest ^ (k * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL));
  std::uint64_t a = mix(parent.hi ^ c ^ ((parent.lo << 23) | (parent.lo >> 41)));
  std::uint64_t b = mix(parent.lo ^ ((c << 29) | (c >> 35)) ^ (parent.hi + 0xc2b2ae3d27d4eb4fULL));
  return {a, b};
}

std::uint64_t digest_words(std::initializer_list<std::uint64_t> words) {
  std::uint64_t h = 0x8ebc6af09c88c6e3ULL;
  for (std::uint64_t w : words) h = mix(h ^ w) + 0x9e3779b97f4a7c15ULL;
  return h;
}

std::uint64_t digest_range(int first, int last, int stride, int levels) {
  // The four numbers packed exactly into two words, then mixed.
  std::uint64_t coords = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(first)) << 32) |
                         static_cast<std::uint32_t>(last);
  std::uint64_t shape = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(stride)) << 32) |
                        (static_cast<std::uint32_t>(levels) << 8) | kRangeCreation;
  return mix(coords ^ mix(shape));
}

std::uint64_t digest_members(std::uint64_t kind, const std::vector<int>& roots,
                             std::uint64_t extra) {
  std::uint64_t h = digest_words({kind, extra, roots.size()});
  for (int r : roots) h = mix(h ^ static_cast<std::uint32_t>(r)) + 0x9e3779b97f4a7c15ULL;
  return h;
}

std::uint64_t ChildCounts::next(std::uint64_t digest) {
  if (!many_.empty()) return many_[digest]++;
  for (auto& [d, count] : few_)
    if (d == digest) return count++;
  if (few_.size() < kFew) {
    few_.emplace_back(digest, 1);
    return 0;
  }
  for (const auto& [d, count] : few_) many_.emplace(d, count);
  few_.clear();
  few_.shrink_to_fit();
  return many_[digest]++;
}

}  // namespace rangecomm::detail
