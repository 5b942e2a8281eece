/* earshot-route-device — a test PipeWire client that stands in for an ALSA sound card.
 *
 * Test sandboxes have no sound cards, but Earshot judges a sink by its device's routes: a sink
 * whose route is `available: no` (headphones pulled from the jack, an HDMI monitor switched
 * off) is out — as WirePlumber judges it: the device's active Route for the node's
 * card.profile.device if it has one, else every EnumRoute for it — and the active route's port
 * type and priority rank it. This program
 * is a real libpipewire client that exports a `struct spa_device` with
 * `pw_core_export(core, SPA_TYPE_INTERFACE_Device, ...)` — as WirePlumber exports the ALSA and
 * BlueZ devices it creates — implementing EnumProfile, Profile, EnumRoute and Route params the
 * way PipeWire's ALSA card device does (device.c), and then creates its sink (and source) nodes
 * itself: `adapter` nodes — sinks of `support.null-audio-sink`, sources of `audiotestsrc` (a
 * tone) — with `device.id` = the exported device's global id and `card.profile.device` = the
 * node's device index.
 *
 * Route changes (the stdin commands below, or a client's set_param such as WirePlumber
 * restoring a route or `pw-cli s <device> Route '{ index: 1, device: 0 }'`) toggle the SERIAL
 * bit of the changed params and emit the device info again, so the server drops its cached
 * params and subscribed clients (pw_device_subscribe_params, pw-dump -m, WirePlumber) see the
 * new values. Like a card under WirePlumber (api.acp.auto-port = false), the device never
 * switches a route by itself when availability changes: a client (WirePlumber) does.
 *
 * Command line (also `--help`; SPEC = KEY=VALUE items separated by ',', '\,' for a comma in a
 * value, lists separated by ';'):
 *   --device-prop KEY=VALUE  device property, repeatable (defaults: device.name=
 *                            alsa_card.earshot-test, device.api=alsa, media.class=Audio/Device,
 *                            device.description=Earshot Test Card)
 *   --profile SPEC           index=N,name=NAME,description=TEXT,priority=N,available=yes|no|unknown
 *                            (repeatable; default: off (0) and output:analog-stereo (1))
 *   --current-profile INDEX  default: the first profile not named "off"
 *   --route SPEC             name=NAME,description=TEXT,port-type=TYPE,direction=output|input,
 *                            priority=N,available=yes|no|unknown,devices=N;N,profiles=N;N,
 *                            info=KEY=VALUE (repeatable; EnumRoute index = position)
 *   --active DEVICE:ROUTE    the active route of a card.profile.device (default: its best route)
 *   --sink SPEC              name=NODE.NAME,description=TEXT,device=N,channels=FL;FR,
 *                            prop=KEY=VALUE (repeatable; one node per card.profile.device;
 *                            priority.session/driver default to 1000, sources 2000)
 *   --source SPEC            the same, an Audio/Source
 *   --auto-port-config       configure the nodes' DSP ports as WirePlumber would (no session
 *                            manager present)
 *
 * Protocol: once the device and every node are bound (their proxies' `bound` events, then a
 * core sync) it prints one line `ready device=<id> <node.name>=<id> ...`. Then it reads
 * commands on stdin, one per line, and answers each with one line on stdout — `ok ...` after a
 * core sync round trip confirmed the server has processed the change, or `error <why>`:
 *   available ROUTE yes|no|unknown [stop]
 *                                    EnumRoute changes, and Route if ROUTE is active somewhere;
 *                                    with `stop` the program stops itself (SIGSTOP) right after
 *                                    its answer, before it reads any request the change causes
 *                                    (a card whose exporter hangs mid-change; SIGCONT resumes it)
 *   activate DEVICE ROUTE            ROUTE becomes the active route of card.profile.device DEVICE
 *   show                             ok profile=I active=DEV:ROUTE,... routes=ROUTE:AVAIL,...
 *   quit                             ok quit, then exit 0 (EOF on stdin quits the same way)
 * SIGTERM/SIGINT end it with status 0. Any failure (connection lost, the device or a node
 * refused, the device removed by the server) ends it with status 1 and a message on stderr; a
 * bad command line with status 2. What clients set (Route, Profile) is logged on stderr.
 * Everything is driven by events on one pw_main_loop; nothing sleeps or polls.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <spa/param/audio/format-utils.h>
#include <spa/param/port-config.h>
#include <spa/pod/builder.h>
#include <spa/utils/result.h>
#include <pipewire/pipewire.h>
#include <pipewire/impl-module.h>

#include "route-device.h"

static void fatal(struct app *app, const char *format, ...) SPA_PRINTF_FUNC(2, 3);

static void fatal(struct app *app, const char *format, ...)
{
	va_list args;

	fprintf(stderr, "earshot-route-device: ");
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fputc('\n', stderr);
	app->status = 1;
	pw_main_loop_quit(app->loop);
}

/* ---- answers after a round trip ---- */

