"""Voice rooms shared by every channel: the telephone's lines and the browser's peers.

A *line* is anything that puts one seat's voice into a game's mixer and pulls one listener's
mix out of it every 20 ms. The telephone (:mod:`vollmond.phone`) and the browser
(:mod:`vollmond.voice.browser`, its peers in :mod:`vollmond.voice.webrtc`) are both lines of the
same :class:`~vollmond.voice.rooms.VoiceRooms`, so a caller and a browser player of one game are
mixed by one mixer, through one routing table.
This package imports neither channel.
"""
