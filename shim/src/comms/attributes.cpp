// Attributes on range communicators. Keyvals are MPI's own (made by the real library, so they
// work on real communicators too); the shim records their copy and delete callbacks when they
// are created and calls them with the fake handle. A keyval still used on a fake communicator
// is not freed in MPI until that use ends, so MPI cannot hand its number out again. Under the
// acceleration modes a keyval with a copy callback is never freed in MPI: a real communicator may
// still hold an attribute with it, which a dup the library makes must copy (MPI's own dup would),
// and only a live keyval can be read.
#include <algorithm>
#include <unordered_map>

#include "base/modes.h"
#include "handles/errors.h"
#include "handles/fortran_hooks.h"
#include "handles/handles.h"

namespace rcshim {

namespace {

// Callbacks written in Fortran: every argument by reference, communicators as Fortran handles,
// values and extra state as INTEGER (MPI_KEYVAL_CREATE) or INTEGER(KIND=MPI_ADDRESS_KIND)
// (MPI_COMM_CREATE_KEYVAL), so both are called through these.
using FortranCopy = void (*)(MPI_Fint*, MPI_Fint*, void*, void*, void*, MPI_Fint*, MPI_Fint*);
using FortranDelete = void (*)(MPI_Fint*, MPI_Fint*, void*, void*, MPI_Fint*);

struct KeyvalRecord {
  MPI_Comm_copy_attr_function* copy = nullptr;  // null: MPI_COMM_NULL_COPY_FN on MPICH
  MPI_Comm_delete_attr_function* del = nullptr;
  void* extra_state = nullptr;
  // Made in Fortran: the callbacks are these (copy and del stay null), extra state is the
  // integer the program gave, and MPI's attributes with it are read through read_real.
  AttrLang lang = AttrLang::c;
  FortranCopy fortran_copy = nullptr;
  FortranDelete fortran_del = nullptr;
  MPI_Aint fortran_extra = 0;
  rc_fortran_attr_reader* read_real = nullptr;
  int uses = 0;        // attributes with this keyval on fake communicators
  bool freed = false;  // the program freed it; MPI frees it when uses reaches 0
};

std::unordered_map<int, KeyvalRecord>& keyvals() {
  static std::unordered_map<int, KeyvalRecord> map;
  return map;
}

bool predefined(int keyval) {
  return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
         keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_UNIVERSE_SIZE ||
         keyval == MPI_LASTUSEDCODE || keyval == MPI_APPNUM;
}

// Whether MPI must keep a keyval the program freed (see the top of this file).
// (MPI_COMM_NULL_COPY_FN is a null pointer on MPICH, a function that copies nothing on Open MPI.)
bool kept_for_copies(const KeyvalRecord& r) {
  if (r.lang != AttrLang::c) return g_accelerate && r.fortran_copy != nullptr;
  return g_accelerate && r.copy != nullptr &&
         r.copy != reinterpret_cast<MPI_Comm_copy_attr_function*>(MPI_COMM_NULL_COPY_FN);
}

void unuse(int keyval) {
  auto it = keyvals().find(keyval);
  if (it == keyvals().end() || --it->second.uses > 0 || !it->second.freed ||
      kept_for_copies(it->second))
    return;
  int k = keyval;
  MPI_Comm_free_keyval(&k);
  keyvals().erase(it);
}

// A keyval the shim did not see created (e.g. from Fortran) is checked by MPI itself.
int check_keyval(MPI_Comm comm, int keyval, const char* fn) {
  if (keyvals().count(keyval)) return MPI_SUCCESS;
  void* v = nullptr;
  int flag = 0;
  if (MPI_Comm_get_attr(MPI_COMM_SELF, keyval, &v, &flag) != MPI_SUCCESS)
    return raise_error(comm, MPI_ERR_KEYVAL, "%s: invalid keyval %d", fn, keyval);
  return MPI_SUCCESS;
}

std::vector<Attribute>::iterator find_attr(FakeComm& c, int keyval) {
  return std::find_if(c.attributes.begin(), c.attributes.end(),
                      [&](const Attribute& a) { return a.keyval == keyval; });
}

MPI_Fint fortran_handle(MPI_Comm comm) {
  return rc_is_fake_comm(comm) ? rc_fortran_of_fake_comm(comm) : MPI_Comm_c2f(comm);
}

// Sets a's value (from C, or the integer from Fortran).
void assign(Attribute& a, void* value, AttrLang lang) {
  a.value = value;
  a.lang = lang;
  if (lang == AttrLang::c)
    a.cell.reset();
  else
    a.cell = std::make_unique<FortranValue>(reinterpret_cast<MPI_Aint>(value));
}

// The value as C is given it: its own, or a pointer to the integer Fortran set.
void* c_view(const Attribute& a) { return a.lang == AttrLang::c ? a.value : a.cell->at(a.lang); }

// Runs the delete callback of one attribute (with the fake handle).
int delete_callback(MPI_Comm comm, const Attribute& a) {
  auto it = keyvals().find(a.keyval);
  if (it == keyvals().end()) return MPI_SUCCESS;
  const KeyvalRecord& r = it->second;
  if (r.lang != AttrLang::c) {
    if (r.fortran_del == nullptr) return MPI_SUCCESS;
    MPI_Fint handle = fortran_handle(comm), keyval = a.keyval, ierr = MPI_SUCCESS;
    FortranValue value(reinterpret_cast<MPI_Aint>(a.value));
    FortranValue extra(r.fortran_extra);
    r.fortran_del(&handle, &keyval, value.at(r.lang), extra.at(r.lang), &ierr);
    return ierr;
  }
  if (r.del == nullptr) return MPI_SUCCESS;
  return r.del(comm, a.keyval, c_view(a), r.extra_state);
}

// Runs the copy callback of a keyval for the attribute `value` of `oldcomm` (as the callback's
// language is given it); *copied tells whether the new communicator gets *out.
int copy_callback(MPI_Comm oldcomm, int keyval, const KeyvalRecord& r, void* value, Attribute* out,
                  bool* copied) {
  out->keyval = keyval;
  if (r.lang != AttrLang::c) {
    MPI_Fint handle = fortran_handle(oldcomm), key = keyval, flag = 0, ierr = MPI_SUCCESS;
    FortranValue in(reinterpret_cast<MPI_Aint>(value));
    FortranValue result(0);
    FortranValue extra(r.fortran_extra);
    r.fortran_copy(&handle, &key, extra.at(r.lang), in.at(r.lang), result.at(r.lang), &flag, &ierr);
    *copied = flag != 0;
    if (*copied) assign(*out, reinterpret_cast<void*>(result.get(r.lang)), r.lang);
    return ierr;
  }
  int flag = 0;
  void* result = nullptr;
  int rc = r.copy(oldcomm, keyval, r.extra_state, value, &result, &flag);
  *copied = flag != 0;
  if (*copied) assign(*out, result, AttrLang::c);
  return rc;
}

}  // namespace

int delete_attributes(MPI_Comm comm, FakeComm& c) {
  // Newest first, the order MPI guarantees for MPI_COMM_SELF at MPI_Finalize.
  while (!c.attributes.empty()) {
    const int keyval = c.attributes.back().keyval;
    if (int rc = delete_callback(comm, c.attributes.back())) return rc;
    c.attributes.pop_back();
    unuse(keyval);
  }
  return MPI_SUCCESS;
}

namespace {
bool copies(const KeyvalRecord& r) {
  return r.lang != AttrLang::c ? r.fortran_copy != nullptr : r.copy != nullptr;
}
}  // namespace

int copy_attributes(MPI_Comm oldcomm, FakeComm& from, FakeComm& to) {
  for (const Attribute& a : from.attributes) {
    auto it = keyvals().find(a.keyval);
    if (it == keyvals().end() || !copies(it->second)) continue;
    Attribute out{};
    bool copied = false;
    void* value = it->second.lang != AttrLang::c ? a.value : c_view(a);
    if (int rc = copy_callback(oldcomm, a.keyval, it->second, value, &out, &copied)) return rc;
    if (!copied) continue;
    to.attributes.push_back(std::move(out));
    ++it->second.uses;
  }
  return MPI_SUCCESS;
}

int copy_real_attributes(MPI_Comm real, FakeComm& to) {
  for (auto& [keyval, record] : keyvals()) {
    if (!copies(record)) continue;  // (a freed one may still be on `real`)
    void* value = nullptr;
    int present = 0;
    if (record.lang != AttrLang::c) {  // the value MPI's Fortran binding reads
      MPI_Aint v = 0;
      if (record.read_real == nullptr ||
          record.read_real(real, keyval, &v, &present) != MPI_SUCCESS || !present)
        continue;
      value = reinterpret_cast<void*>(v);
    } else if (MPI_Comm_get_attr(real, keyval, &value, &present) != MPI_SUCCESS || !present) {
      continue;
    }
    Attribute out{};
    bool copied = false;
    if (int rc = copy_callback(real, keyval, record, value, &out, &copied)) return rc;
    if (!copied) continue;
    to.attributes.push_back(std::move(out));
    ++record.uses;
  }
  return MPI_SUCCESS;
}

}  // namespace rcshim