static void print_line(const char *text)
{
	fputs(text, stdout);
	fputc('\n', stdout);
	fflush(stdout);
}

static void queue_reply(struct app *app, const char *text, bool quit_after)
{
	int seq;

	if (app->n_pending == app->pending_capacity) {
		uint32_t capacity = app->pending_capacity == 0 ? 16 : app->pending_capacity * 2;
		struct pending_reply *pending = realloc(app->pending, capacity * sizeof(*pending));
		if (pending == NULL) {
			fatal(app, "out of memory");
			return;
		}
		app->pending = pending;
		app->pending_capacity = capacity;
	}
	seq = pw_core_sync(app->core, PW_ID_CORE, 0);
	if (seq < 0) {
		fatal(app, "core sync failed: %s", spa_strerror(seq));
		return;
	}
	app->pending[app->n_pending++] = (struct pending_reply){
		.seq = seq, .text = strdup(text), .quit_after = quit_after, .stop_after = false,
	};
}

/* Errors too wait for a round trip, so that answers come in the order of the commands. */
static void reply_error(struct app *app, const char *text)
{
	queue_reply(app, text, false);
}

static void maybe_quit_at_eof(struct app *app)
{
	if (app->stdin_closed && app->n_pending == 0)
		pw_main_loop_quit(app->loop);
}

/* ---- stdin commands ---- */

static struct route *find_route(struct app *app, const char *name)
{
	for (uint32_t i = 0; i < app->n_routes; i++)
		if (strcmp(app->routes[i].name, name) == 0)
			return &app->routes[i];
	return NULL;
}

static void command_available(struct app *app, char *route_name, char *state, char *then)
{
	char text[512];
	struct route *route;
	uint32_t available;

	if (route_name == NULL || state == NULL || availability_parse(state, &available) < 0 ||
	    (then != NULL && strcmp(then, "stop") != 0)) {
		reply_error(app, "error usage: available ROUTE yes|no|unknown [stop]");
		return;
	}
	if ((route = find_route(app, route_name)) == NULL) {
		snprintf(text, sizeof(text), "error no route named %s", route_name);
		reply_error(app, text);
		return;
	}
	if (route->available != available) {
		route->available = available;
		device_mark_changed(app, IDX_EnumRoute);
		for (uint32_t i = 0; i < app->n_card_devices; i++)
			if (app->card_devices[i].active == (int32_t)route->index)
				device_mark_changed(app, IDX_Route);
		device_emit_info(app, false);
	}
	snprintf(text, sizeof(text), "ok available %s %s", route->name, availability_name(available));
	queue_reply(app, text, false);
	if (then != NULL && app->n_pending > 0)
		app->pending[app->n_pending - 1].stop_after = true;
}

static void command_activate(struct app *app, char *device_text, char *route_name)
{
	char text[512];
	struct route *route;
	struct card_device *dev;
	char *end;
	long index;

	if (device_text == NULL || route_name == NULL) {
		reply_error(app, "error usage: activate DEVICE ROUTE");
		return;
	}
	index = strtol(device_text, &end, 10);
	if (*end != '\0' || end == device_text || index < 0 || index > INT32_MAX ||
	    (dev = card_device_find(app, (uint32_t)index)) == NULL) {
		snprintf(text, sizeof(text), "error no card.profile.device %s", device_text);
		reply_error(app, text);
		return;
	}
	if ((route = find_route(app, route_name)) == NULL) {
		snprintf(text, sizeof(text), "error no route named %s", route_name);
		reply_error(app, text);
		return;
	}
	if (!route_has_device(route, dev->index)) {
		snprintf(text, sizeof(text), "error route %s is not a route of device %u", route->name, dev->index);
		reply_error(app, text);
		return;
	}
	if (dev->active != (int32_t)route->index) {
		dev->active = (int32_t)route->index;
		device_mark_changed(app, IDX_Route);
		device_emit_info(app, false);
	}
	snprintf(text, sizeof(text), "ok activate %u %s", dev->index, route->name);
	queue_reply(app, text, false);
}

