// The layout facts of a datatype that the collectives ask for on every call.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>

namespace rangecomm::detail {

struct TypeFacts {
  int size = 0;  // bytes of data in one element
  MPI_Aint lb = 0, extent = 0;
  MPI_Aint true_lb = 0, true_extent = 0;
  bool predefined = false;  // a named type of MPI (MPI_COMBINER_NAMED)
  // Elements are their bytes back to back: a memcpy moves count of them.
  bool contiguous() const {
    return lb == 0 && extent == size && true_lb == 0 && true_extent == size;
  }
};

// The cache of predefined types' facts: direct-mapped by a multiplicative hash of the handle (a
// pointer in Open MPI, an integer in MPICH); a collision only sends the newer type to MPI again.
struct TypeFactsSlot {
  MPI_Datatype type;
  bool used;
  TypeFacts facts;
};
constexpr int kTypeFactsSlotBits = 5;
extern TypeFactsSlot g_type_facts_slots[1 << kTypeFactsSlotBits];

inline unsigned type_facts_slot(MPI_Datatype type) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &type, sizeof type < sizeof bits ? sizeof type : sizeof bits);
  return static_cast<unsigned>((bits * 0x9E3779B97F4A7C15ull) >> (64 - kTypeFactsSlotBits));
}

// Asks MPI, and keeps the answer when the type is predefined.
TypeFacts type_facts_miss(MPI_Datatype type);

// MPI_Pack and MPI_Unpack that also take MPI_BOTTOM as the typed buffer (absolute-address
// types): MPICH refuses a null buffer there, so such data goes through MPI's self-communication
// into or out of MPI_PACKED, which gives the same packed bytes.
int pack_typed(const void* in, int count, MPI_Datatype type, void* packed, int packed_size,
               int* position);
int unpack_typed(const void* packed, int packed_size, int* position, void* out, int count,
                 MPI_Datatype type);

// The facts of `type`. A predefined type's are kept in the cache after the first call (its
// handle is a constant, never reused); a derived type is asked of MPI every time, as its handle
// can be freed and reused for another type between two calls. Core is entered by one thread at
// a time.
inline TypeFacts type_facts(MPI_Datatype type) {
  const TypeFactsSlot& slot = g_type_facts_slots[type_facts_slot(type)];
  if (slot.used && slot.type == type) return slot.facts;
  return type_facts_miss(type);
}

// The datatype of an operation that goes on after the call that started it returned. MPI lets
// the program free a datatype at once: operations using it complete normally (MPI_TYPE_FREE;
// ROMIO's collective I/O frees the types of the receives it has just posted). A derived type
// is therefore duplicated, and the duplicate freed with the operation; a predefined type is
// kept as it is, at the cost of a cache lookup.
class HeldType {
 public:
  explicit HeldType(MPI_Datatype type) : type_(type) {
    if (type != MPI_DATATYPE_NULL && !type_facts(type).predefined &&
        MPI_Type_dup(type, &type_) == MPI_SUCCESS)
      owned_ = true;
    else
      type_ = type;  // (a failed dup leaves the program's handle in use, as before)
  }
  ~HeldType();
  HeldType(const HeldType&) = delete;
  HeldType& operator=(const HeldType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_;
  bool owned_ = false;
};

}  // namespace rangecomm::detail
