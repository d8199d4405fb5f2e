"""Every study registers its section of the profile when the one list of studies is
imported, as the command line imports it before reading a profile."""

import encbench.studies  # noqa: F401
