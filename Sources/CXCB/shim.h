#ifndef AUDIO_POLICYD_CXCB_SHIM_H
#define AUDIO_POLICYD_CXCB_SHIM_H
#include <xcb/xcb.h>
#include <stdlib.h>
#endif
