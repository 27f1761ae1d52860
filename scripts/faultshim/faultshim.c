// faultshim: an LD_PRELOAD library that makes one chosen I/O call of a process fail.
//
// Build:  cc -shared -fPIC -O2 -o faultshim.so scripts/faultshim/faultshim.c -ldl
// Use:    FAULT_NTH=3 FAULT_ERRNO=EIO LD_PRELOAD=./faultshim.so program ...
//
// It wraps write, pwrite, pwrite64, writev, pwritev, pwritev64, fsync, fdatasync, syncfs, msync,
// rename, renameat and renameat2. Calls on descriptors 0, 1 and 2 are never counted (the
// process's output is not part of a save). While the shim is armed it counts the wrapped calls
// it sees, in order, from 1, and the FAULT_NTH-th one fails with FAULT_ERRNO without reaching the
// kernel (and with FAULT_STICKY=1, every counted call from the FAULT_NTH-th on fails: a disk that
// stays full or broken).
//
// Environment:
//   FAULT_NTH     which counted call fails (1-based); 0 or unset: none fails, calls are only counted
//   FAULT_ERRNO   EIO (default), ENOSPC, EDQUOT, EROFS or a number
//   FAULT_CALLS   comma-separated names of the calls to count, e.g. "write,pwrite,writev"
//                 (default: all of them; "write" also matches pwrite, writev, pwritev;
//                 "sync" matches fsync, fdatasync, syncfs, msync; "rename" all renames)
//   FAULT_STICKY  1: fail every counted call from the FAULT_NTH-th on
//   FAULT_ARMED   1: armed from the start; otherwise the program arms it with faultshim_arm()
//   FAULT_LOG     a file the shim appends one line to per counted call ("N name fd result")
//
// A program arms and disarms it around the work to be faulted, finding the functions with
// dlsym(RTLD_DEFAULT, "faultshim_arm"), so that opening a store is not counted:
//   void faultshim_arm(void);        resets the count and starts counting
//   long faultshim_disarm(void);     stops counting; returns the number of calls counted
//   long faultshim_failures(void);   how many calls the shim failed
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long nth;
static int fault_errno = EIO;
static int sticky;
static int armed;
static long counted;
static long failures;
static char selected[256];
static int log_fd = -1;

static void configure(void) __attribute__((constructor));

