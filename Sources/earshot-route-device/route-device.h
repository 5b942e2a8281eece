/* earshot-route-device: shared declarations (see main.c for what the program does). */
#ifndef EARSHOT_ROUTE_DEVICE_H
#define EARSHOT_ROUTE_DEVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <pipewire/pipewire.h>
#include <spa/monitor/device.h>
#include <spa/param/param.h>
#include <spa/utils/hook.h>

#define MAX_ROUTES 32
#define MAX_PROFILES 16
#define MAX_NODES 16
#define MAX_LIST 16
#define MAX_INFO 16
#define MAX_PROPS 64
#define MAX_CHANNELS 16

struct kv {
	char *key;
	char *value;
};

struct route {
	uint32_t index;			/* position in EnumRoute */
	char *name;
	char *description;
	uint32_t direction;		/* SPA_DIRECTION_OUTPUT (playback) or SPA_DIRECTION_INPUT */
	int32_t priority;
	uint32_t available;		/* enum spa_param_availability */
	uint32_t devices[MAX_LIST];	/* card.profile.device indexes */
	uint32_t n_devices;
	uint32_t profiles[MAX_LIST];	/* profile indexes */
	uint32_t n_profiles;
	struct kv info[MAX_INFO];	/* port.type first */
	uint32_t n_info;
	bool save;
};

struct profile {
	uint32_t index;
	char *name;
	char *description;
	int32_t priority;
	uint32_t available;
	bool save;
};

/* A sink or source node the program creates on the server, one per card.profile.device. */
struct node {
	bool source;			/* Audio/Source instead of Audio/Sink */
	char *name;
	char *description;
	uint32_t device;		/* card.profile.device */
	char *channel_names[MAX_CHANNELS];
	uint32_t channel_ids[MAX_CHANNELS];	/* enum spa_audio_channel */
	uint32_t n_channels;
	struct kv props[MAX_PROPS];
	uint32_t n_props;

	struct pw_proxy *proxy;
	struct spa_hook proxy_listener;
	uint32_t global_id;
	bool bound;
};

/* The per-card.profile.device state the Route param reports: its active route and volume. */
struct card_device {
	uint32_t index;
	int32_t active;			/* index into app.routes, or -1 */
	bool mute;
	float volumes[MAX_CHANNELS];
	uint32_t channel_ids[MAX_CHANNELS];
	uint32_t n_channels;
	int64_t latency_offset;
};

#define IDX_EnumProfile 0
#define IDX_Profile 1
#define IDX_EnumRoute 2
#define IDX_Route 3
#define N_PARAMS 4

struct pending_reply {
	int seq;
	char *text;
	bool quit_after;
	bool stop_after;	/* raise(SIGSTOP) once the line is out (`available ... stop`) */
};

struct app {
	/* configuration, then state */
	struct kv device_props[MAX_PROPS];
	uint32_t n_device_props;
	struct spa_dict_item device_items[MAX_PROPS];
	struct spa_dict device_dict;

	struct profile profiles[MAX_PROFILES];
	uint32_t n_profiles;
	uint32_t current_profile;	/* index into profiles[] */

	struct route routes[MAX_ROUTES];
	uint32_t n_routes;

	struct node nodes[MAX_NODES];
	uint32_t n_nodes;

	struct card_device card_devices[MAX_NODES + MAX_ROUTES];
	uint32_t n_card_devices;

	bool auto_port_config;

	/* the spa_device the program implements */
	struct spa_device device;
	struct spa_hook_list hooks;
	struct spa_device_info info;
	struct spa_param_info params[N_PARAMS];

	/* PipeWire */
	struct pw_main_loop *loop;
	struct pw_context *context;
	struct pw_core *core;
	struct spa_hook core_listener;
	struct pw_proxy *device_proxy;
	struct spa_hook device_proxy_listener;
	uint32_t device_id;
	bool device_bound;
	int ready_seq;
	bool ready;

	/* stdin commands */
	struct spa_source *stdin_source;
	int stdin_flags;		/* before O_NONBLOCK, or -1 */
	char line[4096];
	size_t line_len;
	bool discarding;		/* a line longer than the buffer, skipped to its end */
	struct pending_reply *pending;	/* answers waiting for their round trip, in order */
	uint32_t n_pending;
	uint32_t pending_capacity;
	bool stdin_closed;

	int status;			/* exit status */
};

/* device.c */
void device_init(struct app *app);
void device_emit_info(struct app *app, bool full);
void device_mark_changed(struct app *app, uint32_t param_index);
struct card_device *card_device_find(struct app *app, uint32_t index);
bool route_has_device(const struct route *route, uint32_t device);
const char *availability_name(uint32_t available);
int availability_parse(const char *text, uint32_t *available);

/* spec.c: the command line */
int parse_command_line(struct app *app, int argc, char *argv[]);
void print_usage(FILE *out);
void free_config(struct app *app);

#endif
