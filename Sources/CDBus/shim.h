#ifndef AUDIO_POLICYD_CDBUS_SHIM_H
#define AUDIO_POLICYD_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
