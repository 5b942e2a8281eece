#pragma once
#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <pipewire/impl-metadata.h>
#include <spa/utils/result.h>
#include <spa/param/audio/raw.h>
