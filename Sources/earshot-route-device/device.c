/* earshot-route-device: the spa_device the program exports, modelled on PipeWire's ALSA card
 * device (spa/plugins/alsa/alsa-acp-device.c): EnumProfile, Profile, EnumRoute and Route
 * params built the same way, the SERIAL bit of a param's flags toggled whenever its values
 * change, and the info (with SPA_DEVICE_CHANGE_MASK_PARAMS) emitted again so that the server
 * drops its cached params and tells subscribed clients. Like an ALSA card under WirePlumber
 * (api.acp.auto-port = false) it never switches a route by itself: a client sets Route. */

#include <errno.h>
#include <string.h>

#include <spa/monitor/utils.h>
#include <spa/param/profile.h>
#include <spa/param/props.h>
#include <spa/param/route.h>
#include <spa/pod/builder.h>
#include <spa/pod/filter.h>
#include <spa/pod/iter.h>
#include <spa/pod/parser.h>
#include <spa/utils/defs.h>
#include <spa/utils/result.h>

#include "route-device.h"

const char *availability_name(uint32_t available)
{
	switch (available) {
	case SPA_PARAM_AVAILABILITY_yes: return "yes";
	case SPA_PARAM_AVAILABILITY_no: return "no";
	default: return "unknown";
	}
}

int availability_parse(const char *text, uint32_t *available)
{
	if (strcmp(text, "yes") == 0)
		*available = SPA_PARAM_AVAILABILITY_yes;
	else if (strcmp(text, "no") == 0)
		*available = SPA_PARAM_AVAILABILITY_no;
	else if (strcmp(text, "unknown") == 0)
		*available = SPA_PARAM_AVAILABILITY_unknown;
	else
		return -EINVAL;
	return 0;
}

bool route_has_device(const struct route *route, uint32_t device)
{
	for (uint32_t i = 0; i < route->n_devices; i++)
		if (route->devices[i] == device)
			return true;
	return false;
}

struct card_device *card_device_find(struct app *app, uint32_t index)
{
	for (uint32_t i = 0; i < app->n_card_devices; i++)
		if (app->card_devices[i].index == index)
			return &app->card_devices[i];
	return NULL;
}

void device_mark_changed(struct app *app, uint32_t param_index)
{
	app->params[param_index].user++;
	app->info.change_mask |= SPA_DEVICE_CHANGE_MASK_PARAMS;
}

/* Emits the info to the listeners: everything when `full` (a new listener), else only what
 * changed since the last emission; a changed param gets its SERIAL bit toggled. */
void device_emit_info(struct app *app, bool full)
{
	uint64_t old = full ? app->info.change_mask : 0;

	if (full)
		app->info.change_mask = SPA_DEVICE_CHANGE_MASK_PROPS | SPA_DEVICE_CHANGE_MASK_PARAMS;
	if (app->info.change_mask == 0)
		return;
	app->info.props = &app->device_dict;
	if (app->info.change_mask & SPA_DEVICE_CHANGE_MASK_PARAMS) {
		for (uint32_t i = 0; i < N_PARAMS; i++) {
			if (app->params[i].user > 0) {
				app->params[i].flags ^= SPA_PARAM_INFO_SERIAL;
				app->params[i].user = 0;
			}
		}
	}
	spa_device_emit_info(&app->hooks, &app->info);
	app->info.change_mask = old;
}

static void add_dict_struct(struct spa_pod_builder *b, const struct kv *items, uint32_t n_items,
		const struct kv *extra, uint32_t n_extra)
{
	struct spa_pod_frame f;

	spa_pod_builder_push_struct(b, &f);
	spa_pod_builder_int(b, (int32_t)(n_items + n_extra));
	for (uint32_t i = 0; i < n_items; i++)
		spa_pod_builder_add(b, SPA_POD_String(items[i].key), SPA_POD_String(items[i].value), NULL);
	for (uint32_t i = 0; i < n_extra; i++)
		spa_pod_builder_add(b, SPA_POD_String(extra[i].key), SPA_POD_String(extra[i].value), NULL);
	spa_pod_builder_pop(b, &f);
}

static void add_int_array(struct spa_pod_builder *b, const uint32_t *values, uint32_t n_values)
{
	struct spa_pod_frame f;

	spa_pod_builder_push_array(b, &f);
	for (uint32_t i = 0; i < n_values; i++)
		spa_pod_builder_int(b, (int32_t)values[i]);
	spa_pod_builder_pop(b, &f);
}

