/*
 * The wire protocol between the ALSA plugin (in every ALSA client) and audio-policyd.
 *
 * One SOCK_SEQPACKET connection per PCM stream: the plugin connects at snd_pcm_open and closes at
 * snd_pcm_close, so the daemon learns the client's pid from SO_PEERCRED and a crashed client as EOF.
 * Every message is one packet: a 4-byte header, then a fixed payload. All fields are little-endian,
 * packed, with the offsets given below; `size` is the whole packet and must equal the size of its
 * type. A receiver ignores any packet whose version, type, size or values are wrong.
 * docs/alsa-plugin.md describes the states and what each side does.
 */
#ifndef AUDIOPOLICY_ALSA_PROTOCOL_H
#define AUDIOPOLICY_ALSA_PROTOCOL_H

#include <stdint.h>

#define APA_PROTOCOL_VERSION 1

/* Message types: 1..15 go from the plugin to the daemon, 16..31 from the daemon to the plugin. */
enum apa_message_type {
    APA_MSG_HELLO = 1,      /* plugin: a stream opened (first packet of every connection) */
    APA_MSG_FORMAT = 2,     /* plugin: hw_params chosen */
    APA_MSG_STATE = 3,      /* plugin: state change, or answer to QUERY */
    APA_MSG_PEAK = 4,       /* plugin: peaks of a span of audio */
    APA_MSG_SET_GAIN = 16,  /* daemon: ramp to a linear gain */
    APA_MSG_MUTE = 17,      /* daemon: fade out to silence, or back in to the gain */
    APA_MSG_METER = 18,     /* daemon: report peaks periodically, or only when they matter */
    APA_MSG_QUERY = 19,     /* daemon: send STATE and the next PEAK now */
    APA_MSG_RAMP = 20,      /* daemon: one whole ramp to a linear gain, linear in decibels (HELLO's APA_FEATURE_RAMP) */
};

/* What a plugin can do beyond version 1's first messages, in HELLO's `features`: a daemon sends a
 * message of a feature only to a plugin that names it (an older plugin sends 0 and ignores it). */
#define APA_FEATURE_RAMP 1u           /* takes APA_MSG_RAMP */

/* Stream states, as far as an extplug can see them (it gets no start, drain, drop or pause callback). */
enum apa_stream_state {
    APA_STATE_OPEN = 0,      /* opened, or hw_free'd: no format */
    APA_STATE_SETUP = 1,     /* hw_params done */
    APA_STATE_PREPARED = 2,  /* snd_pcm_prepare (also after a drop or drain that the app follows with a prepare) */
    APA_STATE_RUNNING = 3,   /* the first samples went through after a prepare */
    APA_STATE_CLOSED = 4,    /* snd_pcm_close: the last packet of a connection; EOF without it means the client died */
};

enum apa_sample_format {
    APA_FORMAT_S16_LE = 1,
    APA_FORMAT_S32_LE = 2,
    APA_FORMAT_FLOAT_LE = 3,
};

enum apa_direction {
    APA_DIRECTION_PLAYBACK = 0,
    APA_DIRECTION_CAPTURE = 1,
};

/* Limits the plugin enforces on what the daemon sends. */
#define APA_MAX_RAMP_MS 60000u        /* longer ramps are clamped to this */
#define APA_MIN_RAMP_MS 2u            /* shorter ramps (0 included) are stretched to this: a step is a click */
#define APA_MIN_FLOOR_DB (-200.0f)   /* RAMP's lowest floor */
#define APA_MIN_METER_INTERVAL_MS 20u
#define APA_MAX_METER_INTERVAL_MS 1000u
/* METER interval meaning "no PEAK at all": a stream nobody measures costs the daemon no wake-up. */
#define APA_METER_OFF 0xFFFFFFFFu

#define APA_NAME_BYTES 32
#define APA_LONG_NAME_BYTES 64

#define APA_PACKED __attribute__((packed))

/* Offset 0, every packet. */
struct APA_PACKED apa_header {
    uint8_t version;   /* APA_PROTOCOL_VERSION */
    uint8_t type;      /* enum apa_message_type */
    uint16_t size;     /* bytes in the whole packet, header included */
};

/* Strings are UTF-8, NUL-padded to their field, with at least one NUL (the plugin cuts longer ones at a byte,
 * so a daemon must accept a cut multi-byte sequence at the end). */
