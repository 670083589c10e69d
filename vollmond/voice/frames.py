"""The unit of voice every line and the mixer share: 20 ms of 8 kHz mono int16."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

#: Samples per frame (20 ms at 8 kHz, the telephone's rate and the mixer's).
FRAME_SAMPLES = 160
FRAME_SECONDS = 0.020
SAMPLE_RATE = 8000

Int16Array = npt.NDArray[np.int16]
