// Fake handles: communicators, requests and messages MPI can never produce.
// Telling fake from real is one unsigned range compare against constants, touching no memory
// (docs/shim-design.md, "Fake handles"). Valid indices are 1 .. RC_FAKE_*_INDEX_LIMIT - 1;
// rc_fake_*_index assumes rc_is_fake_* is true, and a table must still check that the handle
// equals rc_fake_*_handle(index) (Open MPI: a misaligned pointer in the region is garbage).
#pragma once

#include <mpi.h>
#include <stdint.h>

#if defined(OPEN_MPI)

// Open MPI handles are pointers. The library reserves [RC_FAKE_BASE, +3 parts) PROT_NONE at
// start-up (fake_region.cpp); a handle is part_base + 8 * index.
#define RC_FAKE_BASE_FIXED 0x5e0000000000ull
#define RC_FAKE_PART_BYTES (1ull << 29)
#define RC_FAKE_REGION_BYTES (3 * RC_FAKE_PART_BYTES)
#define RC_FAKE_COMM_INDEX_LIMIT (1u << 26)
#define RC_FAKE_REQUEST_INDEX_LIMIT (1u << 26)
#define RC_FAKE_MESSAGE_INDEX_LIMIT (1u << 26)

#if defined(RC_FAKE_BASE_DYNAMIC)
// The region lies wherever the kernel put it: every test loads this once.
extern "C" uintptr_t rc_fake_base;
#define RC_FAKE_BASE rc_fake_base
#else
#define RC_FAKE_BASE ((uintptr_t)RC_FAKE_BASE_FIXED)
#endif

#define RC_FAKE_PART(n) (RC_FAKE_BASE + (uintptr_t)(n)*RC_FAKE_PART_BYTES)

static inline bool rc_fake_in_part(const void* h, unsigned part) {
  return (uintptr_t)h - (RC_FAKE_PART(part) + 8) < RC_FAKE_PART_BYTES - 8;
}
static inline void* rc_fake_at(unsigned part, uint32_t idx) {
  return (void*)(RC_FAKE_PART(part) + (uintptr_t)idx * 8);
}
static inline uint32_t rc_fake_index_in(const void* h, unsigned part) {
  return (uint32_t)(((uintptr_t)h - RC_FAKE_PART(part)) >> 3);
}

static inline bool rc_is_fake_comm(MPI_Comm h) { return rc_fake_in_part(h, 0); }
static inline bool rc_is_fake_request(MPI_Request h) { return rc_fake_in_part(h, 1); }
static inline bool rc_is_fake_message(MPI_Message h) { return rc_fake_in_part(h, 2); }
static inline MPI_Comm rc_fake_comm_handle(uint32_t idx) { return (MPI_Comm)rc_fake_at(0, idx); }
static inline MPI_Request rc_fake_request_handle(uint32_t idx) {
  return (MPI_Request)rc_fake_at(1, idx);
}
static inline MPI_Message rc_fake_message_handle(uint32_t idx) {
  return (MPI_Message)rc_fake_at(2, idx);
}
static inline uint32_t rc_fake_comm_index(MPI_Comm h) { return rc_fake_index_in(h, 0); }
static inline uint32_t rc_fake_request_index(MPI_Request h) { return rc_fake_index_in(h, 1); }
static inline uint32_t rc_fake_message_index(MPI_Message h) { return rc_fake_index_in(h, 2); }

// Fortran handles of library objects. Open MPI's Fortran handles are small table indices, so
// the library's are RC_FAKE_FORTRAN + index, whatever the kind (the argument tells it).
#define RC_FAKE_FORTRAN 0x40000000
#define RC_FAKE_FORTRAN_MASK 0x03ffffff
static inline bool rc_is_fake_fortran(MPI_Fint f) {
  return (f & ~RC_FAKE_FORTRAN_MASK) == RC_FAKE_FORTRAN && (f & RC_FAKE_FORTRAN_MASK) != 0;
}
static inline bool rc_is_fake_fortran_comm(MPI_Fint f) { return rc_is_fake_fortran(f); }
static inline bool rc_is_fake_fortran_request(MPI_Fint f) { return rc_is_fake_fortran(f); }
static inline bool rc_is_fake_fortran_message(MPI_Fint f) { return rc_is_fake_fortran(f); }
static inline MPI_Fint rc_fake_fortran_handle(uint32_t idx) {
  return RC_FAKE_FORTRAN | (MPI_Fint)idx;
}
static inline MPI_Fint rc_fortran_of_fake_comm(MPI_Comm h) {
  return rc_fake_fortran_handle(rc_fake_comm_index(h));
}

#elif defined(MPICH_VERSION) || defined(I_MPI_VERSION) || defined(MVAPICH2_VERSION)

