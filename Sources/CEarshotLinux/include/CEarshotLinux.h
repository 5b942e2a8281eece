// CEarshotLinux_* wrappers for the Linux calls SystemBridge makes that neither swift-system nor
// Swift's Glibc module offers usably: GNU-only declarations (Swift's Glibc is not built with
// _GNU_SOURCE), macros, and variable-length kernel records. One wrapper per need, nothing
// more; only SystemBridge imports this module.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

// --- SO_PEERCRED -----------------------------------------------------------------------
// struct ucred of <sys/socket.h>, which glibc declares only under _GNU_SOURCE. The same
// fields in the same order; shims.c checks size and offsets against the real one.
struct CEarshotLinux_ucred {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};

// getsockopt(SOL_SOCKET, SO_PEERCRED): the credentials the kernel recorded for the peer of a
// connected Unix socket. 0, or -1 with errno set.
int CEarshotLinux_peer_credentials(int fd, struct CEarshotLinux_ucred *credentials);
// accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC): accept4 is GNU-only. The new
// descriptor, or -1 with errno set.
int CEarshotLinux_accept_nonblocking(int fd);

// --- Hang-up watch ---------------------------------------------------------------------
// A dispatch read source at the end of a socket's input fires again and again (it is level
// triggered, and the socket stays readable at its end), so a server stops reading a client that
// shut its sending side, and then cannot see it go away altogether. An epoll instance that
// watches such sockets for nothing but the hang-up (EPOLLHUP, EPOLLERR: events 0) becomes
// readable once one of them is gone: one dispatch source on it watches them all.
// epoll_create1(EPOLL_CLOEXEC): the descriptor, or -1 with errno set.
int CEarshotLinux_hangup_watch_create(void);
// Adds `fd` with `token` (EPOLL_CTL_ADD, events 0): 0, or -1 with errno set.
int CEarshotLinux_hangup_watch_add(int watch, int fd, uint64_t token);
// Removes `fd` (EPOLL_CTL_DEL): 0, or -1 with errno set.
int CEarshotLinux_hangup_watch_remove(int watch, int fd);
// The tokens of sockets gone now, at most `capacity` (epoll_wait, no waiting): their count, or
// -1 with errno set.
int CEarshotLinux_hangup_watch_gone(int watch, uint64_t *tokens, int capacity);

// --- inotify ---------------------------------------------------------------------------
// inotify_init1(IN_CLOEXEC | IN_NONBLOCK): the flags are macros.
int CEarshotLinux_inotify_init(void);
// inotify_add_watch for what a file watcher needs in a directory: a file written and closed,
// moved in or out (editors rename over the file), created or deleted; and the directory
// itself deleted or moved away (the watcher then places its watch again). IN_ONLYDIR: a path
// that is not a directory fails with ENOTDIR. The mask is built of macros.
int CEarshotLinux_inotify_watch_directory(int fd, const char *directory);
// What an inotify event says, for a watcher of directories (the IN_* masks are macros):
enum {
    // An entry of the watched directory was written, created, deleted or moved in or out.
    CEarshotLinux_inotify_entry = 0,
    // The watched directory itself was deleted or moved, or its file system unmounted.
    CEarshotLinux_inotify_self_gone = 1,
    // The watch was removed (IN_IGNORED: after a deletion, or inotify_rm_watch).
    CEarshotLinux_inotify_removed = 2,
    // The kernel's queue overflowed (IN_Q_OVERFLOW, watch -1): events were lost.
    CEarshotLinux_inotify_overflow = 3,
};
// The event at `offset` of a buffer filled by read(2) from an inotify descriptor. struct
// inotify_event is variable-length (a NUL-padded name of `len` bytes follows it), so it is
// read here where its layout is declared. Sets `watch`, `kind` (one of the values above) and
// `name` ("" when the event has none) and returns the offset of the next event, or 0 when no
// whole event is left.
size_t CEarshotLinux_inotify_next(const void *buffer, size_t length, size_t offset, int *watch,
                                  int *kind, const char **name);

// --- eventfd ---------------------------------------------------------------------------
// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK): a descriptor another thread can make readable, to
// wake a thread waiting in poll(2). The flags are macros.
int CEarshotLinux_eventfd(void);
// Adds 1 to the counter (eventfd_write is GNU-only): the descriptor becomes readable.
int CEarshotLinux_eventfd_signal(int fd);

