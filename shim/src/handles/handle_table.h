// FakeHandleTable: the objects behind fake handles, found by the index the handle encodes.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
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
      idx = free_.pop();
    } else {
      if (next_ > max_index_) return 0;
      idx = next_++;
      if ((idx >> chunk_bits) >= chunks_.size()) chunks_.emplace_back(new Slot[chunk_size]);
    }
    slot(idx).make();
    ++live_;
    return idx;
  }

  // The live entry at idx, or null for an index that was never handed out or was freed.
  Entry* find(std::uint32_t idx) {
    if (idx == 0 || idx >= next_) return nullptr;
    return slot(idx).get();
  }

  void release(std::uint32_t idx) {
    if (find(idx) == nullptr) return;
    slot(idx).destroy();
    free_.push(idx);
    --live_;
  }

  std::size_t live() const { return live_; }
  // How many more entries allocate() can hand out.
  std::size_t room() const { return max_index_ - live_; }

  // Calls f(index, entry) for every live entry (for shutdown).
  template <class F>
  void for_each(F f) {
    for (std::uint32_t i = 1; i < next_; ++i)
      if (Entry* e = slot(i).get()) f(i, *e);
  }

 private:
  // An entry's storage. The entry is default-initialised in place: its members carry their
  // own initialisers, and value-initialisation (what std::optional::emplace() does) would
  // first zero the whole object, a measurable part of a range's creation.
  class Slot {
   public:
    Slot() = default;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { destroy(); }
    void make() {
      ::new (static_cast<void*>(bytes_)) Entry;
      live_ = true;
    }
    void destroy() {
      if (!live_) return;
      get()->~Entry();
      live_ = false;
    }
    Entry* get() { return live_ ? std::launder(reinterpret_cast<Entry*>(bytes_)) : nullptr; }

   private:
    alignas(Entry) unsigned char bytes_[sizeof(Entry)];
    bool live_ = false;
  };

  // Freed indices, oldest first: a ring that doubles when full.
  class FreeList {
   public:
    std::size_t size() const { return count_; }
    bool empty() const { return count_ == 0; }
    void push(std::uint32_t idx) {
      if (count_ == ring_.size()) grow();
      ring_[(head_ + count_) & (ring_.size() - 1)] = idx;
      ++count_;
    }
    std::uint32_t pop() {  // not empty
      std::uint32_t idx = ring_[head_];
      head_ = (head_ + 1) & (ring_.size() - 1);
      --count_;
      return idx;
    }

   private:
    void grow() {
      std::vector<std::uint32_t> bigger(ring_.empty() ? 64 : 2 * ring_.size());
      for (std::size_t i = 0; i < count_; ++i) bigger[i] = ring_[(head_ + i) & (ring_.size() - 1)];
      ring_.swap(bigger);
      head_ = 0;
    }
    std::vector<std::uint32_t> ring_;  // size a power of two (or 0)
    std::size_t head_ = 0, count_ = 0;
  };

  static constexpr unsigned chunk_bits = 10;
  static constexpr std::uint32_t chunk_size = 1u << chunk_bits;
  Slot& slot(std::uint32_t idx) { return chunks_[idx >> chunk_bits][idx & (chunk_size - 1)]; }

  std::vector<std::unique_ptr<Slot[]>> chunks_;
  FreeList free_;
  std::uint32_t next_ = 1;
  std::uint32_t max_index_;
  std::size_t quarantine_;
  std::size_t live_ = 0;
};

}  // namespace rcshim