static void command_show(struct app *app)
{
	char text[4096];
	size_t used;

	used = (size_t)snprintf(text, sizeof(text), "ok profile=%u active=",
			app->profiles[app->current_profile].index);
	for (uint32_t i = 0; i < app->n_card_devices && used < sizeof(text); i++) {
		const struct card_device *dev = &app->card_devices[i];
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%u:%s", i == 0 ? "" : ",",
				dev->index, dev->active >= 0 ? app->routes[dev->active].name : "-");
	}
	if (used < sizeof(text))
		used += (size_t)snprintf(text + used, sizeof(text) - used, " routes=");
	for (uint32_t i = 0; i < app->n_routes && used < sizeof(text); i++) {
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s:%s", i == 0 ? "" : ",",
				app->routes[i].name, availability_name(app->routes[i].available));
	}
	queue_reply(app, text, false);
}

static void handle_line(struct app *app, char *line)
{
	char *saveptr = NULL;
	char *words[4] = { NULL, NULL, NULL, NULL };
	uint32_t n_words = 0;
	char text[512];

	for (char *word = strtok_r(line, " \t\r", &saveptr); word != NULL; word = strtok_r(NULL, " \t\r", &saveptr)) {
		if (n_words == SPA_N_ELEMENTS(words)) {
			reply_error(app, "error too many words");
			return;
		}
		words[n_words++] = word;
	}
	if (n_words == 0)
		return;
	if (strcmp(words[0], "available") == 0 && n_words <= 4) {
		command_available(app, words[1], words[2], words[3]);
	} else if (strcmp(words[0], "activate") == 0 && n_words <= 3) {
		command_activate(app, words[1], words[2]);
	} else if (strcmp(words[0], "show") == 0 && n_words == 1) {
		command_show(app);
	} else if (strcmp(words[0], "quit") == 0 && n_words == 1) {
		pw_loop_destroy_source(pw_main_loop_get_loop(app->loop), app->stdin_source);
		app->stdin_source = NULL;
		queue_reply(app, "ok quit", true);
	} else {
		snprintf(text, sizeof(text), "error unknown command '%s' (available, activate, show, quit)", words[0]);
		reply_error(app, text);
	}
}

static void on_stdin(void *data, int fd, uint32_t mask)
{
	struct app *app = data;
	char buffer[4096];
	ssize_t count = 0;

	if (mask & SPA_IO_IN) {
		count = read(fd, buffer, sizeof(buffer));
		if (count < 0 && (errno == EINTR || errno == EAGAIN))
			return;
		if (count < 0) {
			fatal(app, "reading stdin: %s", strerror(errno));
			return;
		}
	}
	for (ssize_t i = 0; i < count && app->stdin_source != NULL; i++) {
		char c = buffer[i];
		if (c == '\n') {
			if (!app->discarding) {
				app->line[app->line_len] = '\0';
				handle_line(app, app->line);
			} else {
				reply_error(app, "error line too long");
			}
			app->line_len = 0;
			app->discarding = false;
		} else if (app->line_len + 1 < sizeof(app->line)) {
			app->line[app->line_len++] = c;
		} else {
			app->discarding = true;
		}
	}
	if (app->stdin_source == NULL)	/* quit: the rest of the input is not read */
		return;
	if (count == 0) {
		/* EOF (or a hang-up with nothing left): quit once the answers in flight are out */
		pw_loop_destroy_source(pw_main_loop_get_loop(app->loop), app->stdin_source);
		app->stdin_source = NULL;
		app->stdin_closed = true;
		maybe_quit_at_eof(app);
	}
}

/* ---- readiness ---- */

static void check_all_bound(struct app *app)
{
	if (!app->device_bound || app->ready_seq != 0)
		return;
	for (uint32_t i = 0; i < app->n_nodes; i++)
		if (!app->nodes[i].bound)
			return;
	/* one more round trip, so that everything before is processed by the server */
	app->ready_seq = pw_core_sync(app->core, PW_ID_CORE, 0);
	if (app->ready_seq < 0)
		fatal(app, "core sync failed: %s", spa_strerror(app->ready_seq));
}

