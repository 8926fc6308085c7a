#include "util/errors.hpp"

#include <array>
#include <cstdarg>
#include <cstdio>

#include "rangecomm/comm.hpp"
#include "rangecomm/embedding.hpp"

namespace rangecomm::detail {

namespace {

// One dynamic error code per error class, made on first use; its string is replaced by the
// latest message of that class (as errno and strerror work).
int code_for_class(int error_class) {
  static std::array<int, 128> codes{};
  if (error_class <= 0 || error_class >= static_cast<int>(codes.size())) return error_class;
  int& code = codes[error_class];
  if (code == 0 && MPI_Add_error_code(error_class, &code) != MPI_SUCCESS) code = -1;
  return code > 0 ? code : error_class;
}

// The latest message of each of our codes. MPI_Add_error_string stores it in MPI too, but
// MPICH 4.0's MPI_Error_string does not return it for codes of predefined classes.
struct LastMessage {
  int code = 0;
  char text[MPI_MAX_ERROR_STRING] = {};
};
std::array<LastMessage, 128> g_messages;

bool g_call_handlers = true;  // Set_error_handler_calls

int raise_message(MPI_Comm comm, int error_class, const char* message) {
  int code = code_for_class(error_class);
  if (code != error_class) MPI_Add_error_string(code, message);
  if (error_class > 0 && error_class < static_cast<int>(g_messages.size())) {
    g_messages[error_class].code = code;
    std::snprintf(g_messages[error_class].text, MPI_MAX_ERROR_STRING, "%s", message);
  }
  call_handler(comm, code);
  return code;
}

}  // namespace

void call_handler(MPI_Comm comm, int code) {
  if (g_call_handlers && comm != MPI_COMM_NULL) MPI_Comm_call_errhandler(comm, code);
}

int raise(MPI_Comm comm, int error_class, const char* format, ...) {
  char message[MPI_MAX_ERROR_STRING];
  int n = std::snprintf(message, sizeof message, "rangecomm: ");
  va_list args;
  va_start(args, format);
  std::vsnprintf(message + n, sizeof message - n, format, args);
  va_end(args);
  return raise_message(comm, error_class, message);
}

const char* message_of(int code) {
  int error_class = MPI_ERR_OTHER;
  if (MPI_Error_class(code, &error_class) != MPI_SUCCESS) return nullptr;
  if (error_class <= 0 || error_class >= static_cast<int>(g_messages.size())) return nullptr;
  const LastMessage& m = g_messages[error_class];
  return m.code == code ? m.text : nullptr;
}

int raise_mpi_failure(MPI_Comm comm, int code, const char* what) {
  int error_class = MPI_ERR_OTHER;
  MPI_Error_class(code, &error_class);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  rangecomm::Error_string(code, text, &len);
  return raise(comm, error_class, "%s: %s", what, text);
}

}  // namespace rangecomm::detail

namespace rangecomm {

void Set_error_handler_calls(bool enabled) { detail::g_call_handlers = enabled; }

int Make_error(int error_class, const char* format, ...) {
  char message[MPI_MAX_ERROR_STRING];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  return detail::raise(MPI_COMM_NULL, error_class, "%s", message);
}

int Error_string(int code, char* text, int* length) {
  if (const char* m = detail::message_of(code)) {
    *length = std::snprintf(text, MPI_MAX_ERROR_STRING, "%s", m);
    if (*length >= MPI_MAX_ERROR_STRING) *length = MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
  }
  int rc = MPI_Error_string(code, text, length);
  if (rc != MPI_SUCCESS) *length = 0;
  text[*length] = '\0';
  return rc;
}

}  // namespace rangecomm
