// FFmpeg's headers, plus functions for the macros and globals Swift cannot import.
#ifndef VFX_CFFMPEG_SHIM_H
#define VFX_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavdevice/avdevice.h>
#include <libavutil/avutil.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/channel_layout.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <stdio.h>
#include <errno.h>

static inline int vfx_averror(int posixError) { return AVERROR(posixError); }
static inline int vfx_averror_eof(void) { return AVERROR_EOF; }
static inline int vfx_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int64_t vfx_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline AVRational vfx_time_base_q(void) { return AV_TIME_BASE_Q; }

/// Writes FFmpeg's message for `error` into `buffer` and returns it.
static inline const char *vfx_err2str(int error, char *buffer, size_t size) {
    av_strerror(error, buffer, size);
    return buffer;
}

/// av_log without varargs: logs one preformatted message.
static inline void vfx_av_log(void *context, int level, const char *message) {
    av_log(context, level, "%s", message);
}

/// Writes a message to standard error (Swift 6 cannot touch the C global `stderr`).
static inline void vfx_write_stderr(const char *message) {
    fputs(message, stderr);
    fflush(stderr);
}

/// True when standard error is a terminal (for progress bars).
int isatty(int fd);
static inline int vfx_stderr_is_terminal(void) { return isatty(2); }

#endif