static void announce_ready(struct app *app)
{
	char text[4096];
	size_t used;
	int fd_flags;

	used = (size_t)snprintf(text, sizeof(text), "ready device=%u", app->device_id);
	for (uint32_t i = 0; i < app->n_nodes && used < sizeof(text); i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, " %s=%u",
				app->nodes[i].name, app->nodes[i].global_id);
	print_line(text);
	app->ready = true;

	fd_flags = fcntl(STDIN_FILENO, F_GETFL);
	if (fd_flags >= 0 && fcntl(STDIN_FILENO, F_SETFL, fd_flags | O_NONBLOCK) == 0)
		app->stdin_flags = fd_flags;	/* given back at exit: the description may be shared */
	app->stdin_source = pw_loop_add_io(pw_main_loop_get_loop(app->loop), STDIN_FILENO,
			SPA_IO_IN | SPA_IO_HUP | SPA_IO_ERR, false, on_stdin, app);
	if (app->stdin_source == NULL)
		fatal(app, "cannot watch stdin: %s", strerror(errno));
}

/* ---- nodes ---- */

/* A node proxy's listener data: the node and the app it belongs to. */
struct node_ref {
	struct app *app;
	struct node *node;
};

static struct node_ref node_refs[MAX_NODES];

/* What a session manager does to a new device node (WirePlumber's si-audio-adapter): one DSP
 * port per channel (F32P, 48 kHz, the node's positions), and monitor ports on a sink. Done
 * here only with --auto-port-config (no session manager); adapter.auto-port-config gives an
 * audiotestsrc source a single mono port on PipeWire 1.4, so the program sets it itself. */
static int configure_ports(struct node *node)
{
	uint8_t buffer[1024];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
	struct spa_audio_info_raw info = {
		.format = SPA_AUDIO_FORMAT_F32P, .rate = 48000, .channels = node->n_channels,
	};
	struct spa_pod *format, *param;

	for (uint32_t c = 0; c < node->n_channels; c++)
		info.position[c] = node->channel_ids[c];
	format = spa_format_audio_raw_build(&b, SPA_PARAM_Format, &info);
	param = spa_pod_builder_add_object(&b,
		SPA_TYPE_OBJECT_ParamPortConfig, SPA_PARAM_PortConfig,
		SPA_PARAM_PORT_CONFIG_direction, SPA_POD_Id(node->source ? SPA_DIRECTION_OUTPUT : SPA_DIRECTION_INPUT),
		SPA_PARAM_PORT_CONFIG_mode, SPA_POD_Id(SPA_PARAM_PORT_CONFIG_MODE_dsp),
		SPA_PARAM_PORT_CONFIG_monitor, SPA_POD_Bool(!node->source),
		SPA_PARAM_PORT_CONFIG_format, SPA_POD_Pod(format));
	if (format == NULL || param == NULL)
		return -ENOSPC;
	return pw_node_set_param((struct pw_node *)node->proxy, SPA_PARAM_PortConfig, 0, param);
}

static void on_node_bound(void *data, uint32_t global_id)
{
	struct node_ref *ref = data;
	int res;

	if (ref->app->auto_port_config && !ref->node->bound &&
	    (res = configure_ports(ref->node)) < 0) {
		fatal(ref->app, "cannot configure the ports of %s: %s", ref->node->name, spa_strerror(res));
		return;
	}

	ref->node->global_id = global_id;
	ref->node->bound = true;
	check_all_bound(ref->app);
}

static void on_node_removed(void *data)
{
	struct node_ref *ref = data;
	fprintf(stderr, "earshot-route-device: the server removed node %s (%u)\n",
			ref->node->name, ref->node->global_id);
}

static void on_node_error(void *data, int seq, int res, const char *message)
{
	struct node_ref *ref = data;
	(void)seq;
	fatal(ref->app, "node %s: %s (%s)", ref->node->name, message, spa_strerror(res));
}

static const struct pw_proxy_events node_proxy_events = {
	PW_VERSION_PROXY_EVENTS,
	.bound = on_node_bound,
	.removed = on_node_removed,
	.error = on_node_error,
};

