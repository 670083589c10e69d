"""The telephone's media process (issue 16): RTP sockets, latching, key presses and the 20 ms
clock in a process of their own, away from the web service and the engine's event loop.

* :mod:`.protocol` — the control channel's messages (length-prefixed, checked on arrival).
* :mod:`.worker` — the media process itself (``python -m vollmond.phone.mediaproc FD``).
* :mod:`.client` — the signalling side: starts the processes, restarts one that died, and
  gives every call a :class:`~.client.RemoteEndpoint` in place of an in-process
  :class:`~vollmond.phone.media.RtpEndpoint`.

docs/voice.md ("The media process") says what is carried there and what is not.
"""
