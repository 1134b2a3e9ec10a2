/* The baseline of an expiry's or a phase change's delay, in a process of its own as the
 * daemon is: it sleeps on the boot clock until each instant of a plan and writes that
 * instant's reply to that instant's socket, nothing else. swbench builds it (cc -O2, static
 * when it can) in its run, hands it the sockets' sending ends as open descriptors, and reads
 * the other ends with the same reader as the daemon's watchers.
 *
 * The plan (argv[1]) is a file of records in the order to send, each: int64 instant (ns on
 * CLOCK_BOOTTIME), int32 descriptor, int32 length, then that many bytes. Exit 0 when every
 * reply was written whole; 2 for a bad plan; 69 when a sleep or a write fails. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

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
    for (size_t at = 0; at < size;) {
        struct header header;
        if (size - at < sizeof header) { fprintf(stderr, "plan: a torn record\n"); return 2; }
        memcpy(&header, plan + at, sizeof header);
        at += sizeof header;
        if (header.length < 0 || (size_t)header.length > size - at) { fprintf(stderr, "plan: a bad length\n"); return 2; }
        struct timespec instant = { header.instant / 1000000000, header.instant % 1000000000 };
        int result;
        while ((result = clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &instant, NULL)) == EINTR) {}
        if (result != 0) { fprintf(stderr, "clock_nanosleep: %s\n", strerror(result)); return 69; }
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
