// sd-bus, libsystemd's D-Bus library: the session service, MPRIS and BlueZ go through it.
#pragma once
#include <systemd/sd-bus.h>
// eventfd wakes the D-Bus thread's poll; Swift's Glibc module does not include it.
#include <sys/eventfd.h>
