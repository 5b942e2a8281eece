// CPipeWire_* wrappers for the parts of libpipewire-0.3 that Swift cannot import:
// method macros (pw_*_add_listener, pw_core_sync…), static inline helpers and the
// type-name macros built by string concatenation. One wrapper per macro, nothing more.
#pragma once

#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <pipewire/impl-metadata.h>

// --- core (pw_core_* are method macros over spa_interface) ---------------------------
int CPipeWire_core_add_listener(struct pw_core *core, struct spa_hook *listener,
                                const struct pw_core_events *events, void *data);
int CPipeWire_core_sync(struct pw_core *core, uint32_t id, int seq);
struct pw_registry *CPipeWire_core_get_registry(struct pw_core *core);
void *CPipeWire_core_create_object(struct pw_core *core, const char *factory_name,
                                   const char *type, uint32_t version,
                                   const struct spa_dict *props);

// --- registry ------------------------------------------------------------------------
int CPipeWire_registry_add_listener(struct pw_registry *registry, struct spa_hook *listener,
                                    const struct pw_registry_events *events, void *data);
void *CPipeWire_registry_bind(struct pw_registry *registry, uint32_t id, const char *type,
                              uint32_t version);
int CPipeWire_registry_destroy(struct pw_registry *registry, uint32_t id);

// --- bound objects: each interface has its own add_listener macro --------------------
int CPipeWire_node_add_listener(struct pw_node *node, struct spa_hook *listener,
                                const struct pw_node_events *events, void *data);
int CPipeWire_port_add_listener(struct pw_port *port, struct spa_hook *listener,
                                const struct pw_port_events *events, void *data);
int CPipeWire_link_add_listener(struct pw_link *link, struct spa_hook *listener,
                                const struct pw_link_events *events, void *data);
int CPipeWire_device_add_listener(struct pw_device *device, struct spa_hook *listener,
                                  const struct pw_device_events *events, void *data);
// pw_device_enum_params is a method macro: a device's routes are read through it.
int CPipeWire_device_enum_params(struct pw_device *device, int seq, uint32_t id);

// --- route params: spa_pod_parse_object and the struct parser are varargs macros ----
// One route (SPA_TYPE_OBJECT_ParamRoute) flattened. Strings point into the pod: valid for
// the param callback only. Arrays longer than their buffers are cut (n_* says how many were
// stored; *_total how many the pod had).
#define CPIPEWIRE_ROUTE_MAX_DEVICES 32
#define CPIPEWIRE_ROUTE_MAX_PROFILES 256
typedef struct {
    int32_t index;
    uint32_t direction;       // SPA_DIRECTION_INPUT / _OUTPUT
    int32_t device;           // -1 when absent (an EnumRoute entry)
    int32_t profile;          // -1 when absent
    int32_t priority;
    uint32_t available;       // SPA_PARAM_AVAILABILITY_*
    const char *name;
    const char *description;  // NULL when absent
    const char *port_type;    // "port.type" of the info struct; NULL when absent
    uint32_t n_devices;
    int32_t devices[CPIPEWIRE_ROUTE_MAX_DEVICES];
    uint32_t n_profiles;
    int32_t profiles[CPIPEWIRE_ROUTE_MAX_PROFILES];
} CPipeWire_route;
// 0 on success, a negative errno when the pod is not a readable route.
int CPipeWire_parse_route(const struct spa_pod *pod, CPipeWire_route *route);
// The index of a SPA_TYPE_OBJECT_ParamProfile; 0 on success, a negative errno otherwise.
int CPipeWire_parse_profile_index(const struct spa_pod *pod, int32_t *index);

int CPipeWire_client_add_listener(struct pw_client *client, struct spa_hook *listener,
                                  const struct pw_client_events *events, void *data);
int CPipeWire_metadata_add_listener(struct pw_metadata *metadata, struct spa_hook *listener,
                                    const struct pw_metadata_events *events, void *data);
int CPipeWire_metadata_set_property(struct pw_metadata *metadata, uint32_t subject,
                                    const char *key, const char *type, const char *value);

// Sets a node's PortConfig to DSP mode (one F32P port per channel of `positions`) in
// `direction`, as a session manager does for every new stream; builds the param with
// spa_pod_builder and spa_format_audio_raw_build (static inlines). A stream given DSP mode
// without a format crashes some clients (mpv), hence the format.
int CPipeWire_node_set_port_config_dsp(struct pw_node *node, enum spa_direction direction,
                                       uint32_t rate, uint32_t channels, const uint32_t *positions);

// --- playback streams' Props (their mute) -------------------------------------------
// pw_node_subscribe_params is a method macro: a stream's Props come as param events after it.
int CPipeWire_node_subscribe_params(struct pw_node *node, uint32_t *ids, uint32_t n_ids);
// Sets a node's Props `mute`, as pactl set-sink-input-mute does through pipewire-pulse: the
// Props object is built with spa_pod_builder_add_object (a varargs macro) for pw_node_set_param
// (a method macro).
int CPipeWire_node_set_mute(struct pw_node *node, bool mute);
// The `mute` of a Props param: spa_pod_find_prop and spa_pod_get_bool are static inlines.
// 1 with *mute set when the object has a boolean mute; 0 when it has none; a negative errno
// when the pod is not a Props object or its mute is not a boolean.
int CPipeWire_parse_props_mute(const struct spa_pod *pod, bool *mute);

// --- loop timers (pw_loop_* are method macros over spa_loop_utils) --------------------
struct spa_source *CPipeWire_loop_add_timer(struct pw_loop *loop, spa_source_timer_func_t func, void *data);
// Arms the timer for `deadline_nsec` (CLOCK_MONOTONIC, absolute), or disarms it for 0.
int CPipeWire_loop_update_timer(struct pw_loop *loop, struct spa_source *source, uint64_t deadline_nsec);
void CPipeWire_loop_destroy_source(struct pw_loop *loop, struct spa_source *source);

// --- helpers -------------------------------------------------------------------------
// spa_hook_remove is static inline; hooks must be unlinked before their memory is freed.
void CPipeWire_hook_remove(struct spa_hook *hook);
// pw_properties_new is variadic, which Swift cannot call.
struct pw_properties *CPipeWire_properties_new_empty(void);
// The daemon reports a dead connection as -EPIPE; errno constants are macros.
int CPipeWire_errno_EPIPE(void);

// --- interface type names (PW_TYPE_INTERFACE_* concatenate string macros) ------------
const char *CPipeWire_type_node(void);
const char *CPipeWire_type_port(void);
const char *CPipeWire_type_link(void);
const char *CPipeWire_type_device(void);
const char *CPipeWire_type_client(void);
const char *CPipeWire_type_metadata(void);
