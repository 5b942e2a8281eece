// Late binding of libpipewire-0.3 and libsystemd for the `earshot` client.
//
// Why: every client command paid for loading both libraries and their dependencies (libsystemd
// brings libgcrypt, libgpg-error, liblzma, libzstd, liblz4, libcap): eight shared objects mapped
// and relocated before `main`, about 0.6 ms of a 4 ms start (docs/performance.md, "Late
// binding"), while only `earshot graph` talks to PipeWire and no client command uses D-Bus.
// The client links this file instead of the two libraries: each function SystemBridge calls is
// defined here with the library's own prototype (from its header, so a changed signature fails
// to compile), loads the library with dlopen the first time one of its functions is called, and
// calls the library's function through a pointer resolved once. The daemon (earshotd), the
// bench and the tests link the libraries themselves and never this file.
//
// A library that cannot be loaded is said on stderr with the loader's reason and the command
// exits 3 (the client's "PipeWire not reachable" status). A function SystemBridge starts to call
// that is missing here fails the client's link (an undefined symbol), never at run time; a test
// checks that the client's executable needs neither library.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <pipewire/impl-metadata.h>
#include <systemd/sd-bus.h>

#include "CEarshotLateBinding.h"

enum late_library { PIPEWIRE, SYSTEMD };

static const char *const late_sonames[] = {
    [PIPEWIRE] = "libpipewire-0.3.so.0",
    [SYSTEMD] = "libsystemd.so.0",
};

static _Atomic(void *) late_handles[2];

// The exit status of a client that cannot reach PipeWire (README: exit codes).
enum { LATE_UNAVAILABLE = 3 };

// Says why on stderr and ends the process at once: _exit, not exit, as other threads (the
// PipeWire loop's, the Swift runtime's) may be running and must not see atexit handlers run.
__attribute__((noreturn)) static void late_fail(enum late_library library, const char *what, const char *name) {
    const char *reason = dlerror();
    if (name != NULL) {
        fprintf(stderr, "earshot: %s %s %s: %s\n", late_sonames[library], what, name, reason != NULL ? reason : "not found");
    } else {
        fprintf(stderr, "earshot: %s %s: %s\n", what, late_sonames[library], reason != NULL ? reason : "not found");
    }
    fflush(stderr);
    _exit(LATE_UNAVAILABLE);
}

static void *late_symbol(enum late_library library, const char *name) {
    void *handle = atomic_load_explicit(&late_handles[library], memory_order_acquire);
    if (handle == NULL) {
        // Two threads may both open it: dlopen counts references, and either handle is the
        // same library.
        handle = dlopen(late_sonames[library], RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL) late_fail(library, "cannot load", NULL);
        atomic_store_explicit(&late_handles[library], handle, memory_order_release);
    }
    void *symbol = dlsym(handle, name);
    if (symbol == NULL) late_fail(library, "has no", name);
    return symbol;
}

