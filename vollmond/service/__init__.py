"""The running service: game actors, the hub, the web app and (later) the telephone."""
