#pragma once
#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <pipewire/impl-metadata.h>
#include <spa/utils/result.h>
