/* Packets of the plugin's protocol (include/audiopolicy_alsa_protocol.h) to and from bytes. No ALSA, no sockets. */
#ifndef APA_WIRE_H
#define APA_WIRE_H

#include "audiopolicy_alsa_protocol.h"

#include <stdbool.h>
#include <stddef.h>

/* Internal to the plugin: it is loaded into other programs, and must not add names to them. */
#pragma GCC visibility push(hidden)

/* A daemon's packet that passed every check, with its values clamped into range. */
struct apa_command {
    enum apa_message_type type;  /* APA_MSG_SET_GAIN, _RAMP, _MUTE, _METER or _QUERY */
    float gain;                  /* SET_GAIN, RAMP: finite, 0...1 */
    uint32_t ramp_ms;            /* SET_GAIN, RAMP, MUTE: APA_MIN_RAMP_MS...APA_MAX_RAMP_MS */
    float floor_db;              /* RAMP: finite, APA_MIN_FLOOR_DB...below 0 */
    bool muted;                  /* MUTE */
    uint32_t interval_ms;        /* METER: 0, APA_METER_OFF, or APA_MIN_METER_INTERVAL_MS...APA_MAX_METER_INTERVAL_MS */
};

/* Parses one received packet of `length` bytes. False, and *command untouched, for anything that
 * is not a well-formed daemon packet of this version: the caller ignores it. */
bool apa_wire_parse_command(const void *packet, size_t length, struct apa_command *command);

/* The plugin's packets, encoded little-endian into `out`; each returns the packet's size. Strings
 * longer than their field are cut to leave a NUL. */
struct apa_hello_fields {
    uint32_t pid;
    enum apa_direction direction;
    const char *binary, *class_hint, *application, *pcm_name;  /* NULL = empty */
};
size_t apa_wire_hello(struct apa_hello *out, const struct apa_hello_fields *fields);
size_t apa_wire_format(struct apa_format *out, uint32_t rate, uint16_t channels, enum apa_sample_format format,
                       uint32_t buffer_frames, uint32_t period_frames);
size_t apa_wire_state(struct apa_state *out, enum apa_stream_state state, bool muted, float gain, float target,
                      uint64_t position);
size_t apa_wire_peak(struct apa_peak *out, float peak_in, float peak_out, uint32_t frames, uint64_t position);

/* Daemon packets, for tests and tools that play the daemon. */
size_t apa_wire_set_gain(struct apa_set_gain *out, float gain, uint32_t ramp_ms);
size_t apa_wire_ramp(struct apa_ramp *out, float gain, uint32_t ramp_ms, float floor_db);
size_t apa_wire_mute(struct apa_mute *out, bool muted, uint32_t fade_ms);
size_t apa_wire_meter(struct apa_meter *out, uint32_t interval_ms);
size_t apa_wire_query(struct apa_query *out);

#pragma GCC visibility pop

#endif
