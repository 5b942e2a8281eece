/* earshot-route-device: the command line (documented in main.c and by --help). */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <spa/param/audio/raw.h>
#include <spa/param/audio/type-info.h>
#include <spa/utils/type.h>

#include "route-device.h"

void print_usage(FILE *out)
{
	fputs(
"usage: earshot-route-device [OPTION...]\n"
"A PipeWire client that exports an ALSA-like Audio/Device with EnumProfile, Profile, EnumRoute\n"
"and Route params, plus its sink nodes (null sinks) and source nodes (audiotestsrc, a tone):\n"
"adapters with device.id and card.profile.device. For tests. Commands on stdin, one per line,\n"
"each answered on stdout by one line, `ok ...` once a core sync round trip confirmed the\n"
"server has the change, or `error <why>`:\n"
"  available ROUTE yes|no|unknown   a route's availability (EnumRoute, and Route if active)\n"
"  activate DEVICE ROUTE            make ROUTE the active route of card.profile.device DEVICE\n"
"  show                             ok profile=INDEX active=DEV:ROUTE,... routes=ROUTE:AVAIL,...\n"
"  quit                             answer `ok quit`, disconnect, exit 0 (EOF on stdin: the same)\n"
"Once the device and every node are bound it prints one line:\n"
"  ready device=<device id> <node.name>=<node id> ...\n"
"\n"
"Options (SPEC is KEY=VALUE items separated by ','; write '\\,' for a comma in a value;\n"
"lists are separated by ';'; KEY=VALUE inside prop= and info= may also be KEY:VALUE):\n"
"  --device-prop KEY=VALUE  a device property (repeatable). Defaults, each unless given:\n"
"                           device.name=alsa_card.earshot-test device.api=alsa\n"
"                           media.class=Audio/Device device.description=Earshot Test Card\n"
"  --profile SPEC           a profile (repeatable): index=N (default: its position),\n"
"                           name=NAME (required), description=TEXT, priority=N (0),\n"
"                           available=yes|no|unknown (yes). Every profile but one named\n"
"                           \"off\" has all the nodes. Default: off (0) and\n"
"                           output:analog-stereo (1, priority 6500).\n"
"  --current-profile INDEX  the current profile (default: the first not named \"off\")\n"
"  --route SPEC             a route (repeatable; EnumRoute index = position): name=NAME\n"
"                           (required), description=TEXT, port-type=TYPE (route info\n"
"                           port.type, e.g. speaker, headphones, hdmi), direction=output|input\n"
"                           (output), priority=N (0), available=yes|no|unknown (unknown),\n"
"                           devices=N;N (0), profiles=N;N (every profile but \"off\"),\n"
"                           info=KEY=VALUE (more route info, repeatable)\n"
"  --active DEVICE:ROUTE    the active route of card.profile.device DEVICE (repeatable;\n"
"                           default: its best route: available yes, then unknown, then no,\n"
"                           then the highest priority)\n"
"  --sink SPEC              an Audio/Sink node (repeatable): name=NODE.NAME (required),\n"
"                           description=TEXT, device=N (card.profile.device; default: its\n"
"                           position among the nodes), channels=FL;FR (FL;FR),\n"
"                           prop=KEY=VALUE (a node property, repeatable, e.g.\n"
"                           prop=device.form-factor=headphone). priority.session and\n"
"                           priority.driver are 1000 (sinks) and 2000 (sources) unless given,\n"
"                           as WirePlumber gives ALSA nodes.\n"
"  --source SPEC            an Audio/Source node, the same fields\n"
"  --auto-port-config       configure the nodes' ports (DSP, F32P, 48 kHz, monitors on sinks)\n"
"                           as a session manager would: for a PipeWire without one\n"
"  --help                   this text\n"
"Example:\n"
"  earshot-route-device --device-prop device.name=alsa_card.pci-test \\\n"
"    --route name=analog-output-speaker,port-type=speaker,priority=100,available=yes \\\n"
"    --route name=analog-output-headphones,port-type=headphones,priority=200,available=no \\\n"
"    --sink name=alsa_output.pci-test.analog-stereo,description=Speakers,device=0\n",
		out);
}

