#include "comm/peer_table.hpp"

#include <cstdlib>
#include <utility>

namespace rangecomm::detail {

namespace {
constexpr int kFirstBits = 4;  // an open table starts with 16 entries
}  // namespace

int PeerTable::dense_limit() {
  static const int limit = [] {
    const char* v = std::getenv("RANGECOMM_PEER_TABLE_DENSE");
    return v ? std::atoi(v) : 64;
  }();
  return limit;
}

void PeerTable::make(int size) {
  if (size <= dense_limit()) {
    entries_.assign(static_cast<std::size_t>(size), Entry{});  // a communicator has a member
    mask_ = 0;
    return;
  }
  entries_.assign(std::size_t{1} << kFirstBits, Entry{});
  mask_ = (1u << kFirstBits) - 1;
  shift_ = 32 - kFirstBits;
  used_ = 0;
}

PeerLink& PeerTable::open_at(int r) {
  std::uint32_t i = probe(r);
  if (entries_[i].rank == r) return entries_[i].link;
  if (2 * (used_ + 1) > mask_ + 1) {  // at most half full: probes stay short
    grow();
    i = probe(r);
  }
  entries_[i].rank = r;
  ++used_;
  return entries_[i].link;
}

void PeerTable::grow() {
  std::vector<Entry> old = std::move(entries_);
  entries_.assign(old.size() * 2, Entry{});
  mask_ = static_cast<std::uint32_t>(entries_.size()) - 1;
  --shift_;
  for (const Entry& e : old)
    if (e.rank != kEmpty) entries_[probe(e.rank)] = e;
}

}  // namespace rangecomm::detail