struct APA_PACKED apa_hello {               /* 204 bytes */
    struct apa_header header;               /* 0 */
    uint32_t pid;                           /* 4: the client's idea of its pid; trust SO_PEERCRED instead */
    uint8_t direction;                      /* 8: enum apa_direction */
    uint8_t features;                       /* 9: APA_FEATURE_* bits */
    uint8_t reserved[2];                    /* 10 */
    char binary[APA_NAME_BYTES];            /* 12: program_invocation_short_name, e.g. "aplay" */
    char class_hint[APA_NAME_BYTES];        /* 44: the PCM's `class` config key, e.g. "navigation"; may be empty */
    char application[APA_LONG_NAME_BYTES];  /* 76: $AUDIO_POLICYD_APP_NAME, else the `name` config key; may be empty */
    char pcm_name[APA_LONG_NAME_BYTES];     /* 140: the ALSA PCM name the app opened, e.g. "default" */
};

struct APA_PACKED apa_format {              /* 20 bytes */
    struct apa_header header;               /* 0 */
    uint32_t rate;                          /* 4: frames per second */
    uint16_t channels;                      /* 8 */
    uint16_t format;                        /* 10: enum apa_sample_format */
    uint32_t buffer_frames;                 /* 12: how far ahead of the ear the plugin may run */
    uint32_t period_frames;                 /* 16 */
};

struct APA_PACKED apa_state {               /* 24 bytes */
    struct apa_header header;               /* 0 */
    uint8_t state;                          /* 4: enum apa_stream_state */
    uint8_t muted;                          /* 5: 1 while a MUTE is in force */
    uint16_t reserved;                      /* 6 */
    float gain;                             /* 8: linear gain applied to the last frame */
    float target;                           /* 12: where the ramp is going (0 while muted) */
    uint64_t position;                      /* 16: frames through the plugin since the last prepare */
};

struct APA_PACKED apa_peak {                /* 24 bytes */
    struct apa_header header;               /* 0 */
    float peak_in;                          /* 4: highest |sample| the app wrote in the span, 1 = full scale */
    float peak_out;                         /* 8: highest |sample| after the gain: what is heard */
    uint32_t frames;                        /* 12: length of the span */
    uint64_t position;                      /* 16: position at the end of the span */
};

struct APA_PACKED apa_set_gain {            /* 12 bytes */
    struct apa_header header;               /* 0 */
    float gain;                             /* 4: linear, finite, 0...1 (else the packet is ignored) */
    uint32_t ramp_ms;                       /* 8: linear ramp from the current gain; clamped to 2...60000 */
};

/* The daemon's whole ramp in one message: the gain moves from where it is to `gain` along a straight
 * line in decibels, as the daemon's own ramps do, so a duck or fade needs no message per step. A gain
 * at or below `floor_db` counts as the floor (a fade-in from silence starts there; a fade-out reaches
 * it and its last frame is 0). */
struct APA_PACKED apa_ramp {                /* 16 bytes */
    struct apa_header header;               /* 0 */
    float gain;                             /* 4: linear, finite, 0...1 (else the packet is ignored) */
    uint32_t ramp_ms;                       /* 8: clamped like SET_GAIN's */
    float floor_db;                         /* 12: finite, APA_MIN_FLOOR_DB...below 0 (else ignored) */
};

struct APA_PACKED apa_mute {                /* 12 bytes */
    struct apa_header header;               /* 0 */
    uint8_t muted;                          /* 4: 1 = fade to silence, 0 = fade back to the gain (else ignored) */
    uint8_t reserved[3];                    /* 5 */
    uint32_t fade_ms;                       /* 8: clamped like ramp_ms */
};

struct APA_PACKED apa_meter {               /* 8 bytes */
    struct apa_header header;               /* 0 */
    uint32_t interval_ms;                   /* 4: 0 = default reporting; else a PEAK per interval, clamped to 20...1000 */
};

struct APA_PACKED apa_query {               /* 4 bytes */
    struct apa_header header;               /* 0 */
};

_Static_assert(sizeof(struct apa_header) == 4, "wire layout");
_Static_assert(sizeof(struct apa_hello) == 204, "wire layout");
_Static_assert(sizeof(struct apa_format) == 20, "wire layout");
_Static_assert(sizeof(struct apa_state) == 24, "wire layout");
_Static_assert(sizeof(struct apa_peak) == 24, "wire layout");
_Static_assert(sizeof(struct apa_set_gain) == 12, "wire layout");
_Static_assert(sizeof(struct apa_ramp) == 16, "wire layout");
_Static_assert(sizeof(struct apa_mute) == 12, "wire layout");
_Static_assert(sizeof(struct apa_meter) == 8, "wire layout");
_Static_assert(sizeof(struct apa_query) == 4, "wire layout");

#endif
