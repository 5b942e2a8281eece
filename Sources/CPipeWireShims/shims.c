#include <spa/pod/parser.h>
#include <spa/param/route.h>
#include <spa/param/profile.h>
#include <spa/param/props.h>
#include <string.h>
#include <errno.h>
#include "CPipeWireShims.h"

#include <errno.h>
#include <spa/param/param.h>
#include <spa/pod/builder.h>
#include <spa/param/audio/format-utils.h>
#include <string.h>

int CPipeWire_core_add_listener(struct pw_core *core, struct spa_hook *listener,
                                const struct pw_core_events *events, void *data) {
    return pw_core_add_listener(core, listener, events, data);
}

int CPipeWire_core_sync(struct pw_core *core, uint32_t id, int seq) {
    return pw_core_sync(core, id, seq);
}

struct pw_registry *CPipeWire_core_get_registry(struct pw_core *core) {
    return pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
}

void *CPipeWire_core_create_object(struct pw_core *core, const char *factory_name,
                                   const char *type, uint32_t version,
                                   const struct spa_dict *props) {
    return pw_core_create_object(core, factory_name, type, version, props, 0);
}

int CPipeWire_registry_add_listener(struct pw_registry *registry, struct spa_hook *listener,
                                    const struct pw_registry_events *events, void *data) {
    return pw_registry_add_listener(registry, listener, events, data);
}

void *CPipeWire_registry_bind(struct pw_registry *registry, uint32_t id, const char *type,
                              uint32_t version) {
    return pw_registry_bind(registry, id, type, version, 0);
}

int CPipeWire_registry_destroy(struct pw_registry *registry, uint32_t id) {
    return pw_registry_destroy(registry, id);
}

int CPipeWire_node_add_listener(struct pw_node *node, struct spa_hook *listener,
                                const struct pw_node_events *events, void *data) {
    return pw_node_add_listener(node, listener, events, data);
}

int CPipeWire_port_add_listener(struct pw_port *port, struct spa_hook *listener,
                                const struct pw_port_events *events, void *data) {
    return pw_port_add_listener(port, listener, events, data);
}

int CPipeWire_link_add_listener(struct pw_link *link, struct spa_hook *listener,
                                const struct pw_link_events *events, void *data) {
    return pw_link_add_listener(link, listener, events, data);
}

int CPipeWire_device_add_listener(struct pw_device *device, struct spa_hook *listener,
                                  const struct pw_device_events *events, void *data) {
    return pw_device_add_listener(device, listener, events, data);
}

int CPipeWire_client_add_listener(struct pw_client *client, struct spa_hook *listener,
                                  const struct pw_client_events *events, void *data) {
    return pw_client_add_listener(client, listener, events, data);
}

int CPipeWire_metadata_add_listener(struct pw_metadata *metadata, struct spa_hook *listener,
                                    const struct pw_metadata_events *events, void *data) {
    return pw_metadata_add_listener(metadata, listener, events, data);
}

int CPipeWire_metadata_set_property(struct pw_metadata *metadata, uint32_t subject,
                                    const char *key, const char *type, const char *value) {
    return pw_metadata_set_property(metadata, subject, key, type, value);
}

int CPipeWire_node_set_port_config_dsp(struct pw_node *node, enum spa_direction direction,
                                       uint32_t rate, uint32_t channels, const uint32_t *positions) {
    uint8_t buffer[1024];
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    struct spa_audio_info_raw info = { .format = SPA_AUDIO_FORMAT_F32P, .rate = rate };
    info.channels = channels > SPA_AUDIO_MAX_CHANNELS ? SPA_AUDIO_MAX_CHANNELS : channels;
    memcpy(info.position, positions, info.channels * sizeof(uint32_t));
    struct spa_pod *format = spa_format_audio_raw_build(&builder, SPA_PARAM_Format, &info);
    struct spa_pod *param = spa_pod_builder_add_object(&builder,
        SPA_TYPE_OBJECT_ParamPortConfig, SPA_PARAM_PortConfig,
        SPA_PARAM_PORT_CONFIG_direction, SPA_POD_Id(direction),
        SPA_PARAM_PORT_CONFIG_mode, SPA_POD_Id(SPA_PARAM_PORT_CONFIG_MODE_dsp),
        SPA_PARAM_PORT_CONFIG_format, SPA_POD_Pod(format));
    return pw_node_set_param(node, SPA_PARAM_PortConfig, 0, param);
}

void CPipeWire_hook_remove(struct spa_hook *hook) {
    spa_hook_remove(hook);
}

struct pw_properties *CPipeWire_properties_new_empty(void) {
    // pw_properties_new(NULL) is the same, but variadic: the client's late binding
    // (CEarshotLateBinding) can forward only fixed parameters.
    return pw_properties_new_dict(&SPA_DICT_INIT(NULL, 0));
}

int CPipeWire_errno_EPIPE(void) { return EPIPE; }

const char *CPipeWire_type_node(void) { return PW_TYPE_INTERFACE_Node; }
const char *CPipeWire_type_port(void) { return PW_TYPE_INTERFACE_Port; }
const char *CPipeWire_type_link(void) { return PW_TYPE_INTERFACE_Link; }
const char *CPipeWire_type_device(void) { return PW_TYPE_INTERFACE_Device; }
const char *CPipeWire_type_client(void) { return PW_TYPE_INTERFACE_Client; }
const char *CPipeWire_type_metadata(void) { return PW_TYPE_INTERFACE_Metadata; }

struct spa_source *CPipeWire_loop_add_timer(struct pw_loop *loop, spa_source_timer_func_t func, void *data) {
    return pw_loop_add_timer(loop, func, data);
}

