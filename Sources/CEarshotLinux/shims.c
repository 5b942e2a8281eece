#define _GNU_SOURCE
#include "CEarshotLinux.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

// The redeclared struct ucred must be the kernel's, or SO_PEERCRED writes past it.
_Static_assert(sizeof(struct CEarshotLinux_ucred) == sizeof(struct ucred), "struct ucred size");
_Static_assert(offsetof(struct CEarshotLinux_ucred, pid) == offsetof(struct ucred, pid), "ucred.pid offset");
_Static_assert(offsetof(struct CEarshotLinux_ucred, uid) == offsetof(struct ucred, uid), "ucred.uid offset");
_Static_assert(offsetof(struct CEarshotLinux_ucred, gid) == offsetof(struct ucred, gid), "ucred.gid offset");
_Static_assert(_Alignof(struct CEarshotLinux_ucred) == _Alignof(struct ucred), "struct ucred alignment");

int CEarshotLinux_peer_credentials(int fd, struct CEarshotLinux_ucred *credentials) {
    struct ucred peer;
    socklen_t length = sizeof(peer);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) return -1;
    if (length != sizeof(peer)) {
        errno = EPROTO;
        return -1;
    }
    credentials->pid = peer.pid;
    credentials->uid = peer.uid;
    credentials->gid = peer.gid;
    return 0;
}

int CEarshotLinux_accept_nonblocking(int fd) { return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }

int CEarshotLinux_hangup_watch_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int CEarshotLinux_hangup_watch_add(int watch, int fd, uint64_t token) {
    struct epoll_event event = {.events = 0, .data.u64 = token};
    return epoll_ctl(watch, EPOLL_CTL_ADD, fd, &event);
}

int CEarshotLinux_hangup_watch_remove(int watch, int fd) {
    struct epoll_event unused = {0};
    return epoll_ctl(watch, EPOLL_CTL_DEL, fd, &unused);
}

int CEarshotLinux_hangup_watch_gone(int watch, uint64_t *tokens, int capacity) {
    struct epoll_event events[64];
    if (capacity > 64) capacity = 64;
    int count;
    do {
        count = epoll_wait(watch, events, capacity, 0);
    } while (count < 0 && errno == EINTR);
    for (int index = 0; index < count; index++) tokens[index] = events[index].data.u64;
    return count;
}

int CEarshotLinux_inotify_init(void) { return inotify_init1(IN_CLOEXEC | IN_NONBLOCK); }

int CEarshotLinux_inotify_watch_directory(int fd, const char *directory) {
    return inotify_add_watch(fd, directory,
                             IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE |
                                 IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
}

size_t CEarshotLinux_inotify_next(const void *buffer, size_t length, size_t offset, int *watch,
                                  int *kind, const char **name) {
    if (offset > length || length - offset < sizeof(struct inotify_event)) return 0;
    const struct inotify_event *event = (const struct inotify_event *)((const char *)buffer + offset);
    size_t size = sizeof(struct inotify_event) + event->len;
    if (length - offset < size) return 0;
    *watch = event->wd;
    if (event->mask & IN_Q_OVERFLOW) {
        *kind = CEarshotLinux_inotify_overflow;
    } else if (event->mask & IN_IGNORED) {
        *kind = CEarshotLinux_inotify_removed;
    } else if (event->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) {
        *kind = CEarshotLinux_inotify_self_gone;
    } else {
        *kind = CEarshotLinux_inotify_entry;
    }
    // The kernel pads the name with NULs to the event's alignment; an empty one has len 0.
    *name = event->len > 0 ? event->name : "";
    return offset + size;
}

int CEarshotLinux_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

int CEarshotLinux_eventfd_signal(int fd) { return eventfd_write(fd, 1); }

// fd + 1 per signal (0: none), read by the handler; sig_atomic_t so a handler never sees half
// a store.
static volatile sig_atomic_t forward_fds[NSIG];

static void forward_signal(int signo) {
    int saved = errno;
    int fd = (int)forward_fds[signo] - 1;
    if (fd >= 0) {
        unsigned char number = (unsigned char)signo;
        // A full pipe drops the byte: the reader is behind and will see earlier ones.
        (void)!write(fd, &number, 1);
    }
    errno = saved;
}

int CEarshotLinux_forward_signal(int signo, int fd) {
    if (signo <= 0 || signo >= NSIG || signo > 255) {
        errno = EINVAL;
        return -1;
    }
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (fd < 0) {
        forward_fds[signo] = 0;
        action.sa_handler = SIG_IGN;
    } else {
        forward_fds[signo] = fd + 1;
        action.sa_handler = forward_signal;
    }
    return sigaction(signo, &action, NULL);
}

int CEarshotLinux_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC | O_NONBLOCK); }

