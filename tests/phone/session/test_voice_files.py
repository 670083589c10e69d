"""Where prompts come from: the cache in the data directory, rendered at start; recorded prompt
files per message code; ``vollmond prompts export``."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from typer.testing import CliRunner

from tests.needs import need
from vollmond.cli import app
from vollmond.phone.service import prompts_ready, start_phone, stop_phone
from vollmond.phone.session.prompts import static_prompts
from vollmond.phone.session.prompts.prewarm import static_prompt_codes
from vollmond.phone.session.voice import EspeakVoice, RecordedVoice, default_voice
from vollmond.phone.sip.uas import UasConfig
from vollmond.service.config import Settings
from vollmond.service.hub import Hub

from .support import TextVoice


def write_wav(path: Path, samples: npt.NDArray[np.int16], rate: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.astype("<i2").tobytes())


def test_a_recorded_file_replaces_its_code_at_any_sample_rate(tmp_path: Path) -> None:
    need("sox")
    codes = static_prompt_codes("de")
    greeting = codes["phone.greeting"]
    one_second_at_16k = (np.sin(np.arange(16000) * 2 * np.pi * 300 / 16000) * 8000).astype(np.int16)
    write_wav(tmp_path / "voice" / "phone.greeting.wav", one_second_at_16k, 16000)
    fallback = TextVoice()
    voice = RecordedVoice(fallback, tmp_path / "voice")
    audio = voice.render(greeting, "de")
    assert abs(len(audio) - 8000) < 80  # resampled to the telephone rate
    spectrum = np.abs(np.fft.rfft(audio[:8000].astype(np.float64)))
    assert abs(int(np.argmax(spectrum)) - 300) <= 2
    assert fallback.rendered == []
    other = codes["phone.goodbye"]
    assert len(voice.render(other, "de")) > 0 and fallback.rendered == [(other, "de")]
    voice.render("Hausnummer 5 ruft dich an.", "de")  # no code: always synthetic
    assert fallback.rendered[-1] == ("Hausnummer 5 ruft dich an.", "de")
    (tmp_path / "voice" / "phone.goodbye.wav").write_bytes(b"not a wave file")
    assert len(voice.render(other, "de")) > 0  # unreadable: synthetic, and no traceback
    assert fallback.rendered[-1] == (other, "de")


def test_prompts_export_lists_every_fixed_prompt_with_its_code() -> None:
    result = CliRunner().invoke(app, ["prompts", "export"])
    assert result.exit_code == 0, result.output
    rows = dict(line.split("\t", 1) for line in result.output.splitlines())
    assert rows == static_prompt_codes("de")
    assert rows["phone.greeting"] == "Willkommen bei Vollmond."
    assert rows["phone.night.step.seer@vampir"] != rows["phone.night.step.seer@werwolf"]
    english = CliRunner().invoke(app, ["prompts", "export", "--lang", "en"])
    assert "phone.greeting\tWelcome to Vollmond." in english.output
    bad = CliRunner().invoke(app, ["prompts", "export", "--lang", "xx"])
    assert bad.exit_code != 0 and "Traceback" not in bad.output


async def test_the_cache_lives_in_the_data_dir_and_is_filled_at_start(
    hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need("espeak-ng", "sox")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VOLLMOND_PROMPT_CACHE", raising=False)
    data = tmp_path / "data-dir"
    settings = Settings(data_dir=data, sip_port=0)
    service = await start_phone(hub, settings, config=UasConfig(host="127.0.0.1", port=0))
    assert service is not None
    try:
        await prompts_ready()
    finally:
        await stop_phone(service)
    cached = list((data / "prompts").glob("*.s16"))
    assert len(cached) == len(static_prompts("de"))
    assert not (tmp_path / "data").exists()  # nothing under the working directory
    voice = default_voice(data)
    assert isinstance(voice, RecordedVoice)
    espeak = voice.fallback
    assert isinstance(espeak, EspeakVoice)
    voice.render(static_prompts("de")[0], "de")
    assert espeak.renders == 0  # a cache hit: read from <data-dir>/prompts
