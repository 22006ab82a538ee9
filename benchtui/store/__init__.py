"""Where samples live: the live store (ring buffers, latest values, merged histograms)."""
