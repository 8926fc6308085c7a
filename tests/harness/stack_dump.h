/* A hung test's evidence: the stack of every thread of this process, printed to standard error
 * by gdb from a signal handler (the test's time limit), so that a hang in CI is diagnosed from
 * the log alone, each line marked with the process's label. Prepare once at start-up (it finds
 * gdb and allows a child to attach: Yama's ptrace_scope 1 forbids that otherwise); the printing
 * itself uses only async-signal-safe calls (fork, execve, waitpid). Without gdb it prints a
 * line saying so. */
#ifndef RANGECOMM_TESTS_STACK_DUMP_H
#define RANGECOMM_TESTS_STACK_DUMP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char stack_dump_command[1024]; /* for /bin/sh -c: gdb, each line prefixed */

/* label: what each printed line starts with, e.g. "rank 3". */
static inline void stack_dump_prepare(const char *label) {
  char gdb[512] = "";
  const char *path = getenv("PATH");
  while (path != NULL && *path != '\0') {
    const char *end = strchr(path, ':');
    size_t n = end ? (size_t)(end - path) : strlen(path);
    if (n > 0 && n + 5 < sizeof gdb) {
      snprintf(gdb, sizeof gdb, "%.*s/gdb", (int)n, path);
      if (access(gdb, X_OK) == 0) break;
    }
    gdb[0] = '\0';
    path = end ? end + 1 : NULL;
  }
  stack_dump_command[0] = '\0';
  if (gdb[0] != '\0')
    snprintf(stack_dump_command, sizeof stack_dump_command,
             "'%s' -q -batch -nx -p %d -ex 'thread apply all bt 30' 2>&1 </dev/null"
             " | sed 's/^/[%s] /' >&2",
             gdb, (int)getpid(), label);
#ifdef PR_SET_PTRACER
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
}

static inline void stack_dump_print(void) {
  static const char none[] = "stack_dump: no gdb on PATH, no stacks\n";
  if (stack_dump_command[0] == '\0') {
    (void)!write(STDERR_FILENO, none, sizeof none - 1);
    return;
  }
  int saved = errno;
  pid_t child = fork();
  if (child == 0) {
    char *argv[] = {(char *)"/bin/sh", (char *)"-c", stack_dump_command, NULL};
    execve("/bin/sh", argv, environ);
    _exit(127);
  }
  if (child > 0) {
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  errno = saved;
}

#endif /* RANGECOMM_TESTS_STACK_DUMP_H */
