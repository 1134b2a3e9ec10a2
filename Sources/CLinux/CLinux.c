// Most of this module is headers only (include/CLinux.h); what needs _GNU_SOURCE, which the
// Glibc module was read without, is here.
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>

#include "CLinux.h"

int clinux_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

struct clinux_release_totals {
    size_t pageSize;
    size_t bytes;
    /// /proc/self/pagemap, or -1: without it nothing is released.
    int pagemap;
    /// Entries of pagemap read ahead: `count` of them from page number `first`.
    uint64_t first;
    size_t count;
    uint64_t entries[512];
};

// /proc/self/pagemap: 8 bytes a page; bit 63 present, 62 swapped, 61 a file page (or shared).
#define CLINUX_PAGE_PRESENT (1ULL << 63)
#define CLINUX_PAGE_SWAPPED (1ULL << 62)
#define CLINUX_PAGE_FILE (1ULL << 61)

int clinux_pagemap_entry_is_the_files(uint64_t entry) {
    if ((entry & (CLINUX_PAGE_PRESENT | CLINUX_PAGE_SWAPPED)) == 0) return 1;
    return (entry & CLINUX_PAGE_FILE) != 0;
}

int clinux_page_is_the_files(const void *address) {
    int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pagemap < 0) return -1;
    uint64_t entry;
    size_t pageSize = (size_t)sysconf(_SC_PAGESIZE);
    ssize_t got = pread(pagemap, &entry, sizeof entry, (off_t)((uintptr_t)address / pageSize * sizeof entry));
    close(pagemap);
    if (got != (ssize_t)sizeof entry) return -1;
    return clinux_pagemap_entry_is_the_files(entry);
}

/// Whether the page at `address` may be dropped: not mapped yet, or mapped from the file.
/// A private copy (a text relocation, a debugger's breakpoint, a probe, a packer's code) holds
/// what the file does not, and must stay. pagemap is read 512 entries at a time.
static int clinux_page_in_segment_is_the_files(struct clinux_release_totals *totals, uintptr_t address) {
    uint64_t page = address / totals->pageSize;
    if (totals->count == 0 || page < totals->first || page >= totals->first + totals->count) {
        ssize_t got = pread(totals->pagemap, totals->entries, sizeof totals->entries, (off_t)(page * sizeof(uint64_t)));
        if (got < (ssize_t)sizeof(uint64_t)) { totals->count = 0; return 0; }
        totals->first = page;
        totals->count = (size_t)got / sizeof(uint64_t);
    }
    return clinux_pagemap_entry_is_the_files(totals->entries[page - totals->first]);
}

/// Whether the object was linked with text relocations: the loader wrote into its read-only
/// segments, and none of it may be dropped.
static int clinux_has_text_relocations(struct dl_phdr_info *info) {
    for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type != PT_DYNAMIC) continue;
        for (const ElfW(Dyn) *entry = (const ElfW(Dyn) *)(info->dlpi_addr + header->p_vaddr); entry->d_tag != DT_NULL; entry++) {
            if (entry->d_tag == DT_TEXTREL) return 1;
            if (entry->d_tag == DT_FLAGS && (entry->d_un.d_val & DF_TEXTREL) != 0) return 1;
        }
    }
    return 0;
}

static int clinux_release_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct clinux_release_totals *totals = data;
    // The vDSO is the kernel's, not a file's.
    if (info->dlpi_name != NULL && strstr(info->dlpi_name, "linux-vdso") != NULL) return 0;
    if (clinux_has_text_relocations(info)) return 0;
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
        // Runs of pages that are still the file's, each dropped at once.
        uintptr_t run = start;
        for (uintptr_t page = start; page <= end; page += totals->pageSize) {
            if (page < end && clinux_page_in_segment_is_the_files(totals, page)) continue;
            if (page > run && madvise((void *)run, page - run, MADV_DONTNEED) == 0) totals->bytes += page - run;
            run = page + totals->pageSize;
        }
    }
    return 0;
}

size_t clinux_release_read_only_segments(void) {
    struct clinux_release_totals totals = { .pageSize = (size_t)sysconf(_SC_PAGESIZE), .pagemap = -1 };
    totals.pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (totals.pagemap < 0) return 0;
    dl_iterate_phdr(clinux_release_object, &totals);
    close(totals.pagemap);
    return totals.bytes;
}
