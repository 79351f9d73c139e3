/* Encoding and checking packets. Fields are stored with explicit little-endian conversions, so the
 * packed structs read the same on any host and the daemon can mirror them by offset. */
#include "wire.h"

#include <endian.h>
#include <math.h>
#include <string.h>

static uint32_t le_float(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return htole32(bits);
}

static float float_le(uint32_t le_bits)
{
    uint32_t bits = le32toh(le_bits);
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static void put_header(struct apa_header *header, enum apa_message_type type, size_t size)
{
    header->version = APA_PROTOCOL_VERSION;
    header->type = (uint8_t)type;
    header->size = htole16((uint16_t)size);
}

/* Copies a string into a fixed field, cut to leave at least one NUL; the field is already zeroed. */
static void put_name(char *field, size_t width, const char *name)
{
    if (name)
        memcpy(field, name, strnlen(name, width - 1));
}

static uint32_t clamp_u32(uint32_t value, uint32_t low, uint32_t high)
{
    return value < low ? low : value > high ? high : value;
}

static uint32_t clamp_ramp(uint32_t le_ms)
{
    return clamp_u32(le32toh(le_ms), APA_MIN_RAMP_MS, APA_MAX_RAMP_MS);
}

/* A gain field: finite and in 0...1, else the packet is ignored. */
static bool parse_gain(float le_field, float *gain)
{
    uint32_t bits;
    memcpy(&bits, &le_field, sizeof bits);
    float value = float_le(bits);
    /* isfinite first: NaN fails every comparison, so a range check alone would let it through. */
    if (!isfinite(value) || value < 0.0f || value > 1.0f)
        return false;
    *gain = value;
    return true;
}

bool apa_wire_parse_command(const void *packet, size_t length, struct apa_command *command)
{
    struct apa_header header;
    if (length < sizeof header)
        return false;
    memcpy(&header, packet, sizeof header);
    if (header.version != APA_PROTOCOL_VERSION || le16toh(header.size) != length)
        return false;

    struct apa_command parsed = {.type = (enum apa_message_type)header.type};
    switch (header.type) {
    case APA_MSG_SET_GAIN: {
        struct apa_set_gain message;
        if (length != sizeof message)
            return false;
        memcpy(&message, packet, sizeof message);
        if (!parse_gain(message.gain, &parsed.gain))
            return false;
        parsed.ramp_ms = clamp_ramp(message.ramp_ms);
        break;
    }
    case APA_MSG_RAMP: {
        struct apa_ramp message;
        if (length != sizeof message)
            return false;
        memcpy(&message, packet, sizeof message);
        uint32_t floor_bits;
        memcpy(&floor_bits, &message.floor_db, sizeof floor_bits);
        float floor_db = float_le(floor_bits);
        if (!parse_gain(message.gain, &parsed.gain) || !isfinite(floor_db) || floor_db < APA_MIN_FLOOR_DB ||
            floor_db >= 0.0f)
            return false;
        parsed.ramp_ms = clamp_ramp(message.ramp_ms);
        parsed.floor_db = floor_db;
        break;
    }
    case APA_MSG_MUTE: {
        struct apa_mute message;
        if (length != sizeof message)
            return false;
        memcpy(&message, packet, sizeof message);
        if (message.muted > 1)
            return false;
        parsed.muted = message.muted;
        parsed.ramp_ms = clamp_ramp(message.fade_ms);
        break;
    }
    case APA_MSG_METER: {
        struct apa_meter message;
        if (length != sizeof message)
            return false;
        memcpy(&message, packet, sizeof message);
        uint32_t interval = le32toh(message.interval_ms);
        parsed.interval_ms = interval == APA_METER_OFF || interval == 0
                                 ? interval
                                 : clamp_u32(interval, APA_MIN_METER_INTERVAL_MS, APA_MAX_METER_INTERVAL_MS);
        break;
    }
    case APA_MSG_QUERY:
        if (length != sizeof(struct apa_query))
            return false;
        break;
    default:
        return false;
    }
    *command = parsed;
    return true;
}

size_t apa_wire_hello(struct apa_hello *out, const struct apa_hello_fields *fields)
{
    memset(out, 0, sizeof *out);
    put_header(&out->header, APA_MSG_HELLO, sizeof *out);
    out->pid = htole32(fields->pid);
    out->direction = (uint8_t)fields->direction;
    out->features = APA_FEATURE_RAMP;
    put_name(out->binary, sizeof out->binary, fields->binary);
    put_name(out->class_hint, sizeof out->class_hint, fields->class_hint);
    put_name(out->application, sizeof out->application, fields->application);
    put_name(out->pcm_name, sizeof out->pcm_name, fields->pcm_name);
    return sizeof *out;
}

size_t apa_wire_format(struct apa_format *out, uint32_t rate, uint16_t channels, enum apa_sample_format format,
                       uint32_t buffer_frames, uint32_t period_frames)
{
    memset(out, 0, sizeof *out);
    put_header(&out->header, APA_MSG_FORMAT, sizeof *out);
    out->rate = htole32(rate);
    out->channels = htole16(channels);
    out->format = htole16((uint16_t)format);
    out->buffer_frames = htole32(buffer_frames);
    out->period_frames = htole32(period_frames);
    return sizeof *out;
}

size_t apa_wire_state(struct apa_state *out, enum apa_stream_state state, bool muted, float gain, float target,
                      uint64_t position)
{
    memset(out, 0, sizeof *out);
    put_header(&out->header, APA_MSG_STATE, sizeof *out);
    out->state = (uint8_t)state;
    out->muted = muted;
    uint32_t gain_bits = le_float(gain), target_bits = le_float(target);
    memcpy(&out->gain, &gain_bits, sizeof gain_bits);
    memcpy(&out->target, &target_bits, sizeof target_bits);
    out->position = htole64(position);
    return sizeof *out;
}

size_t apa_wire_peak(struct apa_peak *out, float peak_in, float peak_out, uint32_t frames, uint64_t position)
{
    memset(out, 0, sizeof *out);
    put_header(&out->header, APA_MSG_PEAK, sizeof *out);
    uint32_t in_bits = le_float(peak_in), out_bits = le_float(peak_out);
    memcpy(&out->peak_in, &in_bits, sizeof in_bits);
    memcpy(&out->peak_out, &out_bits, sizeof out_bits);
    out->frames = htole32(frames);
    out->position = htole64(position);
    return sizeof *out;
}

size_t apa_wire_set_gain(struct apa_set_gain *out, float gain, uint32_t ramp_ms)
{
    memset(out, 0, sizeof *out);
    put_header(&out->header, APA_MSG_SET_GAIN, sizeof *out);
    uint32_t bits = le_float(gain);
    memcpy(&out->gain, &bits, sizeof bits);
    out->ramp_ms = htole32(ramp_ms);
    return sizeof *out;
}

size_t apa_wire_ramp(struct apa_ramp *out, float gain, uint32_t ramp_ms, float floor_db)
{
    memset(out, 0, sizeof *out);
    put_header(&out->header, APA_MSG_RAMP, sizeof *out);
    uint32_t gain_bits = le_float(gain), floor_bits = le_float(floor_db);
    memcpy(&out->gain, &gain_bits, sizeof gain_bits);
    out->ramp_ms = htole32(ramp_ms);
    memcpy(&out->floor_db, &floor_bits, sizeof floor_bits);
    return sizeof *out;
}

size_t apa_wire_mute(struct apa_mute *out, bool muted, uint32_t fade_ms)
{
    memset(out, 0, sizeof *out);
    put_header(&out->header, APA_MSG_MUTE, sizeof *out);
    out->muted = muted;
    out->fade_ms = htole32(fade_ms);
    return sizeof *out;
}

size_t apa_wire_meter(struct apa_meter *out, uint32_t interval_ms)
{
    memset(out, 0, sizeof *out);
    put_header(&out->header, APA_MSG_METER, sizeof *out);
    out->interval_ms = htole32(interval_ms);
    return sizeof *out;
}

size_t apa_wire_query(struct apa_query *out)
{
    memset(out, 0, sizeof *out);
    put_header(&out->header, APA_MSG_QUERY, sizeof *out);
    return sizeof *out;
}
