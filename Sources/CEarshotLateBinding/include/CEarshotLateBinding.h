#ifndef CEARSHOT_LATE_BINDING_H
#define CEARSHOT_LATE_BINDING_H

// Nothing to call: late-binding.c defines libpipewire-0.3's and libsystemd's functions for the
// `earshot` client, which links it in place of the two libraries. No Swift module imports this.

#endif
