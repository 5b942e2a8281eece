// sd-bus, libsystemd's D-Bus library: the session service, MPRIS and BlueZ go through it.
#pragma once
#include <systemd/sd-bus.h>
