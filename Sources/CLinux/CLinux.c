// Most of this module is headers only (include/CLinux.h); what needs _GNU_SOURCE, which the
// Glibc module was read without, is here.
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "CLinux.h"

int clinux_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}