static char *xstrdup(const char *text)
{
	char *copy = strdup(text);
	if (copy == NULL) {
		perror("earshot-route-device");
		exit(1);
	}
	return copy;
}

static int fail(const char *format, const char *a, const char *b)
{
	fprintf(stderr, "earshot-route-device: ");
	fprintf(stderr, format, a, b);
	fprintf(stderr, " (see --help)\n");
	return -EINVAL;
}

#define MAX_ITEMS 64

struct item {
	char *key;
	char *value;
};

static void free_items(struct item *items, uint32_t n_items)
{
	for (uint32_t i = 0; i < n_items; i++) {
		free(items[i].key);
		free(items[i].value);
	}
}

/* Splits "k=v,k=v" at unescaped commas; "\," is a comma and "\\" a backslash in a value. */
static int split_spec(const char *spec, struct item *items, uint32_t *n_items)
{
	size_t length = strlen(spec);
	char *buffer = xstrdup(spec), *out = buffer, *start = buffer;

	*n_items = 0;
	for (size_t i = 0; i <= length; i++) {
		char c = spec[i];
		if (c == '\\' && i + 1 < length) {
			*out++ = spec[++i];
			continue;
		}
		if (c != ',' && c != '\0') {
			*out++ = c;
			continue;
		}
		*out++ = '\0';
		if (*start != '\0') {
			char *equals = strchr(start, '=');
			if (equals == NULL || equals == start || *n_items == MAX_ITEMS) {
				fail("'%s' in '%s' is not KEY=VALUE", start, spec);
				free_items(items, *n_items);
				free(buffer);
				return -EINVAL;
			}
			*equals = '\0';
			items[*n_items].key = xstrdup(start);
			items[*n_items].value = xstrdup(equals + 1);
			(*n_items)++;
		}
		start = out;
	}
	free(buffer);
	return 0;
}

static int parse_int(const char *text, int32_t *value)
{
	char *end;
	long parsed;

	errno = 0;
	parsed = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || parsed < INT32_MIN || parsed > INT32_MAX)
		return -EINVAL;
	*value = (int32_t)parsed;
	return 0;
}

static int parse_index(const char *text, uint32_t *value)
{
	int32_t parsed;
	if (parse_int(text, &parsed) < 0 || parsed < 0)
		return -EINVAL;
	*value = (uint32_t)parsed;
	return 0;
}

/* "0;1;2" into values; appends to what is there. */
static int parse_index_list(const char *text, uint32_t *values, uint32_t *n_values)
{
	char *copy = xstrdup(text), *saveptr = NULL;
	int res = 0;

	for (char *part = strtok_r(copy, ";", &saveptr); part != NULL; part = strtok_r(NULL, ";", &saveptr)) {
		if (*n_values == MAX_LIST || parse_index(part, &values[*n_values]) < 0) {
			res = -EINVAL;
			break;
		}
		(*n_values)++;
	}
	free(copy);
	return res;
}

/* "key=value" or "key:value" (whichever separator comes first). */
static int parse_pair(const char *text, struct kv *pair)
{
	size_t split = strcspn(text, "=:");
	if (split == 0 || text[split] == '\0')
		return -EINVAL;
	pair->key = strndup(text, split);
	pair->value = xstrdup(text + split + 1);
	return pair->key == NULL ? -ENOMEM : 0;
}

static int channel_id(const char *name, uint32_t *id)
{
	for (const struct spa_type_info *t = spa_type_audio_channel; t->name != NULL; t++) {
		const char *colon = strrchr(t->name, ':');
		if (colon != NULL && strcmp(colon + 1, name) == 0) {
			*id = t->type;
			return 0;
		}
	}
	return -EINVAL;
}

static int add_device_prop(struct app *app, const char *text)
{
	struct kv pair;

	if (strchr(text, '=') == NULL)
		return fail("--device-prop takes KEY=VALUE, not '%s'%s", text, "");
	pair.key = strndup(text, strcspn(text, "="));
	pair.value = xstrdup(strchr(text, '=') + 1);
	for (uint32_t i = 0; i < app->n_device_props; i++) {
		if (strcmp(app->device_props[i].key, pair.key) == 0) {
			free(app->device_props[i].value);
			app->device_props[i].value = pair.value;
			free(pair.key);
			return 0;
		}
	}
	if (app->n_device_props == MAX_PROPS)
		return fail("too many device properties%s%s", "", "");
	app->device_props[app->n_device_props++] = pair;
	return 0;
}