using namespace rcshim;

namespace {

int set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, AttrLang lang) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Comm_set_attr", &c)) return rc;
  if (predefined(comm_keyval))
    return raise_error(comm, MPI_ERR_KEYVAL, "MPI_Comm_set_attr: keyval %d is predefined",
                       comm_keyval);
  if (int rc = check_keyval(comm, comm_keyval, "MPI_Comm_set_attr")) return rc;
  auto a = find_attr(*c, comm_keyval);
  if (a != c->attributes.end()) {  // replacing: the old value is deleted first
    if (int rc = delete_callback(comm, *a)) return raise_on(comm, rc);
    assign(*a, attribute_val, lang);
    return MPI_SUCCESS;
  }
  Attribute added{};
  added.keyval = comm_keyval;
  assign(added, attribute_val, lang);
  c->attributes.push_back(std::move(added));
  ++keyvals()[comm_keyval].uses;
  return MPI_SUCCESS;
}

// The attribute as C reads it: a pointer (to the integer where Fortran set it, as MPI gives C
// a Fortran attribute), or for the predefined ones a pointer to the int.
int get_attr(MPI_Comm comm, int comm_keyval, void** value, int* flag, AttrLang* lang) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Comm_get_attr", &c)) return rc;
  *lang = AttrLang::c;
  if (comm_keyval == MPI_TAG_UB) {  // MPI_COMM_WORLD's: one bound for every communicator
    static int tag_ub = rangecomm::max_user_tag();
    *value = &tag_ub;
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (predefined(comm_keyval))  // facts about the processes, the same as MPI_COMM_WORLD's
    return result(comm, MPI_Comm_get_attr(MPI_COMM_WORLD, comm_keyval, value, flag));
  if (int rc = check_keyval(comm, comm_keyval, "MPI_Comm_get_attr")) return rc;
  auto a = find_attr(*c, comm_keyval);
  *flag = a != c->attributes.end();
  if (*flag) {
    *lang = a->lang;
    *value = c_view(*a);
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int rc_fake_MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  return set_attr(comm, comm_keyval, attribute_val, AttrLang::c);
}

extern "C" int rc_fake_MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val,
                                         int* flag) {
  AttrLang lang;
  return get_attr(comm, comm_keyval, static_cast<void**>(attribute_val), flag, &lang);
}

