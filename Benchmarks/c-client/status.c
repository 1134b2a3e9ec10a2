/* The baseline of `swctl status NAME`: the same call and the same line, in C, with nothing
 * but libc. swbench builds it (cc -O2, static when it can) in its run and times it beside
 * swctl. It connects to SOCKET, sends io.stopwatchd.Get, reads the reply up to its NUL, finds
 * "state" and "elapsed_ms" by text (no JSON parser: a floor, not a client), and prints
 * "NAME STATE H:MM:SS" as swctl does. Exit 0, or 69 when anything fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char *field(const char *reply, const char *key) {
    const char *at = strstr(reply, key);
    return at ? at + strlen(key) : NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s SOCKET NAME\n", argv[0]); return 2; }
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    if (strlen(argv[1]) >= sizeof address.sun_path) return 69;
    strcpy(address.sun_path, argv[1]);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) return 69;
    char request[512];
    int length = snprintf(request, sizeof request,
        "{\"method\":\"io.stopwatchd.Get\",\"parameters\":{\"name\":\"%s\"}}", argv[2]);
    if (length < 0 || length >= (int)sizeof request) return 2;
    if (send(fd, request, (size_t)length + 1, MSG_NOSIGNAL) != length + 1) return 69;
    char reply[65536];
    size_t used = 0;
    while (used == 0 || reply[used - 1] != '\0') {
        ssize_t got = read(fd, reply + used, sizeof reply - 1 - used);
        if (got <= 0) return 69;
        used += (size_t)got;
        if (used == sizeof reply - 1) return 69;
    }
    const char *state = field(reply, "\"state\":\"");
    const char *elapsed = field(reply, "\"elapsed_ms\":");
    if (!state || !elapsed) return 69;
    long long ms = atoll(elapsed), seconds = ms / 1000;
    printf("%s %.*s %lld:%02lld:%02lld\n", argv[2], (int)strcspn(state, "\""), state,
           seconds / 3600, seconds / 60 % 60, seconds % 60);
    return 0;
}