static int add_profile(struct app *app, const char *spec)
{
	struct item items[MAX_ITEMS];
	uint32_t n_items;
	struct profile *profile;
	int res = 0;

	if (app->n_profiles == MAX_PROFILES)
		return fail("too many profiles%s%s", "", "");
	if (split_spec(spec, items, &n_items) < 0)
		return -EINVAL;
	profile = &app->profiles[app->n_profiles];
	*profile = (struct profile){ .index = app->n_profiles, .available = SPA_PARAM_AVAILABILITY_yes };
	for (uint32_t i = 0; i < n_items && res == 0; i++) {
		const char *key = items[i].key, *value = items[i].value;
		if (strcmp(key, "index") == 0)
			res = parse_index(value, &profile->index);
		else if (strcmp(key, "name") == 0)
			profile->name = xstrdup(value);
		else if (strcmp(key, "description") == 0)
			profile->description = xstrdup(value);
		else if (strcmp(key, "priority") == 0)
			res = parse_int(value, &profile->priority);
		else if (strcmp(key, "available") == 0)
			res = availability_parse(value, &profile->available);
		else {
			free_items(items, n_items);
			return fail("unknown profile field '%s' in '%s'", key, spec);
		}
		if (res < 0)
			fail("bad profile field '%s' in '%s'", key, spec);
	}
	free_items(items, n_items);
	if (res < 0)
		return res;
	if (profile->name == NULL)
		return fail("--profile '%s' has no name%s", spec, "");
	if (profile->description == NULL)
		profile->description = xstrdup(profile->name);
	for (uint32_t i = 0; i < app->n_profiles; i++)
		if (app->profiles[i].index == profile->index)
			return fail("two profiles have index %s%s", spec, "");
	app->n_profiles++;
	return 0;
}

static int add_route(struct app *app, const char *spec)
{
	struct item items[MAX_ITEMS];
	uint32_t n_items;
	struct route *route;
	char *port_type = NULL;
	struct kv extra[MAX_INFO];
	uint32_t n_extra = 0;
	bool profiles_given = false, devices_given = false;
	int res = 0;

	if (app->n_routes == MAX_ROUTES)
		return fail("too many routes%s%s", "", "");
	if (split_spec(spec, items, &n_items) < 0)
		return -EINVAL;
	route = &app->routes[app->n_routes];
	*route = (struct route){
		.index = app->n_routes, .direction = SPA_DIRECTION_OUTPUT,
		.available = SPA_PARAM_AVAILABILITY_unknown,
	};
	for (uint32_t i = 0; i < n_items && res == 0; i++) {
		const char *key = items[i].key, *value = items[i].value;
		if (strcmp(key, "name") == 0) {
			route->name = xstrdup(value);
		} else if (strcmp(key, "description") == 0) {
			route->description = xstrdup(value);
		} else if (strcmp(key, "port-type") == 0) {
			free(port_type);
			port_type = xstrdup(value);
		} else if (strcmp(key, "direction") == 0) {
			if (strcmp(value, "output") == 0)
				route->direction = SPA_DIRECTION_OUTPUT;
			else if (strcmp(value, "input") == 0)
				route->direction = SPA_DIRECTION_INPUT;
			else
				res = -EINVAL;
		} else if (strcmp(key, "priority") == 0) {
			res = parse_int(value, &route->priority);
		} else if (strcmp(key, "available") == 0) {
			res = availability_parse(value, &route->available);
		} else if (strcmp(key, "devices") == 0) {
			devices_given = true;
			res = parse_index_list(value, route->devices, &route->n_devices);
		} else if (strcmp(key, "profiles") == 0) {
			profiles_given = true;
			res = parse_index_list(value, route->profiles, &route->n_profiles);
		} else if (strcmp(key, "info") == 0) {
			if (n_extra == MAX_INFO - 1)
				res = -EINVAL;
			else
				res = parse_pair(value, &extra[n_extra++]);
		} else {
			free_items(items, n_items);
			return fail("unknown route field '%s' in '%s'", key, spec);
		}
		if (res < 0)
			fail("bad route field '%s' in '%s'", key, spec);
	}
	free_items(items, n_items);
	if (res < 0)
		return res;
	if (route->name == NULL)
		return fail("--route '%s' has no name%s", spec, "");
	for (uint32_t i = 0; i < app->n_routes; i++)
		if (strcmp(app->routes[i].name, route->name) == 0)
			return fail("two routes are named %s%s", route->name, "");
	if (route->description == NULL)
		route->description = xstrdup(route->name);
	if (!devices_given)
		route->devices[route->n_devices++] = 0;
	/* a missing profiles= is filled in once all profiles are known */
	if (!profiles_given)
		route->n_profiles = UINT32_MAX;
	if (port_type != NULL) {
		route->info[route->n_info].key = xstrdup("port.type");
		route->info[route->n_info++].value = port_type;
	}
	for (uint32_t i = 0; i < n_extra; i++)
		route->info[route->n_info++] = extra[i];
	app->n_routes++;
	return 0;
}