static bool profile_is_off(const struct profile *profile)
{
	return strcmp(profile->name, "off") == 0;
}

/* ParamProfile; `classes` lists the sinks' and sources' card.profile.device indexes (every
 * profile but "off" has all of them), which WirePlumber reads to know which devices to route. */
static struct spa_pod *build_profile(struct app *app, struct spa_pod_builder *b, uint32_t id,
		const struct profile *profile, bool current)
{
	struct spa_pod_frame f[2];
	uint32_t sinks[MAX_NODES], sources[MAX_NODES], n_sinks = 0, n_sources = 0;

	if (!profile_is_off(profile)) {
		for (uint32_t i = 0; i < app->n_nodes; i++) {
			if (app->nodes[i].source)
				sources[n_sources++] = app->nodes[i].device;
			else
				sinks[n_sinks++] = app->nodes[i].device;
		}
	}

	spa_pod_builder_push_object(b, &f[0], SPA_TYPE_OBJECT_ParamProfile, id);
	spa_pod_builder_add(b,
		SPA_PARAM_PROFILE_index, SPA_POD_Int((int32_t)profile->index),
		SPA_PARAM_PROFILE_name, SPA_POD_String(profile->name),
		SPA_PARAM_PROFILE_description, SPA_POD_String(profile->description),
		SPA_PARAM_PROFILE_priority, SPA_POD_Int(profile->priority),
		SPA_PARAM_PROFILE_available, SPA_POD_Id(profile->available),
		0);
	spa_pod_builder_prop(b, SPA_PARAM_PROFILE_classes, 0);
	spa_pod_builder_push_struct(b, &f[1]);
	spa_pod_builder_int(b, (n_sources > 0 ? 1 : 0) + (n_sinks > 0 ? 1 : 0));
	if (n_sources > 0) {
		spa_pod_builder_add_struct(b,
			SPA_POD_String("Audio/Source"),
			SPA_POD_Int((int32_t)n_sources),
			SPA_POD_String("card.profile.devices"),
			SPA_POD_Array(sizeof(uint32_t), SPA_TYPE_Int, n_sources, sources));
	}
	if (n_sinks > 0) {
		spa_pod_builder_add_struct(b,
			SPA_POD_String("Audio/Sink"),
			SPA_POD_Int((int32_t)n_sinks),
			SPA_POD_String("card.profile.devices"),
			SPA_POD_Array(sizeof(uint32_t), SPA_TYPE_Int, n_sinks, sinks));
	}
	spa_pod_builder_pop(b, &f[1]);
	if (current) {
		spa_pod_builder_prop(b, SPA_PARAM_PROFILE_save, 0);
		spa_pod_builder_bool(b, profile->save);
	}
	return spa_pod_builder_pop(b, &f[0]);
}

/* ParamRoute: EnumRoute when `dev` is NULL; the active Route of card device `dev` otherwise
 * (then with device, props, profile and save, as ALSA's). */