// MPICH handles are ints: bits 31-30 handle kind (0 = invalid), 29-26 object kind, 25-0 index.
// MPICH never makes an invalid-kind handle with a non-zero index. Messages are of the request
// object kind, so requests take indices below 2^25 and messages those with bit 25 set.
#define RC_FAKE_COMM_INDEX_LIMIT (1u << 26)
#define RC_FAKE_REQUEST_INDEX_LIMIT (1u << 25)
#define RC_FAKE_MESSAGE_INDEX_LIMIT (1u << 25)
#define RC_FAKE_COMM_KIND 0x04000000u     // == MPI_COMM_NULL
#define RC_FAKE_REQUEST_KIND 0x2c000000u  // == MPI_REQUEST_NULL == MPI_MESSAGE_NULL
#define RC_FAKE_MESSAGE_KIND 0x2e000000u

static inline bool rc_is_fake_comm(MPI_Comm h) {
  return (uint32_t)h - (RC_FAKE_COMM_KIND + 1) < RC_FAKE_COMM_INDEX_LIMIT - 1;
}
static inline bool rc_is_fake_request(MPI_Request h) {
  return (uint32_t)h - (RC_FAKE_REQUEST_KIND + 1) < RC_FAKE_REQUEST_INDEX_LIMIT - 1;
}
static inline bool rc_is_fake_message(MPI_Message h) {
  return (uint32_t)h - (RC_FAKE_MESSAGE_KIND + 1) < RC_FAKE_MESSAGE_INDEX_LIMIT - 1;
}
static inline MPI_Comm rc_fake_comm_handle(uint32_t idx) {
  return (MPI_Comm)(RC_FAKE_COMM_KIND | idx);
}
static inline MPI_Request rc_fake_request_handle(uint32_t idx) {
  return (MPI_Request)(RC_FAKE_REQUEST_KIND | idx);
}
static inline MPI_Message rc_fake_message_handle(uint32_t idx) {
  return (MPI_Message)(RC_FAKE_MESSAGE_KIND | idx);
}
static inline uint32_t rc_fake_comm_index(MPI_Comm h) {
  return (uint32_t)h & (RC_FAKE_COMM_INDEX_LIMIT - 1);
}
static inline uint32_t rc_fake_request_index(MPI_Request h) {
  return (uint32_t)h & (RC_FAKE_REQUEST_INDEX_LIMIT - 1);
}
static inline uint32_t rc_fake_message_index(MPI_Message h) {
  return (uint32_t)h & (RC_FAKE_MESSAGE_INDEX_LIMIT - 1);
}

// MPICH's Fortran handles are its C handles.
static inline bool rc_is_fake_fortran_comm(MPI_Fint f) { return rc_is_fake_comm((MPI_Comm)f); }
static inline bool rc_is_fake_fortran_request(MPI_Fint f) {
  return rc_is_fake_request((MPI_Request)f);
}
static inline bool rc_is_fake_fortran_message(MPI_Fint f) {
  return rc_is_fake_message((MPI_Message)f);
}
static inline MPI_Fint rc_fortran_of_fake_comm(MPI_Comm h) { return (MPI_Fint)h; }

#else
#error "fake_handles.h knows the handle layouts of MPICH and Open MPI only"
#endif

// Whether any of the first n handles of an array is fake (n < 0: none is looked at; MPI
// reports the count).
static inline bool rc_any_fake_comm(int n, const MPI_Comm* a) {
  for (int i = 0; i < n; ++i)
    if (rc_is_fake_comm(a[i])) return true;
  return false;
}
static inline bool rc_any_fake_request(int n, const MPI_Request* a) {
  for (int i = 0; i < n; ++i)
    if (rc_is_fake_request(a[i])) return true;
  return false;
}
static inline bool rc_any_fake_message(int n, const MPI_Message* a) {
  for (int i = 0; i < n; ++i)
    if (rc_is_fake_message(a[i])) return true;
  return false;
}

// The same for Fortran handles, as Fortran bindings pass them (shim/src/fortran/).
static inline bool rc_any_fake_fortran_comm(MPI_Fint n, const MPI_Fint* a) {
  for (MPI_Fint i = 0; i < n; ++i)
    if (rc_is_fake_fortran_comm(a[i])) return true;
  return false;
}
static inline bool rc_any_fake_fortran_request(MPI_Fint n, const MPI_Fint* a) {
  for (MPI_Fint i = 0; i < n; ++i)
    if (rc_is_fake_fortran_request(a[i])) return true;
  return false;
}
static inline bool rc_any_fake_fortran_message(MPI_Fint n, const MPI_Fint* a) {
  for (MPI_Fint i = 0; i < n; ++i)
    if (rc_is_fake_fortran_message(a[i])) return true;
  return false;
}
