#ifndef AUDIO_POLICYD_PULSE_LIBRARY_H
#define AUDIO_POLICYD_PULSE_LIBRARY_H
/* The address of libpulse's function `name`, cached in `*slot`; libpulse.so.0 is opened at the first
 * call. Aborts with a message when libpulse is missing: a pulse backend cannot run without it. */
void *apd_pulse_symbol(void **slot, const char *name);
#endif
