// FakeHandleTable: the objects behind fake handles, found by the index the handle encodes.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

namespace rcshim {

// Entries live in chunks that never move, so a lookup is two loads and a check, with no
// allocation, lock or hashing. Index 0 is never used (the null handles of MPI sit there).
// A freed index is reused only after `quarantine` later frees, so a freed handle stays
// detectably dead for a while instead of aliasing the next object at once.
template <class Entry>
class FakeHandleTable {
 public:
  explicit FakeHandleTable(std::uint32_t max_index, std::size_t quarantine = 1024)
      : max_index_(max_index), quarantine_(quarantine) {}

  // At most `max_index` live entries from now on (RANGECOMM_HANDLE_LIMIT, before any entry is
  // made); the quarantine shrinks with it so that a small table still reuses its indices.
  void limit(std::uint32_t max_index) {
    if (max_index < 1 || max_index >= max_index_) return;
    max_index_ = max_index;
    if (quarantine_ > max_index / 4) quarantine_ = max_index / 4;
  }
  std::uint32_t limit() const { return max_index_; }

  // A new live entry (default-constructed); 0 when every index is live. Once the index space
  // is used up, quarantined indices are reused early rather than refused.
  std::uint32_t allocate() {
    std::uint32_t idx;
    if (free_.size() > quarantine_ || (next_ > max_index_ && !free_.empty())) {
      idx = free_.front();
      free_.pop_front();
    } else {
      if (next_ > max_index_) return 0;
      idx = next_++;
      if ((idx >> chunk_bits) >= chunks_.size()) chunks_.emplace_back(new Slot[chunk_size]);
    }
    slot(idx).emplace();
    ++live_;
    return idx;
  }

  // The live entry at idx, or null for an index that was never handed out or was freed.
  Entry* find(std::uint32_t idx) {
    if (idx == 0 || idx >= next_) return nullptr;
    auto& s = slot(idx);
    return s ? &*s : nullptr;
  }

  void release(std::uint32_t idx) {
    Entry* e = find(idx);
    if (e == nullptr) return;
    slot(idx).reset();
    free_.push_back(idx);
    --live_;
  }

  std::size_t live() const { return live_; }
  // How many more entries allocate() can hand out.
  std::size_t room() const { return max_index_ - live_; }

  // Calls f(index, entry) for every live entry (for shutdown).
  template <class F>
  void for_each(F f) {
    for (std::uint32_t i = 1; i < next_; ++i)
      if (auto& s = slot(i)) f(i, *s);
  }

 private:
  using Slot = std::optional<Entry>;
  static constexpr unsigned chunk_bits = 10;
  static constexpr std::uint32_t chunk_size = 1u << chunk_bits;
  Slot& slot(std::uint32_t idx) { return chunks_[idx >> chunk_bits][idx & (chunk_size - 1)]; }

  std::vector<std::unique_ptr<Slot[]>> chunks_;
  std::deque<std::uint32_t> free_;
  std::uint32_t next_ = 1;
  std::uint32_t max_index_;
  std::size_t quarantine_;
  std::size_t live_ = 0;
};

}  // namespace rcshim
