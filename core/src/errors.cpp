#include "errors.hpp"

#include <array>
#include <cstdarg>
#include <cstdio>

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

int raise_message(MPI_Comm comm, int error_class, const char* message) {
  int code = code_for_class(error_class);
  if (code != error_class) MPI_Add_error_string(code, message);
  if (comm != MPI_COMM_NULL) MPI_Comm_call_errhandler(comm, code);
  return code;
}

}  // namespace

int raise(MPI_Comm comm, int error_class, const char* format, ...) {
  char message[MPI_MAX_ERROR_STRING];
  int n = std::snprintf(message, sizeof message, "rangecomm: ");
  va_list args;
  va_start(args, format);
  std::vsnprintf(message + n, sizeof message - n, format, args);
  va_end(args);
  return raise_message(comm, error_class, message);
}

int raise_mpi(MPI_Comm comm, int code, const char* what) {
  if (code == MPI_SUCCESS) return code;
  int error_class = MPI_ERR_OTHER;
  MPI_Error_class(code, &error_class);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
  text[len] = '\0';
  return raise(comm, error_class, "%s: %s", what, text);
}

}  // namespace rangecomm::detail
