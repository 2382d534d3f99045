/* The generated colour tables (colormap-data.c), 256 entries of 0xRRGGBB each. */
#ifndef ATN_COLORMAP_PRIVATE_H
#define ATN_COLORMAP_PRIVATE_H

#include <stdint.h>

extern const uint32_t atn_cmap_viridis[256];
extern const uint32_t atn_cmap_magma[256];
extern const uint32_t atn_cmap_cividis[256];
extern const uint32_t atn_cmap_greys[256];
extern const uint32_t atn_cmap_rdbu[256];

#endif
