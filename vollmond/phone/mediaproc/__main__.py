"""``python -m vollmond.phone.mediaproc FD``: a media process on control socket ``FD``."""

from vollmond.phone.mediaproc.worker import main

main()
