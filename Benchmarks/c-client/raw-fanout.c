/* The baseline of an expiry's or a phase change's delay, in a process of its own as the
 * daemon is: it waits on a boot-clock timerfd armed for each instant of a plan, as the
 * daemon's LoopTimer does (a timerfd has no timer slack; clock_nanosleep would wake up to
 * 50 us late), and writes that instant's reply to that instant's socket, nothing else. swbench builds it (cc -O2, static
 * when it can) in its run, hands it the sockets' sending ends as open descriptors, and reads
 * the other ends with the same reader as the daemon's watchers.
 *
 * The plan (argv[1]) is a file of records in the order to send, each: int64 instant (ns on
 * CLOCK_BOOTTIME), int32 descriptor, int32 length, then that many bytes. Exit 0 when every
 * reply was written whole; 2 for a bad plan; 69 when the timer or a write fails. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

struct header { int64_t instant; int32_t descriptor; int32_t length; };

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s PLAN\n", argv[0]); return 2; }
    FILE *file = fopen(argv[1], "rb");
    if (!file) { perror(argv[1]); return 2; }
    size_t capacity = 1 << 16, size = 0;
    char *plan = malloc(capacity);
    for (size_t got; plan && (got = fread(plan + size, 1, capacity - size, file)) > 0;) {
        size += got;
        if (size == capacity) plan = realloc(plan, capacity *= 2);
    }
    if (!plan || ferror(file)) { fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
    fclose(file);
    int timer = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC);
    if (timer < 0) { perror("timerfd_create"); return 69; }
    /* The whole plan checked first: a bad one is refused before anything is sent. */
    for (size_t at = 0; at < size;) {
        struct header header;
        if (size - at < sizeof header) { fprintf(stderr, "plan: a torn record\n"); return 2; }
        memcpy(&header, plan + at, sizeof header);
        at += sizeof header;
        if (header.length < 0 || (size_t)header.length > size - at) { fprintf(stderr, "plan: a bad length\n"); return 2; }
        if (header.instant <= 0) { fprintf(stderr, "plan: an instant not after boot\n"); return 2; }
        at += (size_t)header.length;
    }
    for (size_t at = 0; at < size;) {
        struct header header;
        memcpy(&header, plan + at, sizeof header);
        at += sizeof header;
        struct itimerspec instant = { .it_value = { header.instant / 1000000000, header.instant % 1000000000 } };
        if (timerfd_settime(timer, TFD_TIMER_ABSTIME, &instant, NULL) != 0) { perror("timerfd_settime"); return 69; }
        uint64_t expirations;
        ssize_t got;
        while ((got = read(timer, &expirations, sizeof expirations)) < 0 && errno == EINTR) {}
        if (got != sizeof expirations) { perror("read of the timerfd"); return 69; }
        for (int32_t sent = 0; sent < header.length;) {
            ssize_t count = send(header.descriptor, plan + at + sent, (size_t)(header.length - sent), MSG_NOSIGNAL);
            if (count < 0 && errno == EINTR) continue;
            if (count <= 0) { fprintf(stderr, "send to %d: %s\n", header.descriptor, strerror(errno)); return 69; }
            sent += (int32_t)count;
        }
        at += (size_t)header.length;
    }
    return 0;
}
