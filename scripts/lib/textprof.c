// scripts/bench pages: which pages of a program's executable segment it really touches.
//
// Loaded with LD_PRELOAD into the program under study (TEXTPROF_OUT=FILE). Before the program's
// own initialisers run, its executable segment is made inaccessible; each first touch of a page
// (an instruction fetched, or read-only data read, there) faults into the handler below, which
// appends the page's offset from the load address to FILE (8 bytes, native order) and gives the
// page back. The result is exact at page granularity, unlike RSS, where the kernel's fault-around
// maps 64 KiB around every fault. Run the program with SWIFT_BACKTRACE=enable=no: the Swift
// runtime's crash handler would take SIGSEGV over. Limits: a system call that reads a page not
// yet touched (a write() of read-only data straight from the segment) fails with EFAULT instead
// of faulting (gold puts .rodata in the writable segment, so Earshot's programs do not meet it);
// LD_PRELOAD and TEXTPROF_OUT pass to the program's children, whose pages would land in the same
// file (earshotd starts none).
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uintptr_t segment_start, segment_end, load_address;
static int log_descriptor = -1;

static int find_main_program(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    (void)context;
    if (info->dlpi_name != NULL && info->dlpi_name[0] != '\0') return 0;  // the program has no name
    for (int index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type == PT_LOAD && (header->p_flags & PF_X)) {
            segment_start = (info->dlpi_addr + header->p_vaddr) & ~(uintptr_t)4095;
            segment_end = (info->dlpi_addr + header->p_vaddr + header->p_memsz + 4095) & ~(uintptr_t)4095;
            load_address = info->dlpi_addr;
        }
    }
    return 1;
}

static void first_touch(int signal_number, siginfo_t *info, void *context) {
    (void)context;
    uintptr_t address = (uintptr_t)info->si_addr;
    if (address < segment_start || address >= segment_end) {
        // A real crash: let it happen.
        signal(signal_number, SIG_DFL);
        raise(signal_number);
        return;
    }
    uintptr_t page = address & ~(uintptr_t)4095;
    mprotect((void *)page, 4096, PROT_READ | PROT_EXEC);
    uint64_t offset = page - load_address;
    (void)!write(log_descriptor, &offset, sizeof offset);
}

__attribute__((constructor)) static void start_profile(void) {
    const char *path = getenv("TEXTPROF_OUT");
    if (path == NULL) return;
    log_descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_descriptor < 0) return;
    dl_iterate_phdr(find_main_program, NULL);
    if (segment_end <= segment_start) return;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = first_touch;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &action, NULL);
    mprotect((void *)segment_start, segment_end - segment_start, PROT_NONE);
}
