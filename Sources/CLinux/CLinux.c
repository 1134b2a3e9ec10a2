// Most of this module is headers only (include/CLinux.h); what needs _GNU_SOURCE, which the
// Glibc module was read without, is here.
#define _GNU_SOURCE
#include <link.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>

#include "CLinux.h"

struct clinux_release_totals {
    size_t pageSize;
    size_t bytes;
};

static int clinux_release_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct clinux_release_totals *totals = data;
    // The vDSO is the kernel's, not a file's.
    if (info->dlpi_name != NULL && strstr(info->dlpi_name, "linux-vdso") != NULL) return 0;
    for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        // Only segments never writable: their pages are the file's, unchanged, and come
        // back from the page cache as they were. RELRO lies in writable segments.
        if (header->p_type != PT_LOAD || (header->p_flags & PF_W) != 0) continue;
        uintptr_t start = info->dlpi_addr + header->p_vaddr;
        uintptr_t end = start + header->p_filesz;
        // Whole pages of this segment only: a page it shares with a neighbour stays.
        start = (start + totals->pageSize - 1) & ~(uintptr_t)(totals->pageSize - 1);
        end &= ~(uintptr_t)(totals->pageSize - 1);
        if (end <= start) continue;
        if (madvise((void *)start, end - start, MADV_DONTNEED) == 0) totals->bytes += end - start;
    }
    return 0;
}

size_t clinux_release_read_only_segments(void) {
    struct clinux_release_totals totals = { (size_t)sysconf(_SC_PAGESIZE), 0 };
    dl_iterate_phdr(clinux_release_object, &totals);
    return totals.bytes;
}