static int create_node(struct app *app, uint32_t n)
{
	struct node *node = &app->nodes[n];
	struct pw_properties *props;
	char positions[MAX_CHANNELS * 16] = "[";
	char routes[16];
	uint32_t n_routes = 0;

	for (uint32_t c = 0; c < node->n_channels; c++) {
		strcat(positions, c == 0 ? "" : " ");
		strcat(positions, node->channel_names[c]);
	}
	strcat(positions, "]");
	for (uint32_t r = 0; r < app->n_routes; r++)
		if (route_has_device(&app->routes[r], node->device))
			n_routes++;
	snprintf(routes, sizeof(routes), "%u", n_routes);

	/* A sink is a null sink; a source is PipeWire's test tone source (a null sink with
	 * media.class Audio/Source gets a broken port set from WirePlumber). The server's
	 * configuration maps no library to audiotestsrc, so the node names it. */
	props = pw_properties_new(
			PW_KEY_FACTORY_NAME, node->source ? "audiotestsrc" : "support.null-audio-sink",
			PW_KEY_NODE_NAME, node->name,
			PW_KEY_NODE_DESCRIPTION, node->description,
			PW_KEY_MEDIA_CLASS, node->source ? "Audio/Source" : "Audio/Sink",
			"audio.position", positions,
			"device.routes", routes,
			NULL);
	if (props == NULL)
		return -errno;
	if (node->source)
		pw_properties_set(props, SPA_KEY_LIBRARY_NAME, "audiotestsrc/libspa-audiotestsrc");
	pw_properties_setf(props, PW_KEY_DEVICE_ID, "%u", app->device_id);
	pw_properties_setf(props, "card.profile.device", "%u", node->device);
	pw_properties_setf(props, PW_KEY_AUDIO_CHANNELS, "%u", node->n_channels);
	/* WirePlumber gives an ALSA node of PCM device 0 these (its monitors/alsa.lua); a
	 * source above the sinks' monitors, which otherwise may win the default source */
	pw_properties_set(props, PW_KEY_PRIORITY_SESSION, node->source ? "2000" : "1000");
	pw_properties_set(props, PW_KEY_PRIORITY_DRIVER, node->source ? "2000" : "1000");
	for (uint32_t i = 0; i < app->n_device_props; i++) {
		/* what a card's nodes carry of the card (device.api), unless given */
		if (strcmp(app->device_props[i].key, PW_KEY_DEVICE_API) == 0)
			pw_properties_set(props, PW_KEY_DEVICE_API, app->device_props[i].value);
	}
	for (uint32_t i = 0; i < node->n_props; i++)
		pw_properties_set(props, node->props[i].key, node->props[i].value);

	node->proxy = pw_core_create_object(app->core, "adapter", PW_TYPE_INTERFACE_Node,
			PW_VERSION_NODE, &props->dict, 0);
	pw_properties_free(props);
	if (node->proxy == NULL)
		return -errno;
	node_refs[n] = (struct node_ref){ .app = app, .node = node };
	pw_proxy_add_listener(node->proxy, &node->proxy_listener, &node_proxy_events, &node_refs[n]);
	return 0;
}

/* ---- the device ---- */

static void on_device_bound(void *data, uint32_t global_id)
{
	struct app *app = data;
	int res;

	if (app->device_bound)
		return;
	app->device_id = global_id;
	app->device_bound = true;
	for (uint32_t n = 0; n < app->n_nodes; n++) {
		if ((res = create_node(app, n)) < 0) {
			fatal(app, "cannot create node %s: %s", app->nodes[n].name, spa_strerror(res));
			return;
		}
	}
	check_all_bound(app);
}

static void on_device_removed(void *data)
{
	fatal(data, "the server removed the device");
}

static void on_device_error(void *data, int seq, int res, const char *message)
{
	(void)seq;
	fatal(data, "device: %s (%s)", message, spa_strerror(res));
}

static const struct pw_proxy_events device_proxy_events = {
	PW_VERSION_PROXY_EVENTS,
	.bound = on_device_bound,
	.removed = on_device_removed,
	.error = on_device_error,
};

/* ---- the core ---- */