int CEarshotLinux_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

int CEarshotLinux_set_thread_name(const char *name) {
    char cut[16];
    strncpy(cut, name, sizeof(cut) - 1);
    cut[sizeof(cut) - 1] = '\0';
    return pthread_setname_np(pthread_self(), cut);
}

const char *CEarshotLinux_errno_name(int code) { return strerrorname_np(code); }

// The kernel reads these structs at these offsets, whatever this header says. The numbers are
// the kernel's (include/net/bluetooth/l2cap.h, rfcomm.h: sa_family_t, then packed fields with
// the struct padded to 2); BlueZ's own headers, where installed, are checked as well.
_Static_assert(sizeof(CEarshotLinux_bdaddr) == 6, "bdaddr_t size");
_Static_assert(sizeof(struct CEarshotLinux_sockaddr_l2) == 14, "sockaddr_l2 size");
_Static_assert(offsetof(struct CEarshotLinux_sockaddr_l2, l2_psm) == 2, "sockaddr_l2.l2_psm offset");
_Static_assert(offsetof(struct CEarshotLinux_sockaddr_l2, l2_bdaddr) == 4, "sockaddr_l2.l2_bdaddr offset");
_Static_assert(offsetof(struct CEarshotLinux_sockaddr_l2, l2_cid) == 10, "sockaddr_l2.l2_cid offset");
_Static_assert(offsetof(struct CEarshotLinux_sockaddr_l2, l2_bdaddr_type) == 12, "sockaddr_l2.l2_bdaddr_type offset");
_Static_assert(sizeof(struct CEarshotLinux_sockaddr_rc) == 10, "sockaddr_rc size");
_Static_assert(offsetof(struct CEarshotLinux_sockaddr_rc, rc_bdaddr) == 2, "sockaddr_rc.rc_bdaddr offset");
_Static_assert(offsetof(struct CEarshotLinux_sockaddr_rc, rc_channel) == 8, "sockaddr_rc.rc_channel offset");
_Static_assert(sizeof(sa_family_t) == sizeof(unsigned short), "sa_family_t size");
#if __has_include(<bluetooth/bluetooth.h>) && __has_include(<bluetooth/l2cap.h>) && __has_include(<bluetooth/rfcomm.h>)
#include <bluetooth/bluetooth.h>
#include <bluetooth/l2cap.h>
#include <bluetooth/rfcomm.h>
_Static_assert(sizeof(struct CEarshotLinux_sockaddr_l2) == sizeof(struct sockaddr_l2), "BlueZ sockaddr_l2 size");
_Static_assert(sizeof(struct CEarshotLinux_sockaddr_rc) == sizeof(struct sockaddr_rc), "BlueZ sockaddr_rc size");
_Static_assert(BTPROTO_L2CAP == 0 && BTPROTO_RFCOMM == 3, "BTPROTO values");
#endif

// <bluetooth/bluetooth.h>'s values, which the kernel's ABI fixes.
enum { EARSHOT_BTPROTO_L2CAP = 0, EARSHOT_BTPROTO_RFCOMM = 3, EARSHOT_AF_BLUETOOTH = 31 };
_Static_assert(AF_BLUETOOTH == EARSHOT_AF_BLUETOOTH, "AF_BLUETOOTH");

