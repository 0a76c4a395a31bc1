/* A crash at a chosen write, for the crash-consistency tests (LD_PRELOAD=this library).
 *
 * DCS_KILL_AT_WRITE=N and DCS_KILL_PATH=PATH: the process sends itself SIGKILL just before
 * its N-th change (1-based) of the file at PATH (relative to its working directory): write,
 * pwrite, pwritev, ftruncate, fallocate, fdatasync and fsync each count as one. Every earlier
 * change has reached the page cache and none later has: exactly what a kill -9 at that moment
 * leaves. Without DCS_KILL_AT_WRITE nothing is killed; with DCS_KILL_COUNT_FILE=PATH the number of
 * changes counted is written there at exit (a sweep's length). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static atomic_long changes;

/* Whether fd is the file DCS_KILL_PATH names (the same inode: the store writes through a
 * descriptor first opened under a temporary name, which /proc shows as deleted). */
static int watched(int fd) {
  const char* path = getenv("DCS_KILL_PATH");
  struct stat named, opened;
  if (path == NULL || fd < 0 || fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode)) return 0;
  return stat(path, &named) == 0 && named.st_dev == opened.st_dev && named.st_ino == opened.st_ino;
}

/* Counts a change of fd's file; dies if it is the chosen one. */
static void before_change(int fd) {
  if (!watched(fd)) return;
  const long n = atomic_fetch_add(&changes, 1) + 1;
  const char* at = getenv("DCS_KILL_AT_WRITE");
  if (at != NULL && n == atol(at)) kill(getpid(), SIGKILL);
}

__attribute__((destructor)) static void report_count(void) {
  const char* path = getenv("DCS_KILL_COUNT_FILE");
  if (path == NULL) return;
  FILE* out = fopen(path, "w");
  if (out == NULL) return;
  fprintf(out, "%ld\n", atomic_load(&changes));
  fclose(out);
}

#define NEXT(name, type) ((type)dlsym(RTLD_NEXT, name))

ssize_t write(int fd, const void* buf, size_t count) {
  before_change(fd);
  return NEXT("write", ssize_t(*)(int, const void*, size_t))(fd, buf, count);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  before_change(fd);
  return NEXT("pwrite", ssize_t(*)(int, const void*, size_t, off_t))(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
  before_change(fd);
  return NEXT("pwrite64", ssize_t(*)(int, const void*, size_t, off_t))(fd, buf, count, offset);
}

ssize_t pwritev(int fd, const struct iovec* iov, int n, off_t offset) {
  before_change(fd);
  return NEXT("pwritev", ssize_t(*)(int, const struct iovec*, int, off_t))(fd, iov, n, offset);
}

int ftruncate(int fd, off_t length) {
  before_change(fd);
  return NEXT("ftruncate", int (*)(int, off_t))(fd, length);
}

int ftruncate64(int fd, off_t length) {
  before_change(fd);
  return NEXT("ftruncate64", int (*)(int, off_t))(fd, length);
}

int fallocate(int fd, int mode, off_t offset, off_t length) {
  before_change(fd);
  return NEXT("fallocate", int (*)(int, int, off_t, off_t))(fd, mode, offset, length);
}

int fdatasync(int fd) {
  before_change(fd);
  return NEXT("fdatasync", int (*)(int))(fd);
}

int fsync(int fd) {
  before_change(fd);
  return NEXT("fsync", int (*)(int))(fd);
}