// The library's `name`, resolved on the first call and kept (a GNU statement expression: one
// pointer per function, whatever its type).
#define LATE_RESOLVED(library, name) \
    ({ \
        static _Atomic(__typeof__(&name)) late_##name; \
        __typeof__(&name) function = atomic_load_explicit(&late_##name, memory_order_acquire); \
        if (function == NULL) { \
            function = (__typeof__(&name))late_symbol(library, #name); \
            atomic_store_explicit(&late_##name, function, memory_order_release); \
        } \
        function; \
    })

// One definition per function: `name` with the header's parameters, forwarding to the library.
#define LATE(library, result, name, parameters, arguments) \
    result name parameters { return LATE_RESOLVED(library, name) arguments; }
#define LATE_VOID(library, name, parameters, arguments) \
    void name parameters { LATE_RESOLVED(library, name) arguments; }

// libpipewire-0.3: the functions SystemBridge and CPipeWireShims call (the rest of its API
// SystemBridge uses is macros and static inlines over these objects' method tables).
LATE(PIPEWIRE, struct pw_core *, pw_context_connect, (struct pw_context *context, struct pw_properties *properties, size_t user_data_size), (context, properties, user_data_size))
LATE(PIPEWIRE, struct pw_impl_metadata *, pw_context_create_metadata, (struct pw_context *context, const char *name, struct pw_properties *properties, size_t user_data_size), (context, name, properties, user_data_size))
LATE_VOID(PIPEWIRE, pw_context_destroy, (struct pw_context *context), (context))
LATE(PIPEWIRE, struct pw_context *, pw_context_new, (struct pw_loop *main_loop, struct pw_properties *props, size_t user_data_size), (main_loop, props, user_data_size))
LATE(PIPEWIRE, int, pw_core_disconnect, (struct pw_core *core), (core))
LATE(PIPEWIRE, struct pw_proxy *, pw_core_export, (struct pw_core *core, const char *type, const struct spa_dict *props, void *object, size_t user_data_size), (core, type, props, object, user_data_size))
LATE_VOID(PIPEWIRE, pw_impl_metadata_destroy, (struct pw_impl_metadata *metadata), (metadata))
LATE(PIPEWIRE, struct pw_metadata *, pw_impl_metadata_get_implementation, (struct pw_impl_metadata *metadata), (metadata))
LATE_VOID(PIPEWIRE, pw_init, (int *argc, char ***argv), (argc, argv))
LATE_VOID(PIPEWIRE, pw_properties_free, (struct pw_properties *properties), (properties))
LATE(PIPEWIRE, int, pw_properties_set, (struct pw_properties *properties, const char *key, const char *value), (properties, key, value))
LATE_VOID(PIPEWIRE, pw_proxy_add_listener, (struct pw_proxy *proxy, struct spa_hook *listener, const struct pw_proxy_events *events, void *data), (proxy, listener, events, data))
LATE_VOID(PIPEWIRE, pw_proxy_destroy, (struct pw_proxy *proxy), (proxy))
LATE_VOID(PIPEWIRE, pw_thread_loop_destroy, (struct pw_thread_loop *loop), (loop))
LATE(PIPEWIRE, struct pw_loop *, pw_thread_loop_get_loop, (struct pw_thread_loop *loop), (loop))
LATE(PIPEWIRE, bool, pw_thread_loop_in_thread, (struct pw_thread_loop *loop), (loop))
LATE_VOID(PIPEWIRE, pw_thread_loop_lock, (struct pw_thread_loop *loop), (loop))
LATE(PIPEWIRE, struct pw_thread_loop *, pw_thread_loop_new, (const char *name, const struct spa_dict *props), (name, props))
LATE(PIPEWIRE, int, pw_thread_loop_start, (struct pw_thread_loop *loop), (loop))
LATE_VOID(PIPEWIRE, pw_thread_loop_stop, (struct pw_thread_loop *loop), (loop))
LATE_VOID(PIPEWIRE, pw_thread_loop_unlock, (struct pw_thread_loop *loop), (loop))
LATE(PIPEWIRE, struct pw_properties *, pw_properties_new_dict, (const struct spa_dict *dict), (dict))

// libsystemd: sd-bus, for the D-Bus code SystemBridge links (no client command calls it).
LATE(SYSTEMD, int, sd_bus_add_match, (sd_bus *bus, sd_bus_slot **slot, const char *match, sd_bus_message_handler_t callback, void *userdata), (bus, slot, match, callback, userdata))
LATE(SYSTEMD, int, sd_bus_add_object, (sd_bus *bus, sd_bus_slot **slot, const char *path, sd_bus_message_handler_t callback, void *userdata), (bus, slot, path, callback, userdata))
LATE(SYSTEMD, int, sd_bus_add_fallback, (sd_bus *bus, sd_bus_slot **slot, const char *prefix, sd_bus_message_handler_t callback, void *userdata), (bus, slot, prefix, callback, userdata))
LATE(SYSTEMD, int, sd_bus_call_async, (sd_bus *bus, sd_bus_slot **slot, sd_bus_message *m, sd_bus_message_handler_t callback, void *userdata, uint64_t usec), (bus, slot, m, callback, userdata, usec))
LATE(SYSTEMD, int, sd_bus_can_send, (sd_bus *bus, char type), (bus, type))
LATE(SYSTEMD, sd_bus *, sd_bus_flush_close_unref, (sd_bus *bus), (bus))
LATE(SYSTEMD, int, sd_bus_get_events, (sd_bus *bus), (bus))
LATE(SYSTEMD, int, sd_bus_get_fd, (sd_bus *bus), (bus))
LATE(SYSTEMD, int, sd_bus_get_timeout, (sd_bus *bus, uint64_t *timeout_usec), (bus, timeout_usec))
LATE(SYSTEMD, int, sd_bus_get_unique_name, (sd_bus *bus, const char **unique), (bus, unique))
LATE(SYSTEMD, int, sd_bus_message_append_basic, (sd_bus_message *m, char type, const void *p), (m, type, p))
LATE(SYSTEMD, int, sd_bus_message_close_container, (sd_bus_message *m), (m))
LATE(SYSTEMD, int, sd_bus_message_enter_container, (sd_bus_message *m, char type, const char *contents), (m, type, contents))
LATE(SYSTEMD, int, sd_bus_message_exit_container, (sd_bus_message *m), (m))
LATE(SYSTEMD, const sd_bus_error *, sd_bus_message_get_error, (sd_bus_message *m), (m))
LATE(SYSTEMD, const char *, sd_bus_message_get_interface, (sd_bus_message *m), (m))
LATE(SYSTEMD, const char *, sd_bus_message_get_member, (sd_bus_message *m), (m))
LATE(SYSTEMD, const char *, sd_bus_message_get_path, (sd_bus_message *m), (m))
LATE(SYSTEMD, const char *, sd_bus_message_get_sender, (sd_bus_message *m), (m))
LATE(SYSTEMD, const char *, sd_bus_message_get_signature, (sd_bus_message *m, int complete), (m, complete))
LATE(SYSTEMD, int, sd_bus_message_is_method_error, (sd_bus_message *m, const char *name), (m, name))
LATE(SYSTEMD, int, sd_bus_message_new_method_call, (sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface, const char *member), (bus, m, destination, path, interface, member))
LATE(SYSTEMD, int, sd_bus_message_new_method_return, (sd_bus_message *call, sd_bus_message **m), (call, m))
LATE(SYSTEMD, int, sd_bus_message_new_signal, (sd_bus *bus, sd_bus_message **m, const char *path, const char *interface, const char *member), (bus, m, path, interface, member))
LATE(SYSTEMD, int, sd_bus_message_open_container, (sd_bus_message *m, char type, const char *contents), (m, type, contents))
LATE(SYSTEMD, int, sd_bus_message_peek_type, (sd_bus_message *m, char *type, const char **contents), (m, type, contents))
LATE(SYSTEMD, int, sd_bus_message_read_basic, (sd_bus_message *m, char type, void *p), (m, type, p))
LATE(SYSTEMD, sd_bus_message *, sd_bus_message_ref, (sd_bus_message *m), (m))
LATE(SYSTEMD, sd_bus_message *, sd_bus_message_unref, (sd_bus_message *m), (m))
LATE(SYSTEMD, int, sd_bus_negotiate_fds, (sd_bus *bus, int b), (bus, b))
LATE(SYSTEMD, int, sd_bus_new, (sd_bus **ret), (ret))
LATE(SYSTEMD, int, sd_bus_open_system, (sd_bus **ret), (ret))
LATE(SYSTEMD, int, sd_bus_open_user, (sd_bus **ret), (ret))
LATE(SYSTEMD, int, sd_bus_process, (sd_bus *bus, sd_bus_message **r), (bus, r))
LATE(SYSTEMD, int, sd_bus_reply_method_error, (sd_bus_message *call, const sd_bus_error *e), (call, e))
LATE(SYSTEMD, int, sd_bus_request_name, (sd_bus *bus, const char *name, uint64_t flags), (bus, name, flags))
LATE(SYSTEMD, int, sd_bus_send, (sd_bus *bus, sd_bus_message *m, uint64_t *cookie), (bus, m, cookie))
LATE(SYSTEMD, int, sd_bus_set_address, (sd_bus *bus, const char *address), (bus, address))
LATE(SYSTEMD, int, sd_bus_set_bus_client, (sd_bus *bus, int b), (bus, b))
LATE(SYSTEMD, int, sd_bus_start, (sd_bus *bus), (bus))
LATE(SYSTEMD, sd_bus *, sd_bus_unref, (sd_bus *bus), (bus))