int CEarshotLinux_l2cap_socket(void) {
    return socket(AF_BLUETOOTH, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, EARSHOT_BTPROTO_L2CAP);
}

int CEarshotLinux_rfcomm_socket(void) {
    return socket(AF_BLUETOOTH, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, EARSHOT_BTPROTO_RFCOMM);
}

int CEarshotLinux_l2cap_connect(int fd, const uint8_t *address, uint16_t psm) {
    struct CEarshotLinux_sockaddr_l2 peer;
    memset(&peer, 0, sizeof(peer));
    peer.l2_family = AF_BLUETOOTH;
    peer.l2_psm = htole16(psm);
    memcpy(peer.l2_bdaddr.b, address, sizeof(peer.l2_bdaddr.b));
    return connect(fd, (const struct sockaddr *)&peer, sizeof(peer));
}

int CEarshotLinux_rfcomm_connect(int fd, const uint8_t *address, uint8_t channel) {
    struct CEarshotLinux_sockaddr_rc peer;
    memset(&peer, 0, sizeof(peer));
    peer.rc_family = AF_BLUETOOTH;
    memcpy(peer.rc_bdaddr.b, address, sizeof(peer.rc_bdaddr.b));
    peer.rc_channel = channel;
    return connect(fd, (const struct sockaddr *)&peer, sizeof(peer));
}

int CEarshotLinux_malloc_trim(void) {
    return malloc_trim(0);
}

// --- The relocation table ---------------------------------------------------------------

struct relocation_table {
    uintptr_t start, end;  // the table, as mapped
    int found;             // the main program was seen
    int read_only;         // the table lies inside one of its read-only segments
};

static int find_relocation_table(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    struct relocation_table *table = context;
    if (info->dlpi_name != NULL && info->dlpi_name[0] != '\0') return 0;  // the program has no name
    table->found = 1;
    const ElfW(Dyn) *dynamic = NULL;
    for (int index = 0; index < info->dlpi_phnum; index++) {
        if (info->dlpi_phdr[index].p_type == PT_DYNAMIC) dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[index].p_vaddr);
    }
    if (dynamic == NULL) return 1;
    uintptr_t address = 0, bytes = 0;
    for (const ElfW(Dyn) *entry = dynamic; entry->d_tag != DT_NULL; entry++) {
        if (entry->d_tag == DT_RELA) address = entry->d_un.d_ptr;
        if (entry->d_tag == DT_RELASZ) bytes = entry->d_un.d_val;
    }
    if (address == 0 || bytes == 0) return 1;
    // The loader rewrites the table's address as loaded on most targets; where it does not,
    // it is still relative to the load address. Whichever of the two lies inside a read-only
    // segment of the program is the table; neither: it is left alone.
    uintptr_t candidates[2] = {address, address + info->dlpi_addr};
    for (int candidate = 0; candidate < 2 && !table->read_only; candidate++) {
        for (int index = 0; index < info->dlpi_phnum; index++) {
            const ElfW(Phdr) *header = &info->dlpi_phdr[index];
            uintptr_t segment = info->dlpi_addr + header->p_vaddr;
            if (header->p_type == PT_LOAD && !(header->p_flags & PF_W) && candidates[candidate] >= segment
                && candidates[candidate] + bytes <= segment + header->p_memsz) {
                table->start = candidates[candidate];
                table->end = candidates[candidate] + bytes;
                table->read_only = 1;
                break;
            }
        }
    }
    return 1;
}

long CEarshotLinux_release_relocation_table(void) {
    struct relocation_table table = {0};
    dl_iterate_phdr(find_relocation_table, &table);
    if (!table.found || !table.read_only) return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = (table.start + page - 1) & ~(page - 1);
    uintptr_t last = table.end & ~(page - 1);
    if (last <= first) return 0;
    if (madvise((void *)first, last - first, MADV_DONTNEED) != 0) return -1;
    return (long)(last - first);
}
