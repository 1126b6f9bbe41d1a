// VFXBench