// --- signals ---------------------------------------------------------------------------
// Installs a handler for `signo` that writes the signal's number (one byte) to `fd`, which
// should be non-blocking (the self-pipe trick: a handler may only make async-signal-safe
// calls, and write(2) is one). Works whichever thread the kernel picks for the signal. With
// fd -1 the signal is ignored (SIG_IGN) instead. One fd per signal: a later call replaces it.
// 0, or -1 with errno set.
int CEarshotLinux_forward_signal(int signo, int fd);
// pipe2(O_CLOEXEC | O_NONBLOCK) (pipe2 is GNU-only; the flags are macros).
int CEarshotLinux_pipe(int fds[2]);

// --- other processes -------------------------------------------------------------------
// pidfd_open(pid, 0) (Linux 5.3; glibc declares it only in <sys/pidfd.h>, which Swift's Glibc
// module leaves out): a close-on-exec descriptor that becomes readable once process `pid` has
// exited, whether or not it is the caller's child. -1 with errno set (ESRCH: no such process).
int CEarshotLinux_pidfd_open(pid_t pid);

// --- threads and errors ----------------------------------------------------------------
// pthread_setname_np for the calling thread (GNU-only); names are cut to 15 bytes.
int CEarshotLinux_set_thread_name(const char *name);
// strerrorname_np (GNU-only, glibc 2.32): "ENOENT" for ENOENT; NULL for an unknown code.
const char *CEarshotLinux_errno_name(int code);

// --- Bluetooth sockets -----------------------------------------------------------------
// BlueZ's <bluetooth/*.h> headers are often not installed, so the kernel's socket addresses
// (include/net/bluetooth/bluetooth.h, l2cap.h, rfcomm.h) are declared here with the same
// layout; shims.c checks sizes and offsets. A bdaddr is stored little-endian: the reverse of
// its text form (AA:BB:CC:DD:EE:FF is FF EE DD CC BB AA).
typedef struct {
    uint8_t b[6];
} __attribute__((packed)) CEarshotLinux_bdaddr;

struct CEarshotLinux_sockaddr_l2 {
    unsigned short l2_family;  // sa_family_t: AF_BLUETOOTH
    unsigned short l2_psm;     // little-endian
    CEarshotLinux_bdaddr l2_bdaddr;
    unsigned short l2_cid;     // little-endian; 0 when connecting by PSM
    uint8_t l2_bdaddr_type;    // BDADDR_BREDR (0) for a classic device
};

struct CEarshotLinux_sockaddr_rc {
    unsigned short rc_family;  // sa_family_t: AF_BLUETOOTH
    CEarshotLinux_bdaddr rc_bdaddr;
    uint8_t rc_channel;
};

// socket(AF_BLUETOOTH, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, BTPROTO_L2CAP): BTPROTO_*
// live only in BlueZ's headers, and the flags are macros. Non-blocking so connect can be
// given a deadline. -1 with errno set (EAFNOSUPPORT: no Bluetooth in this kernel).
int CEarshotLinux_l2cap_socket(void);
// socket(AF_BLUETOOTH, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, BTPROTO_RFCOMM); as above.
int CEarshotLinux_rfcomm_socket(void);
// connect(2) to `address` (6 bytes, little-endian as the kernel stores it) on `psm`, filling a
// sockaddr_l2 whose psm is converted to little-endian here. 0, or -1 with errno set
// (EINPROGRESS on a non-blocking socket: the connection goes on).
int CEarshotLinux_l2cap_connect(int fd, const uint8_t *address, uint16_t psm);
// connect(2) to `address` (as above) on RFCOMM `channel`, filling a sockaddr_rc.
int CEarshotLinux_rfcomm_connect(int fd, const uint8_t *address, uint8_t channel);

// malloc_trim(0): glibc keeps freed heap pages until told; the daemon gives them back after a
// burst of clients has left. <malloc.h> is not in Swift's Glibc module. Returns 1 when memory
// was released, 0 when there was none to give back.
int CEarshotLinux_malloc_trim(void);

// The program's own relocation table (DT_RELA: 1.4 MB in earshotd, one entry per absolute
// pointer in the Swift metadata) is read once, by the loader, before main, and never again;
// yet its pages stay mapped for the life of a daemon. This gives back the whole pages it fills
// (madvise MADV_DONTNEED; a page it shares with other sections stays), as a kernel frees its
// init memory. Only a table in a read-only segment of the main program is touched. Returns the
// bytes given back (0: none, or a table too small for a whole page), or -1 with errno set.
long CEarshotLinux_release_relocation_table(void);
