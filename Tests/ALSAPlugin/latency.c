/*
 * How far ahead of the ear a PCM runs: snd_pcm_delay averaged over a second of blocking writes that
 * keep the buffer full (S16, stereo, 48 kHz, buffer 8192, period 1024). Run on the plugin and on its
 * slave, the difference is the latency the plugin adds (an extplug works in place in the slave's
 * buffer, so it should add none). Used by Tests/ALSAPlugin/real-clients.
 *   latency PCM     prints the mean delay in frames
 */
#include <alsa/asoundlib.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    snd_pcm_t *pcm;
    if (argc != 2 || snd_pcm_open(&pcm, argv[1], SND_PCM_STREAM_PLAYBACK, 0) < 0)
        return fprintf(stderr, "usage: latency PCM (which must open)\n"), 2;
    snd_pcm_hw_params_t *params;
    snd_pcm_hw_params_alloca(&params);
    snd_pcm_uframes_t buffer = 8192, period = 1024;
    snd_pcm_hw_params_any(pcm, params);
    if (snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED) < 0 ||
        snd_pcm_hw_params_set_format(pcm, params, SND_PCM_FORMAT_S16_LE) < 0 ||
        snd_pcm_hw_params_set_channels(pcm, params, 2) < 0 ||
        snd_pcm_hw_params_set_rate(pcm, params, 48000, 0) < 0 ||
        snd_pcm_hw_params_set_buffer_size_near(pcm, params, &buffer) < 0 ||
        snd_pcm_hw_params_set_period_size_near(pcm, params, &period, NULL) < 0 || snd_pcm_hw_params(pcm, params) < 0)
        return fprintf(stderr, "latency: %s refused S16 stereo 48 kHz\n", argv[1]), 1;
    static short silence[1024 * 2];
    double sum = 0;
    int samples = 0;
    for (int i = 0; i < 2 * 48000 / 1024; i++) {
        if (snd_pcm_writei(pcm, silence, 1024) < 0)
            return fprintf(stderr, "latency: write failed\n"), 1;
        snd_pcm_sframes_t delay;
        if (i >= 48000 / 1024 && snd_pcm_delay(pcm, &delay) == 0) {  /* the second second: steady state */
            sum += (double)delay;
            samples++;
        }
    }
    printf("%.0f %lu %lu\n", samples ? sum / samples : -1.0, (unsigned long)buffer, (unsigned long)period);
    snd_pcm_close(pcm);
    return 0;
}
