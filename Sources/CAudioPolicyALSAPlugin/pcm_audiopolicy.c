/*
 * ALSA `type audiopolicy`: an extplug over any slave PCM that applies the gain audio-policyd sets and
 * reports the stream and its peaks (docs/alsa-plugin.md). It runs inside every ALSA client, so it
 * never blocks, never crashes on what the daemon sends, and with no daemon plays the samples as they are.
 * It has no thread: the daemon's commands are read in the transfer callback, where the samples are.
 */
#define _GNU_SOURCE
#include "stream.h"

#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_RESTORE_MS 500

struct audiopolicy {
    snd_pcm_extplug_t ext;
    struct apa_stream stream;
};

static uint64_t monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static enum apa_sample_format sample_format(snd_pcm_format_t format)
{
    switch (format) {
    case SND_PCM_FORMAT_S16_LE: return APA_FORMAT_S16_LE;
    case SND_PCM_FORMAT_S32_LE: return APA_FORMAT_S32_LE;
    case SND_PCM_FORMAT_FLOAT_LE: return APA_FORMAT_FLOAT_LE;
    default: return 0;
    }
}

static char *area_at(const snd_pcm_channel_area_t *area, snd_pcm_uframes_t offset)
{
    return (char *)area->addr + (area->first + area->step * offset) / 8;
}

/* True when the channels' samples sit side by side, frame after frame. */
static bool interleaved(const snd_pcm_channel_area_t *areas, snd_pcm_uframes_t offset, unsigned channels,
                        unsigned sample_bytes)
{
    char *first = area_at(&areas[0], offset);
    for (unsigned c = 0; c < channels; c++)
        if (area_at(&areas[c], offset) != first + c * sample_bytes || areas[c].step != channels * sample_bytes * 8)
            return false;
    return true;
}

/* Runs the ramp over `frames` frames: `channels` samples per frame, frame starts `*_stride` samples apart. */
static void apply(snd_pcm_format_t format, struct apa_gain_ramp *ramp, const void *src, size_t src_stride,
                  void *dst, size_t dst_stride, unsigned channels, size_t frames, struct apa_peaks *peaks)
{
    switch (format) {
    case SND_PCM_FORMAT_S16_LE:
        apa_apply_s16(ramp, src, src_stride, dst, dst_stride, channels, frames, peaks);
        break;
    case SND_PCM_FORMAT_S32_LE:
        apa_apply_s32(ramp, src, src_stride, dst, dst_stride, channels, frames, peaks);
        break;
    default:
        apa_apply_float(ramp, src, src_stride, dst, dst_stride, channels, frames, peaks);
        break;
    }
}

static snd_pcm_sframes_t audiopolicy_transfer(snd_pcm_extplug_t *ext, const snd_pcm_channel_area_t *dst_areas,
                                              snd_pcm_uframes_t dst_offset, const snd_pcm_channel_area_t *src_areas,
                                              snd_pcm_uframes_t src_offset, snd_pcm_uframes_t size)
{
    struct audiopolicy *plugin = ext->private_data;
    uint64_t now = monotonic_ns();
    apa_stream_poll(&plugin->stream, now);

    unsigned channels = ext->channels, sample_bytes = (unsigned)snd_pcm_format_physical_width(ext->format) / 8;
    struct apa_peaks peaks = {0};
    if (interleaved(src_areas, src_offset, channels, sample_bytes) &&
        interleaved(dst_areas, dst_offset, channels, sample_bytes)) {
        apply(ext->format, &plugin->stream.ramp, area_at(&src_areas[0], src_offset), channels,
              area_at(&dst_areas[0], dst_offset), channels, channels, size, &peaks);
    } else {
        /* One channel at a time, each from the same ramp position: the ramp is the same for every
         * channel of a frame. */
        struct apa_gain_ramp start = plugin->stream.ramp;
        for (unsigned c = 0; c < channels; c++) {
            plugin->stream.ramp = start;
            apply(ext->format, &plugin->stream.ramp, area_at(&src_areas[c], src_offset),
                  src_areas[c].step / 8 / sample_bytes, area_at(&dst_areas[c], dst_offset),
                  dst_areas[c].step / 8 / sample_bytes, 1, size, &peaks);
        }
    }
    apa_stream_account(&plugin->stream, peaks, (uint32_t)size, now);
    return (snd_pcm_sframes_t)size;
}