static void configure(void) {
    const char *value = getenv("FAULT_NTH");
    nth = value ? atol(value) : 0;
    value = getenv("FAULT_ERRNO");
    if (value) {
        if (strcmp(value, "EIO") == 0) fault_errno = EIO;
        else if (strcmp(value, "ENOSPC") == 0) fault_errno = ENOSPC;
        else if (strcmp(value, "EDQUOT") == 0) fault_errno = EDQUOT;
        else if (strcmp(value, "EROFS") == 0) fault_errno = EROFS;
        else if (atoi(value) > 0) fault_errno = atoi(value);
    }
    value = getenv("FAULT_STICKY");
    sticky = value && strcmp(value, "1") == 0;
    value = getenv("FAULT_ARMED");
    armed = value && strcmp(value, "1") == 0;
    value = getenv("FAULT_CALLS");
    if (value && strlen(value) + 3 < sizeof selected) snprintf(selected, sizeof selected, ",%s,", value);
    value = getenv("FAULT_LOG");
    if (value) log_fd = open(value, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

void faultshim_arm(void) {
    __atomic_store_n(&counted, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&failures, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&armed, 1, __ATOMIC_SEQ_CST);
}

long faultshim_disarm(void) {
    __atomic_store_n(&armed, 0, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&counted, __ATOMIC_SEQ_CST);
}

long faultshim_failures(void) { return __atomic_load_n(&failures, __ATOMIC_SEQ_CST); }

// Whether the call `name` of family `family` ("write", "sync" or "rename") is counted.
static int is_selected(const char *name, const char *family) {
    if (selected[0] == 0) return 1;
    char needle[40];
    snprintf(needle, sizeof needle, ",%s,", name);
    if (strstr(selected, needle)) return 1;
    snprintf(needle, sizeof needle, ",%s,", family);
    return strstr(selected, needle) != NULL;
}

static void log_call(long number, const char *name, int fd, int failed) {
    if (log_fd < 0) return;
    char line[96];
    int length = snprintf(line, sizeof line, "%ld %s %d %s\n", number, name, fd, failed ? "fail" : "pass");
    if (length > 0) {
        ssize_t ignored = syscall(SYS_write, log_fd, line, (size_t)length);  // not through the wrapper
        (void)ignored;
    }
}

// Counts the call; returns 1 when it must fail (errno is then set).
static int should_fail(const char *name, const char *family, int fd) {
    if (!__atomic_load_n(&armed, __ATOMIC_SEQ_CST) || (fd >= 0 && fd <= 2) || !is_selected(name, family)) return 0;
    long number = __atomic_add_fetch(&counted, 1, __ATOMIC_SEQ_CST);
    int fail = nth > 0 && (number == nth || (sticky && number > nth));
    log_call(number, name, fd, fail);
    if (!fail) return 0;
    __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
    errno = fault_errno;
    return 1;
}

#define NEXT(type, name, ...)                                                                      \
    static type (*next)(__VA_ARGS__);                                                              \
    if (!next) next = (type(*)(__VA_ARGS__))dlsym(RTLD_NEXT, name)

ssize_t write(int fd, const void *buffer, size_t count) {
    NEXT(ssize_t, "write", int, const void *, size_t);
    if (should_fail("write", "write", fd)) return -1;
    return next(fd, buffer, count);
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    NEXT(ssize_t, "pwrite", int, const void *, size_t, off_t);
    if (should_fail("pwrite", "write", fd)) return -1;
    return next(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off_t offset) {
    NEXT(ssize_t, "pwrite64", int, const void *, size_t, off_t);
    if (should_fail("pwrite", "write", fd)) return -1;
    return next(fd, buffer, count, offset);
}

ssize_t writev(int fd, const struct iovec *vector, int count) {
    NEXT(ssize_t, "writev", int, const struct iovec *, int);
    if (should_fail("writev", "write", fd)) return -1;
    return next(fd, vector, count);
}

ssize_t pwritev(int fd, const struct iovec *vector, int count, off_t offset) {
    NEXT(ssize_t, "pwritev", int, const struct iovec *, int, off_t);
    if (should_fail("pwritev", "write", fd)) return -1;
    return next(fd, vector, count, offset);
}

ssize_t pwritev64(int fd, const struct iovec *vector, int count, off_t offset) {
    NEXT(ssize_t, "pwritev64", int, const struct iovec *, int, off_t);
    if (should_fail("pwritev", "write", fd)) return -1;
    return next(fd, vector, count, offset);
}

int fsync(int fd) {
    NEXT(int, "fsync", int);
    if (should_fail("fsync", "sync", fd)) return -1;
    return next(fd);
}

int fdatasync(int fd) {
    NEXT(int, "fdatasync", int);
    if (should_fail("fdatasync", "sync", fd)) return -1;
    return next(fd);
}

int syncfs(int fd) {
    NEXT(int, "syncfs", int);
    if (should_fail("syncfs", "sync", fd)) return -1;
    return next(fd);
}

int msync(void *address, size_t length, int flags) {
    NEXT(int, "msync", void *, size_t, int);
    if (should_fail("msync", "sync", -1)) return -1;
    return next(address, length, flags);
}

int rename(const char *from, const char *to) {
    NEXT(int, "rename", const char *, const char *);
    if (should_fail("rename", "rename", -1)) return -1;
    return next(from, to);
}

int renameat(int from_dir, const char *from, int to_dir, const char *to) {
    NEXT(int, "renameat", int, const char *, int, const char *);
    if (should_fail("rename", "rename", -1)) return -1;
    return next(from_dir, from, to_dir, to);
}

int renameat2(int from_dir, const char *from, int to_dir, const char *to, unsigned int flags) {
    NEXT(int, "renameat2", int, const char *, int, const char *, unsigned int);
    if (should_fail("rename", "rename", -1)) return -1;
    return next(from_dir, from, to_dir, to, flags);
}
