/* The stream's side of the conversation. Rules: the daemon only ever lowers or restores the gain;
 * every change is a ramp; losing the daemon ramps back to unity, so a crash never leaves a client
 * ducked or muted. */
#include "stream.h"

#include <string.h>

/* The link lost the daemon: give the stream back its own level. */
static void restore_unity(struct apa_stream *stream)
{
    stream->gain = 1.0f;
    stream->muted = false;
    uint64_t frames = apa_ramp_frames(stream->restore_ms, stream->rate);
    bool returning_soon = stream->ramp.target == 1.0f && stream->ramp.remaining <= frames;
    if (!apa_gain_ramp_is_unity(&stream->ramp) && !returning_soon)
        apa_gain_ramp_start(&stream->ramp, 1.0f, frames);
    apa_peak_reporter_init(&stream->reporter, stream->rate, 0);
    stream->meter_interval_ms = 0;
}

static void send_packet(struct apa_stream *stream, const void *packet, size_t length)
{
    if (apa_daemon_link_send(&stream->link, packet, length) == APA_LINK_LOST)
        restore_unity(stream);
}

static void send_state(struct apa_stream *stream)
{
    struct apa_state packet;
    size_t length = apa_wire_state(&packet, stream->state, stream->muted, (float)stream->ramp.gain,
                                   stream->ramp.target, stream->position);
    send_packet(stream, &packet, length);
}

/* A new connection learns everything a daemon that was there from the start would know. */
static void introduce(struct apa_stream *stream)
{
    send_packet(stream, &stream->hello, sizeof stream->hello);
    if (stream->has_format)
        send_packet(stream, &stream->format, sizeof stream->format);
    send_state(stream);
    apa_peak_reporter_request(&stream->reporter);
}

void apa_stream_open(struct apa_stream *stream, const char *socket_path, const struct apa_hello_fields *hello,
                     uint32_t restore_ms, uint64_t now_ns)
{
    memset(stream, 0, sizeof *stream);
    apa_daemon_link_init(&stream->link, socket_path);
    apa_wire_hello(&stream->hello, hello);
    stream->rate = 48000;
    stream->state = APA_STATE_OPEN;
    stream->gain = 1.0f;
    stream->restore_ms = restore_ms < APA_MIN_RAMP_MS ? APA_MIN_RAMP_MS : restore_ms;  /* a step is a click */
    apa_gain_ramp_settle(&stream->ramp, 1.0f);
    apa_peak_reporter_init(&stream->reporter, stream->rate, 0);
    if (apa_daemon_link_connect(&stream->link, now_ns))
        introduce(stream);
}

void apa_stream_set_format(struct apa_stream *stream, unsigned rate, unsigned channels,
                           enum apa_sample_format format, uint32_t buffer_frames, uint32_t period_frames)
{
    stream->rate = rate ? rate : 48000;
    apa_wire_format(&stream->format, stream->rate, (uint16_t)channels, format, buffer_frames, period_frames);
    stream->has_format = true;
    apa_peak_reporter_init(&stream->reporter, stream->rate, stream->meter_interval_ms);
    send_packet(stream, &stream->format, sizeof stream->format);
    apa_stream_set_state(stream, APA_STATE_SETUP);
}

void apa_stream_set_state(struct apa_stream *stream, enum apa_stream_state state)
{
    if (state == APA_STATE_PREPARED) {
        stream->position = 0;
        apa_peak_reporter_restart(&stream->reporter);
    }
    stream->state = state;
    send_state(stream);
}

static void apply(struct apa_stream *stream, const struct apa_command *command)
{
    switch (command->type) {
    case APA_MSG_SET_GAIN:
        stream->gain = command->gain;
        if (!stream->muted)
            apa_gain_ramp_start(&stream->ramp, stream->gain, apa_ramp_frames(command->ramp_ms, stream->rate));
        break;
    case APA_MSG_RAMP:
        stream->gain = command->gain;
        if (!stream->muted)
            apa_gain_ramp_start_decibels(&stream->ramp, stream->gain, apa_ramp_frames(command->ramp_ms, stream->rate),
                                         command->floor_db);
        break;
    case APA_MSG_MUTE:
        stream->muted = command->muted;
        apa_gain_ramp_start(&stream->ramp, stream->muted ? 0.0f : stream->gain,
                            apa_ramp_frames(command->ramp_ms, stream->rate));
        break;
    case APA_MSG_METER:
        stream->meter_interval_ms = command->interval_ms;
        apa_peak_reporter_init(&stream->reporter, stream->rate, command->interval_ms);
        break;
    case APA_MSG_QUERY:
        send_state(stream);
        apa_peak_reporter_request(&stream->reporter);
        break;
    default:
        break;
    }
}

void apa_stream_poll(struct apa_stream *stream, uint64_t now_ns)
{
    if (apa_daemon_link_connect(&stream->link, now_ns))
        introduce(stream);
    /* Large enough for any packet of ours and then some; bigger ones arrive cut and are ignored. */
    unsigned char buffer[256];
    for (int i = 0; i < APA_MAX_COMMANDS_PER_POLL; i++) {
        size_t length = 0;
        enum apa_link_result result =
            apa_daemon_link_receive(&stream->link, buffer, sizeof buffer, &length);
        if (result == APA_LINK_LOST) {
            restore_unity(stream);
            return;
        }
        if (result == APA_LINK_NOTHING)
            return;
        struct apa_command command;
        if (length <= sizeof buffer && apa_wire_parse_command(buffer, length, &command))
            apply(stream, &command);
    }
}

void apa_stream_account(struct apa_stream *stream, struct apa_peaks peaks, uint32_t frames, uint64_t now_ns)
{
    if (stream->state == APA_STATE_PREPARED && frames > 0)
        apa_stream_set_state(stream, APA_STATE_RUNNING);
    stream->position += frames;
    struct apa_peak_span span;
    if (apa_daemon_link_is_up(&stream->link) &&
        apa_peak_reporter_add(&stream->reporter, peaks, frames, now_ns, &span)) {
        struct apa_peak packet;
        size_t length = apa_wire_peak(&packet, span.peaks.in, span.peaks.out, span.frames, stream->position);
        send_packet(stream, &packet, length);
    }
}

void apa_stream_close(struct apa_stream *stream)
{
    apa_stream_set_state(stream, APA_STATE_CLOSED);
    apa_daemon_link_close(&stream->link);
}