static int audiopolicy_hw_params(snd_pcm_extplug_t *ext, snd_pcm_hw_params_t *params)
{
    struct audiopolicy *plugin = ext->private_data;
    /* The parameters are linked, so the slave takes what the client gives; check rather than
     * scale the wrong samples. */
    if (ext->slave_format != ext->format || ext->slave_channels != ext->channels || !sample_format(ext->format)) {
        SNDERR("audiopolicy: the slave must take the client's format and channels");
        return -EINVAL;
    }
    snd_pcm_uframes_t buffer = 0, period = 0;
    snd_pcm_hw_params_get_buffer_size(params, &buffer);
    snd_pcm_hw_params_get_period_size(params, &period, NULL);
    apa_stream_set_format(&plugin->stream, ext->rate, ext->channels, sample_format(ext->format),
                          (uint32_t)buffer, (uint32_t)period);
    return 0;
}

static int audiopolicy_hw_free(snd_pcm_extplug_t *ext)
{
    struct audiopolicy *plugin = ext->private_data;
    apa_stream_set_state(&plugin->stream, APA_STATE_OPEN);
    return 0;
}

/* Called at prepare (and reset): the stream is about to start, so the daemon's latest gain is read
 * now, and the first samples already get it. */
static int audiopolicy_init(snd_pcm_extplug_t *ext)
{
    struct audiopolicy *plugin = ext->private_data;
    apa_stream_poll(&plugin->stream, monotonic_ns());
    apa_stream_set_state(&plugin->stream, APA_STATE_PREPARED);
    return 0;
}

static int audiopolicy_close(snd_pcm_extplug_t *ext)
{
    struct audiopolicy *plugin = ext->private_data;
    apa_stream_close(&plugin->stream);
    free(plugin);
    return 0;
}

static void audiopolicy_dump(snd_pcm_extplug_t *ext, snd_output_t *out)
{
    struct audiopolicy *plugin = ext->private_data;
    snd_output_printf(out, "audio-policyd gain plugin: daemon %s, gain %.4f -> %.4f%s\n",
                      apa_daemon_link_is_up(&plugin->stream.link) ? "connected" : "absent",
                      plugin->stream.ramp.gain, plugin->stream.ramp.target, plugin->stream.muted ? " (muted)" : "");
    /* Not snd_pcm_dump(ext->pcm): that is this very function. An extplug cannot reach its slave to dump it. */
    snd_pcm_dump_setup(ext->pcm, out);
}

static const snd_pcm_extplug_callback_t audiopolicy_callbacks = {
    .transfer = audiopolicy_transfer,
    .close = audiopolicy_close,
    .hw_params = audiopolicy_hw_params,
    .hw_free = audiopolicy_hw_free,
    .dump = audiopolicy_dump,
    .init = audiopolicy_init,
};

/* $XDG_RUNTIME_DIR/audio-policyd/alsa, else /run/audio-policyd/alsa. secure_getenv: a setuid client
 * must not be pointed at another socket by its caller's environment. */
static void default_socket_path(char *path, size_t size)
{
    const char *runtime = secure_getenv("XDG_RUNTIME_DIR");
    if (runtime && runtime[0] == '/')
        snprintf(path, size, "%s/audio-policyd/alsa", runtime);
    else
        snprintf(path, size, "/run/audio-policyd/alsa");
}

static int string_option(snd_config_t *node, const char *id, const char **value)
{
    if (snd_config_get_string(node, value) < 0) {
        SNDERR("audiopolicy: %s must be a string", id);
        return -EINVAL;
    }
    return 0;
}

