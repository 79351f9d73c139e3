#ifndef AUDIO_POLICYD_CPULSE_H
#define AUDIO_POLICYD_CPULSE_H
/* libpulse's API, its functions reached through trampolines (trampolines.c) that load libpulse at the
 * first call: the daemon in ALSA mode never calls one, so never maps libpulse and what it links. */
#include <pulse/pulseaudio.h>
#include <pulse/ext-stream-restore.h>
#endif