// From Fortran (shim/src/fortran/attributes.cpp): the value is the integer itself, both ways;
// a predefined attribute is the int it points to, a C attribute the pointer.
extern "C" int rc_fortran_comm_set_attr(MPI_Comm comm, int keyval, MPI_Aint value, int mpi1) {
  Locked locked;
  return set_attr(comm, keyval, reinterpret_cast<void*>(value),
                  mpi1 ? AttrLang::fortran_int : AttrLang::fortran_aint);
}

extern "C" int rc_fortran_comm_get_attr(MPI_Comm comm, int keyval, MPI_Aint* value, int* flag) {
  Locked locked;
  void* p = nullptr;
  AttrLang lang;
  if (int rc = get_attr(comm, keyval, &p, flag, &lang)) return rc;
  if (!*flag) return MPI_SUCCESS;
  if (predefined(keyval))
    *value = *static_cast<int*>(p);
  else if (lang == AttrLang::c)
    *value = reinterpret_cast<MPI_Aint>(p);
  else if (lang == AttrLang::fortran_int)
    *value = *static_cast<MPI_Fint*>(p);
  else
    *value = *static_cast<MPI_Aint*>(p);
  return MPI_SUCCESS;
}

// A keyval made in Fortran (mpi1: by MPI_KEYVAL_CREATE): its callbacks are Fortran's.
extern "C" void rc_fortran_keyval_made(int keyval, void* copy, void* del, MPI_Aint extra, int mpi1,
                                       rc_fortran_attr_reader* read_real) {
  Locked locked;
  KeyvalRecord r;
  r.lang = mpi1 ? AttrLang::fortran_int : AttrLang::fortran_aint;
  r.fortran_copy = reinterpret_cast<FortranCopy>(copy);
  r.fortran_del = reinterpret_cast<FortranDelete>(del);
  r.fortran_extra = extra;
  r.read_real = read_real;
  keyvals()[keyval] = r;
}

