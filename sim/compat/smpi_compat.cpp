// The simulated build's replacements for what SMPI lacks (smpi_compat.h says what and why).
// SMPI runs every simulated process in one OS process, one at a time, and gives each its own
// copy of the program's globals; the private communicator below is therefore per process.
#define RANGECOMM_SIM_COMPAT_IMPLEMENTATION
#include "smpi_compat.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

// A message a matched probe took out of SMPI's queue: its bytes and its envelope.
struct TakenMessage {
  std::vector<unsigned char> bytes;
  int source = MPI_ANY_SOURCE;
  int tag = MPI_ANY_TAG;
};

// Where a taken message is sent to this process again, to be received with the caller's type.
MPI_Comm self_channel() {
  static MPI_Comm comm = MPI_COMM_NULL;
  if (comm == MPI_COMM_NULL) {
    MPI_Comm_dup(MPI_COMM_SELF, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  return comm;
}

// Holders of a type beyond its first: each MPI_Type_dup adds one, each MPI_Type_free of a held
// type removes one; MPI frees the type at the free that finds none left.
std::unordered_map<MPI_Datatype, int>& extra_holders() {
  static auto* holders = new std::unordered_map<MPI_Datatype, int>;
  return *holders;
}

// This simulated process's own settings of environment variables (nullopt: unset), over the
// environment every process shares.
std::map<std::string, std::optional<std::string>>& own_environment() {
  static auto* settings = new std::map<std::string, std::optional<std::string>>;
  return *settings;
}

// A variable's name as setenv and unsetenv accept it; else errno is EINVAL.
bool valid_name(const char* name) {
  if (name != nullptr && *name != '\0' && std::strchr(name, '=') == nullptr) return true;
  errno = EINVAL;
  return false;
}

}  // namespace

extern "C" {

// An empty status from `source` (smpi_compat.h).
void rc_smpi_set_empty_status(MPI_Status* status, int source) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = source;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  MPI_Status_set_elements(status, MPI_BYTE, 0);
}

int rc_smpi_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                    MPI_Status* status) {
  rc_smpi_progress();  // a process may wait for a collective of smpi_requests.cpp in a loop of
                       // these
  MPI_Status probed;
  int rc = MPI_Iprobe(source, tag, comm, flag, &probed);
  if (rc != MPI_SUCCESS || !*flag) return rc;
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    rc_smpi_set_empty_status(status, MPI_PROC_NULL);
    return MPI_SUCCESS;
  }
  int bytes = 0;
  MPI_Get_count(&probed, MPI_BYTE, &bytes);
  auto* taken = new TakenMessage;
  taken->bytes.resize(static_cast<size_t>(bytes));
  taken->source = probed.MPI_SOURCE;
  taken->tag = probed.MPI_TAG;
  // The earliest message from that source with that tag is the probed one (MPI's order), and
  // nothing else in this process runs in between.
  MPI_Status received;
  rc = MPI_Recv(taken->bytes.data(), bytes, MPI_BYTE, taken->source, taken->tag, comm, &received);
  if (rc != MPI_SUCCESS) {
    delete taken;
    *flag = 0;
    return rc;
  }
  // What arrived, which SMPI's probe can overstate: for a message of a derived type it counts
  // the type's extent, gaps included, rather than the data.
  MPI_Get_count(&received, MPI_BYTE, &bytes);
  taken->bytes.resize(static_cast<size_t>(bytes));
  *message = taken;
  if (status != MPI_STATUS_IGNORE) {
    *status = probed;
    MPI_Status_set_elements(status, MPI_BYTE, bytes);
  }
  return MPI_SUCCESS;
}

int rc_smpi_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  int flag = 0;
  for (;;) {
    int rc = rc_smpi_Improbe(source, tag, comm, &flag, message, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    // Blocks this simulated process until a message arrives (MPI_Probe is implemented).
    MPI_Status ignored;
    rc = MPI_Probe(source, tag, comm, &ignored);
    if (rc != MPI_SUCCESS) return rc;
  }
}

