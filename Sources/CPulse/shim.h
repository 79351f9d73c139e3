#ifndef AUDIO_POLICYD_CPULSE_SHIM_H
#define AUDIO_POLICYD_CPULSE_SHIM_H
#include <pulse/pulseaudio.h>
#include <pulse/ext-stream-restore.h>
#endif
