#!/bin/sh
# Captures desktop.json: a real pw-dump of a private PipeWire + WirePlumber sandbox with
# null sinks carrying the properties real ALSA, USB and BlueZ sinks have. Run from this
# directory: ./capture.sh > desktop.json
set -eu
d=$(mktemp -d)
mkdir -m700 "$d/rt"
export XDG_RUNTIME_DIR="$d/rt" XDG_STATE_HOME="$d/st" XDG_CONFIG_HOME="$d/cf"
pipewire >/dev/null 2>&1 & pw=$!
dbus-daemon --session --nofork --address="unix:path=$XDG_RUNTIME_DIR/bus" >/dev/null 2>&1 & db=$!
sleep 0.3
DBUS_SESSION_BUS_ADDRESS="unix:path=$XDG_RUNTIME_DIR/bus" wireplumber >/dev/null 2>&1 & wp=$!
sleep 1
sink() { pw-cli create-node adapter "{ factory.name=support.null-audio-sink media.class=Audio/Sink object.linger=true audio.position=[FL FR] $1 }" >/dev/null; }
sink 'node.name=alsa_output.pci-0000_00_1f.3.analog-stereo node.description="Built-in Audio Analog Stereo" node.nick="ALC257 Analog" device.bus=pci device.form-factor=internal device.api=alsa device.class=sound device.profile.name=analog-stereo device.profile.description="Analog Stereo" alsa.card=0 alsa.card_name="HDA Intel PCH" alsa.driver_name=snd_hda_intel alsa.name="ALC257 Analog" alsa.id="ALC257 Analog" api.alsa.path="front:0" priority.session=1009 priority.driver=1009'
sink 'node.name=alsa_output.pci-0000_00_1f.3.hdmi-stereo node.description="Built-in Audio Digital Stereo (HDMI)" node.nick="HDMI 0" device.bus=pci device.api=alsa device.class=sound device.profile.name=hdmi-stereo device.profile.description="Digital Stereo (HDMI)" alsa.card=0 alsa.card_name="HDA Intel PCH" alsa.driver_name=snd_hda_intel alsa.name="HDMI 0" alsa.id="HDMI 0" api.alsa.path="hdmi:0" priority.session=696 priority.driver=696'
sink 'node.name=alsa_output.usb-FiiO_K3-00.analog-stereo node.description="FiiO K3 Analog Stereo" node.nick="FiiO K3" device.bus=usb device.api=alsa device.class=sound device.vendor.id=0x2972 device.product.id=0x0047 device.profile.name=analog-stereo alsa.card=2 alsa.card_name="FiiO K3" alsa.driver_name=snd_usb_audio api.alsa.path="front:2" priority.session=1009 priority.driver=1009'
sink 'node.name=bluez_output.AA_BB_CC_DD_EE_FF.1 node.description="WH-1000XM4" device.bus=bluetooth device.api=bluez5 device.form-factor=headphone api.bluez5.address="AA:BB:CC:DD:EE:FF" api.bluez5.profile=a2dp-sink api.bluez5.codec=ldac device.vendor.id=bluetooth:054c device.product.id=0x0d58 priority.session=1010 priority.driver=1010'
sink 'node.name=bluez_output.50_C2_ED_12_34_56.1 node.description="Jabra Evolve2 65" device.bus=bluetooth device.api=bluez5 device.form-factor=headset api.bluez5.address="50:C2:ED:12:34:56" api.bluez5.profile=a2dp-sink api.bluez5.codec=sbc device.vendor.id=bluetooth:0b0e device.product.id=0x24ad priority.session=1010 priority.driver=1010'
pw-metadata 0 default.configured.audio.sink '{"name":"alsa_output.pci-0000_00_1f.3.analog-stereo"}' Spa:String:JSON >/dev/null
sleep 0.5
pw-dump
kill "$wp" "$db" "$pw"
wait 2>/dev/null || true
rm -rf "$d"
