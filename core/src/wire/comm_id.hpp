// A communicator's wide identity (docs/tag-layout.md, "Identities").
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rangecomm::detail {

// Derived by every member from its parent's identity and from what the creation was, so that
// members agree on it without a message. 128 bits: two communicators share one only by a hash
// collision (odds below 2^-100 for a million communicators).
struct CommId {
  std::uint64_t hi = 0, lo = 0;
  bool operator==(const CommId& o) const { return hi == o.hi && lo == o.lo; }
  bool operator!=(const CommId& o) const { return !(*this == o); }
};

// splitmix64's finaliser: every input bit affects every output bit.
constexpr std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The identity of the `k`-th creation described by `digest` from `parent` at this process. The
// creation (digest, k) is mixed once; each half of the result mixes it with both halves of the
// parent's identity (different rotations and constants, so the halves differ). Inline, with
// digest_range: a range creation's identity is most of its cost.
inline CommId derive_id(const CommId& parent, std::uint64_t digest, std::uint64_t k) {
  const std::uint64_t c = mix(digest ^ (k * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL));
  return {mix(parent.hi ^ c ^ ((parent.lo << 23) | (parent.lo >> 41))),
          mix(parent.lo ^ ((c << 29) | (c >> 35)) ^ (parent.hi + 0xc2b2ae3d27d4eb4fULL))};
}
// Objects of type T by identity, for a process's live communicators: open addressing with
// linear probing, at most half full, removal by shifting the entries after it back (no
// tombstones), so that entering and leaving it allocates nothing while it does not grow. An
// identity's low word is already well mixed: its low bits choose the home entry.
template <class T>
class IdTable {
 public:
  // Sets id's object (replacing one there).
  void put(const CommId& id, T* value) {
    if (2 * (used_ + 1) > entries_.size()) grow();
    std::size_t i = probe(id);
    if (entries_[i].value == nullptr) ++used_;
    entries_[i] = {id, value};
  }
  T* find(const CommId& id) const {
    if (used_ == 0) return nullptr;
    return entries_[probe(id)].value;
  }
  // Removes id's entry when it holds `value`.
  void remove(const CommId& id, const T* value) {
    if (used_ == 0) return;
    std::size_t i = probe(id);
    if (entries_[i].value != value || value == nullptr) return;
    const std::size_t mask = entries_.size() - 1;
    // Each later entry of the run moves into the hole when its home is not between the hole and
    // itself (cyclically): it would no longer be found past the hole otherwise.
    for (std::size_t j = (i + 1) & mask; entries_[j].value != nullptr; j = (j + 1) & mask) {
      std::size_t home = entries_[j].id.lo & mask;
      if (((j - home) & mask) >= ((j - i) & mask)) {
        entries_[i] = entries_[j];
        i = j;
      }
    }
    entries_[i] = Entry{};
    --used_;
  }
  std::size_t size() const { return used_; }

 private:
  struct Entry {
    CommId id;
    T* value = nullptr;  // null: free
  };
  // id's entry, or the free one where it would go.
  std::size_t probe(const CommId& id) const {
    const std::size_t mask = entries_.size() - 1;
    std::size_t i = id.lo & mask;
    while (entries_[i].value != nullptr && entries_[i].id != id) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Entry> old(entries_.empty() ? 16 : 2 * entries_.size());
    old.swap(entries_);
    used_ = 0;
    for (const Entry& e : old)
      if (e.value != nullptr) put(e.id, e.value);
  }
  std::vector<Entry> entries_;
  std::size_t used_ = 0;
};

// A digest of words (a creation's kind and arguments).
std::uint64_t digest_words(std::initializer_list<std::uint64_t> words);
// A digest of a creation's kind, its members' root ranks in rank order, and one more word.
std::uint64_t digest_members(std::uint64_t kind, const std::vector<int>& roots,
                             std::uint64_t extra);

// How many creations of each digest a parent has made (at this process): the k of derive_id.
// The k-th identical creation from a parent is the same communicator at every member. The
// count of the digest counted last is found without a search (a program that makes the same
// range again and again).
class ChildCounts {
 public:
  ChildCounts() = default;
  ChildCounts(const ChildCounts&) = delete;  // last_count_ points into this object
  ChildCounts& operator=(const ChildCounts&) = delete;

  std::uint64_t next(std::uint64_t digest) {
    if (last_count_ != nullptr && digest == last_digest_) return (*last_count_)++;
    return next_searched(digest);
  }

 private:
  std::uint64_t next_searched(std::uint64_t digest);

  static constexpr std::size_t kFew = 16;  // searched linearly; a hash map beyond
  std::vector<std::pair<std::uint64_t, std::uint64_t>> few_;
  std::unordered_map<std::uint64_t, std::uint64_t> many_;  // its elements never move
  std::uint64_t last_digest_ = 0;
  std::uint64_t* last_count_ = nullptr;  // last_digest_'s count, in few_ or many_
};

// Kinds of creation, the first word of every digest.
enum CreationKind : std::uint64_t {
  kRangeCreation = 1,   // Split_Comm and its levels
  kGroupCreation = 2,   // a group made locally (Group_Comm_below, Icomm_create_group)
  kDupCreation = 3,     // Icomm_dup: the parent's collective sequence number
  kAgreedCreation = 4,  // Icomm_create_agreed: a number the members drew together
  kAgreementTalk = 5,   // the communicator an agreement runs on
};

// A range creation's stride and levels packed into one word with its kind.
constexpr std::uint64_t range_shape(int stride, int levels) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(stride)) << 32) |
         (static_cast<std::uint32_t>(levels) << 8) | kRangeCreation;
}
// The digest of a range first..last:stride of a parent's ranks made `levels` below it: the four
// numbers packed exactly into two words, then mixed.
inline std::uint64_t digest_range(int first, int last, int stride, int levels) {
  const std::uint64_t coords =
      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(first)) << 32) |
      static_cast<std::uint32_t>(last);
  const std::uint64_t shape = range_shape(stride, levels);
  // The shape of most ranges (stride 1, one level) mixed at compile time.
  constexpr std::uint64_t unit = range_shape(1, 1);
  constexpr std::uint64_t unit_mixed = mix(unit);
  return mix(coords ^ (shape == unit ? unit_mixed : mix(shape)));
}

}  // namespace rangecomm::detail
