# Sourced by scripts/test and scripts/run: installs the Debian packages Earshot builds and
# tests against, running apt-get update first, and only when something is missing.
# shellcheck shell=bash

EARSHOT_PACKAGES=(
    pkg-config libpipewire-0.3-dev libspa-0.2-dev   # build: libpipewire headers
    pipewire pipewire-bin wireplumber               # the real daemons (pw-cli, pw-dump, pw-metadata, pw-link, wpctl)
    dbus-daemon dbus-bin                            # a private session bus for WirePlumber and MPRIS
    mpv mpv-mpris playerctl                         # a real playing stream and MPRIS peer
    socat jq                                        # control-protocol examples, scripts
    systemd                                         # systemd-analyze verify of the user unit (scripts/install)
    libsystemd-dev                                  # build: sd-bus, the D-Bus library (session service, MPRIS, BlueZ)
    python3-dbus libglib2.0-bin                     # the Python reporter example; gdbus as a real D-Bus client in tests
    python3-gi                                      # the stand-in org.bluez of the tests (scripts/testing/bluez-standin)
    librsvg2-bin                                    # rsvg-convert: a real renderer for earshot eval --format svg
    upower                                          # upowerd and upower: the desktop's battery reader, end to end (issue 31)
    # Real players Earshot does not control, for live tests (PipeWireTestSupport's Browser,
    # startPulsePlayer): the browsers publish MPRIS and play through PipeWire's PulseAudio
    # server on a virtual X display; paplay plays with no MPRIS; pactl checks the server.
    chromium firefox-esr                            # real browsers: <audio autoplay loop>, MPRIS
    xvfb                                            # Xvfb: their display, one per test
    pipewire-pulse                                  # pipewire-pulse: their sound server (the system's 0.3.65)
    pulseaudio-utils                                # paplay (a player with no MPRIS), pactl
)

# Building and checking the Debian package (scripts/package, scripts/check-package).
EARSHOT_PACKAGING_PACKAGES=(
    dpkg-dev binutils                               # dpkg-shlibdeps; strip
    go-md2man                                       # earshot-control(7) from docs/control-protocol.md
    lintian man-db                                  # the package's checks; man -w
)

# earshot_install_packages [EXTRA…]: EARSHOT_PACKAGES and any extra ones.
earshot_install_packages() {
    local missing=() package
    for package in "${EARSHOT_PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing Debian packages: ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# Fails (never skips) when a real component the tests need is not there.
earshot_require_components() {
    local missing=() command
    for command in pipewire wireplumber dbus-daemon mpv playerctl pw-cli pw-dump pw-metadata pw-link wpctl rsvg-convert upower \
        chromium firefox-esr Xvfb pipewire-pulse paplay pactl; do
        command -v "$command" >/dev/null || missing+=("$command")
    done
    [ -f /usr/lib/mpv-mpris/mpris.so ] || missing+=("/usr/lib/mpv-mpris/mpris.so")
    [ -x /usr/libexec/upowerd ] || missing+=("/usr/libexec/upowerd")
    # The Debian interpreter the tests run Python with (not whichever python3 is first in PATH).
    local module
    for module in dbus gi; do
        /usr/bin/python3 -c "import $module" 2>/dev/null || missing+=("python3 module $module (/usr/bin/python3)")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "error: missing real components: ${missing[*]}" >&2
        return 1
    fi
}