SND_PCM_PLUGIN_DEFINE_FUNC(audiopolicy)
{
    snd_config_iterator_t i, next;
    snd_config_t *slave = NULL;
    const char *class_hint = NULL, *socket_path = NULL, *application = NULL;
    long restore_ms = DEFAULT_RESTORE_MS;

    snd_config_for_each(i, next, conf) {
        snd_config_t *node = snd_config_iterator_entry(i);
        const char *id;
        int err = 0;
        if (snd_config_get_id(node, &id) < 0)
            continue;
        if (strcmp(id, "comment") == 0 || strcmp(id, "type") == 0 || strcmp(id, "hint") == 0)
            continue;
        if (strcmp(id, "slave") == 0)
            slave = node;
        else if (strcmp(id, "class") == 0)
            err = string_option(node, id, &class_hint);
        else if (strcmp(id, "socket") == 0)
            err = string_option(node, id, &socket_path);
        else if (strcmp(id, "name") == 0)
            err = string_option(node, id, &application);
        else if (strcmp(id, "ramp") == 0) {
            if (snd_config_get_integer(node, &restore_ms) < 0 || restore_ms < 0 || restore_ms > APA_MAX_RAMP_MS) {
                SNDERR("audiopolicy: ramp must be milliseconds, 0...%u", APA_MAX_RAMP_MS);
                err = -EINVAL;
            }
        } else {
            SNDERR("audiopolicy: unknown field %s", id);
            err = -EINVAL;
        }
        if (err < 0)
            return err;
    }
    if (!slave) {
        SNDERR("audiopolicy: no slave PCM");
        return -EINVAL;
    }

    struct audiopolicy *plugin = calloc(1, sizeof *plugin);
    if (!plugin)
        return -ENOMEM;
    /* A failure below closes the PCM, which runs audiopolicy_close: its link must not hold fd 0. */
    apa_daemon_link_init(&plugin->stream.link, NULL);
    plugin->ext.version = SND_PCM_EXTPLUG_VERSION;
    plugin->ext.name = "audio-policyd gain and peaks";
    plugin->ext.callback = &audiopolicy_callbacks;
    plugin->ext.private_data = plugin;

    int err = snd_pcm_extplug_create(&plugin->ext, name, root, slave, stream, mode);
    if (err < 0) {
        free(plugin);
        return err;
    }
    static const unsigned formats[] = {SND_PCM_FORMAT_S16_LE, SND_PCM_FORMAT_S32_LE, SND_PCM_FORMAT_FLOAT_LE};
    unsigned format_count = sizeof formats / sizeof formats[0];
    if ((err = snd_pcm_extplug_set_param_list(&plugin->ext, SND_PCM_EXTPLUG_HW_FORMAT, format_count, formats)) < 0 ||
        (err = snd_pcm_extplug_set_slave_param_list(&plugin->ext, SND_PCM_EXTPLUG_HW_FORMAT, format_count,
                                                    formats)) < 0 ||
        (err = snd_pcm_extplug_set_param_link(&plugin->ext, SND_PCM_EXTPLUG_HW_FORMAT, 1)) < 0 ||
        (err = snd_pcm_extplug_set_param_link(&plugin->ext, SND_PCM_EXTPLUG_HW_CHANNELS, 1)) < 0) {
        snd_pcm_extplug_delete(&plugin->ext);  /* calls audiopolicy_close, which frees */
        return err;
    }

    char default_path[PATH_MAX];
    if (!socket_path) {
        default_socket_path(default_path, sizeof default_path);
        socket_path = default_path;
    }
    const char *application_env = secure_getenv("AUDIO_POLICYD_APP_NAME");
    struct apa_hello_fields hello = {
        .pid = (uint32_t)getpid(),
        .direction = stream == SND_PCM_STREAM_CAPTURE ? APA_DIRECTION_CAPTURE : APA_DIRECTION_PLAYBACK,
        .binary = program_invocation_short_name,
        .class_hint = class_hint,
        .application = application_env && application_env[0] ? application_env : application,
        .pcm_name = name,
    };
    apa_stream_open(&plugin->stream, socket_path, &hello, (uint32_t)restore_ms, monotonic_ns());
    *pcmp = plugin->ext.pcm;
    return 0;
}

SND_PCM_PLUGIN_SYMBOL(audiopolicy);