static struct spa_pod *build_route(struct app *app, struct spa_pod_builder *b, uint32_t id,
		const struct route *route, const struct card_device *dev)
{
	struct spa_pod_frame f[2];
	static const struct kv hw[] = {
		{ (char *)"route.hw-mute", (char *)"false" },
		{ (char *)"route.hw-volume", (char *)"false" },
	};

	spa_pod_builder_push_object(b, &f[0], SPA_TYPE_OBJECT_ParamRoute, id);
	spa_pod_builder_add(b,
		SPA_PARAM_ROUTE_index, SPA_POD_Int((int32_t)route->index),
		SPA_PARAM_ROUTE_direction, SPA_POD_Id(route->direction),
		SPA_PARAM_ROUTE_name, SPA_POD_String(route->name),
		SPA_PARAM_ROUTE_description, SPA_POD_String(route->description),
		SPA_PARAM_ROUTE_priority, SPA_POD_Int(route->priority),
		SPA_PARAM_ROUTE_available, SPA_POD_Id(route->available),
		0);
	spa_pod_builder_prop(b, SPA_PARAM_ROUTE_info, SPA_POD_PROP_FLAG_HINT_DICT);
	add_dict_struct(b, route->info, route->n_info, hw, dev != NULL ? SPA_N_ELEMENTS(hw) : 0);
	spa_pod_builder_prop(b, SPA_PARAM_ROUTE_profiles, 0);
	add_int_array(b, route->profiles, route->n_profiles);
	if (dev != NULL) {
		spa_pod_builder_prop(b, SPA_PARAM_ROUTE_device, 0);
		spa_pod_builder_int(b, (int32_t)dev->index);

		spa_pod_builder_prop(b, SPA_PARAM_ROUTE_props, 0);
		spa_pod_builder_push_object(b, &f[1], SPA_TYPE_OBJECT_Props, id);
		spa_pod_builder_prop(b, SPA_PROP_mute, 0);
		spa_pod_builder_bool(b, dev->mute);
		spa_pod_builder_prop(b, SPA_PROP_channelVolumes, 0);
		spa_pod_builder_array(b, sizeof(float), SPA_TYPE_Float, dev->n_channels, dev->volumes);
		spa_pod_builder_prop(b, SPA_PROP_volumeBase, SPA_POD_PROP_FLAG_READONLY);
		spa_pod_builder_float(b, 1.0f);
		spa_pod_builder_prop(b, SPA_PROP_volumeStep, SPA_POD_PROP_FLAG_READONLY);
		spa_pod_builder_float(b, 1.0f / 65536.0f);
		spa_pod_builder_prop(b, SPA_PROP_channelMap, 0);
		spa_pod_builder_array(b, sizeof(uint32_t), SPA_TYPE_Id, dev->n_channels, dev->channel_ids);
		spa_pod_builder_prop(b, SPA_PROP_softVolumes, 0);
		spa_pod_builder_array(b, sizeof(float), SPA_TYPE_Float, dev->n_channels, dev->volumes);
		spa_pod_builder_prop(b, SPA_PROP_latencyOffsetNsec, 0);
		spa_pod_builder_long(b, dev->latency_offset);
		spa_pod_builder_pop(b, &f[1]);
	}
	spa_pod_builder_prop(b, SPA_PARAM_ROUTE_devices, 0);
	add_int_array(b, route->devices, route->n_devices);
	if (dev != NULL) {
		spa_pod_builder_prop(b, SPA_PARAM_ROUTE_profile, 0);
		spa_pod_builder_int(b, (int32_t)app->profiles[app->current_profile].index);
		spa_pod_builder_prop(b, SPA_PARAM_ROUTE_save, 0);
		spa_pod_builder_bool(b, route->save);
	}
	return spa_pod_builder_pop(b, &f[0]);
}

static int impl_add_listener(void *object, struct spa_hook *listener,
		const struct spa_device_events *events, void *data)
{
	struct app *app = object;
	struct spa_hook_list save;

	spa_return_val_if_fail(events != NULL, -EINVAL);

	spa_hook_list_isolate(&app->hooks, &save, listener, events, data);
	if (events->info)
		device_emit_info(app, true);
	spa_hook_list_join(&app->hooks, &save);
	return 0;
}

static int impl_sync(void *object, int seq)
{
	struct app *app = object;

	spa_device_emit_result(&app->hooks, seq, 0, 0, NULL);
	return 0;
}

static int impl_enum_params(void *object, int seq, uint32_t id, uint32_t start, uint32_t num,
		const struct spa_pod *filter)
{
	struct app *app = object;
	struct spa_result_device_params result;
	uint8_t buffer[8192];
	struct spa_pod_builder b;
	struct spa_pod *param;
	uint32_t count = 0;

	spa_return_val_if_fail(num != 0, -EINVAL);

	result.id = id;
	result.next = start;
next:
	result.index = result.next++;
	spa_pod_builder_init(&b, buffer, sizeof(buffer));

	switch (id) {
	case SPA_PARAM_EnumProfile:
		if (result.index >= app->n_profiles)
			return 0;
		param = build_profile(app, &b, id, &app->profiles[result.index], false);
		break;
	case SPA_PARAM_Profile:
		if (result.index > 0)
			return 0;
		param = build_profile(app, &b, id, &app->profiles[app->current_profile], true);
		break;
	case SPA_PARAM_EnumRoute:
		if (result.index >= app->n_routes)
			return 0;
		param = build_route(app, &b, id, &app->routes[result.index], NULL);
		break;
	case SPA_PARAM_Route:
		/* one per card device with an active route, in card device order */
		while (true) {
			if (result.index >= app->n_card_devices)
				return 0;
			if (app->card_devices[result.index].active >= 0)
				break;
			result.index++;
		}
		result.next = result.index + 1;
		param = build_route(app, &b, id,
				&app->routes[app->card_devices[result.index].active],
				&app->card_devices[result.index]);
		break;
	default:
		return -ENOENT;
	}
	if (param == NULL)
		return -ENOSPC;

	if (spa_pod_filter(&b, &result.param, param, filter) < 0)
		goto next;

	spa_device_emit_result(&app->hooks, seq, 0, SPA_RESULT_TYPE_DEVICE_PARAMS, &result);

	if (++count != num)
		goto next;
	return 0;
}

