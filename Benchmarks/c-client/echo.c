/* The baseline of a Get's round trip and of Get throughput, in a process of its own as the
 * daemon is: one thread and one epoll, as the daemon's serving loop has, answering each
 * NUL-terminated request with a fixed reply of the daemon's reply size, and doing nothing
 * else. swbench builds it (cc -O2, static when it can) in its run, and hands it a listening
 * Unix socket as an open descriptor, so that clients may connect before it runs.
 *
 * argv[1] is that descriptor, argv[2] the reply's size, its NUL included. It serves until
 * a signal ends it, or swbench does. Exit 2 for bad arguments; 69 when epoll or accept
 * fails. */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* Writes all of the reply, as the daemon does with send(MSG_NOSIGNAL): a client gone is
 * an error, not a SIGPIPE. Clients are blocking: a reply is small and swbench reads it at
 * once. -1 when the client is gone, and it is closed. */
static int write_all(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t written = send(fd, bytes, length, MSG_NOSIGNAL);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return -1;
        bytes += written;
        length -= (size_t)written;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s LISTENING-FD REPLY-BYTES\n", argv[0]); return 2; }
    char *end;
    long listener = strtol(argv[1], &end, 10);
    if (*end || listener < 0 || listener > 65535) { fprintf(stderr, "bad descriptor %s\n", argv[1]); return 2; }
    long size = strtol(argv[2], &end, 10);
    if (*end || size < 1 || size > (1 << 24)) { fprintf(stderr, "bad reply size %s\n", argv[2]); return 2; }
    /* Ends with swbench, even if swbench is killed. */
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent) return 69;
    /* A connection aborted between epoll_wait and accept4 must not block the loop. */
    int flags = fcntl((int)listener, F_GETFL);
    if (flags < 0 || fcntl((int)listener, F_SETFL, flags | O_NONBLOCK) < 0) { perror("listening descriptor"); return 2; }
    /* {"parameters":{"echo":"xxx…"}} and a NUL, as swbench's EchoServer.reply makes it. */
    static const char head[] = "{\"parameters\":{\"echo\":\"", tail[] = "\"}}";
    size_t fixed = sizeof head - 1 + sizeof tail - 1 + 1;
    size_t length = (size_t)size > fixed ? (size_t)size : fixed;
    char *reply = malloc(length);
    if (!reply) return 69;
    memcpy(reply, head, sizeof head - 1);
    memset(reply + sizeof head - 1, 'x', length - fixed);
    memcpy(reply + length - sizeof tail, tail, sizeof tail - 1);
    reply[length - 1] = 0;

    int poller = epoll_create1(EPOLL_CLOEXEC);
    if (poller < 0) { perror("epoll_create1"); return 69; }
    struct epoll_event event = { .events = EPOLLIN, .data.fd = (int)listener };
    if (epoll_ctl(poller, EPOLL_CTL_ADD, (int)listener, &event) < 0) { perror("epoll_ctl"); return 69; }
    static char buffer[64 * 1024];
    struct epoll_event ready[64];
    for (;;) {
        int count = epoll_wait(poller, ready, 64, -1);
        if (count < 0 && errno == EINTR) continue;
        if (count < 0) { perror("epoll_wait"); return 69; }
        for (int index = 0; index < count; index++) {
            int fd = ready[index].data.fd;
            if (fd == (int)listener) {
                int client = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
                if (client < 0) {
                    if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
                    perror("accept4");
                    return 69;
                }
                struct epoll_event added = { .events = EPOLLIN, .data.fd = client };
                if (epoll_ctl(poller, EPOLL_CTL_ADD, client, &added) < 0) close(client);
                continue;
            }
            ssize_t got = read(fd, buffer, sizeof buffer);
            if (got < 0 && errno == EINTR) continue;
            int closed = got <= 0;
            /* One reply per request ended in this read. */
            for (ssize_t at = 0; !closed && at < got; at++)
                if (buffer[at] == 0 && write_all(fd, reply, length) < 0) closed = 1;
            if (closed) close(fd); /* closing removes it from the epoll set */
        }
    }
}