int rc_smpi_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
                   MPI_Request* request) {
  if (message == nullptr || request == nullptr) return MPI_ERR_ARG;
  if (*message == MPI_MESSAGE_NO_PROC)  // the same value as MPI_MESSAGE_NULL in SMPI
    return MPI_Irecv(buf, count, type, MPI_PROC_NULL, 0, MPI_COMM_SELF, request);
  auto* taken = static_cast<TakenMessage*>(*message);
  *message = MPI_MESSAGE_NULL;
  MPI_Comm self = self_channel();
  int rc = MPI_Irecv(buf, count, type, 0, 0, self, request);
  if (rc == MPI_SUCCESS)
    rc = MPI_Send(taken->bytes.data(), static_cast<int>(taken->bytes.size()), MPI_BYTE, 0, 0, self);
  delete taken;
  return rc;
}

int rc_smpi_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
                  MPI_Status* status) {
  if (message == nullptr) return MPI_ERR_ARG;
  if (*message == MPI_MESSAGE_NO_PROC) {
    *message = MPI_MESSAGE_NULL;
    rc_smpi_set_empty_status(status, MPI_PROC_NULL);
    return MPI_SUCCESS;
  }
  auto* taken = static_cast<TakenMessage*>(*message);
  const int source = taken->source;
  const int tag = taken->tag;
  MPI_Request request;
  int rc = rc_smpi_Imrecv(buf, count, type, message, &request);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Status st;
  rc = MPI_Wait(&request, &st);
  if (status != MPI_STATUS_IGNORE) {
    *status = st;
    status->MPI_SOURCE = source;
    status->MPI_TAG = tag;
  }
  return rc;
}

// SMPI's MPI_Abort ends every simulated process and then smpirun with exit status 0, as if the
// run had passed; leaving the process instead ends the run with a failure (the others, left
// waiting for it, are reported deadlocked and smpirun exits nonzero).
int rc_smpi_Abort(MPI_Comm, int code) {
  std::fflush(nullptr);
  std::exit(code != 0 ? code : 1);
}

rc_smpi_creation_hook rc_smpi_on_creation = nullptr;

int rc_smpi_Comm_create_group(MPI_Comm parent, MPI_Group group, int tag, MPI_Comm* out) {
  if (rc_smpi_on_creation != nullptr) rc_smpi_on_creation(parent, group, 0, 0);
  return MPI_Comm_create_group(parent, group, tag, out);
}

int rc_smpi_Comm_split(MPI_Comm parent, int color, int key, MPI_Comm* out) {
  if (rc_smpi_on_creation != nullptr) rc_smpi_on_creation(parent, MPI_GROUP_NULL, color, key);
  return MPI_Comm_split(parent, color, key, out);
}

int rc_smpi_Add_error_string(int code, const char* text) {
  return MPI_Add_error_string(code, const_cast<char*>(text));  // SMPI copies it
}

int rc_smpi_Comm_call_errhandler(MPI_Comm comm, int code) {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  int rc = MPI_Comm_get_errhandler(comm, &handler);
  if (rc != MPI_SUCCESS) return rc;
  const bool returns = handler == MPI_ERRORS_RETURN;
  if (handler != MPI_ERRORS_RETURN && handler != MPI_ERRORS_ARE_FATAL)
    MPI_Errhandler_free(&handler);  // the reference MPI_Comm_get_errhandler gave
  return returns ? MPI_SUCCESS : MPI_Comm_call_errhandler(comm, code);
}

int rc_smpi_Type_dup(MPI_Datatype type, MPI_Datatype* copy) {
  if (type == MPI_DATATYPE_NULL || copy == nullptr) return MPI_ERR_TYPE;
  ++extra_holders()[type];
  *copy = type;
  return MPI_SUCCESS;
}

int rc_smpi_Type_free(MPI_Datatype* type) {
  if (type == nullptr) return MPI_ERR_ARG;
  auto& holders = extra_holders();
  auto it = holders.find(*type);
  if (it == holders.end()) return MPI_Type_free(type);
  if (--it->second == 0) holders.erase(it);
  *type = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

char* rc_smpi_getenv(const char* name) {
  auto& settings = own_environment();
  auto it = settings.find(name);
  if (it == settings.end()) return getenv(name);
  return it->second ? it->second->data() : nullptr;
}

int rc_smpi_setenv(const char* name, const char* value, int overwrite) {
  if (!valid_name(name)) return -1;
  if (overwrite || rc_smpi_getenv(name) == nullptr) own_environment()[name] = std::string(value);
  return 0;
}

int rc_smpi_unsetenv(const char* name) {
  if (!valid_name(name)) return -1;
  own_environment()[name] = std::nullopt;
  return 0;
}

}  // extern "C"