static int add_node(struct app *app, const char *spec, bool source)
{
	struct item items[MAX_ITEMS];
	uint32_t n_items;
	struct node *node;
	int res = 0;

	if (app->n_nodes == MAX_NODES)
		return fail("too many nodes%s%s", "", "");
	if (split_spec(spec, items, &n_items) < 0)
		return -EINVAL;
	node = &app->nodes[app->n_nodes];
	*node = (struct node){ .source = source, .device = app->n_nodes };
	for (uint32_t i = 0; i < n_items && res == 0; i++) {
		const char *key = items[i].key, *value = items[i].value;
		if (strcmp(key, "name") == 0) {
			node->name = xstrdup(value);
		} else if (strcmp(key, "description") == 0) {
			node->description = xstrdup(value);
		} else if (strcmp(key, "device") == 0) {
			res = parse_index(value, &node->device);
		} else if (strcmp(key, "channels") == 0) {
			char *copy = xstrdup(value), *saveptr = NULL;
			node->n_channels = 0;
			for (char *part = strtok_r(copy, ";", &saveptr); part != NULL && res == 0;
					part = strtok_r(NULL, ";", &saveptr)) {
				if (node->n_channels == MAX_CHANNELS ||
				    channel_id(part, &node->channel_ids[node->n_channels]) < 0)
					res = -EINVAL;
				else
					node->channel_names[node->n_channels++] = xstrdup(part);
			}
			free(copy);
		} else if (strcmp(key, "prop") == 0) {
			if (node->n_props == MAX_PROPS)
				res = -EINVAL;
			else
				res = parse_pair(value, &node->props[node->n_props++]);
		} else {
			free_items(items, n_items);
			return fail("unknown node field '%s' in '%s'", key, spec);
		}
		if (res < 0)
			fail("bad node field '%s' in '%s'", key, spec);
	}
	free_items(items, n_items);
	if (res < 0)
		return res;
	if (node->name == NULL)
		return fail("--sink/--source '%s' has no name%s", spec, "");
	if (node->description == NULL)
		node->description = xstrdup(node->name);
	if (node->n_channels == 0) {
		node->channel_names[0] = xstrdup("FL");
		node->channel_ids[0] = SPA_AUDIO_CHANNEL_FL;
		node->channel_names[1] = xstrdup("FR");
		node->channel_ids[1] = SPA_AUDIO_CHANNEL_FR;
		node->n_channels = 2;
	}
	for (uint32_t i = 0; i < app->n_nodes; i++) {
		if (app->nodes[i].device == node->device)
			return fail("two nodes are on card.profile.device %s%s", "(see device=)", "");
		if (strcmp(app->nodes[i].name, node->name) == 0)
			return fail("two nodes are named %s%s", node->name, "");
	}
	app->n_nodes++;
	return 0;
}

static struct card_device *add_card_device(struct app *app, uint32_t index)
{
	struct card_device *dev = card_device_find(app, index);

