#include "wire/comm_id.hpp"

#include <algorithm>

namespace rangecomm::detail {

std::uint64_t digest_words(std::initializer_list<std::uint64_t> words) {
  std::uint64_t h = 0x8ebc6af09c88c6e3ULL;
  for (std::uint64_t w : words) h = mix(h ^ w) + 0x9e3779b97f4a7c15ULL;
  return h;
}

std::uint64_t digest_members(std::uint64_t kind, const std::vector<int>& roots,
                             std::uint64_t extra) {
  std::uint64_t h = digest_words({kind, extra, roots.size()});
  for (int r : roots) h = mix(h ^ static_cast<std::uint32_t>(r)) + 0x9e3779b97f4a7c15ULL;
  return h;
}

std::uint64_t ChildCounts::next_searched(std::uint64_t digest) {
  std::uint64_t* count = nullptr;
  if (many_.empty()) {
    auto it =
        std::find_if(few_.begin(), few_.end(), [&](const auto& e) { return e.first == digest; });
    if (it != few_.end()) {
      count = &it->second;
    } else if (few_.size() < kFew) {
      count = &few_.emplace_back(digest, 0).second;
    } else {  // a 17th digest: every count moves to the map
      many_.insert(few_.begin(), few_.end());
      few_.clear();
      few_.shrink_to_fit();
    }
  }
  if (count == nullptr) count = &many_[digest];
  last_digest_ = digest;
  last_count_ = count;  // stays valid: few_ and many_ change only here
  return (*count)++;
}

}  // namespace rangecomm::detail
