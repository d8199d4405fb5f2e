"""Namespaces, links, the delay relay and tunnels: what data in transit travels through."""
