"""The SOP arithmetic (figures), the diagnostics of a capture's frame times, frame generation,
what the capture measured beside them, the capture-validity checks and the measurement intervals."""
