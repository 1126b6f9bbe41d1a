// VFXNeural