/* Applies a Route's props (mute, volumes) to a card device; returns whether anything changed. */
static bool apply_route_props(struct card_device *dev, const struct spa_pod *props)
{
	struct spa_pod_object *obj = (struct spa_pod_object *)props;
	struct spa_pod_prop *prop;
	bool changed = false;

	if (!spa_pod_is_object_type(props, SPA_TYPE_OBJECT_Props))
		return false;

	SPA_POD_OBJECT_FOREACH(obj, prop) {
		switch (prop->key) {
		case SPA_PROP_mute: {
			bool mute;
			if (spa_pod_get_bool(&prop->value, &mute) == 0 && mute != dev->mute) {
				dev->mute = mute;
				changed = true;
			}
			break;
		}
		case SPA_PROP_volume:
		case SPA_PROP_channelVolumes: {
			float volumes[MAX_CHANNELS];
			uint32_t n = 0;
			if (prop->key == SPA_PROP_volume) {
				if (spa_pod_get_float(&prop->value, &volumes[0]) == 0)
					n = 1;
			} else {
				n = spa_pod_copy_array(&prop->value, SPA_TYPE_Float, volumes, MAX_CHANNELS);
			}
			if (n == 0)
				break;
			/* one value sets every channel, as ALSA's device does */
			for (uint32_t i = 0; i < dev->n_channels; i++) {
				float v = volumes[n == 1 ? 0 : SPA_MIN(i, n - 1)];
				if (v != dev->volumes[i]) {
					dev->volumes[i] = v;
					changed = true;
				}
			}
			break;
		}
		case SPA_PROP_latencyOffsetNsec: {
			int64_t latency;
			if (spa_pod_get_long(&prop->value, &latency) == 0 && latency != dev->latency_offset) {
				dev->latency_offset = latency;
				changed = true;
			}
			break;
		}
		default:
			break;
		}
	}
	return changed;
}

static int set_route(struct app *app, const struct spa_pod *param)
{
	int32_t index, device;
	struct spa_pod *props = NULL;
	bool save = false;
	struct card_device *dev;
	struct route *route;
	bool changed = false;
	int res;

	if (param == NULL)
		return -EINVAL;
	if ((res = spa_pod_parse_object(param, SPA_TYPE_OBJECT_ParamRoute, NULL,
			SPA_PARAM_ROUTE_index, SPA_POD_Int(&index),
			SPA_PARAM_ROUTE_device, SPA_POD_Int(&device),
			SPA_PARAM_ROUTE_props, SPA_POD_OPT_Pod(&props),
			SPA_PARAM_ROUTE_save, SPA_POD_OPT_Bool(&save))) < 0) {
		fprintf(stderr, "earshot-route-device: a client set a Route that does not parse (%s)\n",
				spa_strerror(res));
		return res;
	}
	if (index < 0 || (uint32_t)index >= app->n_routes ||
	    device < 0 || (dev = card_device_find(app, (uint32_t)device)) == NULL ||
	    !route_has_device(&app->routes[index], (uint32_t)device)) {
		fprintf(stderr, "earshot-route-device: a client set Route index %d on device %d: no such route there\n",
				index, device);
		return -EINVAL;
	}
	route = &app->routes[index];
	if (dev->active != index) {
		fprintf(stderr, "earshot-route-device: a client switched device %d from %s to %s (save=%s)\n",
				device, dev->active >= 0 ? app->routes[dev->active].name : "(none)",
				route->name, save ? "true" : "false");
		dev->active = index;
		changed = true;
	} else {
		fprintf(stderr, "earshot-route-device: a client set the active route %s of device %d again (save=%s)\n",
				route->name, device, save ? "true" : "false");
	}
	if (route->save != save) {
		route->save = save;
		changed = true;
	}
	if (props != NULL && apply_route_props(dev, props))
		changed = true;
	if (changed) {
		device_mark_changed(app, IDX_Route);
		device_emit_info(app, false);
	}
	return 0;
}

