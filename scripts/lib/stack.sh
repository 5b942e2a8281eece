# Sourced by scripts/test and scripts/sandbox: the second PipeWire stack every test run covers,
# PipeWire 1.4 + WirePlumber 0.5 from bookworm-backports, unpacked into a private prefix
# (never installed over the system's packages). The environment that points PipeWire,
# WirePlumber, the fixtures and Earshot at that prefix is set here and nowhere else.
# shellcheck shell=bash

EARSHOT_STACK_NAME="1.4"
EARSHOT_STACK_PIPEWIRE_VERSION="1.4.2-1~bpo12+1"
EARSHOT_STACK_WIREPLUMBER_VERSION="0.5.8-1~bpo12+1"
EARSHOT_STACK_PACKAGES=(
    "pipewire=$EARSHOT_STACK_PIPEWIRE_VERSION" "pipewire-bin=$EARSHOT_STACK_PIPEWIRE_VERSION"
    "libpipewire-0.3-0=$EARSHOT_STACK_PIPEWIRE_VERSION" "libpipewire-0.3-common=$EARSHOT_STACK_PIPEWIRE_VERSION"
    "libpipewire-0.3-modules=$EARSHOT_STACK_PIPEWIRE_VERSION" "libspa-0.2-modules=$EARSHOT_STACK_PIPEWIRE_VERSION"
    "libpipewire-0.3-dev=$EARSHOT_STACK_PIPEWIRE_VERSION" "libspa-0.2-dev=$EARSHOT_STACK_PIPEWIRE_VERSION"
    "wireplumber=$EARSHOT_STACK_WIREPLUMBER_VERSION" "libwireplumber-0.5-0=$EARSHOT_STACK_WIREPLUMBER_VERSION"
    # pipewire-pulse for the browsers and paplay (PipeWireSandbox.Options.pulse): its
    # /usr/bin/pipewire-pulse (a symlink to pipewire, which then reads pipewire-pulse.conf)
    # and that config; the protocol module itself is in libpipewire-0.3-modules.
    "pipewire-pulse=$EARSHOT_STACK_PIPEWIRE_VERSION"
    # WirePlumber 0.5's Lua (bookworm main; not installed on the system).
    "liblua5.4-0"
)

# The prefix, under the repository's build directory.
earshot_stack_dir() {
    echo "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.build/stacks/pipewire-$EARSHOT_STACK_NAME"
}

# Downloads the exact versions with a private apt state (bookworm-backports is not added to
# the system's sources) and unpacks them with dpkg-deb -x. Does nothing when the prefix holds
# these versions already. Fails (never skips) when a package cannot be had.
earshot_stack_install() {
    local dir stamp wanted
    dir="$(earshot_stack_dir)"
    stamp="$dir/installed"
    wanted="${EARSHOT_STACK_PACKAGES[*]}"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then return 0; fi
    echo "installing PipeWire $EARSHOT_STACK_PIPEWIRE_VERSION + WirePlumber $EARSHOT_STACK_WIREPLUMBER_VERSION into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs" "$dir/prefix"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-backports main" \
        > "$dir/apt/sources.list"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
        >> "$dir/apt/sources.list"
    local apt=(
        -o "Dir::Etc::SourceList=$dir/apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
        -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache"
        -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
    )
    apt-get "${apt[@]}" update -qq >&2 || { echo "error: apt-get update for bookworm-backports failed" >&2; return 1; }
    (cd "$dir/debs" && apt-get "${apt[@]}" download "${EARSHOT_STACK_PACKAGES[@]}" >&2) \
        || { echo "error: cannot download the PipeWire $EARSHOT_STACK_NAME stack" >&2; return 1; }
    local deb
    for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/prefix"; done
    rm -rf "$dir/apt" "$dir/debs"
    echo "$wanted" > "$stamp"
}

# Points PipeWire, WirePlumber and every client (Earshot included) at the prefix. With
# PIPEWIRE_CONFIG_DIR set PipeWire 1.4 reads only that directory, so the fixtures copy it into
# a per-sandbox directory of their own before adding drop-ins (EARSHOT_STACK tells them).
earshot_stack_env() {
    local prefix lib
    prefix="$(earshot_stack_dir)/prefix"
    lib="$prefix/usr/lib/x86_64-linux-gnu"
    export EARSHOT_STACK="$EARSHOT_STACK_NAME"
    export PATH="$prefix/usr/bin:$PATH"
    export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export PIPEWIRE_MODULE_DIR="$lib/pipewire-0.3"
    export SPA_PLUGIN_DIR="$lib/spa-0.2"
    export SPA_DATA_DIR="$prefix/usr/share/spa-0.2"
    export PIPEWIRE_CONFIG_DIR="$prefix/usr/share/pipewire"
    export WIREPLUMBER_MODULE_DIR="$lib/wireplumber-0.5"
    export WIREPLUMBER_CONFIG_DIR="$prefix/usr/share/wireplumber"
    export WIREPLUMBER_DATA_DIR="$prefix/usr/share/wireplumber"
}
