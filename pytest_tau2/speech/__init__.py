"""A scenario as a phone call (``--tau2-speech-complexity``, docs/voice.md).

- :mod:`.audio`: signal helpers on numpy (resampling, mu-law, telephony band, noise, drops, muffling);
- :mod:`.engines`: text-to-speech and speech recognition behind two small protocols (espeak-ng, pocketsphinx);
- :mod:`.presets`: tau2's speech presets (``tasks_voice.json``) and the defaults of other domains;
- :mod:`.line`: :class:`~pytest_tau2.speech.line.PhoneLine`, what carries each utterance, and the call's record;
- :mod:`.caller`: the simulated user's prompt on a call (tau2's voice guidelines and the persona).

Independent of pytest and of the conversation loop (which sees a line only through ``carry``).
"""