static int set_profile(struct app *app, const struct spa_pod *param)
{
	int32_t index;
	bool save = false;
	uint32_t found = UINT32_MAX;
	int res;

	if (param == NULL) {
		/* the best available profile, as ALSA's device picks */
		for (uint32_t i = 0; i < app->n_profiles; i++) {
			if (profile_is_off(&app->profiles[i]) || app->profiles[i].available == SPA_PARAM_AVAILABILITY_no)
				continue;
			if (found == UINT32_MAX || app->profiles[i].priority > app->profiles[found].priority)
				found = i;
		}
		if (found == UINT32_MAX)
			found = app->current_profile;
		save = true;
	} else {
		if ((res = spa_pod_parse_object(param, SPA_TYPE_OBJECT_ParamProfile, NULL,
				SPA_PARAM_PROFILE_index, SPA_POD_Int(&index),
				SPA_PARAM_PROFILE_save, SPA_POD_OPT_Bool(&save))) < 0) {
			fprintf(stderr, "earshot-route-device: a client set a Profile that does not parse (%s)\n",
					spa_strerror(res));
			return res;
		}
		for (uint32_t i = 0; i < app->n_profiles; i++)
			if ((int32_t)app->profiles[i].index == index)
				found = i;
		if (found == UINT32_MAX) {
			fprintf(stderr, "earshot-route-device: a client set Profile index %d: no such profile\n", index);
			return -EINVAL;
		}
	}
	if (found != app->current_profile) {
		/* The nodes stay: every profile but "off" has them all (see build_profile). */
		fprintf(stderr, "earshot-route-device: a client switched the profile from %s to %s\n",
				app->profiles[app->current_profile].name, app->profiles[found].name);
		app->current_profile = found;
		device_mark_changed(app, IDX_Profile);
		device_mark_changed(app, IDX_Route);
		device_mark_changed(app, IDX_EnumRoute);
	} else {
		fprintf(stderr, "earshot-route-device: a client set the current profile %s again\n",
				app->profiles[found].name);
	}
	if (app->profiles[found].save != save) {
		app->profiles[found].save = save;
		device_mark_changed(app, IDX_Profile);
	}
	device_emit_info(app, false);
	return 0;
}

static int impl_set_param(void *object, uint32_t id, uint32_t flags, const struct spa_pod *param)
{
	struct app *app = object;

	(void)flags;
	switch (id) {
	case SPA_PARAM_Route:
		return set_route(app, param);
	case SPA_PARAM_Profile:
		return set_profile(app, param);
	default:
		return -ENOENT;
	}
}

static const struct spa_device_methods device_methods = {
	SPA_VERSION_DEVICE_METHODS,
	.add_listener = impl_add_listener,
	.sync = impl_sync,
	.enum_params = impl_enum_params,
	.set_param = impl_set_param,
};

void device_init(struct app *app)
{
	app->device.iface = SPA_INTERFACE_INIT(SPA_TYPE_INTERFACE_Device, SPA_VERSION_DEVICE,
			&device_methods, app);
	spa_hook_list_init(&app->hooks);

	for (uint32_t i = 0; i < app->n_device_props; i++)
		app->device_items[i] = SPA_DICT_ITEM_INIT(app->device_props[i].key, app->device_props[i].value);
	app->device_dict = SPA_DICT_INIT(app->device_items, app->n_device_props);

	app->info = SPA_DEVICE_INFO_INIT();
	app->params[IDX_EnumProfile] = (struct spa_param_info){ .id = SPA_PARAM_EnumProfile, .flags = SPA_PARAM_INFO_READ };
	app->params[IDX_Profile] = (struct spa_param_info){ .id = SPA_PARAM_Profile, .flags = SPA_PARAM_INFO_READWRITE };
	app->params[IDX_EnumRoute] = (struct spa_param_info){ .id = SPA_PARAM_EnumRoute, .flags = SPA_PARAM_INFO_READ };
	app->params[IDX_Route] = (struct spa_param_info){ .id = SPA_PARAM_Route, .flags = SPA_PARAM_INFO_READWRITE };
	app->info.params = app->params;
	app->info.n_params = N_PARAMS;
}
