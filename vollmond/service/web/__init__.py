"""The web channel: JSON API, WebSocket, and the browser client's static files."""