static void on_core_done(void *data, uint32_t id, int seq)
{
	struct app *app = data;

	if (id != PW_ID_CORE)
		return;
	if (!app->ready && app->ready_seq != 0 && seq == app->ready_seq) {
		announce_ready(app);
		return;
	}
	if (app->n_pending > 0 && app->pending[0].seq == seq) {
		struct pending_reply reply = app->pending[0];
		memmove(&app->pending[0], &app->pending[1], (app->n_pending - 1) * sizeof(app->pending[0]));
		app->n_pending--;
		print_line(reply.text != NULL ? reply.text : "ok");
		free(reply.text);
		/* Stopped inside the done callback: no message after it is dispatched until SIGCONT. */
		if (reply.stop_after)
			raise(SIGSTOP);
		if (reply.quit_after)
			pw_main_loop_quit(app->loop);
		else
			maybe_quit_at_eof(app);
	}
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct app *app = data;

	(void)seq;
	if (id == PW_ID_CORE && res == -EPIPE)
		fatal(app, "the connection to PipeWire was lost");
	else
		fatal(app, "error from PipeWire on object %u: %s (%s)", id, message, spa_strerror(res));
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.done = on_core_done,
	.error = on_core_error,
};

static void on_signal(void *data, int signal_number)
{
	struct app *app = data;
	(void)signal_number;
	pw_main_loop_quit(app->loop);
}

int main(int argc, char *argv[])
{
	static struct app app;
	struct pw_loop *loop;
	int res;

	setvbuf(stdout, NULL, _IOLBF, 0);
	app.stdin_flags = -1;
	if (parse_command_line(&app, argc, argv) < 0)
		return 2;

	pw_init(&argc, &argv);
	fprintf(stderr, "earshot-route-device: libpipewire %s (built with %s)\n",
			pw_get_library_version(), pw_get_headers_version());
	device_init(&app);

	app.loop = pw_main_loop_new(NULL);
	if (app.loop == NULL) {
		fprintf(stderr, "earshot-route-device: cannot make a main loop: %s\n", strerror(errno));
		return 1;
	}
	loop = pw_main_loop_get_loop(app.loop);
	pw_loop_add_signal(loop, SIGINT, on_signal, &app);
	pw_loop_add_signal(loop, SIGTERM, on_signal, &app);
	signal(SIGPIPE, SIG_IGN);

	app.context = pw_context_new(loop, NULL, 0);
	if (app.context == NULL) {
		fprintf(stderr, "earshot-route-device: cannot make a context: %s\n", strerror(errno));
		return 1;
	}
	/* client.conf loads it; load it here when a configuration does not */
	if (pw_context_find_export_type(app.context, SPA_TYPE_INTERFACE_Device) == NULL &&
	    pw_context_load_module(app.context, "libpipewire-module-client-device", NULL, NULL) == NULL) {
		fprintf(stderr, "earshot-route-device: cannot load libpipewire-module-client-device: %s\n",
				strerror(errno));
		return 1;
	}
	app.core = pw_context_connect(app.context,
			pw_properties_new(PW_KEY_APP_NAME, "earshot-route-device", NULL), 0);
	if (app.core == NULL) {
		fprintf(stderr, "earshot-route-device: cannot connect to PipeWire: %s\n", strerror(errno));
		return 1;
	}
	pw_core_add_listener(app.core, &app.core_listener, &core_events, &app);

	app.device_proxy = pw_core_export(app.core, SPA_TYPE_INTERFACE_Device, &app.device_dict,
			&app.device, 0);
	if (app.device_proxy == NULL) {
		fprintf(stderr, "earshot-route-device: cannot export the device: %s\n", strerror(errno));
		return 1;
	}
	pw_proxy_add_listener(app.device_proxy, &app.device_proxy_listener, &device_proxy_events, &app);

	res = pw_main_loop_run(app.loop);
	if (res < 0 && app.status == 0) {
		fprintf(stderr, "earshot-route-device: main loop: %s\n", spa_strerror(res));
		app.status = 1;
	}

	if (app.stdin_source != NULL)
		pw_loop_destroy_source(loop, app.stdin_source);
	if (app.stdin_flags >= 0)
		fcntl(STDIN_FILENO, F_SETFL, app.stdin_flags);
	for (uint32_t i = 0; i < app.n_nodes; i++)
		if (app.nodes[i].proxy != NULL)
			pw_proxy_destroy(app.nodes[i].proxy);
	pw_proxy_destroy(app.device_proxy);
	pw_core_disconnect(app.core);
	pw_context_destroy(app.context);
	pw_main_loop_destroy(app.loop);
	for (uint32_t i = 0; i < app.n_pending; i++)
		free(app.pending[i].text);
	free(app.pending);
	free_config(&app);
	pw_deinit();
	return app.status;
}