	if (dev != NULL)
		return dev;
	dev = &app->card_devices[app->n_card_devices++];
	*dev = (struct card_device){ .index = index, .active = -1, .n_channels = 2 };
	dev->channel_ids[0] = SPA_AUDIO_CHANNEL_FL;
	dev->channel_ids[1] = SPA_AUDIO_CHANNEL_FR;
	dev->volumes[0] = dev->volumes[1] = 1.0f;
	return dev;
}

/* yes above unknown above no, then the higher priority, then the earlier route */
static bool route_better(const struct route *a, const struct route *b)
{
	static const int rank[] = {
		[SPA_PARAM_AVAILABILITY_unknown] = 1,
		[SPA_PARAM_AVAILABILITY_no] = 0,
		[SPA_PARAM_AVAILABILITY_yes] = 2,
	};
	if (rank[a->available] != rank[b->available])
		return rank[a->available] > rank[b->available];
	return a->priority > b->priority;
}

int parse_command_line(struct app *app, int argc, char *argv[])
{
	const char *current_profile = NULL;
	const char *actives[MAX_NODES + MAX_ROUTES];
	uint32_t n_actives = 0;
	static const char *defaults[][2] = {
		{ "device.name", "alsa_card.earshot-test" },
		{ "device.api", "alsa" },
		{ "media.class", "Audio/Device" },
		{ "device.description", "Earshot Test Card" },
	};

	for (int i = 1; i < argc; i++) {
		const char *option = argv[i];
		const char *value = i + 1 < argc ? argv[i + 1] : NULL;
		int res;

		if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
			print_usage(stdout);
			exit(0);
		}
		if (strcmp(option, "--auto-port-config") == 0) {
			app->auto_port_config = true;
			continue;
		}
		if (strcmp(option, "--device-prop") != 0 && strcmp(option, "--profile") != 0 &&
		    strcmp(option, "--current-profile") != 0 && strcmp(option, "--route") != 0 &&
		    strcmp(option, "--active") != 0 && strcmp(option, "--sink") != 0 &&
		    strcmp(option, "--source") != 0)
			return fail("unknown option %s%s", option, "");
		if (value == NULL)
			return fail("%s needs a value%s", option, "");
		i++;
		if (strcmp(option, "--device-prop") == 0)
			res = add_device_prop(app, value);
		else if (strcmp(option, "--profile") == 0)
			res = add_profile(app, value);
		else if (strcmp(option, "--current-profile") == 0)
			res = (current_profile = value, 0);
		else if (strcmp(option, "--route") == 0)
			res = add_route(app, value);
		else if (strcmp(option, "--active") == 0)
			res = n_actives == SPA_N_ELEMENTS(actives) ? -EINVAL : (actives[n_actives++] = value, 0);
		else if (strcmp(option, "--sink") == 0)
			res = add_node(app, value, false);
		else if (strcmp(option, "--source") == 0)
			res = add_node(app, value, true);
		else
			return fail("unknown option %s%s", option, "");
		if (res < 0)
			return res;
	}

	for (size_t i = 0; i < SPA_N_ELEMENTS(defaults); i++) {
		bool given = false;
		for (uint32_t j = 0; j < app->n_device_props; j++)
			given |= strcmp(app->device_props[j].key, defaults[i][0]) == 0;
		if (!given) {
			app->device_props[app->n_device_props].key = xstrdup(defaults[i][0]);
			app->device_props[app->n_device_props++].value = xstrdup(defaults[i][1]);
		}
	}

	if (app->n_profiles == 0) {
		add_profile(app, "index=0,name=off,description=Off,priority=0");
		add_profile(app, "index=1,name=output:analog-stereo,description=Analog Stereo Output,priority=6500");
	}
	app->current_profile = UINT32_MAX;
	if (current_profile != NULL) {
		uint32_t index;
		if (parse_index(current_profile, &index) < 0)
			return fail("--current-profile takes a profile index, not '%s'%s", current_profile, "");
		for (uint32_t i = 0; i < app->n_profiles; i++)
			if (app->profiles[i].index == index)
				app->current_profile = i;
		if (app->current_profile == UINT32_MAX)
			return fail("--current-profile %s: no such profile%s", current_profile, "");
	} else {
		for (uint32_t i = 0; i < app->n_profiles && app->current_profile == UINT32_MAX; i++)
			if (strcmp(app->profiles[i].name, "off") != 0)
				app->current_profile = i;
		if (app->current_profile == UINT32_MAX)
			app->current_profile = 0;
	}

	/* routes without profiles= belong to every profile but "off" */
	for (uint32_t r = 0; r < app->n_routes; r++) {
		struct route *route = &app->routes[r];
		if (route->n_profiles != UINT32_MAX)
			continue;
		route->n_profiles = 0;
		for (uint32_t p = 0; p < app->n_profiles; p++)
			if (strcmp(app->profiles[p].name, "off") != 0 && route->n_profiles < MAX_LIST)
				route->profiles[route->n_profiles++] = app->profiles[p].index;
	}

	/* the card devices: one per node, with its channels */
	for (uint32_t n = 0; n < app->n_nodes; n++) {
		struct node *node = &app->nodes[n];
		struct card_device *dev = add_card_device(app, node->device);
		dev->n_channels = node->n_channels;
		for (uint32_t c = 0; c < node->n_channels; c++) {
			dev->channel_ids[c] = node->channel_ids[c];
			dev->volumes[c] = 1.0f;
		}
	}
	for (uint32_t a = 0; a < n_actives; a++) {
		const char *colon = strchr(actives[a], ':');
		char *number;
		uint32_t index;
		int32_t found = -1;
		struct card_device *dev;

		if (colon == NULL)
			return fail("--active takes DEVICE:ROUTE, not '%s'%s", actives[a], "");
		number = strndup(actives[a], (size_t)(colon - actives[a]));
		if (number == NULL || parse_index(number, &index) < 0) {
			free(number);
			return fail("--active takes DEVICE:ROUTE, not '%s'%s", actives[a], "");
		}
		free(number);
		for (uint32_t r = 0; r < app->n_routes; r++)
			if (strcmp(app->routes[r].name, colon + 1) == 0)
				found = (int32_t)r;
		if (found < 0)
			return fail("--active %s: no route named so%s", actives[a], "");
		if (!route_has_device(&app->routes[found], index))
			return fail("--active %s: the route's devices= does not have that device%s", actives[a], "");
		dev = add_card_device(app, index);
		dev->active = found;
	}
	/* the others: their best route of the node's direction */
	for (uint32_t d = 0; d < app->n_card_devices; d++) {
		struct card_device *dev = &app->card_devices[d];
		uint32_t direction = SPA_DIRECTION_OUTPUT;
		if (dev->active >= 0)
			continue;
		for (uint32_t n = 0; n < app->n_nodes; n++)
			if (app->nodes[n].device == dev->index && app->nodes[n].source)
				direction = SPA_DIRECTION_INPUT;
		for (uint32_t r = 0; r < app->n_routes; r++) {
			const struct route *route = &app->routes[r];
			if (route->direction != direction || !route_has_device(route, dev->index))
				continue;
			if (dev->active < 0 || route_better(route, &app->routes[dev->active]))
				dev->active = (int32_t)r;
		}
	}
	return 0;
}

static void free_kvs(struct kv *items, uint32_t n_items)
{
	for (uint32_t i = 0; i < n_items; i++) {
		free(items[i].key);
		free(items[i].value);
	}
}

void free_config(struct app *app)
{
	free_kvs(app->device_props, app->n_device_props);
	for (uint32_t i = 0; i < app->n_profiles; i++) {
		free(app->profiles[i].name);
		free(app->profiles[i].description);
	}
	for (uint32_t i = 0; i < app->n_routes; i++) {
		free(app->routes[i].name);
		free(app->routes[i].description);
		free_kvs(app->routes[i].info, app->routes[i].n_info);
	}
	for (uint32_t i = 0; i < app->n_nodes; i++) {
		free(app->nodes[i].name);
		free(app->nodes[i].description);
		for (uint32_t c = 0; c < app->nodes[i].n_channels; c++)
			free(app->nodes[i].channel_names[c]);
		free_kvs(app->nodes[i].props, app->nodes[i].n_props);
	}
}