int CPipeWire_loop_update_timer(struct pw_loop *loop, struct spa_source *source, uint64_t deadline_nsec) {
    struct timespec value = {
        .tv_sec = (time_t)(deadline_nsec / SPA_NSEC_PER_SEC),
        .tv_nsec = (long)(deadline_nsec % SPA_NSEC_PER_SEC),
    };
    return pw_loop_update_timer(loop, source, &value, NULL, true);
}

void CPipeWire_loop_destroy_source(struct pw_loop *loop, struct spa_source *source) {
    pw_loop_destroy_source(loop, source);
}

int CPipeWire_device_enum_params(struct pw_device *device, int seq, uint32_t id) {
    return pw_device_enum_params(device, seq, id, 0, UINT32_MAX, NULL);
}

// The route info struct is { Int n, (String key, String value) * n }: only port.type is kept.
static const char *route_port_type(const struct spa_pod *info) {
    struct spa_pod_parser parser;
    struct spa_pod_frame frame;
    int32_t count = 0;
    if (info == NULL || !spa_pod_is_struct(info)) return NULL;
    spa_pod_parser_pod(&parser, info);
    if (spa_pod_parser_push_struct(&parser, &frame) < 0 || spa_pod_parser_get_int(&parser, &count) < 0) return NULL;
    for (int32_t i = 0; i < count && i < 256; i++) {
        const char *key = NULL, *value = NULL;
        if (spa_pod_parser_get_string(&parser, &key) < 0 || spa_pod_parser_get_string(&parser, &value) < 0) return NULL;
        if (key != NULL && strcmp(key, "port.type") == 0) return value;
    }
    return NULL;
}

static uint32_t route_ints(const struct spa_pod *array, int32_t *out, uint32_t capacity) {
    if (array == NULL || !spa_pod_is_array(array)) return 0;
    return spa_pod_copy_array(array, SPA_TYPE_Int, out, capacity);
}

int CPipeWire_parse_route(const struct spa_pod *pod, CPipeWire_route *route) {
    const struct spa_pod *info = NULL, *devices = NULL, *profiles = NULL;
    memset(route, 0, sizeof(*route));
    route->device = -1;
    route->profile = -1;
    route->available = SPA_PARAM_AVAILABILITY_unknown;
    if (pod == NULL || !spa_pod_is_object_type(pod, SPA_TYPE_OBJECT_ParamRoute)) return -EINVAL;
    int res = spa_pod_parse_object(pod, SPA_TYPE_OBJECT_ParamRoute, NULL,
        SPA_PARAM_ROUTE_index, SPA_POD_Int(&route->index),
        SPA_PARAM_ROUTE_direction, SPA_POD_Id(&route->direction),
        SPA_PARAM_ROUTE_name, SPA_POD_String(&route->name),
        SPA_PARAM_ROUTE_device, SPA_POD_OPT_Int(&route->device),
        SPA_PARAM_ROUTE_description, SPA_POD_OPT_String(&route->description),
        SPA_PARAM_ROUTE_priority, SPA_POD_OPT_Int(&route->priority),
        SPA_PARAM_ROUTE_available, SPA_POD_OPT_Id(&route->available),
        SPA_PARAM_ROUTE_info, SPA_POD_OPT_Pod(&info),
        SPA_PARAM_ROUTE_profiles, SPA_POD_OPT_Pod(&profiles),
        SPA_PARAM_ROUTE_profile, SPA_POD_OPT_Int(&route->profile),
        SPA_PARAM_ROUTE_devices, SPA_POD_OPT_Pod(&devices));
    if (res < 0) return res;
    route->port_type = route_port_type(info);
    route->n_devices = route_ints(devices, route->devices, CPIPEWIRE_ROUTE_MAX_DEVICES);
    route->n_profiles = route_ints(profiles, route->profiles, CPIPEWIRE_ROUTE_MAX_PROFILES);
    return 0;
}

int CPipeWire_parse_profile_index(const struct spa_pod *pod, int32_t *index) {
    if (pod == NULL || !spa_pod_is_object_type(pod, SPA_TYPE_OBJECT_ParamProfile)) return -EINVAL;
    // spa_pod_parse_object counts the fields it read; only a negative result is an error.
    int res = spa_pod_parse_object(pod, SPA_TYPE_OBJECT_ParamProfile, NULL, SPA_PARAM_PROFILE_index, SPA_POD_Int(index));
    return res < 0 ? res : 0;
}

int CPipeWire_node_subscribe_params(struct pw_node *node, uint32_t *ids, uint32_t n_ids) {
    return pw_node_subscribe_params(node, ids, n_ids);
}

int CPipeWire_node_set_mute(struct pw_node *node, bool mute) {
    uint8_t buffer[128];
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    struct spa_pod *param = spa_pod_builder_add_object(&builder,
        SPA_TYPE_OBJECT_Props, SPA_PARAM_Props,
        SPA_PROP_mute, SPA_POD_Bool(mute));
    if (param == NULL) return -ENOSPC;
    return pw_node_set_param(node, SPA_PARAM_Props, 0, param);
}

int CPipeWire_parse_props_mute(const struct spa_pod *pod, bool *mute) {
    if (pod == NULL || !spa_pod_is_object_type(pod, SPA_TYPE_OBJECT_Props)) return -EINVAL;
    const struct spa_pod_prop *prop = spa_pod_find_prop(pod, NULL, SPA_PROP_mute);
    if (prop == NULL) return 0;
    int res = spa_pod_get_bool(&prop->value, mute);
    return res < 0 ? res : 1;
}