extern "C" int rc_fake_MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Comm_delete_attr", &c)) return rc;
  if (int rc = check_keyval(comm, comm_keyval, "MPI_Comm_delete_attr")) return rc;
  auto a = find_attr(*c, comm_keyval);
  if (a == c->attributes.end())
    return raise_error(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr: no attribute with keyval %d",
                       comm_keyval);
  if (int rc = delete_callback(comm, *a)) return raise_on(comm, rc);
  c->attributes.erase(a);
  unuse(comm_keyval);
  return MPI_SUCCESS;
}

// The MPI-1 names of the same calls (attribute_val of MPI_Attr_put is the value itself).
extern "C" int rc_fake_MPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return rc_fake_MPI_Comm_set_attr(comm, keyval, attribute_val);
}
extern "C" int rc_fake_MPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return rc_fake_MPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
extern "C" int rc_fake_MPI_Attr_delete(MPI_Comm comm, int keyval) {
  return rc_fake_MPI_Comm_delete_attr(comm, keyval);
}

extern "C" int rc_hand_MPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy_fn,
                                              MPI_Comm_delete_attr_function* delete_fn,
                                              int* comm_keyval, void* extra_state) {
  Locked locked;  // the keyval records are the library's state
  int rc = MPI_Comm_create_keyval(copy_fn, delete_fn, comm_keyval, extra_state);
  if (rc == MPI_SUCCESS) keyvals()[*comm_keyval] = KeyvalRecord{copy_fn, delete_fn, extra_state};
  return rc;
}

extern "C" int rc_hand_MPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn,
                                         int* keyval, void* extra_state) {
  return rc_hand_MPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

extern "C" int rc_hand_MPI_Comm_free_keyval(int* comm_keyval) {
  Locked locked;
  auto it = keyvals().find(*comm_keyval);
  if (it != keyvals().end() && (it->second.uses > 0 || kept_for_copies(it->second))) {
    it->second.freed = true;
    *comm_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
  }
  int keyval = *comm_keyval;
  int rc = MPI_Comm_free_keyval(comm_keyval);
  if (rc == MPI_SUCCESS) keyvals().erase(keyval);
  return rc;
}

extern "C" int rc_hand_MPI_Keyval_free(int* keyval) { return rc_hand_MPI_Comm_free_keyval(keyval); }
