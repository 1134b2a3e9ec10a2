// Linux interfaces that Swift's Glibc module does not export. Only the Posix layer of
// StopWatchCore imports this module.
#ifndef CLINUX_H
#define CLINUX_H

#include <fcntl.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

// Without _GNU_SOURCE (set before glibc's headers, which the Glibc module has already
// read), glibc declares neither O_PATH nor pipe2: the kernel's value, and the system call.
#ifndef O_PATH
#define O_PATH 010000000
#endif
static const int clinux_O_PATH = O_PATH;

/// pipe2(fds, O_CLOEXEC).
static inline int clinux_pipe_cloexec(int fds[2]) {
    return (int)syscall(SYS_pipe2, fds, O_CLOEXEC);
}

/// accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC): a connection that is never, not
/// even for an instant, inherited by a program started meanwhile (a hook).
static inline int clinux_accept_nonblocking_cloexec(int fd) {
    return (int)syscall(SYS_accept4, fd, (void *)0, (void *)0, 04000 | 02000000);
}

// Through syscall(2), which Swift cannot call (it is variadic): glibc wraps pidfd_open only
// from 2.36 and memfd_create from 2.27, and a toolchain's sysroot may be older.

/// renameat2(from, fromName, to, toName, RENAME_NOREPLACE) (Linux 3.15): EEXIST rather than
/// replace what is there. Through syscall(2): glibc wraps it only from 2.28.
static inline int clinux_renameat_noreplace(int from, const char *fromName, int to, const char *toName) {
#ifndef SYS_renameat2
#define SYS_renameat2 316
#endif
    return (int)syscall(SYS_renameat2, from, fromName, to, toName, 1u /* RENAME_NOREPLACE */);
}

/// getrandom(buffer, length, 0) (Linux 3.17): random bytes, blocking only until the pool is
/// first seeded. Through syscall(2) as glibc wraps it only from 2.25 (<sys/random.h>).
static inline long clinux_getrandom(void *buffer, unsigned long length) {
#ifdef SYS_getrandom
    return syscall(SYS_getrandom, buffer, length, 0);
#else
    return -1;
#endif
}

/// A descriptor for process `pid` that polls readable once it has ended (Linux 5.3).
static inline int clinux_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/// close_range(first, ~0U, CLOSE_RANGE_CLOEXEC): every descriptor from `first` on made
/// close-on-exec in one call (Linux 5.11; fails with ENOSYS or EINVAL before).
static inline int clinux_close_range_cloexec(unsigned int first) {
    return (int)syscall(SYS_close_range, first, ~0U, 1U << 2);
}

/// An anonymous file in memory, close-on-exec (MFD_CLOEXEC).
static inline int clinux_memfd_create(const char *name) {
    return (int)syscall(SYS_memfd_create, name, 1U);
}

/// sched_getaffinity / sched_setaffinity of one thread (`tid`, 0 for the caller), its mask
/// `size` bytes of bits, a bit per CPU. The system calls: glibc declares the wrappers only
/// with _GNU_SOURCE. The raw getaffinity returns the bytes it filled, or -1.
static inline int clinux_get_affinity(pid_t tid, unsigned long size, void *mask) {
    return (int)syscall(SYS_sched_getaffinity, tid, size, mask);
}
static inline int clinux_set_affinity(pid_t tid, unsigned long size, const void *mask) {
    return (int)syscall(SYS_sched_setaffinity, tid, size, mask);
}

/// sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE): starts writing the file's changed pages
/// without waiting for them. (CLinux.c: glibc declares it only with _GNU_SOURCE.)
int clinux_start_writeback(int fd);

#endif
