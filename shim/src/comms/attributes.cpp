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
#include "handles/handles.h"

namespace rcshim {

namespace {

struct KeyvalRecord {
  MPI_Comm_copy_attr_function* copy = nullptr;  // null: MPI_COMM_NULL_COPY_FN on MPICH
  MPI_Comm_delete_attr_function* del = nullptr;
  void* extra_state = nullptr;
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

// Runs the delete callback of one attribute (with the fake handle).
int delete_callback(MPI_Comm comm, const Attribute& a) {
  auto it = keyvals().find(a.keyval);
  if (it == keyvals().end() || it->second.del == nullptr) return MPI_SUCCESS;
  return it->second.del(comm, a.keyval, a.value, it->second.extra_state);
}

}  // namespace

int delete_attributes(MPI_Comm comm, FakeComm& c) {
  // Newest first, the order MPI guarantees for MPI_COMM_SELF at MPI_Finalize.
  while (!c.attributes.empty()) {
    Attribute a = c.attributes.back();
    if (int rc = delete_callback(comm, a)) return rc;
    c.attributes.pop_back();
    unuse(a.keyval);
  }
  return MPI_SUCCESS;
}

int copy_attributes(MPI_Comm oldcomm, FakeComm& from, FakeComm& to) {
  for (const Attribute& a : from.attributes) {
    auto it = keyvals().find(a.keyval);
    if (it == keyvals().end() || it->second.copy == nullptr) continue;
    void* out = nullptr;
    int flag = 0;
    int rc = it->second.copy(oldcomm, a.keyval, it->second.extra_state, a.value, &out, &flag);
    if (rc != MPI_SUCCESS) return rc;
    if (!flag) continue;
    to.attributes.push_back({a.keyval, out});
    ++it->second.uses;
  }
  return MPI_SUCCESS;
}

int copy_real_attributes(MPI_Comm real, FakeComm& to) {
  for (auto& [keyval, record] : keyvals()) {
    if (record.copy == nullptr) continue;  // (a freed one may still be on `real`)
    void* value = nullptr;
    int present = 0;
    if (MPI_Comm_get_attr(real, keyval, &value, &present) != MPI_SUCCESS || !present) continue;
    void* out = nullptr;
    int flag = 0;
    int rc = record.copy(real, keyval, record.extra_state, value, &out, &flag);
    if (rc != MPI_SUCCESS) return rc;
    if (!flag) continue;
    to.attributes.push_back({keyval, out});
    ++record.uses;
  }
  return MPI_SUCCESS;
}

}  // namespace rcshim

using namespace rcshim;

extern "C" int rc_fake_MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Comm_set_attr", &c)) return rc;
  if (predefined(comm_keyval))
    return raise_error(comm, MPI_ERR_KEYVAL, "MPI_Comm_set_attr: keyval %d is predefined",
                       comm_keyval);
  if (int rc = check_keyval(comm, comm_keyval, "MPI_Comm_set_attr")) return rc;
  auto a = find_attr(*c, comm_keyval);
  if (a != c->attributes.end()) {  // replacing: the old value is deleted first
    if (int rc = delete_callback(comm, *a)) return raise_on(comm, rc);
    a->value = attribute_val;
    return MPI_SUCCESS;
  }
  c->attributes.push_back({comm_keyval, attribute_val});
  ++keyvals()[comm_keyval].uses;
  return MPI_SUCCESS;
}

extern "C" int rc_fake_MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val,
                                         int* flag) {
  FakeComm* c = nullptr;
  if (int rc = get_comm(comm, "MPI_Comm_get_attr", &c)) return rc;
  if (comm_keyval == MPI_TAG_UB) {  // MPI_COMM_WORLD's: one bound for every communicator
    static int tag_ub = rangecomm::max_user_tag();
    *static_cast<void**>(attribute_val) = &tag_ub;
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (predefined(comm_keyval))  // facts about the processes, the same as MPI_COMM_WORLD's
    return result(comm, MPI_Comm_get_attr(MPI_COMM_WORLD, comm_keyval, attribute_val, flag));
  if (int rc = check_keyval(comm, comm_keyval, "MPI_Comm_get_attr")) return rc;
  auto a = find_attr(*c, comm_keyval);
  *flag = a != c->attributes.end();
  if (*flag) *static_cast<void**>(attribute_val) = a->value;
  return MPI_SUCCESS;
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
