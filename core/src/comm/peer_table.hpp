// What one process knows of the peers of one communicator it exchanged messages with, by rank.
// A small communicator keeps an entry per member (one load on the send path); a large one keeps
// entries only for the peers it talked to, in an open-addressed table, so that a process in a
// communicator of p members holds about what its traffic needs (a collective's tree: O(log p)
// peers) instead of an entry for each of p.
#pragma once

#include <cstdint>
#include <vector>

namespace rangecomm::detail {

// The slot a peer sends under (once its binding arrived) and whether this process sent the
// peer its own binding.
struct PeerLink {
  std::int32_t slot = -1;  // the peer's slot, -1 while unknown
  bool bound = false;      // this process's binding went to the peer
};

class PeerTable {
 public:
  // Communicators up to this many members keep an entry per member: 64, or
  // RANGECOMM_PEER_TABLE_DENSE (a testing knob, read once: 0 makes every table an open one).
  static int dense_limit();

  bool made() const { return !entries_.empty(); }
  // Makes the table for a communicator of `size` members (made() afterwards).
  void make(int size);
  // Back to not made, keeping the memory for the next make().
  void clear() {
    entries_.clear();
    mask_ = 0;
    used_ = 0;
  }

  // The entry of rank r, or nullptr while it has none (a made dense table has every rank's).
  const PeerLink* find(int r) const {
    if (dense()) return entries_.empty() ? nullptr : &entries_[static_cast<unsigned>(r)].link;
    const Entry& e = entries_[probe(r)];
    return e.rank == r ? &e.link : nullptr;
  }
  PeerLink* find(int r) {
    return const_cast<PeerLink*>(static_cast<const PeerTable*>(this)->find(r));
  }
  // The entry of rank r, made when missing (the table must be made).
  PeerLink& at(int r) { return dense() ? entries_[static_cast<unsigned>(r)].link : open_at(r); }

  // Entries held: the communicator's size when dense, the open table's capacity otherwise.
  std::size_t entries() const { return entries_.size(); }

 private:
  static constexpr std::int32_t kEmpty = -1;
  struct Entry {
    std::int32_t rank = kEmpty;  // unused when dense
    PeerLink link;
  };

  bool dense() const { return mask_ == 0; }
  PeerLink& open_at(int r);  // at() on the open table
  std::uint32_t home(int r) const {
    return (static_cast<std::uint32_t>(r) * 0x9E3779B1u) >> shift_;  // Fibonacci hashing
  }
  // The open table's index of rank r, or of the empty entry where r would go.
  std::uint32_t probe(int r) const {
    std::uint32_t i = home(r);
    while (entries_[i].rank != r && entries_[i].rank != kEmpty) i = (i + 1) & mask_;
    return i;
  }
  void grow();

  std::vector<Entry> entries_;
  std::uint32_t mask_ = 0;  // capacity - 1 of the open table; 0 when dense
  std::uint32_t shift_ = 0;
  std::uint32_t used_ = 0;
};

}  // namespace rangecomm::detail
