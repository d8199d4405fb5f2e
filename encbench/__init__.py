"""encbench: what does encryption cost a MariaDB server on this hardware, and is it real?"""

__version__ = "0.1.0"
