"""The study engine: the Study interface, the paired-round runner, its clocks and its
progress display."""
